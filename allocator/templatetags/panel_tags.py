"""The innermost, most repeated markup of the result panels (a device tile, a member chip, a why-table
row), as filters: a panel of a big scenario repeats them by the hundred on every edit, and one
format string per element costs a tenth of the same markup in template tags. The panel templates
keep everything around them."""
import html

from django import template
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


def _escaped(value) -> str:
    """conditional_escape without its lazy-string check, which costs more than the escaping."""
    if hasattr(value, "__html__"):
        return value.__html__()
    return html.escape(str(value))


def _format(format_string: str, *args) -> str:
    """django.utils.html.format_html for plain values: every argument escaped, without its lazy checks."""
    return format_string.format(*map(_escaped, args))


def _joined(parts) -> SafeString:
    return mark_safe("".join(parts))


@register.filter
def device_tiles(devices: list) -> SafeString:
    """Device-map tiles: the device, its state, and the counter set that blocks it, if one does."""
    return _joined(
        _format('<span class="tile tile-{}" title="{}: counter set {} leaves no room for it">{}<small>{} by {}</small></span>',
                    d.state, d.slice, d.blocked_by, d.device, d.state, d.blocked_by)
        if d.blocked_by else
        _format('<span class="tile tile-{}" title="{}">{}<small>{}</small></span>',
                    d.state, d.slice, d.device, d.state)
        for d in devices)


@register.filter
def counter_bars(bars: list) -> SafeString:
    """One bar per counter of a set: allocated before, by this cycle, and free."""
    return _joined(
        _format(
            '<div class="bar-row"><span class="bar-label">{}</span>'
            '<div class="bar" role="img" aria-label="{}: {} allocated before, {} now, {} free of {}">'
            '<span class="seg before" style="width: {}"></span><span class="seg now" style="width: {}"></span></div>'
            '<span class="bar-text">{} free of {} (before {}, now {}){}</span></div>',
            use.counter, use.counter, use.allocated_before, use.allocated_now, use.free, use.total,
            bar["before_width"], bar["now_width"], use.free, use.total, use.allocated_before,
            use.allocated_now, OVERDRAWN if bar["overdrawn"] else "")
        for bar in bars for use in (bar["use"],))


OVERDRAWN = mark_safe(" — <strong>overdrawn</strong>")


@register.filter
def member_chips(members: list) -> SafeString:
    """The devices drawing on a counter set, each with its compatibility groups."""
    return _joined(
        _format('<span class="chip {}">{} {}</span> ', m["css"], m["device"], m["groups_text"])
        if m["groups_text"] else _format('<span class="chip {}">{}</span> ', m["css"], m["device"])
        for m in members)


@register.filter
def why_rows(groups: list) -> SafeString:
    """The rows of one pool in the why table: a device alone, or a fold of devices with one reason.
    `data-blocking` feeds the "chosen and blocking only" filter; `data-device` the device map."""
    parts = []
    for g in groups:
        if g["folded"]:
            items = _joined(_format("<li><strong>{}</strong>: {}</li>", cand.device, cand.reason)
                            for cand in g["rows"])
            parts.append(_format(
                '<tr class="verdict-{} folded" data-blocking="{}"><td colspan="3">'
                '<details><summary>{} devices: {} — {}</summary><ul class="folded-devices">{}</ul></details></td></tr>',
                g["verdict"], g["blocking"], len(g["rows"]), g["label"], g["reason"], items))
        else:
            row = g["row"]
            parts.append(_format(
                '<tr class="verdict-{}" data-blocking="{}" data-device="{}/{}"><td>{}</td><td>{}</td><td>{}</td></tr>',
                row.verdict, g["blocking"], row.pool, row.device, row.device, g["label"], row.reason))
    return _joined(parts)
