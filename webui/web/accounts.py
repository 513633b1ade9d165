"""Logging in and out, and a member's own account page. The login form checks the username's
length itself; logging out says that it happened: Django's logout, then a notice on the page it
leads to (the login page), so a member who clicks "Log out" sees that they are logged out.

The account page (``/accounts/``) changes what is the member's own: the name they go by (the
account's own name, which the disclosure of a new chat and memory's "who said it" read), the
model their new chats start on, and the time zone their pages show times in
(:class:`~webui.models.MemberSettings`). Their password changes through Django's own views
(``/accounts/password_change/``), in the site's templates.
"""

from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.validators import MaxLengthValidator
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy

from webui.models import MemberSettings, Vessel
from webui.web.forms import AccountForm
from webui.web.vessel_choice import household_default_vessel


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


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's own password change (the old password, then the new one twice, checked by the
    site's password validators; the member stays logged in), saying so on the account page."""

    success_url = reverse_lazy("account")

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        messages.success(self.request, "Your password is changed. You are still logged in here.")
        return response


def save_account(
    *, user: Any, display_name: str, default_vessel: Vessel | None, time_zone: str
) -> None:
    """Keep ``user``'s name, default model and time zone, in one transaction. The name is the
    account's own (``first_name``, with ``last_name`` cleared, so ``get_full_name`` gives it)."""
    with transaction.atomic(durable=True):
        user.first_name, user.last_name = display_name, ""
        user.save(update_fields=["first_name", "last_name"])
        MemberSettings.objects.update_or_create(
            user=user, defaults={"default_vessel": default_vessel, "time_zone": time_zone}
        )


@login_required
def account(request: HttpRequest) -> HttpResponse:
    """The member's own account page: their name, default model and time zone; a link to change
    their password. A form error says what is wrong and changes nothing."""
    kept = MemberSettings.objects.filter(user=request.user).first()
    initial = {
        "display_name": request.user.get_full_name(),
        "default_vessel": kept.default_vessel_id if kept else None,
        "time_zone": kept.time_zone if kept else "",
    }
    form = AccountForm(
        request.POST or None, initial=initial, household_default=household_default_vessel()
    )
    if request.method == "POST" and form.is_valid():
        save_account(user=request.user, **form.cleaned_data)
        messages.success(request, "Your account is saved.")
        return redirect("account")
    return render(request, "webui/account.html", {"form": form})
