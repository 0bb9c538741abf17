"""Per-language workshop text: parallel files keyed by stable lesson and check ids, English the fallback;
dotted slugs; "download as YAML"."""
import shutil
from pathlib import Path

import pytest

from allocator.workshops import library
from allocator.workshops.model import parse_workshop
from allocator.workshops.translations import parse_translation, translate

FILES = Path(__file__).parent / "files"
TINY = (FILES / "tiny.yaml").read_text()
TINY_KO = (FILES / "tiny.ko.yaml").read_text()


def test_a_translation_replaces_the_words_it_has_and_falls_back_to_english():
    workshop, _ = parse_workshop(TINY)
    translation, problems = parse_translation(TINY_KO, workshop)
    assert problems == []
    korean = translate(workshop, translation)
    lesson, english = korean.lessons[0], workshop.lessons[0]
    assert korean.title == "작은 워크숍" and korean.language == "ko"
    assert korean.summary == workshop.summary  # not translated: English
    assert lesson.title == "더 작은 GPU를 고르세요" and lesson.text == english.text and lesson.hints == english.hints
    assert [c.message for c in lesson.checks] == ["클레임은 gpu-0을 받아야 합니다.", english.checks[1].message]
    assert lesson.start == english.start and lesson.solution == english.solution  # only words change


def test_a_translation_naming_an_unknown_lesson_or_check_is_located():
    workshop, _ = parse_workshop(TINY)
    text = TINY_KO.replace('"1": 클레임', '"nope": 클레임').replace('  "1":\n', '  "1":\n    hints: 3\n')
    _, problems = parse_translation(text, workshop)
    lines = text.splitlines()
    assert [(p.line, p.message.split(" (")[0]) for p in problems] == [
        (next(i for i, line in enumerate(lines, 1) if "hints: 3" in line), "hints must be a list of strings"),
        (next(i for i, line in enumerate(lines, 1) if '"nope"' in line), "lesson 1 has no check with the id 'nope'"),
    ]
    _, problems = parse_translation(TINY_KO.replace('  "1":', '  "7":'), workshop)
    assert problems[0].message.startswith("no lesson has the id '7'")


@pytest.fixture
def shipped_dir(tmp_path, monkeypatch):
    """A shipped directory with a dotted slug, its Korean text, and a translation of a missing file."""
    shutil.copy(FILES / "tiny.yaml", tmp_path / "intro.v2.yaml")
    shutil.copy(FILES / "tiny.ko.yaml", tmp_path / "intro.v2.ko.yaml")
    monkeypatch.setattr(library, "SHIPPED_DIR", tmp_path)
    library.clear()
    yield tmp_path
    library.clear()


def test_dotted_slugs_and_language_suffixes(shipped_dir):
    assert list(library.shipped()) == ["intro.v2"]  # .ko is a language, not a workshop
    assert [p.name for p in library.translation_files()] == ["intro.v2.ko.yaml"]
    assert library.get("intro.v2").title == "A tiny workshop"
    assert library.get("intro.v2", "ko").title == "작은 워크숍"
    assert library.get("intro.v2.ko").title == "작은 워크숍"
    assert library.get("intro.v2", "fr").title == "A tiny workshop"  # no French: English
    assert library.get("intro") is None


@pytest.mark.django_db
def test_dotted_slugs_and_translations_on_the_pages(client, shipped_dir):
    assert client.get("/workshops/").status_code == 200
    assert "A tiny workshop" in client.get("/workshops/intro.v2/").content.decode()
    body = client.get("/workshops/intro.v2/1?lang=ko").content.decode()
    assert "1. 더 작은 GPU를 고르세요" in body
    assert "작은 워크숍" in client.get("/workshops/intro.v2.ko/").content.decode()
    download = client.get("/workshops/intro.v2/download")
    assert download.status_code == 200 and download.content.decode() == TINY
    assert download["Content-Type"].startswith("application/yaml")
    assert download["Content-Disposition"] == 'attachment; filename="intro.v2.yaml"'


