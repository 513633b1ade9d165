"""System checks for the host: unreadable vaults are reported before anyone chats."""

from typing import Any

from django.core import checks
from django.db import DatabaseError

from webui.prompt.vault import vault_problem
from webui.vessels.registry import vessel_problem


@checks.register()
def check_soul_vaults(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``webui.W001``: a soul whose vault is missing or unreadable."""
    from webui.models import Soul

    try:
        souls = list(Soul.objects.all())
    except DatabaseError:
        # Before the first migrate there is nothing to check.
        return []
    problems = []
    for soul in souls:
        problem = vault_problem(soul.vault_path)
        if problem:
            problems.append(
                checks.Warning(
                    f"{soul.name}'s vault cannot be read: {problem}",
                    hint="Fix the soul's vault path in the admin, or restore the folder.",
                    obj=soul,
                    id="webui.W001",
                )
            )
    return problems


@checks.register()
def check_vessels(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``webui.W002``: an enabled vessel that cannot be called (no key, no endpoint, no adapter)."""
    from webui.models import Vessel

    try:
        vessels = list(Vessel.objects.filter(enabled=True))
    except DatabaseError:
        return []
    return [
        checks.Warning(
            problem,
            hint="Set the environment variable or fix the vessel in the admin, then restart.",
            obj=vessel,
            id="webui.W002",
        )
        for vessel in vessels
        if (problem := vessel_problem(vessel))
    ]


@checks.register()
def check_retention_windows(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``webui.E001``: a retention window (the host's or a plug-in's) that ``prune`` cannot use."""
    from django.utils import timezone

    from webui.prune_windows import RetentionError
    from webui.retention import prune_targets

    try:
        prune_targets(now=timezone.now())  # builds the querysets only: no query runs
    except RetentionError as error:
        return [
            checks.Error(
                str(error),
                hint="Fix the variable and restart; until then the daily prune fails.",
                id="webui.E001",
            )
        ]
    return []


@checks.register()
def check_cache_prices(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``webui.E002``: a cache price table the cache bill cannot be estimated from."""
    from webui.conf import webui_settings
    from webui.ledger.prices import price_table_problems

    return [
        checks.Error(
            problem,
            hint="Fix WEBUI_CACHE_PRICES (docs/configuration.md, Cache prices) and restart.",
            id="webui.E002",
        )
        for problem in price_table_problems(webui_settings.CACHE_PRICES)
    ]


@checks.register(checks.Tags.admin)
def check_admins_guard_member_words(
    app_configs: Any = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """``webui.E003``: a registered admin whose model holds free text but that accepts lookups
    on it from the query string (a plug-in's admin, or an installed app's, not guarded)."""
    from django.contrib import admin

    from webui.admin.member_words import GuardsMemberWords, holds_member_words

    return [
        checks.Error(
            f"The admin of {model._meta.label} accepts query-string lookups on free text.",
            hint="Base it on webui.admin.member_words.GuardsMemberWords.",
            obj=type(model_admin),
            id="webui.E003",
        )
        for model, model_admin in admin.site._registry.items()
        if not isinstance(model_admin, GuardsMemberWords)
        and any(holds_member_words(field) for field in model._meta.get_fields())
    ]
