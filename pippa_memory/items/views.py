""" "What Pippa remembers": the memory page every member has, per soul. Thin: each view is one call
into :mod:`pippa_memory.items.services` and a template.

A member sees household items and their own private items, how many of them a chat they begin now
carries (each carried one marked), forgets, re-scopes and marks *keep in every chat* what they
said, and sets the scope a ``remember`` gets when the model names none. An account holding
``pippa_memory.manage_memory`` also sees each member's count of private items (never the text),
may forget any household item, and may forget everything one member said. With the engine down
or memory off the page says memory is unavailable and why. A forget or make-private the engine
did not confirm (its answer lost) is treated as done for privacy, and the page says so plainly.
"""

from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_http_methods, require_POST

from pippa_memory.engine.members import member_id
from pippa_memory.items import changes, services
from pippa_memory.items.turn_links import own_turn_urls
from pippa_memory.items.wording import said_words, unavailable_for
from pippa_memory.models import MemberPreference, Scope
from webui.models import Soul

QUERY_LENGTH = services.QUERY_LENGTH


class PreferenceForm(forms.ModelForm):
    """The scope a ``remember`` gets when the model names none: two short choices, as radio
    buttons that wrap on a phone (a menu cut its long labels at 390 px)."""

    default_scope = forms.ChoiceField(
        label="What I ask Pippa to remember is, unless I say otherwise",
        choices=[
            (Scope.PRIVATE.value, "Private: only you see it"),
            (Scope.HOUSEHOLD.value, "Household: everyone sees it"),
        ],
        widget=forms.RadioSelect,
    )

    class Meta:
        model = MemberPreference
        fields = ["default_scope"]


class ScopeForm(forms.Form):
    scope = forms.ChoiceField(choices=Scope.choices)


def chosen_soul(request: HttpRequest) -> Soul | None:
    """The soul named by ``soul`` (GET or POST), else the first; 404 for a name that is no soul."""
    slug = request.POST.get("soul") or request.GET.get("soul")
    if slug:
        return get_object_or_404(Soul, slug=slug)
    return Soul.objects.first()


def the_soul(request: HttpRequest) -> Soul:
    """The soul the request names (:func:`chosen_soul`); 404 when there is none."""
    soul = chosen_soul(request)
    if soul is None:
        raise Http404("No such soul.")
    return soul


def page_url(soul: Soul, **query: str) -> str:
    return f"{reverse('memory-page')}?{urlencode({'soul': soul.slug, **query})}"


def back_to_page(
    request: HttpRequest, soul: Soul, refusal: services.MemoryRefusal, *, nothing_done: str
) -> HttpResponse:
    """A refused change, for the page: 404 or 403 raised; any other refusal shown above the page,
    after ``nothing_done`` (what did not happen), on the way back to it."""
    if refusal.code == "not_found":
        raise Http404(refusal.message)
    if refusal.code == services.NOT_YOURS:
        raise PermissionDenied(refusal.message)
    messages.error(request, f"{nothing_done} {refusal_words(request, refusal, soul)}")
    return redirect(page_url(soul))


def refusal_words(request: HttpRequest, refusal: services.MemoryRefusal, soul: Soul) -> str:
    """A refused change in words for the person asking (plain for a member when memory is
    unavailable: no engine names or settings)."""
    if refusal.code == "memory_unavailable":
        return unavailable_for(request.user, refusal, soul_name=soul.name)
    return refusal.message


def item_rows(
    request: HttpRequest,
    listing: services.ItemsPage,
    soul: Soul,
    new_chats: services.NewChatMemory | None = None,
) -> list[dict[str, object]]:
    """Each item with what the viewer may do to it, the link to its turn, if theirs, and whether
    a chat of theirs begun now carries it."""
    user = request.user
    urls = own_turn_urls(user=user, items=listing.items)
    return [
        {
            "item": item,
            "yours": services.said_it(user, item),
            "said": said_words(user, item, soul_name=soul.name),
            "may_forget": services.may_forget(user, item),
            "may_change_scope": services.may_change_scope(user, item),
            "may_keep": services.may_keep(user, item),
            "may_correct": services.may_forget(user, item),
            "replaced_on": replaced_on(item),
            "in_new_chats": new_chats is not None and item.id in new_chats.carries,
            "turn_url": urls.get(item.id),
        }
        for item in listing.items
    ]


