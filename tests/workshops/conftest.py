"""The workshop tests read English: a page another test asked for in Korean may leave Korean active in the
thread (LocaleMiddleware activates the request's language), and the checks' own results are translated."""
import pytest
from django.utils import translation


@pytest.fixture(autouse=True)
def _english():
    with translation.override("en"):
        yield
