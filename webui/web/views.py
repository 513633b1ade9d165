"""Server-rendered pages for household members. Thin: forms in, one service or query call, out.

Household-wide changes are for accounts holding a Django permission, not for every member nor every
staff account: the memory tool switch and Test connection need ``webui.change_vessel``, waking a
soul needs ``webui.add_unattendedrun`` (a wake adds an unattended run). Without it: 403, and
nothing changes.
"""

import logging

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.utils import timezone
from django.views import defaults
from django.views.decorators.http import require_POST, require_safe

from webui.conf import webui_settings
from webui.extensions import memory_tool_notice
from webui.models import Conversation, Message, Soul, UnattendedRun, Vessel
from webui.prompt.vault import vault_problem
from webui.prune_windows import describe_days
from webui.turns.lock import turn_is_live
from webui.unattended.display import memory_line, post_heading
from webui.unattended.lease import interrupt_lapsed_runs
from webui.unattended.runner import run_wake
from webui.vessels.connection import check_connection, key_status
from webui.vessels.registry import vessel_problem
from webui.web.conversations import (
    TITLE_MAX_CHARS,
    ConversationError,
    delete_conversation,
    move_conversation,
    rename_conversation,
)
from webui.web.forms import (
    ConversationSearchForm,
    MemoryToolForm,
    MoveConversationForm,
    NewConversationForm,
    RenameConversationForm,
    WakeSoulForm,
)
from webui.web.messages_json import serialized_messages
from webui.web.page_slots import conversation_panels
from webui.web.selectors import (
    conversation_for,
    grouped_by_day,
    listed_conversations_for,
    memory_plugin_installed,
    memory_tool_on,
)
from webui.web.vessel_choice import default_vessel_for, vessel_readiness

logger = logging.getLogger(__name__)


@login_required
def conversation_list(request: HttpRequest) -> HttpResponse:
    """The member's conversations by the day they were last active, or those a search finds."""
    search = ConversationSearchForm(request.GET)
    query = search.cleaned_data["q"] if search.is_valid() else ""
    rows = listed_conversations_for(request.user, query=query).select_related("soul", "vessel")
    context = {"groups": grouped_by_day(rows), "search": search, "query": query}
    return render(request, "webui/conversation_list.html", context)


@login_required
def conversation_new(request: HttpRequest) -> HttpResponse:
    """Start a chat: on the member's default model (their own, else the household's), or on
    the one they choose; with no default, none is chosen for them."""
    default = default_vessel_for(request.user)
    form = NewConversationForm(request.POST or None, initial={"vessel": default})
    if request.method == "POST" and form.is_valid():
        conversation = Conversation.objects.create(
            soul=form.cleaned_data["soul"],
            vessel=form.cleaned_data["vessel"],
            title=form.cleaned_data["title"],
            temporary=form.cleaned_data["temporary"],
            viewer=request.user,
            kind=Conversation.Kind.CHAT,
        )
        return redirect(conversation)
    return render(request, "webui/conversation_new.html", {"form": form})


def own_conversation(request: HttpRequest, conversation_id: str) -> Conversation:
    """The viewer's own chat ``conversation_id``; 404 for anyone else's, staff's too."""
    return conversation_for(request.user, conversation_id, "soul", "vessel")


def temporary_notice(conversation: Conversation) -> str | None:
    """What the page says of a temporary chat while it is open: that it is not listed, and when
    ``manage.py prune`` removes it (``WEBUI_PRUNE_TEMPORARY_DAYS``)."""
    if not conversation.temporary:
        return None
    days = webui_settings.PRUNE_TEMPORARY_DAYS
    kept = (
        "It is kept until you delete it."
        if days == 0
        else f"The daily prune removes it once it has been quiet (no message) for {describe_days(days)}."
    )
    return f"Temporary chat — not listed among your conversations, nothing is remembered. {kept}"


def what_arrived(conversation: Conversation, unanswered: Message | None) -> str:
    """The text a turn answering ``unanswered`` had when its process died (its heartbeat wrote it
    on the row and its lease lapsed), for the page to show until the next turn keeps it as an
    interrupted reply; empty otherwise (no such turn, or it is still being written)."""
    if unanswered is None or conversation.turn_message_id != unanswered.pk:
        return ""
    if turn_is_live(conversation.pk):
        return ""
    return conversation.turn_partial_text


