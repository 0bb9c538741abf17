"""The JSON a user reads from the CLI and the API, for every gallery example, is exactly the recorded
one: the keys the README documents and every value under them (a shareID aside, which is random)."""
import pytest

from allocator import gallery
from tests.golden.record import GOLDEN, api_body, api_text, run_cli

EXAMPLES = [example.slug for example in gallery.all_examples()]


def test_every_gallery_example_has_golden_files():
    recorded = {path.name.split(".")[0] for path in GOLDEN.glob("*.json")}
    assert recorded == set(EXAMPLES)


@pytest.mark.parametrize("slug", EXAMPLES)
def test_cli_explain_json_is_the_recorded_one(slug):
    example = gallery.get(slug)
    code, text = run_cli(example)
    assert code == (1 if slug in {"partitionable-devices", "pods", "node-allocatable-cpus"} else 0)
    assert text == (GOLDEN / f"{slug}.cli.json").read_text(encoding="utf-8")


@pytest.mark.django_db
@pytest.mark.parametrize("slug", EXAMPLES)
def test_api_json_is_the_recorded_one(client, slug):
    example = gallery.get(slug)
    response = client.post("/api/v1/allocate", api_body(example), content_type="application/json")
    assert response.status_code == 200
    assert api_text(response) == (GOLDEN / f"{slug}.api.json").read_text(encoding="utf-8")
