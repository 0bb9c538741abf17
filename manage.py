#!/usr/bin/env python
"""Django's command-line utility for the DRA Playground."""
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    if sys.argv[1:2] == ["allocate"]:
        # The allocator is plain Python, and so is its command: it needs neither Django's settings
        # nor its apps, whose loading is a fifth of a second of every run.
        from allocator.management.commands.allocate import Command

        Command().run_from_argv(sys.argv)
        return
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
