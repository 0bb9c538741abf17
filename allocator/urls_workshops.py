"""Workshop and compare URLs, included by allocator/urls.py (which registers the `shareid` converter)."""
from django.urls import path

from allocator import views_workshops as views

urlpatterns = [
    path("workshops/", views.workshop_list, name="workshops"),
    path("workshops/share", views.workshop_share, name="workshop-share"),
    path("workshops/<slug:slug>/", views.workshop_overview, name="workshop-overview"),
    path("workshops/<slug:slug>/<int:number>", views.workshop_lesson, name="workshop-lesson"),
    path("workshops/<slug:slug>/<int:number>/check", views.workshop_check, name="workshop-check"),
    path("w/<shareid:share_id>", views.shared_workshop_overview, name="shared-workshop-overview"),
    path("w/<shareid:share_id>/<int:number>", views.shared_workshop_lesson, name="shared-workshop-lesson"),
    path("w/<shareid:share_id>/<int:number>/check", views.shared_workshop_check, name="shared-workshop-check"),
    path("api/v1/workshops", views.api_workshop_share, name="api-workshop-share"),
    path("api/v1/workshops/<shareid:share_id>", views.api_shared_workshop, name="api-shared-workshop"),
    path("compare", views.compare, name="compare"),
]
