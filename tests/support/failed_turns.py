"""A turn whose vessel fails, as an overloaded provider would, for the tests of what a failure
keeps and what a retry does."""

from unittest import mock

import pytest

from tests.support.fakes import FailingAdapter
from webui.models import Conversation
from webui.turns.service import TurnError, run_turn
from webui.vessels import registry


def failed_turn(conversation: Conversation, text: str) -> TurnError:
    """Send ``text`` on ``conversation`` while the offline vessel fails (as
    :class:`FailingAdapter`); the turn's error. The vessel answers again afterwards."""
    with (
        mock.patch.dict(registry.ADAPTER_CLASSES, {"offline": FailingAdapter}),
        pytest.raises(TurnError) as caught,
    ):
        run_turn(conversation=conversation, text=text)
    return caught.value
