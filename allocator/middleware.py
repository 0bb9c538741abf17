"""Content-Security-Policy for every page: scripts from this site only, no inline script,
and no framing except by the views marked `frameable` (the embed view for docs and slides).
Request bodies read once, within the limits, before CSRF or a view reads them. A database
that cannot be reached is a 503 with Retry-After in the caller's format, not a 500."""
import io
import logging
from functools import wraps

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.db.utils import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse, UnreadablePostError
from django.shortcuts import render
from django.urls import Resolver404, resolve
from django.views.decorators.clickjacking import xframe_options_exempt


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            ancestors = getattr(response, "frame_ancestors", None) or "'none'"
            response["Content-Security-Policy"] = f"{settings.CONTENT_SECURITY_POLICY}; frame-ancestors {ancestors}"
        return response


def frameable(view):
    """Let other sites frame this view (CSP frame-ancestors from EMBED_FRAME_ANCESTORS, no X-Frame-Options)."""

    @xframe_options_exempt
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response.frame_ancestors = settings.EMBED_FRAME_ANCESTORS
        return response

    return wrapped


# ---- request bodies ----------------------------------------------------------------------

def refuses_oversize(handler):
    """Mark a view whose body may be refused before any middleware reads it: `handler(request,
    size_text)` answers a body over DATA_UPLOAD_MAX_MEMORY_SIZE the view's own way (the page's
    "Refused" panel, the share box, the API's JSON) instead of CSRF's bare 400."""

    def mark(view):
        view.oversize_response = handler
        return view

    return mark


