"""The engine's side of cwkPippa's brain door: one signed ``assemble`` call, and what came of it.

The door is at ``WEBUI_ADDR`` (the address the Procfile's web line binds; ``/api/memory/brain/``
is appended) and every call is signed with ``PIPPA_MEMORY_BRAIN_SECRET`` by the
``standardwebhooks`` library, as the door checks it (``docs/brain-door.md``). During a rotation
(several secrets, space-separated) the call carries a signature from each.

Calls go through one ``requests.Session`` with connect and read deadlines and a cap on the
answer's size (``--brain-connect-timeout``, ``--brain-timeout``, ``--brain-max-bytes``).

A call either gives the door's output (:class:`Judgement`) or raises :class:`DoorFailed`, whose
``reason`` says in plain words what went wrong and whose ``transient`` says whether trying the
same call again later may help (the door was busy, throttled, or still running it).
"""

import json
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partialmethod
from typing import Any

import requests
from standardwebhooks import Webhook

from reference_engine.config import DEFAULTS

DOOR_PATH = "/api/memory/brain/"
#: Answers that mean "not now" rather than "no": the same call may be tried again later.
TRANSIENT_STATUSES = {409, 429, 503}
TRANSIENT_CODES = {"in_progress", "throttled", "busy"}
#: Every address a server may bind; the door is called on loopback instead.
ANY_ADDRESS = {"", "0.0.0.0", "::", "[::]"}  # noqa: S104 - names the bind address, binds nothing


