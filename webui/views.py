"""Server-rendered pages for household members. Thin: forms in, one service or query call, out."""

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from webui.api.serializers import MessageSerializer
from webui.extensions import memory_tool_notice
from webui.forms import MemoryToolForm, NewConversationForm, WakeSoulForm
from webui.models import Conversation, Soul, UnattendedRun, Vessel
from webui.selectors import conversations_for
from webui.unattended import run_wake
from webui.vault import vault_problem
from webui.vessels.connection import check_connection, key_status
from webui.vessels.registry import vessel_problem


@login_required
def conversation_list(request: HttpRequest) -> HttpResponse:
    conversations = conversations_for(request.user).select_related("soul", "vessel")
    return render(request, "webui/conversation_list.html", {"conversations": conversations})


@login_required
def conversation_new(request: HttpRequest) -> HttpResponse:
    form = NewConversationForm(request.POST or None)
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


@login_required
def conversation_detail(request: HttpRequest, conversation_id: str) -> HttpResponse:
    conversation = get_object_or_404(
        conversations_for(request.user).select_related("soul", "vessel"), pk=conversation_id
    )
    rows = conversation.messages.select_related("vessel").order_by("sequence")
    history = MessageSerializer(rows, many=True).data
    last_unanswered = bool(rows) and rows.last().role == "user"
    context = {
        "conversation": conversation,
        "history": history,
        "vault_problem": vault_problem(conversation.soul.vault_path),
        "last_unanswered": last_unanswered,
    }
    return render(request, "webui/conversation_detail.html", context)


@login_required
def vessel_list(request: HttpRequest) -> HttpResponse:
    rows = [
        {"vessel": vessel, "key_status": key_status(vessel), "problem": vessel_problem(vessel)}
        for vessel in Vessel.objects.all()
    ]
    context = {"rows": rows, "memory_notice": memory_tool_notice()}
    return render(request, "webui/vessel_list.html", context)


@login_required
@require_POST
def vessel_test_connection(request: HttpRequest, slug: str) -> HttpResponse:
    vessel = get_object_or_404(Vessel, slug=slug)
    outcome = check_connection(vessel)
    (messages.success if outcome.ok else messages.error)(request, outcome.summary)
    return redirect("vessel-list")


@login_required
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
    """The souls' unattended posts, newest first."""
    runs = (
        UnattendedRun.objects.select_related("soul", "job", "conversation")
        .prefetch_related("conversation__messages")
        .order_by("-started_at", "-id")[:50]
    )
    posts = []
    for run in runs:
        replies = [
            m
            for m in (run.conversation.messages.all() if run.conversation else [])
            if m.role == "assistant"
        ]
        posts.append({"run": run, "text": replies[-1].content if replies else ""})
    context = {"posts": posts, "souls": Soul.objects.all()}
    return render(request, "webui/soul_stream.html", context)


@staff_member_required
@require_POST
def soul_stream_wake(request: HttpRequest) -> HttpResponse:
    """Staff only: wake a soul now."""
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