class RequestBodyMiddleware:
    """Request bodies as servers deliver them, read once before any other middleware touches them.

    - `Transfer-Encoding: chunked` (no Content-Length; gunicorn decodes the chunks): read up to the
      upload limit, so the view sees the real body; a server that cannot say where such a body
      ends gets 411. Django alone reads a body without Content-Length as empty: a wrong answer.
    - A body over DATA_UPLOAD_MAX_MEMORY_SIZE: the view's own 413 message (`refuses_oversize`),
      answered before CSRF reads the form and turns it into a bare 400 that htmx would not show.
    - A body that stops arriving (the server's read timeout): 408, not a 500; one that ends
      before its Content-Length: 400, not a run of the part that arrived.
    """

    CHUNK = 64 * 1024

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method in ("POST", "PUT", "PATCH"):
            response = self._read_body(request)
            if response is not None:
                return response
        return self.get_response(request)

    def _read_body(self, request):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 8 * 1024 * 1024
        meta = request.META
        if not meta.get("CONTENT_LENGTH") and "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower():
            if not meta.get("wsgi.input_terminated"):
                return _plain_error(request, 411, "Length Required: send the body with a Content-Length header "
                                                  "(this server cannot read a chunked body to its end)")
            try:
                body = _read_at_most(meta["wsgi.input"], limit + 1, self.CHUNK)
            except OSError:
                return _timed_out(request)
            if len(body) > limit:
                _drain(meta["wsgi.input"], None)
                return _oversize(request, f"more than {limit:,} bytes")
            request._stream = LimitedStream(io.BytesIO(body), len(body))
            meta["CONTENT_LENGTH"] = str(len(body))
        try:
            size = int(meta.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _plain_error(request, 400, "Content-Length is not a number")
        if size > limit:
            if request.content_type == "application/x-www-form-urlencoded":
                # A plain form's scenario is percent-encoded: say the scenario's own size, not the body's.
                scenario = _form_field_size(request._stream, size, "scenario")
                if scenario is not None:
                    return _oversize(request, f"{scenario:,} bytes ({size:,} bytes as the form sent it, "
                                              f"URL-encoded, over the {limit:,}-byte limit of a request; "
                                              f"open it as a file instead)")
            else:
                _drain(request._stream, size)
            return _oversize(request, f"{size:,} bytes")
        try:
            body = request.body  # read now: a stalled client times out here, where it can be answered
        except UnreadablePostError:
            return _timed_out(request)
        if len(body) < size:
            # The client went away mid-body: what arrived is not what it meant to send.
            return _plain_error(request, 400, f"the request body ended after {len(body):,} of its "
                                              f"{size:,} bytes (Content-Length)")
        return None


# A refused body is read and dropped up to this much, so the client, still sending, reads the
# answer instead of a connection reset; past it (or the server's read timeout) the connection closes.
DRAIN_BYTES = 64 * 1024 * 1024


def _drain(stream, size: int | None) -> None:
    left = DRAIN_BYTES if size is None else min(size, DRAIN_BYTES)
    try:
        while left > 0:
            part = stream.read(min(256 * 1024, left))
            if not part:
                return
            left -= len(part)
    except OSError:
        pass


def _form_field_size(stream, size: int, name: str) -> int | None:
    """The decoded size in bytes of field `name` in a URL-encoded body, counted as the body is
    read and dropped (up to DRAIN_BYTES); None when the field was not seen in that part."""
    left = min(size, DRAIN_BYTES)
    marker = b"&" + name.encode("ascii") + b"="
    pending = b"&"  # a field starts the body as if after an `&`; later, a tail a marker may continue
    mine = False  # whether the bytes being read belong to field `name`
    found = None
    raw = escapes = 0
    try:
        while left > 0:
            part = stream.read(min(256 * 1024, left))
            if not part:
                break
            left -= len(part)
            data, pos = pending + part, 0
            while True:
                if mine:
                    end = data.find(b"&", pos)
                    stop = len(data) if end < 0 else end
                    raw += stop - pos
                    escapes += data.count(b"%", pos, stop)  # %XX is one byte
                    if end < 0:
                        pending = b""
                        break
                    found, raw, escapes, mine, pos = (found or 0) + raw - 2 * escapes, 0, 0, False, end
                else:
                    hit = data.find(marker, pos)
                    if hit < 0:
                        pending = data[max(pos, len(data) - len(marker) + 1):]
                        break
                    mine, pos = True, hit + len(marker)
    except OSError:
        pass
    if mine:
        found = (found or 0) + raw - 2 * escapes
    return found


def _read_at_most(stream, limit: int, chunk: int) -> bytes:
    parts, total = [], 0
    while total < limit:
        part = stream.read(min(chunk, limit - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
    return b"".join(parts)


def _plain_error(request, status: int, message: str):
    if request.path_info.startswith("/api/"):
        return JsonResponse({"message": message}, status=status)
    return HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")


def _timed_out(request):
    return _plain_error(request, 408, "Request Timeout: the request body did not arrive in time")


def _oversize(request, size_text: str):
    try:
        view = resolve(request.path_info).func
    except Resolver404:
        view = None
    handler = getattr(view, "oversize_response", None)
    if handler is not None:
        return handler(request, size_text)
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 8 * 1024 * 1024
    return _plain_error(request, 413, f"The request body is {size_text}; the limit is {limit:,} bytes.")


# ---- the database unreachable ----------------------------------------------------------------

logger = logging.getLogger("allocator.database")

DATABASE_RETRY_SECONDS = 10


class DatabaseUnavailableMiddleware:
    """A view that fails because the database cannot be reached (stopped, restarting, out of
    connections) answers 503 with Retry-After, in the format its caller reads: JSON for the API,
    the share box's fragment for htmx, a page otherwise. Pages that need no database (the
    playground, the examples, the workshops shipped with it) go on serving."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        logger.warning("database unavailable for %s %s: %s: %s", request.method, request.path,
                       type(exception).__name__, str(exception).strip().splitlines()[0] if str(exception) else "")
        return database_unavailable(request)


def database_unavailable(request):
    wait = DATABASE_RETRY_SECONDS
    message = (f"The database is not answering, so shared scenarios and workshops cannot be stored or "
               f"opened right now. Try again in {wait} seconds.")
    if request.path_info.startswith("/api/"):
        response = JsonResponse({"message": message}, status=503)
    elif getattr(request, "htmx", False):
        response = render(request, "share_box.html#share-result", {"share_error": message}, status=503)
    else:
        response = render(request, "unavailable.html", {"message": message, "retry_after": wait}, status=503)
    response["Retry-After"] = str(wait)
    response["Cache-Control"] = "no-store"
    return response
