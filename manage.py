#!/usr/bin/env python
"""Django's command-line utility for the DRA Playground."""
import os
import sys


def main():
    if sys.argv[1:2] == ["allocate"]:
        # The allocator is plain Python, and so is its command: it runs before Django is imported
        # (allocator/cli.py), since Django's settings and apps are a fifth of a second of every run.
        from allocator.cli import main as allocate

        sys.exit(allocate(sys.argv[2:]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
