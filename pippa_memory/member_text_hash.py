"""Hashes of member text, keyed with a secret of the site's, so staff cannot invert them.

A plain sha256 of a memory block, a bundle, a brain-door body or a withheld payload lets anyone
who reads it test guesses offline: a six-digit PIN in a member's private memory falls in a second.
So every such hash this side stores or shows is HMAC-SHA256 under a key derived from the site's
``SECRET_KEY`` with a purpose of its own (Django's ``salted_hmac``, as the cache ledger's section
hashes are, :mod:`webui.ledger.section_hash`): equal text still hashes equal, so the hash still
tells copies apart and checks a stored copy, but without the secret no guess can be checked.

A key rotated the Django way (the old one in ``SECRET_KEY_FALLBACKS``) still checks old hashes
(:func:`digest_matches`); so does a hash migrated from a plain one whose text was not kept (a brain
call's body): the plugin's migration 0019 keyed it in place, as HMAC of the plain hex.
"""

import hashlib
import hmac

from django.conf import settings
from django.utils.crypto import salted_hmac

#: What the derived key is for: no other use of ``SECRET_KEY`` yields the same key.
PURPOSE = "pippa_memory.member_text"


def keyed_sha256(data: str | bytes, *, secret: str | None = None) -> str:
    """HMAC-SHA256 of ``data`` (text as UTF-8) under the site's key (or ``secret``'s), as hex."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    key = settings.SECRET_KEY if secret is None else secret
    return salted_hmac(PURPOSE, raw, secret=key, algorithm="sha256").hexdigest()


def keyed_over_plain(plain_hex: str, *, secret: str | None = None) -> str:
    """How a stored plain sha256 whose text is gone is keyed in place: HMAC of its hex."""
    return keyed_sha256(plain_hex, secret=secret)


def site_secrets() -> list[str]:
    """The current key first, then the fallbacks a rotation keeps."""
    return [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", ())]


def digest_matches(digest: str, data: str | bytes) -> bool:
    """Whether ``digest`` is ``data``'s keyed hash under the current key or a fallback, or the
    keyed form of its plain sha256 (a row migrated from before hashes were keyed)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    plain = hashlib.sha256(raw).hexdigest()
    for secret in site_secrets():
        for candidate in (keyed_sha256(raw, secret=secret), keyed_over_plain(plain, secret=secret)):
            if hmac.compare_digest(candidate, digest):
                return True
    return False
