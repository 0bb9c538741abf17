from django.urls import path

from allocator import views

urlpatterns = [
    path("", views.index, name="index"),
]
