from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """`{{ values|get_item:key }}`: a dict lookup with a variable key."""
    if isinstance(mapping, dict):
        return mapping.get(key)
    return None