@login_required
def conversation_detail(request: HttpRequest, conversation_id: str) -> HttpResponse:
    conversation = own_conversation(request, conversation_id)
    rows = list(conversation.messages.select_related("vessel").order_by("sequence"))
    history = serialized_messages(conversation, rows)
    last_unanswered = bool(rows) and rows[-1].role == "user"
    context = {
        "what_arrived": what_arrived(conversation, rows[-1] if last_unanswered else None),
        "conversation": conversation,
        "history": history,
        "vault_problem": vault_problem(conversation.soul.vault_path),
        "last_unanswered": last_unanswered,
        "rename_form": RenameConversationForm(initial={"title": conversation.title}),
        "temporary_notice": temporary_notice(conversation),
        "memory_tool_on": memory_tool_on(conversation),
        "max_message_chars": webui_settings.MAX_MESSAGE_CHARS,
        "title_max_chars": TITLE_MAX_CHARS,
        "panels": conversation_panels(request, conversation),
        "move_form": MoveConversationForm(conversation=conversation),
    }
    return render(request, "webui/conversation_detail.html", context)


@login_required
@require_POST
def conversation_move(request: HttpRequest, conversation_id: str) -> HttpResponse:
    """Move the viewer's chat to another switched-on model: its next turn answers there."""
    conversation = own_conversation(request, conversation_id)
    form = MoveConversationForm(request.POST, conversation=conversation)
    if not form.is_valid():
        messages.error(request, f"Not moved: {' '.join(form.errors['vessel'])}")
        return redirect(conversation)
    vessel = form.cleaned_data["vessel"]
    try:
        move_conversation(conversation=conversation, vessel=vessel, moved_by=request.user)
    except ConversationError as error:
        messages.error(request, f"Not moved: {error}")
        return redirect(conversation)
    messages.success(
        request,
        f"This chat is now on {vessel.name}: your next message is answered there. The new model "
        "reads the whole chat afresh once, so that reply may be a little slower.",
    )
    return redirect(conversation)


@login_required
@require_POST
def conversation_rename(request: HttpRequest, conversation_id: str) -> HttpResponse:
    """Rename the viewer's conversation; a title that cannot be used is said, nothing changes."""
    conversation = own_conversation(request, conversation_id)
    form = RenameConversationForm(request.POST)
    if form.is_valid():
        rename_conversation(conversation=conversation, title=form.cleaned_data["title"])
        messages.success(request, "The conversation is renamed.")
    else:
        messages.error(request, f"Not renamed: {' '.join(form.errors['title'])}")
    return redirect(conversation)


@login_required
def conversation_delete(request: HttpRequest, conversation_id: str) -> HttpResponse:
    """``GET``: ask to confirm, saying what deleting means. ``POST``: delete it (refused while a
    reply is being written), then back to the list."""
    conversation = own_conversation(request, conversation_id)
    if request.method == "POST":
        try:
            delete_conversation(conversation=conversation)
        except ConversationError as error:
            messages.error(request, f"Not deleted: {error}")
            return redirect(conversation)
        messages.success(request, f"“{conversation.title or 'Untitled'}” is deleted.")
        return redirect("conversation-list")
    context = {"conversation": conversation, "memory_installed": memory_plugin_installed()}
    return render(request, "webui/conversation_delete.html", context)


CHANGE_VESSELS = "webui.change_vessel"
WAKE_SOULS = "webui.add_unattendedrun"


@login_required
def vessel_list(request: HttpRequest) -> HttpResponse:
    """Every vessel, whether it is ready (its last test or call answered and nothing stops it
    now) and which is the household's default. Its endpoint, key variable, the reason it cannot
    be used, what its last failed call said, and the controls, only for an account that may
    change vessels."""
    may_change = request.user.has_perm(CHANGE_VESSELS)
    rows = []
    for vessel in Vessel.objects.all():
        row = {"vessel": vessel, "readiness": vessel_readiness(vessel)}
        if may_change:
            row.update(key_status=key_status(vessel), problem=vessel_problem(vessel))
        rows.append(row)
    context = {"rows": rows, "may_change": may_change, "memory_notice": memory_tool_notice()}
    return render(request, "webui/vessel_list.html", context)


