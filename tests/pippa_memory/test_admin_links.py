""" "View on site" in the plug-in's admin: a conversation's pin links to the conversation's page
only for the account that has it (its viewer, or anyone for an unattended run's post); the
plug-in's records (pin history, blocks, outbox events, brain calls) have no page and no link."""

from typing import Any

import pytest

from pippa_memory.models import ConversationPin
from tests.support.admin_links import SiteLink, registered_labels, wrong_site_links
from tests.support.plugin_world import PluginWorld
from webui.models import Conversation, UnattendedRun

pytestmark = pytest.mark.django_db


def test_view_on_site_is_offered_exactly_where_the_account_has_a_page(
    world: PluginWorld,
    make_conversation: Any,
    soul: Any,
) -> None:
    root = world.users["superuser"]
    own = make_conversation(viewer=root)
    wake = make_conversation(viewer=None, kind=Conversation.Kind.WAKE)
    run = UnattendedRun.objects.create(kind="wake", soul=soul, conversation=wake)

    def pin(conversation: Conversation) -> ConversationPin:
        return ConversationPin.objects.get(pk=conversation.pk)

    cases = [
        SiteLink("staff's own conversation's pin", pin(own), root, f"/conversations/{own.pk}/"),
        SiteLink("a member's conversation's pin", pin(world.conversation), root, None),
        SiteLink("a wake's pin", pin(wake), root, f"/stream/#run-{run.pk}"),
        SiteLink("a pin record", world.pin, root, None),
        SiteLink("a memory block", world.block, root, None),
        SiteLink("an outbox event", world.event, root, None),
        SiteLink("a brain call", world.call, root, None),
    ]
    walked = {case.obj._meta.label_lower for case in cases}
    assert walked == registered_labels(owned_by="pippa_memory"), "a model is not walked"

    assert wrong_site_links(cases) == []
