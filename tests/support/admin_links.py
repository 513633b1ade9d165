""" "View on site" in the admin, checked the same way for the host's models and the plug-in's: on
an object's change page the link is there exactly when the account has a page for it, and
following it lands on that page with a 200."""

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.contrib import admin
from django.db.models import Model
from django.test import Client

SITE_LINK = re.compile(r'<a href="([^"]*)" class="viewsitelink">')


@dataclass(frozen=True)
class SiteLink:
    """One change page as one account sees it, and where its "View on site" must lead (a path,
    fragment included), or None for no link at all."""

    what: str
    obj: Model
    user: Any
    page: str | None


def change_url(obj: Model) -> str:
    meta = obj._meta
    return f"/admin/{meta.app_label}/{meta.model_name}/{obj.pk}/change/"


def site_link_on(client: Client, obj: Model) -> str | None:
    """The "View on site" link on ``obj``'s change page, or None when there is none."""
    answer = client.get(change_url(obj))
    assert answer.status_code == 200, f"{change_url(obj)} answered {answer.status_code}"
    found = SITE_LINK.search(answer.content.decode())
    return found.group(1) if found else None


def wrong_site_links(cases: list[SiteLink]) -> list[str]:
    """Each case whose change page offers the wrong link, or one that does not lead to a page."""
    wrong = []
    for case in cases:
        client = Client()
        client.force_login(case.user)
        link = site_link_on(client, case.obj)
        if case.page is None:
            if link is not None:
                wrong.append(f"{case.what}: offers View on site ({link}) but has no page")
            continue
        if link is None:
            wrong.append(f"{case.what}: no View on site, but {case.page} is its page")
            continue
        answer = client.get(link, follow=True)
        landed = urlsplit(answer.redirect_chain[-1][0] if answer.redirect_chain else link)
        landed = landed.path + (f"#{landed.fragment}" if landed.fragment else "")
        if answer.status_code != 200 or landed != case.page:
            wrong.append(
                f"{case.what}: View on site {link} led to {landed} ({answer.status_code}), "
                f"not {case.page}"
            )
    return wrong


def registered_labels(*, owned_by: str | None = None, not_owned_by: str | None = None) -> set[str]:
    """The labels of the models with a change page in the admin, by the app whose admin it is."""
    labels = set()
    for model, model_admin in admin.site._registry.items():
        owner = type(model_admin).__module__.split(".")[0]
        if (owned_by is None or owner == owned_by) and owner != not_owned_by:
            labels.add(model._meta.label_lower)
    return labels
