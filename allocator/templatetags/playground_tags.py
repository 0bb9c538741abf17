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
