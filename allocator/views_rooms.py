"""Rooms: opening one for a workshop, the attendee's link (join), and the instructor's page with
its polled status fragment. The rules are in allocator/rooms.py."""
from __future__ import annotations

from dataclasses import replace

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language, gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from allocator import rooms
from allocator.models import SharedWorkshop
from allocator.sharing import rate_limited
from allocator.workshops import library
from allocator.workshops.model import parse_workshop


def _refused(request, exc: rooms.RoomRefused, *, room=None):
    response = render(request, "rooms/refused.html", {"message": exc.message, "room": room}, status=exc.status)
    if exc.retry_after:
        response["Retry-After"] = str(exc.retry_after)
    return response


def _workshop(kind: str, ident: str):
    """The workshop a room is for, or RoomRefused."""
    workshop = None
    if kind == "shipped":
        workshop = library.get(ident)
    elif kind == "shared":
        row = SharedWorkshop.objects.filter(pk=ident[:52]).first()
        workshop = parse_workshop(row.text)[0] if row is not None else None
    else:
        raise rooms.RoomRefused(_("A room is opened for a shipped or a shared workshop."))
    if workshop is None:
        raise rooms.RoomRefused(_("There is no workshop %(name)s to open a room for.") % {"name": ident[:100]}, 404)
    return workshop


def _titles(room) -> tuple[str, dict]:
    """The workshop's title and its lessons' titles by number in the page's language: a shipped workshop's
    translation where it has one, else as the room stored them when it opened."""
    if room.workshop_kind == "shipped":
        workshop = library.get(room.workshop_ident, get_language() or "")
        if workshop is not None:
            return workshop.title[:200], {lesson.number: lesson.title[:200] for lesson in workshop.lessons}
    return room.title, {}


def _status(room):
    """rooms.room_status, its steps titled in the page's language."""
    status = rooms.room_status(room)
    titles = _titles(room)[1]
    return replace(status, steps=tuple(replace(s, title=titles.get(s.number, s.title)) for s in status.steps))


def _overview_url(kind: str, ident: str) -> str:
    return reverse("workshop-overview" if kind == "shipped" else "shared-workshop-overview", args=[ident])


def _lesson_url(kind: str, ident: str, number: int) -> str:
    return reverse("workshop-lesson" if kind == "shipped" else "shared-workshop-lesson", args=[ident, number])


def _teach_url(room, token: str) -> str:
    return reverse("room-teach", args=[room.id, token])


def _private(response):
    """The instructor's pages carry the token in their address: never cached or indexed. (The site's
    Referrer-Policy, same-origin, already keeps the address from other sites; no-referrer would make
    browsers send `Origin: null` with the Close form, which CSRF refuses.)"""
    response["Cache-Control"] = "no-store, private"
    response["X-Robots-Tag"] = "noindex"
    return response


@require_POST
def room_open(request):
    """"Run this in a room" on a workshop's overview: a new room, then its instructor's page."""
    kind, ident = request.POST.get("kind", ""), request.POST.get("ident", "")
    wait = rate_limited(request, scope="room")
    if wait:
        return _refused(request, rooms.RoomRefused(rooms.wait_message(_("Too many rooms opened from your address."),
                                                                      wait), 429, retry_after=wait))
    try:
        room, token = rooms.open_room(kind=kind, ident=ident, workshop=_workshop(kind, ident))
    except rooms.RoomRefused as exc:
        return _refused(request, exc)
    response = redirect(_teach_url(room, token) + "?new=1")
    response.status_code = 303
    return _private(response)


@require_http_methods(["GET", "HEAD", "POST"])
def room_join(request, code: str):
    """The attendee link: GET says which room and workshop this is (and whether this browser has a
    seat); POST takes a seat (a signed cookie) and comes back here."""
    try:
        room = rooms.find(code)
        if request.method == "POST":
            seat = rooms.join(request, room)
            response = redirect("room", code=room.id)
            response.status_code = 303
            rooms.give_seat(response, seat, room)
            return response
        rooms.refuse_unless_open(room)
    except rooms.RoomRefused as exc:
        return _refused(request, exc)
    seat = rooms.seat_of(request)
    seated = seat is not None and seat.room == room.id
    title, titles = _titles(room)
    lessons = [(lesson["number"], titles.get(lesson["number"], lesson["title"]),
                _lesson_url(room.workshop_kind, room.workshop_ident, lesson["number"])) for lesson in room.lessons]
    return render(request, "rooms/room.html", {
        "room": room, "room_title": title, "seated": seated, "lessons": lessons,
        "overview_url": _overview_url(room.workshop_kind, room.workshop_ident),
    })


def _teach_context(request, room, token: str) -> dict:
    attendee_url = request.build_absolute_uri(reverse("room", args=[room.id]))
    return {
        "room": room, "room_title": _titles(room)[0], "token": token, "status": _status(room),
        "attendee_url": attendee_url,
        "qr": rooms.qr_svg(attendee_url, _("QR code of the attendee link %(url)s") % {"url": attendee_url}),
        "teach_url": request.build_absolute_uri(_teach_url(room, token)),
        "status_url": reverse("room-teach-status", args=[room.id, token]),
        "close_url": reverse("room-close", args=[room.id, token]),
        "overview_url": _overview_url(room.workshop_kind, room.workshop_ident),
        "new": request.GET.get("new") == "1",
    }


@require_safe
def room_teach(request, code: str, token: str):
    """The instructor's page: the attendee link and its QR code, and the room per step, polled."""
    try:
        room = rooms.for_instructor(code, token)
    except rooms.RoomRefused as exc:
        return _private(_refused(request, exc))
    return _private(render(request, "rooms/teach.html", _teach_context(request, room, token)))


@require_safe
def room_teach_status(request, code: str, token: str):
    """The per-step table alone, for htmx's poll every few seconds (429 keeps the last one shown)."""
    try:
        room = rooms.for_instructor(code, token)
    except rooms.RoomRefused as exc:
        return _private(HttpResponse(exc.message, status=exc.status, content_type="text/plain; charset=utf-8"))
    wait = rooms.poll_limited(request, room)
    if wait:
        response = HttpResponse(rooms.wait_message(_("Too many refreshes from your address."), wait), status=429,
                                content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(wait)
        return _private(response)
    return _private(render(request, "rooms/teach.html#status", {
        "room": room, "status": _status(room),
        "status_url": reverse("room-teach-status", args=[room.id, token])}))


@require_POST
def room_close(request, code: str, token: str):
    """End the room: attendees' Checks are no longer recorded; the figures stay on this page."""
    try:
        room = rooms.for_instructor(code, token)
    except rooms.RoomRefused as exc:
        return _private(_refused(request, exc))
    rooms.close(room)
    response = redirect(_teach_url(room, token))
    response.status_code = 303
    return _private(response)
