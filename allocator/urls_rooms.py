"""Room URLs (allocator/views_rooms.py), included by playground/urls.py."""
from django.urls import path, register_converter

from allocator import views_rooms as views


class RoomCodeConverter:
    """A room's public code (allocator.rooms.CODE_ALPHABET)."""

    regex = "[a-z2-9]{10}"

    def to_python(self, value):
        return value

    def to_url(self, value):
        return value


class RoomTokenConverter:
    """The instructor's secret: URL-safe base64 (secrets.token_urlsafe)."""

    regex = "[A-Za-z0-9_-]{16,64}"

    def to_python(self, value):
        return value

    def to_url(self, value):
        return value


register_converter(RoomCodeConverter, "roomcode")
register_converter(RoomTokenConverter, "roomtoken")

urlpatterns = [
    path("rooms/open", views.room_open, name="room-open"),
    path("rooms/<roomcode:code>/", views.room_join, name="room"),
    path("rooms/<roomcode:code>/teach/<roomtoken:token>", views.room_teach, name="room-teach"),
    path("rooms/<roomcode:code>/teach/<roomtoken:token>/status", views.room_teach_status, name="room-teach-status"),
    path("rooms/<roomcode:code>/teach/<roomtoken:token>/close", views.room_close, name="room-close"),
]
