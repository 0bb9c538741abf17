from allocator.engine.semver import Version, is_semver

import pytest


def test_equality_ignores_build_metadata():
    assert Version.parse("1.2.3+build.5") == Version.parse("1.2.3")


def test_prerelease_sorts_before_release_and_numeric_before_alphanumeric():
    assert Version.parse("1.0.0-alpha") < Version.parse("1.0.0")
    assert Version.parse("1.0.0-1") < Version.parse("1.0.0-alpha")
    assert Version.parse("1.0.0-alpha") < Version.parse("1.0.0-alpha.1")
    assert Version.parse("1.10.0") > Version.parse("1.9.9")


@pytest.mark.parametrize("text", ["1.2", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3+", ""])
def test_invalid_versions_are_not_semver(text):
    assert not is_semver(text)
