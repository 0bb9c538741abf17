from django import template

from allocator.engine.gates import GATES
from allocator.sharing import MAX_FRAGMENT_CHARS

register = template.Library()


@register.simple_tag
def gate_defaults() -> dict:
    """{gate: default} for share.js, which fills in gates a fragment link does not mention."""
    return {name: info.default for name, info in GATES.items()}


@register.simple_tag
def fragment_limit() -> int:
    """The longest `#s=` fragment worth offering; share.js checks links it builds against it."""
    return MAX_FRAGMENT_CHARS
