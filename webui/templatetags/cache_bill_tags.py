"""Filters for the cache bill: shares as percentages and dollars as saved or lost."""

from django import template

register = template.Library()


@register.filter
def share(value: float | None) -> str:
    """``0.987`` as ``98.7%``; ``None`` (nothing was cacheable) as a dash."""
    return "–" if value is None else f"{value:.1%}"


@register.filter
def dollars(value: float) -> str:
    """Dollars to four places, since one turn's cache is worth fractions of a cent."""
    return f"${value:,.4f}"


@register.filter
def saved_or_lost(value: float) -> str:
    """``0.012`` as ``$0.0120 saved``, ``-0.004`` as ``$0.0040 lost``, nothing as ``$0``."""
    if abs(value) < 0.00005:
        return "$0"
    return f"{dollars(abs(value))} {'saved' if value > 0 else 'lost'}"
