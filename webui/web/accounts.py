"""Logging in and out. The login form checks the username's length itself; logging out says that
it happened: Django's logout, then a notice on the page it leads to (the login page), so a member
who clicks "Log out" sees that they are logged out."""

from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.validators import MaxLengthValidator
from django.http import HttpRequest, HttpResponse


class LoginForm(AuthenticationForm):
    """Django's login form, checking the username's length as well as telling the browser
    (``maxlength``): a longer one is a form error that says so, never a lookup nor a failed-login
    row (django-axes keeps the username in 255 characters, so on PostgreSQL it was a 500)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        username = self.fields["username"]
        username.validators.append(MaxLengthValidator(username.max_length))


class LoginView(auth_views.LoginView):
    """Django's ``LoginView`` with :class:`LoginForm`."""

    authentication_form = LoginForm


class LogoutView(auth_views.LogoutView):
    """Django's ``LogoutView``, saying "You are logged out." on the page it redirects to."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().post(request, *args, **kwargs)
        # The message store outlives the session's flush: it is written with this response.
        messages.success(request, "You are logged out. Log in again whenever you like.")
        return response
