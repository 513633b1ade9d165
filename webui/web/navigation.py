"""Links a plug-in adds to the site's navigation, since the host never imports a plug-in.

A plug-in registers a :class:`NavigationLink` from its ``AppConfig.ready()`` with
:func:`register_navigation_link`; the context processor :func:`navigation_links` hands the links to
every page, and ``base.html`` shows them to a logged-in account after the host's own links. With
no plug-in installed there are none but the host's staff pages (the cache bill), registered the
same way so that each link is shown only to the accounts its page lets in.
"""

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.urls import reverse


@dataclass(frozen=True)
class NavigationLink:
    """One link: the words shown and the name of the URL it points to (reversed per request).

    ``staff_only`` and ``permission`` (a Django permission, ``app.codename``) hide the link from
    accounts its page refuses, so nobody is shown a link to a 403.
    """

    label: str
    url_name: str
    staff_only: bool = False
    permission: str = ""

    def shown_to(self, user: Any) -> bool:
        if self.staff_only and not user.is_staff:
            return False
        return not self.permission or user.has_perm(self.permission)


_links: list[NavigationLink] = []


def register_navigation_link(link: NavigationLink) -> None:
    """Add ``link`` to the navigation; registering the same URL name again replaces it."""
    _links[:] = [known for known in _links if known.url_name != link.url_name]
    _links.append(link)


def navigation_links(request: HttpRequest) -> dict[str, Any]:
    """The context processor: ``plugin_links``, ``(label, url)`` pairs for a logged-in account,
    in registration order, each only where its page lets the account in; none for anonymous
    visitors."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"plugin_links": []}
    links = [(link.label, reverse(link.url_name)) for link in _links if link.shown_to(user)]
    return {"plugin_links": links}
