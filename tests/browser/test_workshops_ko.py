"""The shipped workshop in Korean in a real browser: a browser that asks for Korean gets each lesson's
words from `dra-in-90-minutes.ko.yaml` (title, text, task, hints, check labels and messages) and the
chrome around them in Korean, with no English outside the allow-list of `test_korean.py` (Kubernetes'
words, the scenario's names) and its code (`code`, `pre`: fields, YAML, kubectl lines).

Only the lesson's own column is read here (`#lesson`); the playground around it is test_korean.py's.
"""
import re

import pytest

pytest.importorskip("playwright")

from playwright.sync_api import Browser, expect  # noqa: E402

from .helpers import SCREENSHOTS  # noqa: E402
from .test_korean import english_left  # noqa: E402  (its allow-list, reviewed there)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# One lesson per part of the first workshop (3: its checks quote the Why headline), one of the second.
LESSONS = {
    ("dra-in-90-minutes", 1): "첫 번째 클레임",
    ("dra-in-90-minutes", 3): "내 클레임은 왜 보류 중일까요?",
    ("dra-in-90-minutes", 8): "파티셔너블 디바이스와 카운터 집합",
    ("dra-newer-features", 3): "소비 가능 용량: 디바이스 하나, 클레임 여러 개",
}

LESSON_TEXT = """() => {
  const out = [];
  const root = document.getElementById('lesson');
  const skip = (el) => el.closest('code, pre, kbd, script, style, textarea, [hidden], template');
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || skip(el)) continue;
    const text = node.textContent.trim();
    if (text) out.push(text);
  }
  for (const el of root.querySelectorAll('[aria-label], [title]')) {
    for (const name of ['aria-label', 'title']) {
      const value = (el.getAttribute(name) || '').trim();
      if (value) out.push(value);
    }
  }
  return out;
}"""


@pytest.fixture
def korean_page(browser: Browser, base_url: str):
    context = browser.new_context(base_url=base_url, locale="ko-KR", viewport={"width": 1440, "height": 900},
                                  extra_http_headers={"Accept-Language": "ko-KR,ko;q=0.9"})
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("slug, number", LESSONS, ids=lambda v: str(v))
def test_a_lesson_in_korean_shows_no_english_outside_the_allow_list(korean_page, slug, number):
    page = korean_page
    page.goto(f"/workshops/{slug}/{number}")
    expect(page.locator("#lesson")).to_be_visible()
    expect(page.locator(".lesson-title")).to_have_text(f"{number}. {LESSONS[slug, number]}")
    expect(page.locator(".lesson-title")).to_have_attribute("lang", "ko")
    page.get_by_role("button", name="확인", exact=True).click()  # the start fails its checks
    failed = page.locator("#check-result li.check-failed")
    expect(failed.first).to_be_visible()
    expect(page.locator("#check-result ul.checks")).to_have_attribute("lang", "ko")
    hint = page.get_by_role("button", name="힌트", exact=True)
    hint.click()  # the hints come one at a time, with Korean words on the button
    expect(page.locator(".lesson-hint")).to_have_text(re.compile(r"^(다음 힌트\(1/\d\)|힌트가 더 없어요)$"))
    for details in page.locator("#lesson details").all():  # every hint and the solution, opened
        details.evaluate("el => { el.hidden = false; el.open = true;"
                         " el.querySelectorAll('[hidden]').forEach(h => h.hidden = false); }")
    scenario = page.evaluate("() => [...document.querySelectorAll('textarea')].map(t => t.value).join('\\n')")
    texts = page.evaluate(LESSON_TEXT)
    assert any("확인" in t or "해요" in t for t in texts)
    left = english_left(texts, scenario)
    assert left == [], f"{slug} lesson {number}: {left}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"ko-{slug}-{number}.png", full_page=False, animations="disabled")


def test_the_workshop_list_and_overview_in_korean(korean_page):
    page = korean_page
    page.goto("/workshops/")
    expect(page.get_by_role("link", name="90분 만에 배우는 DRA")).to_have_attribute("lang", "ko")
    page.get_by_role("link", name="90분 만에 배우는 DRA").click()
    expect(page.locator("h1")).to_have_text("90분 만에 배우는 DRA")
    expect(page.locator("ol.lesson-list")).to_contain_text("첫 번째 클레임")
