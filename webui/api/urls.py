from django.urls import path

from webui import turn_events_standin
from webui.api import views

urlpatterns = [
    path("conversations/", views.ConversationListView.as_view(), name="api-conversations"),
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
    # TEMPORARY: the stand-in's stop route until Interface 2's own lands (SPEC15.md).
    path(
        "conversations/<uuid:conversation_id>/stop/",
        turn_events_standin.StopView.as_view(),
        name="api-stop",
    ),
]
