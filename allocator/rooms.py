"""Workshop rooms: an instructor opens one for a workshop, attendees join it anonymously, and each
Check an attendee makes in the workshop is recorded for the instructor's page.

- **Links.** The attendee link holds the room's public code (`/rooms/<code>/`). The instructor's
  link also holds a secret token (`/rooms/<code>/teach/<token>`); the room stores only the token's
  sha256 and compares digests in constant time.
- **Attendees** are known by a signed cookie (`dra_room`: the room and the attendee row, signed
  with SECRET_KEY), not localStorage: the Check is a form POST that the server grades, and a
  cookie goes with it without any script (plain POST or htmx alike), while the signature means a
  browser cannot claim another attendee's row or a room it did not join. It is HttpOnly, SameSite
  Lax, Secure under HTTPS, and lasts as long as the room.
- **What is recorded** is computed by the server from the Check it just graded (never sent by the
  browser): per attendee and step the number of Checks, whether one passed, whether the latest did,
  and the checks the latest one failed. Only the latest result is kept, so a room holds at most
  ROOM_MAX_ATTENDEES attendees x the workshop's steps and checks.
- **Limits** per client, counted through the cache like the share limit (allocator.sharing):
  opening rooms uses SHARE_RATE_LIMIT per address; joins ROOM_JOIN_RATE per address (a whole class
  may sit behind one NAT address); the instructor's polls ROOM_POLL_RATE per address and room.
  Recorded Checks are limited per attendee to one every ROOM_CHECK_GAP seconds (a Check closer to
  the last is still graded, just not recorded): that limit is a condition of the statement that
  records the Check, so it costs no cache round trip on the busiest path.
- **Expiry** is lazy: a room answers "expired" once ROOM_HOURS have passed since it was opened,
  and rooms a day past their expiry are deleted (with everything recorded in them) whenever a
  new room is opened. No cron job is needed.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import Count, F, Q, Sum
from django.db.models.lookups import GreaterThan
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from allocator import safe_cache
from allocator.models_rooms import Room, RoomAttendee, RoomProgress
from allocator.sharing import client_address, parse_rate

logger = logging.getLogger("allocator.rooms")

COOKIE = "dra_room"
SALT = "allocator.rooms.attendee"
CODE_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # no l/o/0/1: the code may be typed from a slide
CODE_LENGTH = 10  # 50 bits: not guessable by trying
TOP_FAILURES = 3  # checks shown per step on the instructor's page
COUNTED_CHECKS = 62  # a lesson's checks counted one by one (bits of RoomProgress.failing)
PURGE_BATCH = 20  # rooms deleted per lazy clean-up
ACTIVE_MINUTES = 5

DEFAULTS = {
    "ROOM_HOURS": 12,
    "ROOM_MAX_ATTENDEES": 200,
    "ROOM_MAX_OPEN": 500,
    "ROOM_JOIN_RATE": "300/600",
    "ROOM_CHECK_GAP": 1.0,
    "ROOM_POLL_RATE": "120/60",
}


def setting(name: str):
    return getattr(settings, name, DEFAULTS[name])


class RoomRefused(Exception):
    """Why a room could not be opened, joined or shown, with the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400, retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after = retry_after


# ---- opening, finding, closing ------------------------------------------------------------

def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def open_room(*, kind: str, ident: str, workshop, now=None) -> tuple[Room, str]:
    """A new room for `workshop` (a parsed Workshop; `kind`/`ident` say where it comes from) and
    the instructor's secret token, which is not stored and cannot be shown again."""
    now = now or timezone.now()
    purge_expired(now=now)
    limit = int(setting("ROOM_MAX_OPEN"))
    if limit > 0 and Room.objects.filter(expires__gt=now, closed__isnull=True).count() >= limit:
        raise RoomRefused(_("%(limit)d rooms are open on this server, the most it keeps; "
                            "try again when one closes or expires.") % {"limit": limit}, 503)
    token = secrets.token_urlsafe(24)
    lessons = [{"number": lesson.number, "title": lesson.title[:200],
                "checks": [{"id": check_id(check, i), "label": (check.label or "")[:200]}
                           for i, check in enumerate(lesson.checks[:COUNTED_CHECKS])]}
               for lesson in workshop.lessons]
    for _attempt in range(5):
        code = "".join(secrets.choice(CODE_ALPHABET) for _letter in range(CODE_LENGTH))
        try:
            with transaction.atomic():
                room = Room.objects.create(
                    id=code, token_digest=token_digest(token), workshop_kind=kind, workshop_ident=ident,
                    title=workshop.title[:200], lessons=lessons,
                    expires=now + timedelta(hours=float(setting("ROOM_HOURS"))))
        except IntegrityError:  # the code was taken: draw another
            continue
        return room, token
    raise RoomRefused(_("No free room code was found; try again."), 503)


