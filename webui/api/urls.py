from django.urls import path

from webui.api import views
from webui.ledger import api as ledger

urlpatterns = [
    path("conversations/", views.ConversationListView.as_view(), name="api-conversations"),
    path(
        "conversations/<uuid:conversation_id>/",
        views.ConversationDetailView.as_view(),
        name="api-conversation",
    ),
    path(
        "conversations/<uuid:conversation_id>/messages/",
        views.MessageListView.as_view(),
        name="api-messages",
    ),
    path(
        "conversations/<uuid:conversation_id>/retry/",
        views.RetryView.as_view(),
        name="api-retry",
    ),
    path(
        "conversations/<uuid:conversation_id>/stop/",
        views.StopView.as_view(),
        name="api-stop",
    ),
    path("ledger/", ledger.LedgerView.as_view(), name="api-ledger"),
]
