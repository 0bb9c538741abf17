from urllib.parse import urlencode

from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """`{{ values|get_item:key }}`: a dict lookup with a variable key."""
    if isinstance(mapping, dict):
        return mapping.get(key)
    return None


VERDICT_LABELS = {
    "chosen": "✔ chosen",
    "tried": "◐ tried",
    "rejected": "✘ rejected",
    "not-needed": "· not needed",
    "not-used": "· not used",
    "not-reached": "· not reached",
}


@register.filter
def verdict_label(verdict: str) -> str:
    """A why-table verdict as the page shows it."""
    return VERDICT_LABELS.get(verdict, verdict)


@register.simple_tag(takes_context=True)
def present_toggle(context) -> str:
    """This page's URL with `?present=1` switched: presenter mode on or off."""
    request = context.get("request")
    if request is None:
        return "?present=1"
    query = request.GET.copy()
    if query.get("present") == "1":
        del query["present"]
    else:
        query["present"] = "1"
    return request.path + ("?" + urlencode(query, doseq=True) if query else "")
