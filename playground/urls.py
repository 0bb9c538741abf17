from django.urls import include, path

urlpatterns = [
    path("", include("allocator.urls")),
    path("", include("allocator.urls_rooms")),
]
