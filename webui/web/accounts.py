"""Logging out, with a word that it happened: Django's logout, then a notice on the page it
leads to (the login page), so a member who clicks "Log out" sees that they are logged out."""

from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse


class LogoutView(auth_views.LogoutView):
    """Django's ``LogoutView``, saying "You are logged out." on the page it redirects to."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().post(request, *args, **kwargs)
        # The message store outlives the session's flush: it is written with this response.
        messages.success(request, "You are logged out. Log in again whenever you like.")
        return response