def state(room: Room, now=None) -> str:
    """"open", "closed" or "expired"."""
    now = now or timezone.now()
    if room.expires <= now:
        return "expired"
    return "closed" if room.closed is not None else "open"


def find(code: str) -> Room:
    room = Room.objects.filter(pk=code).first()
    if room is None:
        raise RoomRefused(ngettext(
            "There is no room %(code)s. The code may be mistyped, or the room expired: rooms last %(hours)d hour.",
            "There is no room %(code)s. The code may be mistyped, or the room expired: rooms last %(hours)d hours.",
            int(setting("ROOM_HOURS"))) % {"code": code, "hours": int(setting("ROOM_HOURS"))}, 404)
    return room


def for_instructor(code: str, token: str) -> Room:
    """The room whose instructor token this is; a wrong token answers as if the room did not exist."""
    room = Room.objects.filter(pk=code).first()
    # Digests of equal length compared in constant time: the answer's timing says nothing of the token.
    given = token_digest(token or "")
    stored = room.token_digest if room is not None else token_digest(secrets.token_urlsafe(24))
    if room is None or not hmac.compare_digest(given, stored):
        raise RoomRefused(_("This instructor link is not valid. Use the whole link you got when you "
                            "opened the room."), 404)
    return room


def refuse_unless_open(room: Room, now=None) -> None:
    current = state(room, now)
    if current == "expired":
        raise RoomRefused(_("Room %(code)s expired on %(when)s UTC. Ask your instructor for a new link; "
                            "the workshop itself stays open to everyone, without a room.")
                          % {"code": room.id, "when": room.expires.strftime("%Y-%m-%d %H:%M")}, 410)
    if current == "closed":
        raise RoomRefused(_("Room %(code)s is closed: the instructor ended it. The workshop itself stays "
                            "open to everyone, without a room.") % {"code": room.id}, 410)


def close(room: Room, now=None) -> None:
    if room.closed is None:
        room.closed = now or timezone.now()
        Room.objects.filter(pk=room.pk, closed__isnull=True).update(closed=room.closed)


def purge_expired(now=None) -> int:
    """Delete rooms (and all they recorded) a day past their expiry; a few at a time."""
    cutoff = (now or timezone.now()) - timedelta(days=1)
    codes = list(Room.objects.filter(expires__lt=cutoff).values_list("pk", flat=True)[:PURGE_BATCH])
    if not codes:
        return 0
    RoomProgress.objects.filter(room_id__in=codes).delete()
    RoomAttendee.objects.filter(room_id__in=codes).delete()
    Room.objects.filter(pk__in=codes).delete()
    return len(codes)


# ---- attendees ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Seat:
    room: str
    attendee: int


def seat_of(request) -> Seat | None:
    """The room and attendee this browser joined as, from its signed cookie (None if none, or forged)."""
    value = request.get_signed_cookie(COOKIE, default=None, salt=SALT,
                                      max_age=timedelta(hours=float(setting("ROOM_HOURS")) + 1))
    if not value:
        return None
    code, dot, number = value.partition(".")
    if not code or not dot or not number.isdigit():
        return None
    return Seat(code, int(number))


def join(request, room: Room, now=None) -> Seat:
    """A seat in the open room for this browser: the one it has, or a new one within the bounds."""
    now = now or timezone.now()
    refuse_unless_open(room, now)
    seat = seat_of(request)
    if seat is not None and seat.room == room.id and RoomAttendee.objects.filter(pk=seat.attendee,
                                                                                 room=room).exists():
        return seat
    wait = over_rate(f"room-join:{client_address(request)}", setting("ROOM_JOIN_RATE"))
    if wait:
        raise RoomRefused(wait_message(_("Too many joins from your address."), wait), 429, retry_after=wait)
    limit = int(setting("ROOM_MAX_ATTENDEES"))
    with transaction.atomic():
        taken = Room.objects.filter(pk=room.pk, attendees__lt=limit).update(attendees=F("attendees") + 1)
        if not taken:
            raise RoomRefused(ngettext("Room %(code)s is full: it has room for %(limit)d attendee.",
                                       "Room %(code)s is full: it has room for %(limit)d attendees.", limit)
                              % {"code": room.id, "limit": limit}, 409)
        attendee = RoomAttendee.objects.create(room=room)
    return Seat(room.id, attendee.pk)


