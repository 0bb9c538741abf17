"""Workshop and compare URLs, included by allocator/urls.py (which registers the `shareid` converter)."""
from django.urls import path, register_converter

from allocator import views_workshops as views


class WorkshopSlug:
    """A shipped workshop's slug: its file name without .yaml, dots allowed (`intro.v2`, `dra-in-90-minutes.ko`)."""

    regex = r"[-a-zA-Z0-9_]+(\.[-a-zA-Z0-9_]+)*"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(WorkshopSlug, "workshop")

urlpatterns = [
    path("workshops/", views.workshop_list, name="workshops"),
    path("workshops/share", views.workshop_share, name="workshop-share"),
    path("workshops/<workshop:slug>/", views.workshop_overview, name="workshop-overview"),
    path("workshops/<workshop:slug>/download", views.workshop_download, name="workshop-download"),
    path("workshops/<workshop:slug>/<int:number>", views.workshop_lesson, name="workshop-lesson"),
    path("workshops/<workshop:slug>/<int:number>/check", views.workshop_check, name="workshop-check"),
    path("w/<shareid:share_id>", views.shared_workshop_overview, name="shared-workshop-overview"),
    path("w/<shareid:share_id>/download", views.shared_workshop_download, name="shared-workshop-download"),
    path("w/<shareid:share_id>/<int:number>", views.shared_workshop_lesson, name="shared-workshop-lesson"),
    path("w/<shareid:share_id>/<int:number>/check", views.shared_workshop_check, name="shared-workshop-check"),
    path("api/v1/workshops", views.api_workshop_share, name="api-workshop-share"),
    path("api/v1/workshops/<shareid:share_id>", views.api_shared_workshop, name="api-shared-workshop"),
    path("compare", views.compare, name="compare"),
]
