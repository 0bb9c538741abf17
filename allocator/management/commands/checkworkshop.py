"""`manage.py checkworkshop FILE`: lint a workshop before the class.

Every mistake is printed at its line; every lesson's start must be valid and fail its checks, its
solution must pass them, and the lint tries to break the lesson (declared wrong answers and automatic
mutants must fail, automatic variants must pass; a surviving mutant is printed with its diff).
Exit status 0 when clean, 1 with problems, 2 when the file cannot be read.
"""
import sys

from django.core.management.base import BaseCommand

from allocator.workshops.lint import lint


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
        if problems:
            self.stderr.write(f"{name}: {len(problems)} problem(s)")
            sys.exit(1)
        self.stdout.write(f"{name}: {workshop.title}: {len(workshop.lessons)} lesson(s), "
                          f"{sum(len(lesson.checks) for lesson in workshop.lessons)} check(s), all good")
