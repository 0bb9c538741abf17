from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

urlpatterns = [
    path("", include("allocator.urls")),
    path("", include("allocator.urls_rooms")),
    path("", include("allocator.urls_editor")),
    # The header's language switch posts to set_language; the scripts read their strings from jsi18n.
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(domain="djangojs"), name="javascript-catalog"),
]

# A server error shows templates/500.html in the page's language, never a traceback (DEBUG is off outside development).
handler500 = "allocator.views_errors.server_error"
