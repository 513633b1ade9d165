"""Forms for the pages."""

from django import forms

from webui.models import Soul, Vessel


class NewConversationForm(forms.Form):
    """Start a conversation: which soul, through which vessel, and whether it is temporary."""

    soul = forms.ModelChoiceField(queryset=Soul.objects.all(), empty_label=None)
    vessel = forms.ModelChoiceField(queryset=Vessel.objects.filter(enabled=True), empty_label=None)
    title = forms.CharField(max_length=200, required=False)
    temporary = forms.BooleanField(
        required=False,
        label="Temporary chat",
        help_text="Nothing from a temporary chat is remembered: no memory, no memory tool, no events.",
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
