"""The memory page's forms for memory that stays true: add a memory, correct one, restore one a
newer memory replaced (:mod:`pippa_memory.items.truth`). Each is a POST that goes back to the
page saying what was done, or what was not and why."""

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from pippa_memory.items import services, truth
from pippa_memory.items.views import back_to_page, page_url, the_soul
from webui.models import Soul

#: A form's change: made in the soul the request names, it says in words what was done.
FormChange = Callable[..., str]


def page_form(*, nothing_done: str) -> Callable[[FormChange], Callable[..., HttpResponse]]:
    """A POST form of the page, for a logged-in member: the change is made in the soul the
    request names (404 when none) and the page says what was done, or, refused,
    ``nothing_done`` and why (:func:`~pippa_memory.items.views.back_to_page`)."""

    def form(change: FormChange) -> Callable[..., HttpResponse]:
        @login_required
        @require_POST
        @wraps(change)
        def view(request: HttpRequest, **given: str) -> HttpResponse:
            soul = the_soul(request)
            try:
                words = change(request, soul, **given)
            except services.MemoryRefusal as refusal:
                return back_to_page(request, soul, refusal, nothing_done=nothing_done)
            messages.success(request, words)
            return redirect(page_url(soul))

        return view

    return form


@page_form(nothing_done="Nothing was added.")
def add_memory(request: HttpRequest, soul: Soul) -> str:
    """Keep a memory the member writes, as ``remember`` would, private or household."""
    text, scope = request.POST.get("text", ""), request.POST.get("scope", "")
    item = truth.add_memory(soul=soul, user=request.user, text=text, scope=scope)
    whose = "only you see it" if item.scope == "private" else "everyone in the household sees it"
    return f"{soul.name} remembers “{item.text}”: {whose}."


@page_form(nothing_done="Nothing was corrected.")
def correct_memory(request: HttpRequest, soul: Soul, item_id: str) -> str:
    """New words for a memory: they replace it (it stays in history and can be restored)."""
    text = request.POST.get("text", "")
    item = truth.correct_memory(soul=soul, user=request.user, item_id=item_id, text=text)
    replaced = (item.supersedes or {}).get("text", "")
    return f"Corrected: “{item.text}” replaces “{replaced}”, which you can restore."


@page_form(nothing_done="Nothing was restored.")
def restore_memory(request: HttpRequest, soul: Soul, item_id: str) -> str:
    """Make a replaced memory current again: new chats carry it from now on."""
    item = truth.restore_memory(soul=soul, user=request.user, item_id=item_id)
    return f"Restored: “{item.text}” is a current memory again."
