"""The host's JSON API, mounted at ``api/``: conversations, their messages and turns, the ledger."""

from django.urls import path

from webui.api import ledger, views

#: Each route under one conversation (``conversations/<id>/``): its tail, its view, its name.
CONVERSATION_ROUTES = (
    ("", views.ConversationDetailView, "api-conversation"),
    ("messages/", views.MessageListView, "api-messages"),
    ("retry/", views.RetryView, "api-retry"),
    ("stop/", views.StopView, "api-stop"),
)

urlpatterns = [
    path("conversations/", views.ConversationListView.as_view(), name="api-conversations"),
    *(
        path(f"conversations/<uuid:conversation_id>/{tail}", view.as_view(), name=name)
        for tail, view, name in CONVERSATION_ROUTES
    ),
    path("ledger/", ledger.LedgerView.as_view(), name="api-ledger"),
]
