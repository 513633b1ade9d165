"""Reads: which rows a household member may see, and how their conversation list is shown."""

from dataclasses import dataclass
from datetime import date, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Max, Q, QuerySet
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.formats import date_format

from webui.extensions import memory_tool_notice, registered_extensions
from webui.models import Conversation, Message

#: Longest search text taken, in characters; the rest is ignored.
SEARCH_MAX_CHARS = 200


def conversations_for(user: AbstractBaseUser) -> QuerySet[Conversation]:
    """The chats ``user`` started; unattended runs and other members' chats are not theirs."""
    return Conversation.objects.filter(viewer=user, kind=Conversation.Kind.CHAT)


def conversation_for(
    user: AbstractBaseUser, conversation_id: object, *related: str
) -> Conversation:
    """``user``'s own chat ``conversation_id``, with the ``related`` rows it is read with;
    :class:`~django.http.Http404` for anyone else's, staff's too."""
    rows = conversations_for(user)
    if related:
        rows = rows.select_related(*related)
    return get_object_or_404(rows, pk=conversation_id)


def listed_conversations_for(user: AbstractBaseUser, *, query: str = "") -> QuerySet[Conversation]:
    """The chats ``user`` sees listed, most recently active first (``last_active``: the last
    message's time, or the start): temporary chats are never listed. With ``query``, only those
    whose title or any message holds it, ignoring case. Only ``user``'s own chats are searched."""
    rows = conversations_for(user).filter(temporary=False)
    # NUL cannot be in a PostgreSQL text literal, and no message holds one (webui.text.canonical).
    query = " ".join(query.replace("\x00", " ").split())[:SEARCH_MAX_CHARS]
    if query:
        holding = Message.objects.filter(content__icontains=query).values("conversation_id")
        rows = rows.filter(Q(title__icontains=query) | Q(pk__in=holding))
    return rows.annotate(last_active=Coalesce(Max("messages__created_at"), "created_at")).order_by(
        "-last_active", "-created_at"
    )


@dataclass(frozen=True)
class DayGroup:
    """Conversations last active on one local day, under its label."""

    label: str
    conversations: list[Conversation]


def day_label(day: date, *, today: date) -> str:
    """``Today``, ``Yesterday``, or the date ("1 December 2026")."""
    if day == today:
        return "Today"
    if day == today - timedelta(days=1):
        return "Yesterday"
    return date_format(day, "j F Y")


def grouped_by_day(conversations: QuerySet[Conversation]) -> list[DayGroup]:
    """``conversations`` (annotated by :func:`listed_conversations_for`) in groups by the local
    day they were last active, in the order given."""
    today = timezone.localdate()
    groups: list[DayGroup] = []
    for conversation in conversations:
        label = day_label(timezone.localdate(conversation.last_active), today=today)
        if not groups or groups[-1].label != label:
            groups.append(DayGroup(label=label, conversations=[]))
        groups[-1].conversations.append(conversation)
    return groups


def memory_plugin_installed() -> bool:
    """Whether a plug-in that offers the memory tool (and so remembers) is registered."""
    return any(extension.offers_memory_tool for extension in registered_extensions())


def memory_tool_on(conversation: Conversation) -> bool:
    """Whether the model in ``conversation`` has a memory tool to use: once the first turn fixed
    the tools, whether one of them is a plug-in's memory tool; before, whether it will be (the
    vessel's switch is on, the plug-in can offer it, and the chat is not temporary)."""
    names = {
        extension.memory_tool_name
        for extension in registered_extensions()
        if extension.offers_memory_tool and extension.memory_tool_name
    }
    if conversation.offered_tools is not None:
        return any(tool.get("name") in names for tool in conversation.offered_tools)
    return bool(
        names
        and not conversation.temporary
        and conversation.vessel.memory_tool_enabled
        and memory_tool_notice() is None
    )
