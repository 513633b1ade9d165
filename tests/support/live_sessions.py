"""A member logged in to a live server over real HTTP, as a browser's chat page would be: through
the login form, then sending the CSRF token with every request."""

import requests

from tests.support.factory_defaults import PASSWORD

#: Seconds a request or thread may take before the test gives up on it (a hang, not a timing check).
WAIT = 30


def logged_in(base_url: str, username: str) -> requests.Session:
    """A session logged in through the login form, sending the CSRF token as the chat page does."""
    session = requests.Session()
    session.get(f"{base_url}/accounts/login/", timeout=WAIT)
    answer = session.post(
        f"{base_url}/accounts/login/",
        data={
            "username": username,
            "password": PASSWORD,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        timeout=WAIT,
    )
    assert answer.url.rstrip("/") == base_url, "the login did not take"
    session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
    return session
