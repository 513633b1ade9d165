"""The plug-in's API, which the host mounts at ``api/memory/``: the brain door and the items."""

from django.urls import path

from pippa_memory.brain.views import BrainDoorView
from pippa_memory.items.api import ItemView, MemberForgetView
from pippa_memory.items.conversation_api import ConversationMemoryView, ConversationRefreshView
from pippa_memory.items.truth_api import CorrectView, ItemsView, RestoreView
from pippa_memory.portability.download_api import MemoryDownloadView

urlpatterns = [
    path("brain/", BrainDoorView.as_view(), name="brain-door"),
    path("items/", ItemsView.as_view(), name="api-memory-items"),
    path("export/", MemoryDownloadView.as_view(), name="api-memory-export"),
    path("items/<str:item_id>/", ItemView.as_view(), name="api-memory-item"),
    path("items/<str:item_id>/correct/", CorrectView.as_view(), name="api-memory-item-correct"),
    path("items/<str:item_id>/restore/", RestoreView.as_view(), name="api-memory-item-restore"),
    path(
        "conversations/<uuid:conversation_id>/",
        ConversationMemoryView.as_view(),
        name="api-memory-conversation",
    ),
    path(
        "conversations/<uuid:conversation_id>/refresh/",
        ConversationRefreshView.as_view(),
        name="api-memory-conversation-refresh",
    ),
    path(
        "members/<str:member>/forget/", MemberForgetView.as_view(), name="api-memory-member-forget"
    ),
]
