"""Fixtures for the tests of the memory page and its API."""

from typing import Any

import pytest

from reference_engine.server import ReferenceEngine
from webui.models import Conversation
from webui.turns.service import run_turn


@pytest.fixture
def unreached_chat(
    memory_on: ReferenceEngine, make_conversation: Any, configure: Any
) -> Conversation:
    """Alice's chat whose first turn found nothing listening at memory's address (it brought no
    memory in); the engine is reachable again afterwards."""
    conversation = make_conversation()
    configure(URL="http://127.0.0.1:9")
    run_turn(conversation=conversation, text="hello")
    configure(URL=memory_on.url)
    return conversation