def give_seat(response, seat: Seat, room: Room) -> None:
    """Keep the seat in the browser until the room expires."""
    seconds = max(60, int((room.expires - timezone.now()).total_seconds()))
    response.set_signed_cookie(COOKIE, f"{seat.room}.{seat.attendee}", salt=SALT, max_age=seconds, httponly=True,
                               samesite="Lax", secure=bool(getattr(settings, "HTTPS", False)))


def room_of(request, *, kind: str, ident: str, now=None) -> Room | None:
    """The open room this browser joined for this workshop, for the lesson page's "you are in a room"
    line (None without a seat, for another workshop's room, or once it is closed or expired)."""
    seat = seat_of(request)
    if seat is None:
        return None
    now = now or timezone.now()
    try:
        return Room.objects.filter(pk=seat.room, workshop_kind=kind, workshop_ident=ident, closed__isnull=True,
                                   expires__gt=now).only("id", "title", "expires").first()
    except DatabaseError:
        return None


def check_id(check, index: int) -> str:
    """A check's own id when the workshop gives one, else its position in the lesson (1-based)."""
    return str(getattr(check, "id", "") or index + 1)[:100]


def lesson_key(lesson) -> str:
    return str(getattr(lesson, "id", "") or getattr(lesson, "slug", "") or "")[:100]


def failing_bits(results) -> int:
    """Bit i set when the lesson's check i failed."""
    return sum(1 << i for i, result in enumerate(results[:COUNTED_CHECKS]) if not result.ok)


def record_check(request, *, kind: str, ident: str, lesson, results) -> bool:
    """Record a graded Check in the room this browser joined, when it joined one for this workshop
    and the room is open. Whether it was recorded; never raises, so a room cannot break a Check."""
    seat = seat_of(request)
    if seat is None:
        return False
    try:
        return _record(seat, kind, ident, lesson, results)
    except DatabaseError as exc:
        logger.warning("room %s: a Check was not recorded (%s: %s)", seat.room, type(exc).__name__, exc)
        return False


def _record(seat: Seat, kind: str, ident: str, lesson, results) -> bool:
    """Two statements for most Checks (the first Check of a step adds an insert), and no cache. They run on every
    attendee's every Check, so they are plain SQL in autocommit: the ORM's update() would add a
    transaction (two more round trips) and more time building each statement than the database takes
    to run it. The first tests the seat, its room's workshop and the room's state all at once."""
    now = timezone.now()
    at = connection.ops.adapt_datetimefield_value(now)
    gap = connection.ops.adapt_datetimefield_value(now - timedelta(seconds=float(setting("ROOM_CHECK_GAP"))))
    number = lesson.number
    ok = all(r.ok for r in results)
    failing = failing_bits(results)
    q = connection.ops.quote_name
    attendees, rooms, progress = (q(model._meta.db_table) for model in (RoomAttendee, Room, RoomProgress))
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {attendees} SET lesson = %s, last_check = %s WHERE id = %s AND room_id = %s "
            f"AND (last_check IS NULL OR last_check <= %s) AND EXISTS "
            f"(SELECT 1 FROM {rooms} WHERE {rooms}.id = %s AND workshop_kind = %s AND workshop_ident = %s "
            f"AND closed IS NULL AND expires > %s)",
            [number, at, seat.attendee, seat.room, gap, seat.room, kind, ident, at])
        if cursor.rowcount != 1:
            return False  # too soon after the last, not this workshop's room, closed, expired, or no seat
        cursor.execute(
            f"UPDATE {progress} SET attempts = attempts + 1, passing = %s, passed = (passed OR %s), failing = %s, "
            f"updated = %s WHERE attendee_id = %s AND lesson = %s",
            [ok, ok, failing, at, seat.attendee, number])
        if cursor.rowcount == 1:
            return True
    changes = {"attempts": F("attempts") + 1, "passing": ok, "failing": failing, "updated": now}
    if ok:
        changes["passed"] = True
    try:
        with transaction.atomic():
            RoomProgress.objects.create(room_id=seat.room, attendee_id=seat.attendee, lesson=number,
                                        lesson_key=lesson_key(lesson), attempts=1, passed=ok, passing=ok,
                                        failing=failing, updated=now)
    except IntegrityError:  # the same attendee's other tab was first
        RoomProgress.objects.filter(attendee_id=seat.attendee, lesson=number).update(**changes)
    return True


