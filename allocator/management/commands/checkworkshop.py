"""`manage.py checkworkshop FILE`: lint a workshop before the class.

Every mistake is printed at its line; every lesson's start must be valid and fail its checks, its
solution must pass them, and the lint tries to break the lesson (declared wrong answers and automatic
mutants must fail, automatic variants must pass; a surviving mutant is printed with its diff).
Exit status 0 when clean, 1 with problems, 2 when the file cannot be read.

Translations beside the file (`<slug>.<lang>.yaml` next to `<slug>.yaml`) are read against it too: a
mistake in one (an unknown lesson or check id, a field of the wrong type) is a problem; what one
leaves in English is a warning, which does not change the exit status (English is the fallback).
"""
import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from allocator.workshops.library import LANGUAGE
from allocator.workshops.lint import lint
from allocator.workshops.translations import missing, parse_translation


class Command(BaseCommand):
    help = ("Lint a workshop file: located mistakes; each lesson's start must fail its checks, its solution pass, "
            "its wrong answers and mutants fail, its variants pass.")

    def add_arguments(self, parser):
        parser.add_argument("file", help="workshop YAML file, or - for standard input")

    def handle(self, *args, **options):
        name = options["file"]
        try:
            text = sys.stdin.read() if name == "-" else open(name, encoding="utf-8").read()
        except (OSError, UnicodeDecodeError) as exc:
            self.stderr.write(f"{name}: cannot read: {exc}")
            sys.exit(2)
        workshop, problems = lint(text)
        for problem in problems:
            self.stdout.write(problem.render(name))
        if workshop is not None and name != "-":
            problems = problems + self.translations(Path(name), workshop)
        if problems:
            self.stderr.write(f"{name}: {len(problems)} problem(s)")
            sys.exit(1)
        self.stdout.write(f"{name}: {workshop.title}: {len(workshop.lessons)} lesson(s), "
                          f"{sum(len(lesson.checks) for lesson in workshop.lessons)} check(s), all good")

    def translations(self, path: Path, workshop) -> list:
        """Read every translation beside `path`: its problems printed and returned, its gaps printed."""
        found = []
        stem = path.name[:-len(".yaml")] if path.name.endswith(".yaml") else None
        if stem is None:
            return found
        for other in sorted(path.parent.glob(f"{stem}.*.yaml")):
            language = other.name[len(stem) + 1:-len(".yaml")]
            if not LANGUAGE.fullmatch(language):
                continue
            translation, problems = parse_translation(other.read_text(encoding="utf-8"), workshop)
            for problem in problems:
                self.stdout.write(problem.render(other.name))
            found.extend(problems)
            if translation is None:
                continue
            gaps = missing(workshop, translation)
            for gap in gaps:
                self.stdout.write(f"warning: {gap.render(path.name)}")
            self.stdout.write(f"{other.name}: {language}: " + (f"{len(gaps)} lesson(s) partly in English"
                                                               if gaps else "every lesson and check translated"))
        return found
