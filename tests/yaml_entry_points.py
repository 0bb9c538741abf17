"""A child process for tests/test_yaml_entry_points.py: one JSON line in (a YAML text), one JSON
line out (what every entry point that reads YAML answered). Run apart from pytest so that a
crash in a C parser (a segfault) ends this process, which the test sees, instead of the test run.

Entry points: `manage.py allocate` (in process), the API, the page form, the workshop share API
and form, and a lesson's scenario inside a shared workshop. Runs are inline (no worker
process), so whatever the engine does happens here.
"""
import io
import json
import os
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.update({
    "DJANGO_SETTINGS_MODULE": "playground.settings", "ALLOCATOR_ISOLATION": "inline", "REDIS_URL": "",
    "DATABASE_URL": "sqlite://:memory:", "SHARE_RATE_LIMIT": "0/1", "ALLOCATOR_RUNS_PER_CLIENT": "0",
    "ALLOCATOR_SLOW_RUNS": "0/1", "RESULTS_CACHE_SECONDS": "0",
})

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

setup_test_environment()
call_command("migrate", verbosity=0, interactive=False)


def indent(text: str, by: str) -> str:
    return "".join(by + line for line in text.splitlines(keepends=True))


def workshop(scenario: str) -> str:
    return ("title: t\nsummary: s\nlessons:\n- title: one\n  text: x\n  task: y\n"
            "  checks:\n  - unchanged: [ResourceSlice]\n    message: m\n"
            "  solution:\n    node: worker-1\n"
            "  scenario: |\n" + indent(scenario, "    ") + "\n")


def answers(text: str, folder: Path) -> dict:
    client = Client()
    out = {}
    path = folder / "scenario.yaml"
    path.write_text(text, encoding="utf-8")
    printed = io.StringIO()
    try:
        with redirect_stdout(printed), redirect_stderr(io.StringIO()):
            call_command("allocate", str(path))
        code = 0
    except SystemExit as exc:
        code = exc.code
    out["cli"] = [code, printed.getvalue()[:2000]]
    api = client.post("/api/v1/allocate", text, content_type="application/yaml")
    out["api"] = [api.status_code, " ".join(p["message"] for p in api.json().get("problems", [])) or api.json().get("message", "")]
    page = client.post("/", {"scenario": text, "gates-submitted": "1"}, HTTP_HX_REQUEST="true")
    out["page"] = [page.status_code, page.content.decode()]
    shared = client.post("/api/v1/workshops", text, content_type="application/yaml")  # the text as a workshop file
    out["share_api"] = [shared.status_code, shared.content.decode()]
    form = client.post("/workshops/share", {"workshop": text})
    out["share_form"] = [form.status_code, form.content.decode()]
    lesson = client.post("/api/v1/workshops", workshop(scenario=text), content_type="application/yaml")
    out["lesson"] = [lesson.status_code, lesson.content.decode()]
    return out


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            text = json.loads(line)["text"]
            print(json.dumps(answers(text, Path(folder))), flush=True)


if __name__ == "__main__":
    main()
