"""The ledger's section hashes, keyed with a secret of the site's.

A plain sha256 of a section lets anyone who reads the ledger test a guess offline: hash a likely
message and compare. So each section is hashed with HMAC-SHA256 under a key derived from the
site's ``SECRET_KEY`` with a purpose string of its own (Django's ``salted_hmac``, the way Django
derives its own signing keys): equal bytes still hash equal, so drift is found as before, but
without the secret no guess can be checked. No new secret to keep: ``SECRET_KEY`` already is the
site's, and it is rotated the Django way (the old one in ``SECRET_KEY_FALLBACKS``).

Each row names the key its sections were hashed with (:attr:`SectionHasher.key_id`, a fingerprint
that reveals nothing of the key). Rows written before sections were keyed held plain sha256; their
migration (``webui/migrations/0011``) keyed each of those hashes in place (HMAC of the sha256's
hex), marked :data:`OVER_SHA256`, so no plain hash is left to test guesses against. A call is
compared with the previous row under that row's own scheme and key: :func:`hasher_for` finds it
among the current key and ``SECRET_KEY_FALLBACKS``, so neither the change to keyed hashes nor a
rotation that keeps the old key as a fallback moves anything. A row whose key is gone altogether
cannot be compared with: see :mod:`webui.ledger.recorder`.
"""

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.utils.crypto import salted_hmac

#: What the derived key is for: no other use of ``SECRET_KEY`` yields the same key.
PURPOSE = "webui.ledger.section"
#: The ``key_id`` prefix of rows from before sections were keyed: their sha256, keyed.
OVER_SHA256 = "sha256/"


@dataclass(frozen=True)
class SectionHasher:
    """Hashes section bytes under one key; ``over_sha256``: the way the migration keyed the
    plain sha256 of rows from before (HMAC of the sha256's hex), to compare a call with them."""

    key_id: str
    secret: str
    over_sha256: bool = False

    def __call__(self, data: bytes) -> str:
        if self.over_sha256:
            data = hashlib.sha256(data).hexdigest().encode()
        return salted_hmac(PURPOSE, data, secret=self.secret, algorithm="sha256").hexdigest()


def key_id_of(secret: str) -> str:
    """A short fingerprint of the key derived from ``secret``: tells keys apart, reveals none."""
    return salted_hmac(f"{PURPOSE}.key-id", b"", secret=secret, algorithm="sha256").hexdigest()[:16]


def site_hasher() -> SectionHasher:
    """The hasher new rows are written with: keyed by the site's current ``SECRET_KEY``."""
    return SectionHasher(key_id=key_id_of(settings.SECRET_KEY), secret=settings.SECRET_KEY)


def hasher_for(key_id: str) -> SectionHasher | None:
    """The hasher a row naming ``key_id`` was written with, or None when its key is gone (or the
    row names none)."""
    fingerprint = key_id.removeprefix(OVER_SHA256)
    for secret in (settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", ())):
        if fingerprint and key_id_of(secret) == fingerprint:
            over = key_id.startswith(OVER_SHA256)
            return SectionHasher(key_id=key_id, secret=secret, over_sha256=over)
    return None
