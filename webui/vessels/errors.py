"""One exception family for everything that can go wrong when a vessel is called."""

from typing import Any

from webui.text.redaction import fit_to_show


class VesselError(Exception):
    """A vessel call failed.

    ``code`` is our own short name for the cause (``rate_limited``, ``timeout``, ``auth_failed``...),
    ``retryable`` says whether trying again may help, and ``details`` keeps what the provider said
    (its status and error code) so the cause can be traced. The message and the provider's code
    quote what a provider said, so they are made fit to show: keys, bearer tokens and signing
    secrets are masked and lone surrogates replaced, here, before anyone can show or log them.
    """

    code = "vessel_error"
    retryable = False
    #: What the failed call cost, when the provider answered and said (else ``None``).
    usage: dict[str, int] | None = None

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        retryable: bool | None = None,
        status: int | None = None,
        provider_code: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        message = fit_to_show(message)
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if retryable is not None:
            self.retryable = retryable
        self.status = status
        self.provider_code = fit_to_show(str(provider_code)) if provider_code else provider_code
        self.retry_after = retry_after

    @property
    def details(self) -> dict[str, Any]:
        """What a caller may show: our code's context, never a secret."""
        details: dict[str, Any] = {"retryable": self.retryable}
        if self.status is not None:
            details["status"] = self.status
        if self.provider_code:
            details["provider_code"] = self.provider_code
        if self.retry_after is not None:
            details["retry_after"] = self.retry_after
        return details


class VesselConfigurationError(VesselError):
    """The vessel is not set up to be called (unknown adapter, missing key, disabled)."""

    code = "not_configured"
    retryable = False


def error_member(body: Any) -> Any:
    """The ``error`` member of a provider's JSON error body, or ``None`` when the body has none."""
    return body.get("error") if isinstance(body, dict) else None


def error_object_fields(error: Any, *code_keys: str) -> tuple[str | None, str | None]:
    """An error object's ``message``, and its code: the first of ``code_keys`` that is set (else
    the last one's value). ``(None, None)`` when ``error`` is not an object."""
    if not isinstance(error, dict):
        return None, None
    code = None
    for key in code_keys:
        code = error.get(key)
        if code:
            break
    return error.get("message"), code


def unencodable_text_error(provider_name: str, where: str) -> VesselError:
    """The error for an answer whose text holds a lone surrogate ``where`` ("its text", "tool
    call 0 (input/query)"): nothing can store or send it on, so the answer is not used."""
    return VesselError(
        f"{provider_name} answered with text that is not valid Unicode (a lone surrogate) in "
        f"{where}; the answer was not used.",
        code="unencodable_text",
    )
