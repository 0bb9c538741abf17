"""`manage.py allocate FILE`: what the kube-scheduler's DRA allocator would allocate, and why.

`manage.py` runs `allocator.cli` directly, without Django; this is the same command for
`django-admin allocate` and `call_command("allocate", ...)`.
"""
import sys

from django.core.management.base import BaseCommand

from allocator import cli


class Command(BaseCommand):
    # The engine needs none of Django's system checks (URLs, templates, models).
    requires_system_checks = []
    help = cli.HELP

    def add_arguments(self, parser):
        cli.add_arguments(parser)

    def handle(self, *args, **options):
        sys.exit(cli.execute(options))
