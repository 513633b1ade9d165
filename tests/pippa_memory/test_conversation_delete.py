"""Deleting a conversation on the host takes the memory plug-in's rows for it along (their keys
cascade), and leaves other conversations' rows alone."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from pippa_memory.models import PendingAsk, PinRecord
from webui.models import Conversation

pytestmark = pytest.mark.django_db


def test_deleting_a_conversation_removes_its_pin_records_and_pending_asks(
    auth_client: APIClient, make_conversation: Any, soul: Any
) -> None:
    conversation = make_conversation()
    kept = make_conversation()
    for row in (conversation, kept):
        PinRecord.objects.create(conversation=row, soul=soul, outcome="absent", reason="down")
        PendingAsk.objects.create(conversation=row, ask_id=f"ask-{row.pk}", question="Tea?")

    response = auth_client.delete(f"/api/conversations/{conversation.pk}/")

    assert response.status_code == 204
    assert not Conversation.objects.filter(pk=conversation.pk).exists()
    assert list(PinRecord.objects.values_list("conversation_id", flat=True)) == [kept.pk]
    assert list(PendingAsk.objects.values_list("conversation_id", flat=True)) == [kept.pk]
