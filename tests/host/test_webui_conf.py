"""The host's own settings: each default stated once (``webui.conf``), a ``WEBUI_*`` variable that is
set overriding it with its default's type, ``settings.WEBUI`` entries seen on every read, and the
README's configuration table naming every one with its true default."""

import re
from pathlib import Path

import environ
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from webui.conf import DEFAULTS, from_environment, webui_settings

README = Path(__file__).resolve().parents[2] / "README.md"


def test_only_the_variables_that_are_set_are_read_each_cast_to_its_defaults_type(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in DEFAULTS:
        monkeypatch.delenv(f"WEBUI_{name}", raising=False)
    monkeypatch.setenv("WEBUI_MAX_TOOL_ROUNDS", "7")
    monkeypatch.setenv("WEBUI_VESSEL_RETRY_MAX_DELAY", "3")

    read = from_environment(environ.Env())

    assert read == {"MAX_TOOL_ROUNDS": 7, "VESSEL_RETRY_MAX_DELAY": 3.0}
    assert isinstance(read["VESSEL_RETRY_MAX_DELAY"], float)


def test_a_variable_that_is_not_a_number_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEBUI_PRUNE_BATCH_SIZE", "lots")

    with pytest.raises(
        ImproperlyConfigured, match="WEBUI_PRUNE_BATCH_SIZE must be a whole number, not 'lots'"
    ):
        from_environment(environ.Env())


@override_settings(WEBUI={"MAX_TOOL_ROUNDS": 2})
def test_a_setting_missing_from_the_dict_takes_its_default_and_one_present_wins() -> None:
    assert webui_settings.MAX_TOOL_ROUNDS == 2
    assert webui_settings.VESSEL_RETRY_BASE_DELAY == 0.5


def test_an_unknown_setting_is_an_error_that_names_it() -> None:
    with pytest.raises(AttributeError, match="Unknown WEBUI setting: MAX_TOOLROUNDS"):
        _ = webui_settings.MAX_TOOLROUNDS


def test_the_readme_names_every_setting_with_its_default() -> None:
    rows = dict(re.findall(r"^\| `WEBUI_([A-Z_]+)` \| `([^`]*)` \|", README.read_text(), re.M))

    for name, default in DEFAULTS.items():
        assert name in rows, f"README has no row for WEBUI_{name}"
        if isinstance(default, dict):  # a table: docs/configuration.md lists it (test_cache_bill)
            assert rows[name] == "the published prices", f"README's default for WEBUI_{name}"
            continue
        assert float(rows[name]) == default, f"README's default for WEBUI_{name}"
