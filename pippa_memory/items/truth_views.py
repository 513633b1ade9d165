"""The memory page's forms for memory that stays true: add a memory, correct one, restore one a
newer memory replaced (:mod:`pippa_memory.items.truth`). Each is a POST that goes back to the
page saying what was done, or what was not and why."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from pippa_memory.items import services, truth
from pippa_memory.items.views import back_to_page, chosen_soul, page_url
from webui.models import Soul


def the_soul(request: HttpRequest) -> Soul:
    soul = chosen_soul(request)
    if soul is None:
        raise Http404("No such soul.")
    return soul


@login_required
@require_POST
def add_memory(request: HttpRequest) -> HttpResponse:
    """Keep a memory the member writes, as ``remember`` would, private or household."""
    soul = the_soul(request)
    text, scope = request.POST.get("text", ""), request.POST.get("scope", "")
    try:
        item = truth.add_memory(soul=soul, user=request.user, text=text, scope=scope)
    except services.MemoryRefusal as refusal:
        return back_to_page(request, soul, refusal, nothing_done="Nothing was added.")
    whose = "only you see it" if item.scope == "private" else "everyone in the household sees it"
    messages.success(request, f"{soul.name} remembers “{item.text}”: {whose}.")
    return redirect(page_url(soul))


@login_required
@require_POST
def correct_memory(request: HttpRequest, item_id: str) -> HttpResponse:
    """New words for a memory: they replace it (it stays in history and can be restored)."""
    soul = the_soul(request)
    try:
        item = truth.correct_memory(
            soul=soul, user=request.user, item_id=item_id, text=request.POST.get("text", "")
        )
    except services.MemoryRefusal as refusal:
        return back_to_page(request, soul, refusal, nothing_done="Nothing was corrected.")
    replaced = (item.supersedes or {}).get("text", "")
    messages.success(
        request, f"Corrected: “{item.text}” replaces “{replaced}”, which you can restore."
    )
    return redirect(page_url(soul))


@login_required
@require_POST
def restore_memory(request: HttpRequest, item_id: str) -> HttpResponse:
    """Make a replaced memory current again: new chats carry it from now on."""
    soul = the_soul(request)
    try:
        item = truth.restore_memory(soul=soul, user=request.user, item_id=item_id)
    except services.MemoryRefusal as refusal:
        return back_to_page(request, soul, refusal, nothing_done="Nothing was restored.")
    messages.success(request, f"Restored: “{item.text}” is a current memory again.")
    return redirect(page_url(soul))
