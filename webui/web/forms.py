"""Forms for the pages."""

import zoneinfo
from typing import Any

from django import forms
from django.conf import settings

from webui.models import Conversation, Soul, Vessel
from webui.web.conversations import TITLE_MAX_CHARS, has_control_characters, title_problem
from webui.web.selectors import SEARCH_MAX_CHARS
from webui.web.vessel_choice import choice_label

#: The longest display name: the account's first-name column.
DISPLAY_NAME_MAX_CHARS = 150


class VesselChoiceField(forms.ModelChoiceField):
    """A switched-on model, listed by name with why it may not answer ("not tried yet")."""

    def label_from_instance(self, obj: Vessel) -> str:
        return choice_label(obj)


class NewConversationForm(forms.Form):
    """Start a conversation: which soul, through which vessel, and whether it is temporary. The
    model starts as the member's default (the view's ``initial``), or unchosen."""

    soul = forms.ModelChoiceField(queryset=Soul.objects.all(), empty_label=None, label="Who")
    vessel = VesselChoiceField(
        queryset=Vessel.objects.filter(enabled=True),
        empty_label="Choose a model",
        label="Model",
        error_messages={
            "required": "Choose a model to talk through.",
            "invalid_choice": "That model is switched off or gone; choose another.",
        },
    )
    title = forms.CharField(max_length=TITLE_MAX_CHARS, required=False)
    temporary = forms.BooleanField(
        required=False,
        label="Temporary chat",
        help_text="Nothing from a temporary chat is remembered, and Pippa brings no memory into it.",
    )


class MemoryToolForm(forms.Form):
    """The vessel page's one switch."""

    memory_tool_enabled = forms.BooleanField(required=False)


class WakeSoulForm(forms.Form):
    """The stream page's wake button: which soul, by id; anything else is a form error."""

    soul = forms.ModelChoiceField(
        queryset=Soul.objects.all(),
        error_messages={
            "required": "Choose a soul to wake.",
            "invalid_choice": "Choose a soul to wake: that one does not exist.",
        },
    )


class RenameConversationForm(forms.Form):
    """The conversation page's rename box: a new title, checked as the API checks it."""

    title = forms.CharField(
        label="Title",
        strip=True,
        error_messages={"required": "A title cannot be empty."},
        # The browser's limit; the server's check (title_problem) says it in words.
        widget=forms.TextInput(attrs={"maxlength": TITLE_MAX_CHARS}),
    )

    def clean_title(self) -> str:
        title = self.cleaned_data["title"]
        problem = title_problem(title)
        if problem:
            raise forms.ValidationError(problem)
        return title


class ConversationSearchForm(forms.Form):
    """The conversation list's search box: text in the titles and messages."""

    q = forms.CharField(label="Search", required=False, max_length=SEARCH_MAX_CHARS)


class MoveConversationForm(forms.Form):
    """The conversation page's *Move to another model*: any switched-on model but its own."""

    vessel = VesselChoiceField(
        queryset=Vessel.objects.none(),
        empty_label=None,
        label="Model",
        error_messages={
            "required": "Choose a model to move this chat to.",
            "invalid_choice": "That model is switched off or gone; choose another.",
        },
    )

    def __init__(self, *args: Any, conversation: Conversation, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["vessel"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = Vessel.objects.filter(enabled=True).exclude(pk=conversation.vessel_id)


def time_zone_choices() -> list[tuple[str, str]]:
    """Every IANA zone this machine knows, the household's first (as blank)."""
    household = f"The household's ({settings.TIME_ZONE})"
    zones = sorted(zoneinfo.available_timezones())
    return [("", household), *((zone, zone.replace("_", " ")) for zone in zones)]


class AccountForm(forms.Form):
    """A member's own account page: the name they go by, their default model, their time zone."""

    display_name = forms.CharField(
        label="Display name",
        max_length=DISPLAY_NAME_MAX_CHARS,
        required=False,
        help_text="How Pippa and the household know you; empty: your username. A chat already "
        "started keeps the name it began with.",
    )
    default_vessel = VesselChoiceField(
        queryset=Vessel.objects.filter(enabled=True),
        required=False,
        label="Default model",
        help_text="The model your new chats start on.",
        error_messages={"invalid_choice": "That model is switched off or gone; choose another."},
    )
    time_zone = forms.ChoiceField(
        label="Time zone",
        required=False,
        choices=time_zone_choices,
        help_text="Times on your pages are shown in it.",
        error_messages={"invalid_choice": "“%(value)s” is not a time zone this server knows."},
    )

    def __init__(self, *args: Any, household_default: Vessel | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["default_vessel"]
        assert isinstance(field, forms.ModelChoiceField)
        field.empty_label = (
            f"The household's ({household_default.name})"
            if household_default
            else "The household's (none chosen yet: you choose at each new chat)"
        )

    def clean_display_name(self) -> str:
        name = " ".join(self.cleaned_data["display_name"].split())
        if has_control_characters(name):
            raise forms.ValidationError("A name cannot hold control characters or direction marks.")
        return name
