"""Content-Security-Policy for every page: scripts from this site only, no inline script,
and no framing except by the views marked `frameable` (the embed view for docs and slides)."""
from functools import wraps

from django.conf import settings
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
