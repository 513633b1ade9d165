"""Test clients signed in as one account: for the pages (a session), and for the JSON API (a
session, and the CSRF token sent as the pages send it). Never imports the plug-in."""

from typing import Any

from django.test import Client
from rest_framework.test import APIClient


def page_as(user: Any) -> Client:
    """A client for the pages, logged in as ``user``."""
    client = Client()
    client.force_login(user)
    return client


def api_as(user: Any) -> APIClient:
    """A session-authenticated API client sending the CSRF token as the pages do."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/accounts/login/")
    client.credentials(HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    return client
