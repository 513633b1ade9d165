"""Forms for the pages."""

from django import forms

from webui.models import Soul, Vessel
from webui.web.conversations import TITLE_MAX_CHARS, title_problem
from webui.web.selectors import SEARCH_MAX_CHARS


class NewConversationForm(forms.Form):
    """Start a conversation: which soul, through which vessel, and whether it is temporary."""

    soul = forms.ModelChoiceField(queryset=Soul.objects.all(), empty_label=None, label="Who")
    vessel = forms.ModelChoiceField(
        queryset=Vessel.objects.filter(enabled=True), empty_label=None, label="Model"
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