class DoorFailed(Exception):
    """The door gave no judgement; ``reason`` says why in plain words."""

    def __init__(self, reason: str, *, transient: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.transient = reason, transient


@dataclass(frozen=True)
class Judgement:
    """What the door answered: the role's ``output``, who gave it, and whether anyone reasoned."""

    output: dict[str, Any]
    vessel: str
    synthetic: bool
    request_id: str


def door_url(address: str) -> str:
    """The door's URL from ``address`` (a URL, or the ``host:port`` the web server binds);
    ``""`` when it is empty (the door is not configured)."""
    address = address.strip()
    if not address:
        return ""
    if "://" in address:
        return (
            address
            if address.rstrip("/").endswith(DOOR_PATH.rstrip("/"))
            else (address.rstrip("/") + DOOR_PATH)
        )
    host, _, port = address.rpartition(":")
    if host in ANY_ADDRESS:
        host = "127.0.0.1"
    return f"http://{host}:{port}{DOOR_PATH}" if port else f"http://{address}{DOOR_PATH}"


class BrainClient:
    """Signed calls to the door at ``url`` (see :func:`door_url`); ``configured`` is False without a URL or a secret
    (then every call fails at once, saying so).

    Every call goes through one ``requests.Session`` (its connections kept alive between asks),
    with a connect and a read deadline and a cap on the answer's size; the session ignores the
    environment's proxies and ``~/.netrc`` (``trust_env`` off), so a brain-door call and its
    signature go only to the door.
    """

    def __init__(
        self,
        url: str,
        secret: str,
        *,
        timeout: float = DEFAULTS.brain_timeout,
        connect_timeout: float = DEFAULTS.brain_connect_timeout,
        max_bytes: int = DEFAULTS.brain_max_bytes,
    ) -> None:
        self.url, self.timeout, self.max_bytes = door_url(url), timeout, max_bytes
        self.connect_timeout = min(connect_timeout, timeout)
        self.session = requests.Session()
        self.session.trust_env = False
        self.signers: list[Webhook] = []
        self.problem = ""
        for each in secret.split():
            try:
                self.signers.append(Webhook(each))
            except Exception:  # whatever decoding raises: the secret cannot sign
                self.problem = "the brain-door secret is not a whsec_ secret"
        if not url:
            self.problem = "no brain door is configured"
        elif not self.signers:
            self.problem = self.problem or ("no brain-door secret is configured")

    @property
    def configured(self) -> bool:
        return not self.problem

    def headers(self, webhook_id: str, body: str) -> dict[str, str]:
        now = datetime.now(tz=UTC)
        signatures = " ".join(signer.sign(webhook_id, now, body) for signer in self.signers)
        return {
            "Content-Type": "application/json",
            "User-Agent": "pippa-reference-engine (brain door)",
            "webhook-id": webhook_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": signatures,
        }

    def curate(
        self, soul: str, data: dict[str, Any], *, webhook_id: str | None = None
    ) -> Judgement:
        """Ask the door to ``curate`` ``data["items"]`` for ``soul``: which to keep."""
        return self.judge("curate", soul, data, webhook_id=webhook_id)

    def judge(
        self,
        role: str,
        soul: str,
        data: dict[str, Any],
        *,
        viewer: str | None = None,
        webhook_id: str | None = None,
    ) -> Judgement:
        """One signed call of ``role``; :class:`DoorFailed` saying why when it gave nothing."""
        if not self.configured:
            raise DoorFailed(self.problem)
        request = {"role": role, "soul": soul, "viewer": viewer, "input": data}
        body = json.dumps(request, sort_keys=True)
        webhook_id = webhook_id or f"msg_{uuid.uuid4().hex}"
        deadline = time.monotonic() + self.timeout
        try:
            with self.session.post(
                self.url,
                data=body.encode("utf-8"),
                headers=self.headers(webhook_id, body),
                timeout=(self.connect_timeout, self.timeout),
                allow_redirects=False,
                stream=True,
            ) as reply:
                content = self.read_capped(reply, deadline)
        except requests.Timeout as exc:
            raise DoorFailed(f"the brain door did not answer within {self.timeout:g} s") from exc
        except requests.RequestException as exc:
            raise DoorFailed(f"the brain door could not be reached ({type(exc).__name__})") from exc
        return judgement_of(reply.status_code, content, role)

    # The roles asked for a viewer are :meth:`judge` with the role named; :meth:`curate` takes none.
    assemble = partialmethod(judge, "assemble")
    """Ask the door to ``assemble`` for ``soul``, from facts ``viewer`` may see (None: an
    unattended run, household only), so the door can leave out any its site knows that viewer
    may no longer see; a repeated ``webhook_id`` with the same body gets the door's stored
    answer and runs no vessel again."""
    decide = partialmethod(judge, "decide")
    """Ask the door to ``decide`` ``data["question"]`` among ``data["options"]`` for ``soul``,
    from memories ``viewer`` may see: a choice, a confidence and a reason."""

    def read_capped(self, reply: requests.Response, deadline: float) -> bytes:
        """The answer's body, at most ``max_bytes`` of it, read by ``deadline`` (the read
        timeout bounds each wait, this the whole: a door dripping bytes cannot hold the thinker)."""
        declared = reply.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise DoorFailed(f"the brain door's answer was larger than {self.max_bytes} bytes")
        content = bytearray()
        for piece in reply.iter_content(chunk_size=65536):
            content += piece
            if len(content) > self.max_bytes:
                raise DoorFailed(f"the brain door's answer was larger than {self.max_bytes} bytes")
            if time.monotonic() > deadline:
                raise DoorFailed(f"the brain door did not answer within {self.timeout:g} s")
        return bytes(content)

    def close(self) -> None:
        """Close the session's kept-alive connections."""
        self.session.close()


def judgement_of(status: int, content: bytes, role: str = "assemble") -> Judgement:
    """The door's answer to ``role`` (its status and body) as a :class:`Judgement`, else
    :class:`DoorFailed` saying why."""
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if status != 200:
        error = body.get("error", {}) if isinstance(body, dict) else {}
        code = error.get("code", "") if isinstance(error, dict) else ""
        message = error.get("message", "") if isinstance(error, dict) else ""
        transient = status in TRANSIENT_STATUSES and code in TRANSIENT_CODES
        said = f" {code}: {message}" if code else ""
        raise DoorFailed(f"the brain door answered {status}{said}".rstrip(), transient=transient)
    output = body.get("output") if isinstance(body, dict) else None
    problem = output_problem(output, role)
    if problem:
        raise DoorFailed(problem)
    assert isinstance(body, dict)
    assert isinstance(output, dict)
    return Judgement(
        output=output,
        vessel=str(body.get("vessel", "")),
        synthetic=bool(body.get("synthetic", False)),
        request_id=str(body.get("request_id", "")),
    )


def id_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(i, str) for i in value)


def output_problem(output: Any, role: str) -> str:
    """Why the door's ``output`` is not what ``role`` answers ('' when it is)."""
    if role == "decide":
        if not isinstance(output, dict) or not isinstance(output.get("choice"), str):
            return "the brain door's answer did not name a choice"
        confidence = output.get("confidence")
        if isinstance(confidence, bool) or not isinstance(confidence, int | float):
            return "the brain door's answer did not give a confidence"
        if not 0 <= confidence <= 1 or not isinstance(output.get("reason"), str):
            return "the brain door's answer gave no confidence from 0 to 1 and reason"
        return ""
    if role == "curate":
        if not isinstance(output, dict) or not id_list(output.get("keep")):
            return "the brain door's answer did not list the memories to keep"
        return ""
    if not isinstance(output, dict) or not isinstance(output.get("block"), str):
        return "the brain door's answer was not an assembled block"
    if not id_list(output.get("used")):
        return "the brain door's answer did not list the facts it used"
    return ""