@login_required
@permission_required(CHANGE_VESSELS, raise_exception=True)
@require_POST
def vessel_test_connection(request: HttpRequest, slug: str) -> HttpResponse:
    vessel = get_object_or_404(Vessel, slug=slug)
    outcome = check_connection(vessel)
    (messages.success if outcome.ok else messages.error)(request, outcome.summary)
    return redirect("vessel-list")


@login_required
@permission_required(CHANGE_VESSELS, raise_exception=True)
@require_POST
def vessel_memory_tool(request: HttpRequest, slug: str) -> HttpResponse:
    vessel = get_object_or_404(Vessel, slug=slug)
    notice = memory_tool_notice()
    if notice:
        messages.error(request, f"The switch was not changed: {notice}")
        return redirect("vessel-list")
    form = MemoryToolForm(request.POST)
    if form.is_valid():
        vessel.memory_tool_enabled = form.cleaned_data["memory_tool_enabled"]
        vessel.save(update_fields=["memory_tool_enabled"])
        state = "on" if vessel.memory_tool_enabled else "off"
        messages.success(
            request,
            f"The memory tool is now {state} for {vessel.name}. "
            "It applies to conversations started from now on.",
        )
    return redirect("vessel-list")


@login_required
def soul_stream(request: HttpRequest) -> HttpResponse:
    """The souls' unattended posts, newest first; a run whose process ended mid-run is marked
    interrupted first (its lease lapsed), so none says it is being written for ever."""
    try:
        interrupt_lapsed_runs()
    except DatabaseError:  # a busy database: the scheduler's next tick marks them instead
        logger.warning("The Soul Stream could not mark interrupted runs now; the scheduler will")
    runs = (
        UnattendedRun.objects.select_related("soul", "job", "conversation")
        .prefetch_related("conversation__messages")
        .order_by("-started_at", "-id")[:50]
    )
    posts, now = [], timezone.now()
    for run in runs:
        replies = [
            m
            for m in (run.conversation.messages.all() if run.conversation else [])
            if m.role == "assistant"
        ]
        posts.append(
            {
                "run": run,
                "heading": post_heading(run, now=now),
                "text": replies[-1].content if replies else "",
                "memory": memory_line(run),
            }
        )
    context = {
        "posts": posts,
        "souls": Soul.objects.all(),
        "may_wake": request.user.has_perm(WAKE_SOULS),
    }
    return render(request, "webui/soul_stream.html", context)


@login_required
@permission_required(WAKE_SOULS, raise_exception=True)
@require_POST
def soul_stream_wake(request: HttpRequest) -> HttpResponse:
    """Wake a soul now (one real vessel call), for an account that may add unattended runs."""
    form = WakeSoulForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(form.errors["soul"]))
        return redirect("soul-stream")
    soul = form.cleaned_data["soul"]
    try:
        run = run_wake(soul=soul)
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect("soul-stream")
    if run.outcome == UnattendedRun.Outcome.SUCCEEDED:
        messages.success(request, f"{soul.name} woke and posted.")
    else:
        messages.error(request, f"{soul.name}'s wake failed: {run.error}")
    return redirect("soul-stream")


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for ``/favicon.ico`` whatever a page links: send them to the site's icon (a
    temporary redirect, since a deployment's static file names carry a content hash)."""
    return HttpResponseRedirect(static("webui/favicon.svg"))


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's 404 page, except under ``/api/``, where every answer is JSON in the API's error
    shape: an id that is no UUID, or any path no route matches (one with a newline, say)."""
    if request.path.startswith("/api/"):
        body = {
            "error": {
                "code": "not_found",
                "message": "No such API route, or nothing there.",
                "details": {},
            }
        }
        return JsonResponse(body, status=404)
    return defaults.page_not_found(request, exception)
