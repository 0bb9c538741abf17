from django.urls import include, path, register_converter

from allocator import views, views_share, views_status_writers


class ShareIdConverter:
    """A short link id: lowercase base32 letters of a content digest."""

    regex = "[a-z2-7]{10,52}"

    def to_python(self, value):
        return value

    def to_url(self, value):
        return value


register_converter(ShareIdConverter, "shareid")

urlpatterns = [
    path("", views.index, name="index"),
    path("examples/", views.examples, name="examples"),
    path("api/v1/allocate", views.api_allocate, name="api-allocate"),
    path("status-writers", views_status_writers.status_writers, name="status-writers"),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("share", views_share.share_create, name="share-create"),
    path("s/<shareid:share_id>", views_share.shared_page, name="shared"),
    path("s/<shareid:share_id>.yaml", views_share.shared_yaml, name="shared-yaml"),
    path("s/<shareid:share_id>/embed", views_share.shared_embed, name="shared-embed"),
    path("api/v1/scenarios", views_share.api_share, name="api-share"),
    path("api/v1/scenarios/<shareid:share_id>", views_share.api_shared, name="api-shared"),
    path("", include("allocator.urls_workshops")),
]