# ---- the instructor's view -----------------------------------------------------------------

@dataclass(frozen=True)
class Failing:
    check_id: str
    label: str
    attendees: int  # whose latest Check of the step fails this check


@dataclass(frozen=True)
class Step:
    number: int
    title: str
    here: int  # attendees whose latest Check was of this step
    tried: int  # attendees who checked this step at least once
    passed: int  # ... and passed it at least once
    attempts: int
    failing: tuple  # Failing, most first, at most TOP_FAILURES

    @property
    def passed_percent(self) -> int:
        return round(100 * self.passed / self.tried) if self.tried else 0


@dataclass(frozen=True)
class RoomStatus:
    state: str
    joined: int
    active: int  # checked something in the last ACTIVE_MINUTES minutes
    waiting: int  # joined, no Check yet
    steps: tuple


def room_status(room: Room, now=None) -> RoomStatus:
    """The room per step, from two aggregate queries whatever the number of attendees: attendees per
    step of their latest Check, and per step the Checks with each check's failures counted."""
    now = now or timezone.now()
    recent = now - timedelta(minutes=ACTIVE_MINUTES)
    people = list(RoomAttendee.objects.filter(room=room).values("lesson").annotate(
        n=Count("id"), active=Count("id", filter=Q(last_check__gte=recent))).values_list("lesson", "n", "active"))
    here = {lesson: n for lesson, n, _ in people if lesson is not None}
    width = min(COUNTED_CHECKS, max((len(lesson.get("checks", ())) for lesson in room.lessons), default=0))
    per_check = {f"fails_{i}": Count("id", filter=GreaterThan(F("failing").bitand(1 << i), 0))
                 for i in range(width)}
    progress = {row["lesson"]: row for row in RoomProgress.objects.filter(room=room).values("lesson").annotate(
        tried=Count("id"), passed=Count("id", filter=Q(passed=True)), attempts=Sum("attempts"), **per_check)}
    steps = []
    for lesson in room.lessons:
        number = lesson["number"]
        done = progress.get(number, {})
        counts = [(done.get(f"fails_{i}") or 0, i, check) for i, check in enumerate(lesson.get("checks", ()))]
        failing = [Failing(check["id"], check["label"], n)
                   for n, _, check in sorted(counts, key=lambda c: (-c[0], c[1])) if n][:TOP_FAILURES]
        steps.append(Step(number=number, title=lesson["title"], here=here.get(number, 0),
                          tried=done.get("tried", 0), passed=done.get("passed", 0),
                          attempts=done.get("attempts") or 0, failing=tuple(failing)))
    return RoomStatus(state=state(room, now), joined=sum(n for _, n, _ in people),
                      active=sum(a for _, _, a in people),
                      waiting=sum(n for lesson, n, _ in people if lesson is None), steps=tuple(steps))


def qr_svg(url: str, title: str) -> str:
    """The link as a QR code, an inline <svg> (dark on white whatever the theme, so phones read it)."""
    import segno

    return segno.make_qr(url, error="m").svg_inline(scale=6, border=4, dark="#000", light="#fff", title=title,
                                                    svgclass="room-qr")


# ---- rate limits ---------------------------------------------------------------------------

def over_rate(key: str, rate: str) -> int | None:
    """Count one attempt against `rate` ("COUNT/SECONDS", "0/1" is off) in fixed windows, as the
    share limit does; None if allowed, else the seconds until the window ends."""
    limit, window = parse_rate(str(rate))
    if limit <= 0:
        return None
    now = time.time()
    slot = int(now // window)
    if safe_cache.count(f"rate:{key}:{slot}", timeout=window + 5) > limit:
        return max(1, int((slot + 1) * window - now))
    return None


def wait_message(what: str, wait: int) -> str:
    if wait < 90:
        return what + " " + ngettext("Try again in %(n)d second.", "Try again in %(n)d seconds.", wait) % {"n": wait}
    minutes = round(wait / 60)
    return what + " " + ngettext("Try again in about %(n)d minute.", "Try again in about %(n)d minutes.",
                                 minutes) % {"n": minutes}


def poll_limited(request, room: Room) -> int | None:
    return over_rate(f"room-poll:{room.id}:{client_address(request)}", setting("ROOM_POLL_RATE"))
