"""WCAG AA (4.5:1) for every badge and tile state, in the light and dark themes and in presenter mode.

The colours are read from the style sheets themselves: each theme's custom properties, and every rule
that gives a badge or a tile a text colour. A tile may sit on the panel or on the striped "in use"
background (`--free`), a badge on the panel or the page.
"""
import re
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[2] / "static" / "playground"
SHEETS = ["playground.css", "workshop.css", "room.css"]
AA = 4.5


def _rules(css: str):
    """(selector, declarations) for every rule, @media blocks flattened (the theme queries hold rules too)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    for match in re.finditer(r"([^{}]+)\{([^{}]*)\}", css):
        selector = match.group(1).strip()
        if "@media" in selector:
            selector = selector.split("{")[-1].split(")")[-1].strip()
        yield selector, dict(
            (name.strip(), value.strip())
            for name, _, value in (d.partition(":") for d in match.group(2).split(";")) if value)


def _variables(selector_test) -> dict:
    found = {}
    for selector, decls in _rules((STATIC / "playground.css").read_text()):
        if selector_test(selector):
            found.update({k: v for k, v in decls.items() if k.startswith("--")})
    return found


def themes() -> dict:
    light = _variables(lambda s: s == ":root")
    dark = {**light, **_variables(lambda s: s == 'html[data-theme="dark"]')}
    presenting = _variables(lambda s: s == "html.present")
    present = {**light, **presenting}
    present_dark = {**dark, **presenting, **_variables(lambda s: s == 'html.present[data-theme="dark"]')}
    return {"light": light, "dark": dark, "present": present, "present-dark": present_dark}


def _hex(value: str) -> tuple:
    value = value.strip().lstrip("#")
    if len(value) == 3:
        value = "".join(c * 2 for c in value)
    assert re.fullmatch(r"[0-9a-fA-F]{6}", value), f"not a hex colour: {value!r}"
    return tuple(int(value[i:i + 2], 16) / 255 for i in (0, 2, 4))


def luminance(colour: str) -> float:
    """WCAG 2 relative luminance of an sRGB hex colour."""
    def linear(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = map(linear, _hex(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _resolve(value: str, theme: dict) -> str:
    while (m := re.fullmatch(r"var\((--[\w-]+)(?:,\s*([^)]+))?\)", value.strip())):
        value = theme.get(m.group(1), m.group(2) or "")
    return value


def text_colours() -> dict:
    """selector → its `color` for every rule about badges and tiles (the states a user has to tell apart)."""
    found = {".tile": "var(--fg)", ".badge": "var(--fg)"}  # no colour of their own: the page's text colour
    for sheet in SHEETS:
        for selector, decls in _rules((STATIC / sheet).read_text()):
            if re.search(r"\.(badge|tile)\b", selector) and "color" in decls and "::before" not in selector:
                found[selector] = decls["color"]
    return found


def pairs():
    for theme_name, theme in themes().items():
        for selector, colour in text_colours().items():
            grounds = ["--panel", "--bg"] if ".badge" in selector else ["--panel", "--free"]
            for ground in grounds:
                yield pytest.param(theme, selector, colour, ground, id=f"{theme_name}:{selector}:{ground}")


def test_the_style_sheets_are_read():
    """The parser found both themes and the states it must check (a parse that finds nothing checks nothing)."""
    all_themes = themes()
    assert all_themes["light"]["--panel"] != all_themes["dark"]["--panel"]
    selectors = " ".join(text_colours())
    for state in ("claim-already .badge", "pod-pending .badge", "tile-blocked", "tile-rejected", ".tile small"):
        assert state in selectors


@pytest.mark.parametrize("theme, selector, colour, ground", list(pairs()))
def test_badge_and_tile_text_meets_aa(theme, selector, colour, ground):
    fg = _resolve(colour, theme)
    bg = theme[ground]
    ratio = contrast(fg, bg)
    assert ratio >= AA, f"{selector}: {colour} ({fg}) on {ground} ({bg}) is {ratio:.2f}:1, under {AA}:1"


def test_the_contrast_sum_is_wcag():
    """The formula itself, on WCAG's own extremes and on the badge the issue measured."""
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#7b8394", "#ffffff") == pytest.approx(3.81, abs=0.01)
