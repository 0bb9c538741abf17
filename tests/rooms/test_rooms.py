"""Rooms as an instructor and attendees use them: open a room, join it, Check in it, watch the room,
close it; its bounds, rate limits, expiry and the instructor's secret link.

Runs on SQLite, and on PostgreSQL with DATABASE_URL=postgres://... (`make test-postgres`)."""
import hashlib
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone, translation

from allocator.engine.gates import COMPONENTS, GATES
from allocator.models import Room, RoomAttendee, RoomProgress
from allocator.workshops.library import shipped
from allocator.workshops.model import parse_workshop
from allocator.workshops.playground import run_inline
from allocator.workshops.store import share_workshop

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _checks_as_fast_as_tests_send_them(settings):
    """A test sends Checks faster than a person can; the gap between recorded ones is tested on its own."""
    settings.ROOM_CHECK_GAP = 0
TEXT = (Path(__file__).parent / "files" / "two-steps.yaml").read_text()
WORKSHOP = parse_workshop(TEXT)[0]
TEACH = re.compile(r"^/rooms/([a-z2-9]{10})/teach/([A-Za-z0-9_-]+)\?new=1$")


def form_data(variant):
    data = {"scenario": variant.scenario, "node": variant.node, "gates-submitted": "1"}
    for component, _ in COMPONENTS:
        for name, info in GATES.items():
            if variant.gates.get(component, {}).get(name, info.default):
                data[f"gate-{component}-{name}"] = "on"
    return data


@pytest.fixture
def workshop_id():
    row, _ = share_workshop(TEXT, run=run_inline)
    return row.id


def open_room(client, kind, ident):
    response = client.post("/rooms/open", {"kind": kind, "ident": ident})
    assert response.status_code == 303, response.content.decode()
    code, token = TEACH.match(response["Location"]).groups()
    return code, token


@pytest.fixture
def room(client, workshop_id):
    """(code, token, workshop id) of a room opened for the test workshop."""
    code, token = open_room(client, "shared", workshop_id)
    return code, token, workshop_id


def attendee(code) -> Client:
    browser = Client()
    assert browser.post(f"/rooms/{code}/").status_code == 303
    return browser


