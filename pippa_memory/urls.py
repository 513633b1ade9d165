"""The plug-in's API, which the host mounts at ``api/memory/``: the brain door and the items."""

from django.urls import path

from pippa_memory.brain.views import BrainDoorView
from pippa_memory.items import api, conversation_api, truth_api
from pippa_memory.portability.download_api import MemoryDownloadView

urlpatterns = [
    path("brain/", BrainDoorView.as_view(), name="brain-door"),
    path("items/", truth_api.ItemsView.as_view(), name="api-memory-items"),
    path("export/", MemoryDownloadView.as_view(), name="api-memory-export"),
    path("items/<str:item_id>/", api.ItemView.as_view(), name="api-memory-item"),
    path(
        "items/<str:item_id>/correct/",
        truth_api.CorrectView.as_view(),
        name="api-memory-item-correct",
    ),
    path(
        "items/<str:item_id>/restore/",
        truth_api.RestoreView.as_view(),
        name="api-memory-item-restore",
    ),
    path(
        "conversations/<uuid:conversation_id>/",
        conversation_api.ConversationMemoryView.as_view(),
        name="api-memory-conversation",
    ),
    path(
        "conversations/<uuid:conversation_id>/refresh/",
        conversation_api.ConversationRefreshView.as_view(),
        name="api-memory-conversation-refresh",
    ),
    path(
        "members/<str:member>/forget/",
        api.MemberForgetView.as_view(),
        name="api-memory-member-forget",
    ),
]
