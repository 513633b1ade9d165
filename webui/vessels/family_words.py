"""What a member reads when a vessel could not answer: the cause in a family's words ("Home
server could not be reached"), with what to do. The provider's own message (an address, an
HTTP status, an exception's name) is for whoever runs the household: the turn logs it, and the
vessel keeps it for the vessels page's admin view (``Vessel.last_problem``), never on a chat.
"""

from webui.vessels.errors import VesselConfigurationError, VesselError

KEPT = "Your message is kept"

#: Each cause our errors name (``VesselError.code``), in the words a member reads, ``{name}``
#: being the vessel's name.
SENTENCES = {
    "connection_failed": "{name} could not be reached. " + KEPT + ": press Retry in a moment.",
    "timeout": "{name} took too long to answer. " + KEPT + ": press Retry in a moment.",
    "connection_lost": "{name} stopped answering partway. " + KEPT + ": press Retry.",
    "rate_limited": "{name} is busy right now. " + KEPT + ": press Retry in a minute.",
    "overloaded": "{name} is busy right now. " + KEPT + ": press Retry in a minute.",
    "server_error": "{name} had a problem on its side. " + KEPT + ": press Retry in a moment.",
    "quota_exhausted": "{name} has used up its allowance. "
    + KEPT
    + "; tell whoever runs the household, or move this chat to another model.",
    "request_too_large": "This chat has grown too long for {name}. "
    + KEPT
    + "; start a new chat, or move this one to another model.",
}
#: A vessel that is not set up right (a key refused, a wrong address or model name).
NOT_SET_UP = (
    "{name} is not set up right, so it could not answer. "
    + KEPT
    + "; tell whoever runs the household (the details are in their log)."
)
#: Anything else: the provider answered with something that could not be used.
UNUSABLE = "{name} gave an answer that could not be used. " + KEPT + ": press Retry."
SET_UP_CODES = frozenset(
    {"auth_failed", "forbidden", "not_found", "bad_request", "unexpected_redirect"}
)


def family_sentence(vessel_name: str, error: VesselError) -> str:
    """What went wrong calling the vessel ``vessel_name``, for a member: a cause they can act on
    and no technical detail (those are in ``error.message``, for the log)."""
    if error.code == "switched_off":
        return (
            f"{vessel_name} is switched off. {KEPT}: move this chat to another model, "
            "then press Retry."
        )
    if isinstance(error, VesselConfigurationError):
        return NOT_SET_UP.format(name=vessel_name)
    if error.code in SENTENCES:
        return SENTENCES[error.code].format(name=vessel_name)
    if error.code in SET_UP_CODES:
        return NOT_SET_UP.format(name=vessel_name)
    return UNUSABLE.format(name=vessel_name)
