"""Reads: which rows a household member may see."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from webui.models import Conversation


def conversations_for(user: AbstractBaseUser) -> QuerySet[Conversation]:
    """The chats ``user`` started; unattended runs and other members' chats are not theirs."""
    return Conversation.objects.filter(viewer=user, kind=Conversation.Kind.CHAT)
