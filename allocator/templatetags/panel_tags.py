"""The innermost, most repeated markup of the result panels (a device tile, a member chip, a why-table
row), as filters: a panel of a big scenario repeats them by the hundred on every edit, and one
format string per element costs a tenth of the same markup in template tags. The panel templates
keep everything around them."""
import html

from django import template
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _, ngettext

from allocator import wording

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
    blocked = _('<span class="tile tile-{state}" title="{slice}: counter set {set} leaves no room for it">'
                '{device}<small>{state_word} by {set}</small></span>')
    states = _tile_states()
    return _joined(
        blocked.format(state=d.state, slice=_escaped(d.slice), set=_escaped(d.blocked_by), device=_escaped(d.device),
                       state_word=_escaped(states.get(d.state, d.state)))
        if d.blocked_by else
        _format('<span class="tile tile-{}" title="{}">{}<small>{}</small></span>',
                    d.state, d.slice, d.device, states.get(d.state, d.state))
        for d in devices)


def _tile_states() -> dict:
    """The device map's state words (MapDevice.state), in the page's language."""
    return {"chosen": _("chosen"), "tried": _("tried"), "in-use": _("in use"), "shared": _("shared"),
            "blocked": _("blocked"), "tainted": _("tainted"), "free": _("free")}


@register.filter
def counter_bars(bars: list) -> SafeString:
    """One bar per counter of a set: allocated before, by this cycle, and free."""
    label = _("{counter}: {before} allocated before, {now} now, {free} free of {total}")
    text = _("{free} free of {total} (before {before}, now {now})")
    overdrawn = mark_safe(" — <strong>%s</strong>" % html.escape(_("overdrawn")))
    return _joined(
        _format(
            '<div class="bar-row"><span class="bar-label">{}</span>'
            '<div class="bar" role="img" aria-label="{}">'
            '<span class="seg before" style="width: {}"></span><span class="seg now" style="width: {}"></span></div>'
            '<span class="bar-text">{}{}</span></div>',
            use.counter,
            label.format(counter=use.counter, before=use.allocated_before, now=use.allocated_now, free=use.free,
                         total=use.total),
            bar["before_width"], bar["now_width"],
            text.format(free=use.free, total=use.total, before=use.allocated_before, now=use.allocated_now),
            overdrawn if bar["overdrawn"] else "")
        for bar in bars for use in (bar["use"],))


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
            if g.get("one_reason"):  # the summary gives the reason: the devices are a list of names
                items = mark_safe(_format('<p class="folded-devices">{}</p>', ", ".join(c.device for c in g["rows"])))
            else:
                items = mark_safe(_format('<ul class="folded-devices">{}</ul>', _joined(
                    _format("<li><strong>{}</strong>: {}</li>", cand.device, wording.row_reason(cand))
                    for cand in g["rows"])))
            parts.append(_format(
                '<tr class="verdict-{} folded" data-blocking="{}"><td colspan="3">'
                '<details><summary>{} — {}</summary>{}</details></td></tr>',
                g["verdict"], g["blocking"], _devices_count(len(g["rows"]), g["label"]), g["reason"], items))
        else:
            row = g["row"]
            parts.append(_format(
                '<tr class="verdict-{}" data-blocking="{}" data-device="{}/{}"><td>{}</td><td>{}</td><td>{}</td></tr>',
                row.verdict, g["blocking"], row.pool, row.device, row.device, g["label"], g["reason"]))
    return _joined(parts)


def _devices_count(count: int, label: str) -> str:
    return ngettext("%(count)s device: %(label)s", "%(count)s devices: %(label)s", count) % {
        "count": count, "label": label}
