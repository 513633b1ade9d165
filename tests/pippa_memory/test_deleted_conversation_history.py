"""A deleted conversation's text is gone from the kept history (``webui/prompt/history.py``) of
every process at its next use of that cache, not only once idle, whatever deleted it (the delete
service, or its member's account deleted): here the delete runs in another process (``manage.py shell`` on the same database, as a second web worker would), and the next
turn of another conversation is this process's next use. (Threads share one cache: see
``tests/webui/prompt/test_history.py``.)"""

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.live_servers import database_url, server_environment
from webui.models import Conversation
from webui.prompt import history
from webui.turns.service import run_turn

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
SECRET = "the secret plan for Bob's birthday"


def kept_texts() -> str:
    """Every text this process's history cache holds, joined."""
    return "\n".join(m.text for entry in history.HISTORY_CACHE.values() for m in entry.messages)


def delete_in_another_process(conversation: Conversation) -> None:
    """The delete service, run by a process of its own on this test's database."""
    in_another_process(
        "from webui.models import Conversation\n"
        "from webui.web.conversations import delete_conversation\n"
        f"delete_conversation(conversation=Conversation.objects.get(pk='{conversation.pk}'))\n"
    )


def in_another_process(code: str) -> None:
    """``code`` run by ``manage.py shell`` on this test's database, as a second web worker would."""
    env = server_environment(
        DJANGO_SETTINGS_MODULE="pippa_site.settings", DATABASE_URL=database_url()
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.fixture
def two_talks(make_conversation: Any) -> tuple[Conversation, Conversation]:
    """Two conversations with kept histories; the first holds the secret."""
    history.HISTORY_CACHE.clear()
    deleted, other = make_conversation(), make_conversation()
    for index in range(2):
        run_turn(conversation=deleted, text=f"{SECRET} {index}")
        run_turn(conversation=other, text=f"the garden {index}")
    run_turn(conversation=deleted, text="and?")  # the secret is now in its kept history
    assert SECRET in kept_texts()
    return deleted, other


def test_a_conversation_deleted_by_another_process_leaves_this_ones_kept_history_at_next_use(
    two_talks: tuple[Conversation, Conversation],
) -> None:
    deleted, other = two_talks

    delete_in_another_process(deleted)
    assert not Conversation.objects.filter(pk=deleted.pk).exists()
    run_turn(conversation=other, text="how is the garden?")

    assert SECRET not in kept_texts()
    assert str(deleted.pk) not in history.HISTORY_CACHE
    assert "the garden 1" in kept_texts()  # only the deleted conversation's history went


def test_a_member_whose_account_is_deleted_leaves_no_kept_history_in_any_process(
    make_user: Any, make_conversation: Any
) -> None:
    history.HISTORY_CACHE.clear()
    bob, ann = make_user("bob"), make_user("ann")
    theirs, ours, annes = (make_conversation(viewer=who) for who in (bob, bob, ann))
    for index in range(2):
        for talk, text in ((theirs, SECRET), (ours, "the garden"), (annes, "the garden")):
            run_turn(conversation=talk, text=f"{text} {index}")
    run_turn(conversation=theirs, text="and?")
    assert SECRET in kept_texts()

    # Deleted by another process (the admin's account delete, as the ORM does it): this process
    # drops it at its next use of the cache.
    in_another_process(
        "from django.contrib.auth import get_user_model\n"
        f"get_user_model().objects.get(pk={bob.pk}).delete()\n"
    )
    run_turn(conversation=annes, text="how is the garden?")

    assert SECRET not in kept_texts()
    assert {str(theirs.pk), str(ours.pk)}.isdisjoint(history.HISTORY_CACHE.keys())
    assert str(annes.pk) in history.HISTORY_CACHE


def test_an_account_deleted_in_this_process_takes_its_kept_histories_at_once(
    make_user: Any, make_conversation: Any
) -> None:
    history.HISTORY_CACHE.clear()
    bob = make_user("bob")
    theirs = make_conversation(viewer=bob)
    for index in range(2):
        run_turn(conversation=theirs, text=f"{SECRET} {index}")
    assert SECRET in kept_texts()

    bob.delete()

    assert SECRET not in kept_texts()