def orphan_rows(request: HttpRequest, soul: Soul, q: str) -> list[dict[str, object]]:
    """The replaced memories the member may see that show under no current memory (what
    replaced them is forgotten, replaced in turn, or no longer theirs to see), with Restore for
    who may restore each."""
    user = request.user
    return [
        {
            "item": item,
            "said": said_words(user, item, soul_name=soul.name),
            "may_correct": services.may_forget(user, item),
            "replaced_in_turn": item.superseded_by is not None,
        }
        for item in services.fetch_orphaned(soul=soul, user=user, q=q)
    ]


def replaced_on(item: services.MemoryItem) -> str:
    """The day the memory this one replaced was replaced (``3 May``), or ``""``."""
    at = (item.supersedes or {}).get("at") or ""
    try:
        when = parse_datetime(at)
    except ValueError:
        when = None
    return f"{when.day} {when:%B %Y}" if when else at[:10]


def new_chat_memory(request: HttpRequest, soul: Soul) -> services.NewChatMemory | None:
    """What a chat the member began now carries; ``None`` when the engine's head cannot be read
    (the page then leaves the counts and marks out rather than guess them)."""
    try:
        return services.fetch_new_chat_memory(soul=soul, user=request.user)
    except services.MemoryRefusal:
        return None


@login_required
def memory_page(request: HttpRequest) -> HttpResponse:
    """The items the member may see of one soul, newest first, with search."""
    soul = chosen_soul(request)
    q, cursor = request.GET.get("q", ""), request.GET.get("cursor", "")
    preference, _ = MemberPreference.objects.get_or_create(user=request.user)
    context: dict[str, object] = {
        "souls": Soul.objects.all(),
        "soul": soul,
        "q": q[:QUERY_LENGTH],
        "may_manage": services.may_manage(request.user),
        "preference_form": PreferenceForm(instance=preference),
    }
    status = 200
    if len(q) > QUERY_LENGTH or len(cursor) > services.CURSOR_LENGTH:
        # Said, not cut short: a search for the first 200 characters is not what was asked.
        context["search_problem"] = (
            f"A search may be at most {QUERY_LENGTH} characters: shorten it and search again."
        )
        status = 400
    elif soul is not None:
        try:
            listing = services.fetch_items_page(soul=soul, user=request.user, q=q, cursor=cursor)
            new_chats = new_chat_memory(request, soul)
            rows = item_rows(request, listing, soul, new_chats)
            context.update(rows=rows, next=listing.next, new_chats=new_chats)
            if not cursor:
                context["orphans"] = orphan_rows(request, soul, q)
            if context["may_manage"]:
                context["members"] = services.fetch_member_counts(soul=soul, user=request.user)
        except services.MemoryRefusal as refusal:
            if refusal.status == 400:  # the search or the page asked for: said, nothing called
                context["search_problem"], status = refusal.message, 400
            else:
                context["unavailable"] = unavailable_for(request.user, refusal, soul_name=soul.name)
    return render(request, "pippa_memory/memory_page.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def forget_item(request: HttpRequest, item_id: str) -> HttpResponse:
    """GET: what forgetting does and does not remove, with the item. POST: forget it."""
    soul = the_soul(request)
    if request.method == "GET":
        try:
            item = services.fetch_item(soul=soul, viewer=member_id(request.user), item_id=item_id)
        except services.MemoryRefusal as refusal:
            return back_to_page(request, soul, refusal, nothing_done="Nothing was forgotten.")
        if not services.may_forget(request.user, item):
            raise PermissionDenied(services.not_yours("forget").message)
        context = {
            "soul": soul,
            "item": item,
            "yours": services.said_it(request.user, item),
            "said": said_words(request.user, item, soul_name=soul.name),
        }
        return render(request, "pippa_memory/forget_confirm.html", context)
    try:
        changed = changes.forget_item(soul=soul, user=request.user, item_id=item_id)
    except services.MemoryRefusal as refusal:
        return back_to_page(request, soul, refusal, nothing_done="Nothing was forgotten.")
    say_changed(request, changed, forgotten_words(changed, what="The memory is forgotten."))
    return redirect(page_url(soul))


def say_changed(request: HttpRequest, changed: changes.Changed, words: str) -> None:
    """Tell the person what was done: a success, or, when the engine did not confirm, a warning
    that says so and that it was treated as done."""
    if changed.confirmed:
        messages.success(request, words)
    else:
        messages.warning(request, f"{changed.unconfirmed_words()} {words}")


def forgotten_words(changed: changes.Changed, *, what: str) -> str:
    moved = changed.repinned.conversations
    if not moved:
        return f"{what} No running conversation held it."
    return (
        f"{what} {moved} running conversation(s) that held it will take the soul's memory afresh "
        "at their next message. Earlier messages still show what was said there."
    )


@login_required
@require_POST
def change_scope(request: HttpRequest, item_id: str) -> HttpResponse:
    """Make an item the member said private or household."""
    soul = the_soul(request)
    form = ScopeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The scope was not changed: choose private or household.")
        return redirect(page_url(soul))
    scope = form.cleaned_data["scope"]
    try:
        changed = changes.change_scope(soul=soul, user=request.user, item_id=item_id, scope=scope)
    except services.MemoryRefusal as refusal:
        return back_to_page(request, soul, refusal, nothing_done="The scope was not changed.")
    words = {"private": "only you see it", "household": "everyone in the household sees it"}
    say_changed(request, changed, f"The memory is now {scope}: {words[scope]}.")
    return redirect(page_url(soul))


@login_required
@require_POST
def keep_item(request: HttpRequest, item_id: str) -> HttpResponse:
    """Mark a memory the member said *keep in every chat* (``keep=true``), or unmark it."""
    soul = the_soul(request)
    keep = {"true": True, "false": False}.get(request.POST.get("keep", ""))
    if keep is None:
        messages.error(request, "Nothing was changed: choose to keep it in every chat or not.")
        return redirect(page_url(soul))
    try:
        changes.set_keep(soul=soul, user=request.user, item_id=item_id, keep=keep)
    except services.MemoryRefusal as refusal:
        return back_to_page(request, soul, refusal, nothing_done="Nothing was changed.")
    if keep:
        words = f"Kept in every chat: each chat you begin from now on carries it to {soul.name}."
    else:
        words = "No longer kept in every chat: new chats carry it only while there is room."
    messages.success(request, words)
    return redirect(page_url(soul))


@login_required
@require_POST
def save_preference(request: HttpRequest) -> HttpResponse:
    """The member's default scope for what they ask to remember."""
    preference, _ = MemberPreference.objects.get_or_create(user=request.user)
    form = PreferenceForm(request.POST, instance=preference)
    soul = chosen_soul(request)
    target = page_url(soul) if soul else reverse("memory-page")
    if not form.is_valid():
        messages.error(request, "Not saved: choose private or household.")
        return redirect(target)
    form.save()
    messages.success(
        request, f"Saved: what you ask to remember is {preference.get_default_scope_display()}."
    )
    return redirect(target)


@login_required
@permission_required(services.MANAGE_MEMORY, raise_exception=True)
@require_http_methods(["GET", "POST"])
def forget_member(request: HttpRequest, member: str) -> HttpResponse:
    """For a manager: GET asks for confirmation; POST forgets everything ``member`` said."""
    soul = the_soul(request)
    if request.method == "GET":
        context = {"soul": soul, "member": member, "name": request.GET.get("name", member)}
        return render(request, "pippa_memory/forget_member_confirm.html", context)
    try:
        changed = changes.forget_member(soul=soul, user=request.user, member=member)
    except services.MemoryRefusal as refusal:
        return back_to_page(request, soul, refusal, nothing_done="Nothing was forgotten.")
    words = f"{changed.count} memories this member said to {soul.name} are forgotten."
    say_changed(request, changed, forgotten_words(changed, what=words))
    return redirect(page_url(soul))
