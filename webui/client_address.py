"""The address a request came from, by one rule for every throttle: failed logins and the brain door."""

from django.http import HttpRequest
from rest_framework.throttling import BaseThrottle


def client_address(request: HttpRequest) -> str:
    """``REMOTE_ADDR``, or with ``WEBUI_PROXY_COUNT`` proxies in front, the address in
    ``X-Forwarded-For`` that the outermost of them saw (Django REST framework's ``NUM_PROXIES``
    rule, read from the right, so a client cannot choose its own address by sending the header).
    """
    return BaseThrottle().get_ident(request)
