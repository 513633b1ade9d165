from typing import Any

from django import template

from webui.unattended_display import describe_memory as describe

register = template.Library()


@register.filter
def describe_memory(memory: dict[str, Any]) -> str:
    return describe(memory or {})
