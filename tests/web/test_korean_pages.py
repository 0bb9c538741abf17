"""The audit of issue 23: every page, asked for in Korean, shows no English interface text outside the
allow-list (tests/web/korean_text.py) — the playground with every gallery example, the gallery, compare,
the workshops list and every lesson of the shipped workshops, a room's pages, a shared scenario and its
embed, the status writers page and the error pages. The browser test (tests/browser/test_korean.py)
reads a few of these live, with the scripts' text and screenshots; this one reads the rendered HTML of
all of them, without a browser."""
import re

import pytest

from allocator import gallery
from allocator.workshops import library

from .korean_text import HANGUL, english_left, page_texts

KO = {"HTTP_ACCEPT_LANGUAGE": "ko-KR,ko;q=0.9"}
TEACH = re.compile(r"/rooms/([a-z2-9]{10})/teach/([A-Za-z0-9_-]+)")

# Lesson content is read too: the shipped workshops are translated (allocator/workshops/shipped/*.ko.yaml);
# an English lesson text is marked `lang="en"` and so skipped, as the English fallback it is.
LESSON_CONTENT = set()


def korean_page(client, url: str, **kwargs) -> str:
    response = client.get(url, follow=True, **KO, **kwargs)
    assert response.status_code in (200, 404), (url, response.status_code)
    body = response.content.decode()
    assert '<html lang="ko"' in body, url
    return body


def english_in(body: str, skip=()) -> list:
    texts, scenario = page_texts(body, skip)
    return english_left(texts, scenario)


@pytest.mark.parametrize("slug", [e.slug for e in gallery.all_examples()])
def test_every_gallery_example_in_korean_shows_no_english_interface_text(client, slug):
    left = english_in(korean_page(client, f"/?example={slug}"))
    assert left == [], "\n".join(left)


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/", "/examples/", "/compare", "/workshops/",
                                 "/no-such-page", "/?example=no-such-example", "/rooms/abcdefghjk/"])
def test_the_pages_around_the_examples_in_korean_show_no_english_interface_text(client, url):
    left = english_in(korean_page(client, url))
    assert left == [], "\n".join(left)


def _lessons():
    for slug, workshop in library.shipped().items():
        yield slug, None
        for number in range(1, len(workshop.lessons) + 1):
            yield slug, number


@pytest.mark.parametrize("slug, number", list(_lessons()))
def test_every_lesson_of_the_shipped_workshops_in_korean_shows_no_english_interface_text(client, slug, number):
    url = f"/workshops/{slug}/" if number is None else f"/workshops/{slug}/{number}"
    left = english_in(korean_page(client, url), LESSON_CONTENT)
    assert left == [], "\n".join(left)


def _lesson_numbers():
    for slug, workshop in library.shipped().items():
        for lesson in workshop.lessons:
            yield slug, lesson.number


@pytest.mark.django_db
@pytest.mark.parametrize("slug, number", list(_lesson_numbers()))
def test_every_lessons_check_in_korean_says_its_labels_and_messages_in_korean(client, slug, number):
    """A lesson's Check, on its starting scenario (checks fail, with their messages) and on its
    solution (they pass)."""
    lesson = library.get(slug, "ko").lesson(number)
    found = {}
    for name, variant in (("start", lesson.start), ("solution", lesson.solution)):
        if variant is None:
            continue
        response = client.post(f"/workshops/{slug}/{number}/check", {"scenario": variant.scenario},
                               HTTP_HX_REQUEST="true", **KO)
        body = response.content.decode()
        assert response.status_code == 200 and HANGUL.search(body), body[:300]
        found[name] = english_in(body)
    assert found == {name: [] for name in found}, "\n".join(f"{n}: {t}" for n, ts in found.items() for t in ts)


@pytest.mark.django_db
def test_a_room_and_a_shared_scenario_in_korean_show_no_english_interface_text(client):
    slug = next(iter(library.shipped()))
    opened = client.post("/rooms/open", {"kind": "shipped", "ident": slug}, **KO)
    assert opened.status_code == 303, opened.content.decode()[:500]
    code, token = TEACH.search(opened["Location"]).groups()
    pages = {"teach": korean_page(client, opened["Location"]),
             "join": korean_page(client, f"/rooms/{code}/")}
    shared = client.post("/share", {"scenario": gallery.get(gallery.DEFAULT).scenario}, **KO)
    assert shared.status_code == 303
    pages["shared"] = korean_page(client, shared["Location"])
    pages["embed"] = korean_page(client, shared["Location"] + "/embed")
    found = {name: english_in(body, LESSON_CONTENT) for name, body in pages.items()}
    assert found == {name: [] for name in pages}, "\n".join(f"{name}: {t}" for name, ts in found.items() for t in ts)