def check(browser, share_id, number, variant):
    response = browser.post(f"/w/{share_id}/{number}/check", form_data(variant), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    return response.content.decode()


def start(number):
    return WORKSHOP.lesson(number).start


def solution(number):
    return WORKSHOP.lesson(number).solution


def status(client, code, token) -> str:
    response = client.get(f"/rooms/{code}/teach/{token}/status", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    return response.content.decode()


def step_row(body: str, number: int) -> str:
    return re.search(rf'<tr data-step="{number}".*?</tr>', body, re.S).group(0)


def figures(body: str, number: int) -> dict:
    row = step_row(body, number)
    return {key: int(re.search(rf'data-{key}="(\d+)"', row).group(1)) for key in ("here", "tried", "passed")}


def failing(body: str, number: int) -> list[tuple[str, int]]:
    row = step_row(body, number)
    return [(label, int(n)) for label, n in re.findall(
        r'<span class="room-check">(.*?)</span>\s*<span class="badge">(\d+) attendees?</span>', row)]


# ---- opening ---------------------------------------------------------------------------------

def test_the_overview_offers_a_room_for_shipped_and_shared_workshops(client, workshop_id):
    body = client.get(f"/w/{workshop_id}").content.decode()
    assert 'action="/rooms/open"' in body and f'name="ident" value="{workshop_id}"' in body
    assert "Run this in a room" in body
    body = client.get("/workshops/dra-in-90-minutes/").content.decode()
    assert 'name="kind" value="shipped"' in body and 'name="ident" value="dra-in-90-minutes"' in body


def test_opening_a_room_gives_the_instructor_a_private_page_with_the_attendee_link_and_qr(client, room):
    code, token, _ = room
    response = client.get(f"/rooms/{code}/teach/{token}?new=1")
    body = response.content.decode()
    assert response.status_code == 200
    assert f'href="http://testserver/rooms/{code}/"' in body
    assert re.search(r'<svg [^>]*class="room-qr"', body) and "<title>QR code of the attendee link" in body
    assert "Bookmark this page" in body
    assert "1. Ask for what is there" in body and "2. The bigger one" in body
    assert f'hx-get="/rooms/{code}/teach/{token}/status" hx-trigger="every 3s"' in body
    # The token is in no page an attendee sees, and not in the database either: only its digest.
    stored = Room.objects.get(pk=code)
    assert stored.token_digest == hashlib.sha256(token.encode()).hexdigest() and token not in str(stored.__dict__)
    assert token not in client.get(f"/rooms/{code}/").content.decode()
    assert response["Cache-Control"] == "no-store, private" and response["Referrer-Policy"] == "same-origin"


def test_a_room_for_the_shipped_workshop_records_its_checks(client):
    code, token = open_room(client, "shipped", "dra-in-90-minutes")
    lesson = shipped()["dra-in-90-minutes"].lesson(1)
    browser = attendee(code)
    browser.post("/workshops/dra-in-90-minutes/1/check", form_data(lesson.start), HTTP_HX_REQUEST="true")
    body = status(client, code, token)
    assert figures(body, 1) == {"here": 1, "tried": 1, "passed": 0}
    assert len(failing(body, 1)) >= 1


def test_a_room_cannot_be_opened_for_a_workshop_that_does_not_exist(client):
    response = client.post("/rooms/open", {"kind": "shipped", "ident": "no-such-workshop"})
    assert response.status_code == 404 and "There is no workshop no-such-workshop" in response.content.decode()
    response = client.post("/rooms/open", {"kind": "elsewhere", "ident": "x"})
    assert response.status_code == 400
    assert client.get("/rooms/open").status_code == 405
    assert Room.objects.count() == 0


# ---- the instructor's link ---------------------------------------------------------------------

def test_only_the_whole_instructor_token_opens_the_instructor_page(client, room):
    code, token, workshop_id = room
    other_code, other_token = open_room(client, "shared", workshop_id)
    wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
    for path in (f"/rooms/{code}/teach/{wrong}", f"/rooms/{code}/teach/{other_token}",
                 f"/rooms/{code}/teach/{wrong}/status", f"/rooms/{other_code}/teach/{token}"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert "This instructor link is not valid" in response.content.decode()
    assert client.post(f"/rooms/{code}/teach/{wrong}/close").status_code == 404
    assert Room.objects.get(pk=code).closed is None
    assert client.get(f"/rooms/{code}/teach/{token}").status_code == 200


# ---- attendees -------------------------------------------------------------------------------

def test_joining_takes_one_seat_per_browser_in_a_signed_cookie(client, room):
    code, _, _ = room
    browser = Client()
    page = browser.get(f"/rooms/{code}/").content.decode()
    assert "Join the room" in page and "Rooms test workshop" in page
    response = browser.post(f"/rooms/{code}/")
    assert response.status_code == 303 and response["Location"] == f"/rooms/{code}/"
    cookie = response.cookies["dra_room"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    page = browser.get(f"/rooms/{code}/").content.decode()
    assert f"You are in room {code}" in page and "Join the room" not in page
    assert f'href="/w/{room[2]}/1"' in page and f'href="/w/{room[2]}/2"' in page
    browser.post(f"/rooms/{code}/")  # again: the same seat
    assert RoomAttendee.objects.filter(room_id=code).count() == 1 and Room.objects.get(pk=code).attendees == 1
    attendee(code)
    assert Room.objects.get(pk=code).attendees == 2


def test_the_instructor_sees_each_step_with_who_is_there_who_passed_and_what_fails(client, room):
    code, token, share = room
    ana, ben, cy = attendee(code), attendee(code), attendee(code)
    body = status(client, code, token)
    assert "3 attendees joined" in body and "3 have not checked anything yet" in body
    assert figures(body, 1) == {"here": 0, "tried": 0, "passed": 0}

    page = check(ana, share, 1, start(1))
    assert "check-failed" in page  # the attendee's own result is what it always was
    check(ben, share, 1, solution(1))
    check(cy, share, 1, solution(1))
    check(cy, share, 2, start(2))
    body = status(client, code, token)
    assert figures(body, 1) == {"here": 2, "tried": 3, "passed": 2}
    assert failing(body, 1) == [("pair is allocated", 1), ("pair got two GPUs", 1)]
    assert figures(body, 2) == {"here": 1, "tried": 1, "passed": 0}
    assert failing(body, 2) == [("big got gpu-1", 1)]
    assert "2 of 3" in step_row(body, 1) and "1 has not checked anything yet" not in body

    check(ana, share, 1, solution(1))  # Ana fixes it: nothing fails any more at step 1
    body = status(client, code, token)
    assert figures(body, 1) == {"here": 2, "tried": 3, "passed": 3} and failing(body, 1) == []
    assert "4 Checks" in step_row(body, 1)
    # A pass stays a pass; the failing list is about the latest Check.
    check(ben, share, 1, start(1))
    body = status(client, code, token)
    assert figures(body, 1)["passed"] == 3 and failing(body, 1) == [("pair is allocated", 1), ("pair got two GPUs", 1)]


def test_a_room_keeps_only_the_latest_result_per_attendee_and_step(client, room):
    code, _, share = room
    ana = attendee(code)
    for _ in range(5):
        check(ana, share, 1, start(1))
    assert RoomProgress.objects.filter(room_id=code).count() == 1
    progress = RoomProgress.objects.get(room_id=code)
    assert progress.attempts == 5 and progress.failing == 0b11 and not progress.passing  # both checks failed
    check(ana, share, 1, solution(1))
    progress = RoomProgress.objects.get(room_id=code)
    assert progress.attempts == 6 and progress.failing == 0 and progress.passed and progress.passing


def test_checks_outside_the_room_are_not_recorded(client, room):
    code, token, share = room
    check(Client(), share, 1, start(1))  # no seat
    forged = Client()
    forged.cookies["dra_room"] = f"{code}.1"  # unsigned
    check(forged, share, 1, start(1))
    tampered = attendee(code)
    value = tampered.cookies["dra_room"].value
    tampered.cookies["dra_room"] = value.replace(f"{code}.", f"{code}.9", 1)
    check(tampered, share, 1, start(1))
    # A seat in this room, Checks in another workshop.
    seated = attendee(code)
    lesson = shipped()["dra-in-90-minutes"].lesson(1)
    seated.post("/workshops/dra-in-90-minutes/1/check", form_data(lesson.start), HTTP_HX_REQUEST="true")
    assert RoomProgress.objects.count() == 0
    assert figures(status(client, code, token), 1)["tried"] == 0


def test_the_status_fragment_costs_the_same_queries_for_3_or_30_attendees(client, room, django_assert_num_queries):
    code, token, share = room
    browsers = [attendee(code) for _ in range(3)]
    for browser in browsers:
        check(browser, share, 1, start(1))
    with django_assert_num_queries(3):  # the room, then two aggregates
        status(client, code, token)
    for _ in range(27):
        check(attendee(code), share, 2, start(2))
    with django_assert_num_queries(3):
        body = status(client, code, token)
    assert "30 attendees joined" in body and figures(body, 2)["here"] == 27


# ---- bounds and rate limits ------------------------------------------------------------------

def test_a_full_room_says_so(client, room, settings):
    settings.ROOM_MAX_ATTENDEES = 2
    code, _, _ = room
    attendee(code)
    attendee(code)
    response = Client().post(f"/rooms/{code}/")
    assert response.status_code == 409
    assert f"Room {code} is full: it has room for 2 attendees." in response.content.decode()
    assert RoomAttendee.objects.filter(room_id=code).count() == 2


def test_joins_are_rate_limited_per_address(client, room, settings):
    settings.ROOM_JOIN_RATE = "2/600"
    code, _, _ = room
    attendee(code)
    attendee(code)
    response = Client().post(f"/rooms/{code}/")
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "Too many joins from your address." in response.content.decode()


def test_checks_closer_than_the_gap_are_graded_but_not_recorded(client, room, settings):
    settings.ROOM_CHECK_GAP = 60
    code, _, share = room
    ana = attendee(code)
    for _ in range(3):
        assert "check-failed" in check(ana, share, 1, start(1))
    assert RoomProgress.objects.get(room_id=code).attempts == 1
    settings.ROOM_CHECK_GAP = 0
    check(ana, share, 1, solution(1))
    assert RoomProgress.objects.get(room_id=code).attempts == 2


def test_the_instructor_page_refreshes_are_rate_limited(client, room, settings):
    settings.ROOM_POLL_RATE = "2/60"
    code, token, _ = room
    status(client, code, token)
    status(client, code, token)
    response = client.get(f"/rooms/{code}/teach/{token}/status", HTTP_HX_REQUEST="true")
    assert response.status_code == 429 and "Too many refreshes" in response.content.decode()


def test_opening_rooms_is_rate_limited_like_shares(client, workshop_id, settings):
    settings.SHARE_RATE_LIMIT = "1/600"
    open_room(client, "shared", workshop_id)
    response = client.post("/rooms/open", {"kind": "shared", "ident": workshop_id})
    assert response.status_code == 429 and "Too many rooms opened from your address." in response.content.decode()


def test_a_server_keeps_a_bounded_number_of_open_rooms(client, workshop_id, settings):
    settings.ROOM_MAX_OPEN = 1
    open_room(client, "shared", workshop_id)
    response = client.post("/rooms/open", {"kind": "shared", "ident": workshop_id})
    assert response.status_code == 503 and "1 rooms are open on this server" in response.content.decode()


# ---- closing and expiry -----------------------------------------------------------------------

def test_a_closed_room_says_so_and_records_nothing_more(client, room):
    code, token, share = room
    ana = attendee(code)
    check(ana, share, 1, start(1))
    assert client.post(f"/rooms/{code}/teach/{token}/close").status_code == 303
    page = ana.get(f"/rooms/{code}/")
    assert page.status_code == 410 and f"Room {code} is closed" in page.content.decode()
    assert Client().post(f"/rooms/{code}/").status_code == 410
    check(ana, share, 1, solution(1))
    assert RoomProgress.objects.get(room_id=code).attempts == 1
    body = client.get(f"/rooms/{code}/teach/{token}").content.decode()
    assert "Closed." in body and "hx-trigger" not in body and "Close the room" not in body
    assert figures(body, 1) == {"here": 1, "tried": 1, "passed": 0}  # the figures stay


def test_an_expired_room_says_so_and_is_deleted_a_day_later(client, room, workshop_id):
    code, token, share = room
    ana = attendee(code)
    check(ana, share, 1, start(1))
    Room.objects.filter(pk=code).update(expires=timezone.now() - timedelta(hours=1))
    page = ana.get(f"/rooms/{code}/")
    assert page.status_code == 410 and f"Room {code} expired on" in page.content.decode()
    check(ana, share, 1, solution(1))
    assert RoomProgress.objects.get(room_id=code).attempts == 1
    assert "Expired." in client.get(f"/rooms/{code}/teach/{token}").content.decode()
    open_room(client, "shared", workshop_id)  # a day has not passed: kept
    assert Room.objects.filter(pk=code).exists()

    Room.objects.filter(pk=code).update(expires=timezone.now() - timedelta(days=1, minutes=1))
    open_room(client, "shared", workshop_id)  # opening a room clears the old ones
    assert not Room.objects.filter(pk=code).exists()
    assert not RoomAttendee.objects.filter(room_id=code).exists() and not RoomProgress.objects.exists()
    page = ana.get(f"/rooms/{code}/")
    assert page.status_code == 404 and "the room expired: rooms last 12 hours" in page.content.decode()
    check(ana, share, 1, start(1))  # a seat in a deleted room: the Check works, nothing is recorded


def test_a_mistyped_room_code_says_so(client):
    response = client.get("/rooms/abcdefghij/")
    assert response.status_code == 404 and "There is no room abcdefghij" in response.content.decode()
    assert client.get("/rooms/ABC/").status_code == 404


def test_recording_a_check_costs_two_statements_once_the_step_was_checked(room, django_assert_num_queries):
    from django.test import RequestFactory

    from allocator import rooms
    from allocator.workshops.lint import check_lesson
    from allocator.workshops.playground import run_inline

    code, _, share = room
    request = RequestFactory().post("/")
    request.COOKIES["dra_room"] = attendee(code).cookies["dra_room"].value
    lesson = WORKSHOP.lesson(1)
    results, _ = check_lesson(lesson, lesson.start, run=run_inline)
    with django_assert_num_queries(5):  # the seat, then a new step: update, insert (in a savepoint: 2 more)
        assert rooms.record_check(request, kind="shared", ident=share, lesson=lesson, results=results)
    with django_assert_num_queries(2):  # the seat with its room's state, the step
        assert rooms.record_check(request, kind="shared", ident=share, lesson=lesson, results=results)
    with django_assert_num_queries(1):  # another workshop: the seat's update finds no row
        assert not rooms.record_check(request, kind="shipped", ident=share, lesson=lesson, results=results)


def test_a_check_without_javascript_is_recorded_too(client, room):
    code, token, share = room
    browser = attendee(code)
    response = browser.post(f"/w/{share}/1/check", form_data(solution(1)))  # the plain form post
    assert response.status_code == 200 and "All checks pass." in response.content.decode()
    assert figures(status(client, code, token), 1) == {"here": 1, "tried": 1, "passed": 1}


def test_joining_another_room_moves_the_seat(client, room):
    code, token, share = room
    other, other_token = open_room(client, "shared", share)
    browser = attendee(code)
    assert browser.post(f"/rooms/{other}/").status_code == 303
    check(browser, share, 1, start(1))
    assert figures(status(client, other, other_token), 1)["tried"] == 1
    assert figures(status(client, code, token), 1)["tried"] == 0


def test_a_lesson_page_says_which_room_you_are_in_while_it_is_open(client, room):
    code, token, share_id = room
    seated = attendee(code)
    body = seated.get(f"/w/{share_id}/1").content.decode()
    line = re.search(r'<p class="lesson-room"[^>]*>(.*?)</p>', body, re.S)
    assert line is not None, "no room line on the lesson page"
    assert f"You are in room {code} ({WORKSHOP.title})" in line.group(1)
    assert "your Checks are reported to the instructor" in line.group(1)
    assert f'href="/rooms/{code}/"' in line.group(1)
    assert 'class="lesson-room"' not in client.get(f"/w/{share_id}/1").content.decode()  # no seat: no line
    other, _ = share_workshop(TEXT.replace("title:", "title: Other", 1), run=run_inline)
    assert 'class="lesson-room"' not in seated.get(f"/w/{other.id}/1").content.decode()  # another workshop
    assert client.post(f"/rooms/{code}/teach/{token}/close").status_code in (200, 303)
    assert 'class="lesson-room"' not in seated.get(f"/w/{share_id}/1").content.decode()  # closed


def test_the_room_line_is_korean_on_a_korean_page(client, room):
    code, _, share_id = room
    with translation.override("en"):  # the request activates Korean in this thread; leave English behind
        body = attendee(code).get(f"/w/{share_id}/1", HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    line = re.search(r'<p class="lesson-room"[^>]*>(.*?)</p>', body, re.S).group(1)
    assert f"{code}" in line and "강사" in line and "You are in room" not in line
