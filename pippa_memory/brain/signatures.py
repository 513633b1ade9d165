"""Standard Webhooks signatures for the brain door (the ``standardwebhooks`` package).

``PIPPA_MEMORY_BRAIN_SECRET`` holds one or more ``whsec_…`` secrets separated by spaces: during a
rotation the engine signs with both, and a signature from any of them is accepted. Timestamps
must be within five minutes either way.
"""

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from pippa_memory.conf import memory_settings


class SignatureRejected(Exception):
    """The request's signature did not verify; the message says which check failed."""


def configured_secrets() -> list[Webhook]:
    """A verifier per configured secret; a secret that does not decode is left out."""
    verifiers = []
    for secret in memory_settings.BRAIN_SECRET.split():
        try:
            verifiers.append(Webhook(secret))
        except Exception:  # whatever decoding raises; system check pippa_memory.E004 reports it
            continue
    return verifiers


def verify(raw: bytes, headers: dict[str, str], verifiers: list[Webhook]) -> None:
    """Accept ``raw`` if any secret signed it; else raise :class:`SignatureRejected`."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if not all(lowered.get(h) for h in ("webhook-id", "webhook-timestamp", "webhook-signature")):
        raise SignatureRejected(
            "The webhook-id, webhook-timestamp and webhook-signature headers are required."
        )
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SignatureRejected("The body is not UTF-8.") from exc
    reason = "The signature does not match."
    for verifier in verifiers:
        try:
            verifier.verify(raw, lowered, json_parse=False)
            return
        except WebhookVerificationError as exc:
            if "timestamp" in str(exc).lower():
                reason = "The webhook-timestamp is outside the five-minute tolerance."
            elif "invalid signature headers" in str(exc).lower():
                reason = "The webhook-timestamp is not a number of seconds."
        except (ValueError, TypeError):
            reason = "The webhook-signature header is malformed (expected 'v1,<base64>')."
    raise SignatureRejected(reason)
