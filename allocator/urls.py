from django.urls import path

from allocator import views

urlpatterns = [
    path("", views.index, name="index"),
    path("examples/", views.examples, name="examples"),
    path("api/v1/allocate", views.api_allocate, name="api-allocate"),
    path("healthz", views.healthz, name="healthz"),
]
