"""Reads about the models (vessels) a member may choose: whether each is ready, in words, and the
one a new chat starts on.

A vessel is ready only once a call to it has worked (its last Test connection or turn call
answered: ``Vessel.last_outcome``) and nothing stops it now (switched off, no key, no endpoint).
A new chat starts on the member's own default model, else the household's (an admin's explicit
choice, ``Vessel.household_default``), and only while that one is switched on; else on none, and
the member chooses: a vessel never becomes anyone's default by being added.
"""

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser

from webui.models import MemberSettings, Vessel
from webui.vessels.registry import vessel_problem


@dataclass(frozen=True)
class Readiness:
    """Whether a vessel can be chosen with confidence now (``kind``: ``ready``, ``untried``,
    ``failed``, ``not_set_up``, ``switched_off``), and the words for it on its row."""

    kind: str
    words: str

    @property
    def ready(self) -> bool:
        return self.kind == "ready"


def vessel_readiness(vessel: Vessel) -> Readiness:
    """How ``vessel`` stands for a member: ready, or why not, without technical detail."""
    if not vessel.enabled:
        return Readiness("switched_off", "Switched off")
    if vessel_problem(vessel):
        return Readiness("not_set_up", "Not set up yet")
    if vessel.last_outcome == Vessel.Outcome.ANSWERED:
        return Readiness("ready", "Ready")
    if vessel.last_outcome == Vessel.Outcome.FAILED:
        return Readiness("failed", "Not answering: its last call failed")
    return Readiness("untried", "Not tried yet")


def household_default_vessel() -> Vessel | None:
    """The vessel an admin chose as the household's default, while it is switched on."""
    return Vessel.objects.filter(household_default=True, enabled=True).first()


def default_vessel_for(user: AbstractBaseUser) -> Vessel | None:
    """The vessel ``user``'s new chat starts on: their own default while it is switched on, else
    the household's, else ``None`` (they choose)."""
    own = (
        MemberSettings.objects.filter(user_id=user.pk, default_vessel__enabled=True)
        .select_related("default_vessel")
        .first()
    )
    if own is not None and own.default_vessel is not None:
        return own.default_vessel
    return household_default_vessel()


def choice_label(vessel: Vessel) -> str:
    """A vessel as the model pickers list it: its name, and "(not answering)" or "(not set up
    yet)" when it failed at its last call or cannot be called (one not tried yet is listed by
    its name alone; the Models page says it is not tried)."""
    readiness = vessel_readiness(vessel)
    if readiness.kind in ("ready", "untried"):
        return vessel.name
    if readiness.kind == "failed":
        return f"{vessel.name} (not answering)"
    return f"{vessel.name} ({readiness.words.lower()})"
