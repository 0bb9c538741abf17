"""A run refused by its client's limits (allocator.fairness) reaches the caller as 429 with
Retry-After, whichever view it came through: the page and the API answer it themselves; a run
deeper in (a workshop Check, compare) raises `Throttled` up to this middleware."""
from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.utils.html import escape

from allocator.fairness import Throttled


class ThrottledMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, Throttled):
            return None
        if request.path.startswith("/api/"):
            response = JsonResponse({"message": exception.message}, status=429)
        else:
            # A fragment htmx can show where the result goes; a page of its own without JavaScript.
            response = HttpResponse(f'<p class="refused" role="alert">{escape(exception.message)}</p>',
                                    status=429, content_type="text/html; charset=utf-8")
        response["Retry-After"] = str(exception.retry_after)
        return response