@pytest.mark.django_db
def test_a_shared_workshop_downloads_as_its_text(client):
    share_id = client.post("/api/v1/workshops", TINY, content_type="application/yaml").json()["id"]
    download = client.get(f"/w/{share_id}/download")
    assert download.status_code == 200 and download.content.decode() == TINY
    assert f'href="/w/{share_id}/download"' in client.get(f"/w/{share_id}").content.decode()


def test_every_shipped_translation_reads_against_its_workshop():
    for path in library.translation_files():
        slug = path.name.rsplit(".", 2)[0]
        _, problems = parse_translation(path.read_text(encoding="utf-8"), library.shipped()[slug])
        assert [p.render(path.name) for p in problems] == []


def test_a_translation_may_give_a_check_its_label_and_lists_what_it_leaves_in_english():
    from allocator.workshops.translations import missing

    workshop, _ = parse_workshop(TINY)
    text = TINY_KO.replace('      "1": 클레임은 gpu-0을 받아야 합니다.',
                           '      "1":\n        label: 클레임이 gpu-0을 받음\n        message: 클레임은 gpu-0을 받아야 해요.')
    translation, problems = parse_translation(text, workshop)
    assert problems == []
    lesson = translate(workshop, translation).lessons[0]
    assert [(c.label, c.message) for c in lesson.checks][0] == ("클레임이 gpu-0을 받음", "클레임은 gpu-0을 받아야 해요.")
    assert lesson.checks[1].label == workshop.lessons[0].checks[1].label  # English, the fallback
    assert lesson.language == "ko"
    [gap] = missing(workshop, translation)
    assert gap.lesson == 1 and gap.line == workshop.lessons[0].line
    assert gap.message == ("no ko text for lesson '1': text, hints, the message of check '2', the label of check '2' "
                           "(shown in English)")
    _, problems = parse_translation(text.replace("label:", "labl:"), workshop)
    assert problems[0].message.startswith("unknown field 'labl' in a check's translation")


@pytest.mark.parametrize("slug", ["dra-in-90-minutes", "dra-newer-features"])
def test_the_shipped_korean_workshops_leave_nothing_in_english(slug):
    from allocator.workshops.translations import missing

    english = library.shipped()[slug]
    translation, problems = parse_translation(
        (library.SHIPPED_DIR / f"{slug}.ko.yaml").read_text(encoding="utf-8"), english)
    assert problems == [] and missing(english, translation) == []
    korean = library.get(slug, "ko")
    for lesson, source in zip(korean.lessons, english.lessons):
        assert lesson.language == "ko" and lesson.start == source.start and lesson.solution == source.solution
        for check, english_check in zip(lesson.checks, source.checks):
            assert check.message.count("{why}") == english_check.message.count("{why}")  # the why still shows
            assert check.label != english_check.label


def test_checkworkshop_warns_about_what_a_translation_beside_the_file_leaves_in_english(tmp_path):
    from django.core.management import call_command
    import io

    shutil.copy(FILES / "tiny.yaml", tmp_path / "tiny.yaml")
    shutil.copy(FILES / "tiny.ko.yaml", tmp_path / "tiny.ko.yaml")
    out = io.StringIO()
    call_command("checkworkshop", str(tmp_path / "tiny.yaml"), stdout=out)  # warnings do not fail it
    lines = out.getvalue().splitlines()
    assert any(line.startswith("warning: tiny.yaml:") and "no ko text for lesson '1'" in line for line in lines)
    assert "tiny.ko.yaml: ko: 1 lesson(s) partly in English" in lines
    assert lines[-1].endswith("all good")
    (tmp_path / "tiny.ko.yaml").write_text(TINY_KO.replace('  "1":', '  "7":'), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_status:
        call_command("checkworkshop", str(tmp_path / "tiny.yaml"), stdout=io.StringIO(), stderr=io.StringIO())
    assert exit_status.value.code == 1
