"""Test clients signed in as one account: for the pages (a session), and for the JSON API (a
session, and the CSRF token sent as the pages send it); and accounts given permissions, as the
page and admin tests make them. Never imports the plug-in."""

from typing import Any

from django.contrib.auth.models import Permission
from django.test import Client
from rest_framework.test import APIClient


def client_as(user: Any, client_class: type[Client] = Client) -> Any:
    """A client of ``client_class`` logged in as ``user``."""
    client = client_class()
    client.force_login(user)
    return client


def page_as(user: Any) -> Client:
    """A client for the pages, logged in as ``user``."""
    return client_as(user)


def api_as(user: Any) -> APIClient:
    """A session-authenticated API client sending the CSRF token as the pages do."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/accounts/login/")
    client.credentials(HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    return client


def granted(user: Any, *codenames: str) -> Any:
    """``user``, holding the permissions named by ``codenames`` as well."""
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


def post_message(client: Any, conversation: Any, text: str) -> Any:
    """``client`` sends ``text`` on ``conversation`` through the chat API; the response."""
    return client.post(
        f"/api/conversations/{conversation.id}/messages/", {"text": text}, format="json"
    )
