"""Django test clients logged in as an account, and accounts given permissions, as the page and
admin tests make them."""

from typing import Any

from django.contrib.auth.models import Permission
from django.test import Client


def client_as(user: Any, client_class: type[Client] = Client) -> Any:
    """A client of ``client_class`` logged in as ``user``."""
    client = client_class()
    client.force_login(user)
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
