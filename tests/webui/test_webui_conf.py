"""The host's own settings: each default stated once (``webui.conf``), a ``WEBUI_*`` variable that is
set overriding it with its default's type, ``settings.WEBUI`` entries seen on every read, and the
host's table in ``docs/configuration.md`` naming every one with its true default."""

import ast
import re
from pathlib import Path

import environ
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from webui.conf import DEFAULTS, from_environment, webui_settings

ROOT = Path(__file__).resolve().parents[2]
CONFIGURATION = ROOT / "docs" / "configuration.md"
#: Django's own settings module names no variable of its own; the table still says how to choose one.
NOT_READ_BY_SETTINGS = {"DJANGO_SETTINGS_MODULE"}
#: A default the table describes rather than prints: the development secret key.
DESCRIBED = {"DJANGO_SECRET_KEY"}


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


def host_table() -> dict[str, str]:
    """Variable -> its default cell, from the rows of the host's section of the configuration doc."""
    text = CONFIGURATION.read_text(encoding="utf-8")
    section = text.split("## The host (`webui`)", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([A-Z_]+)` \| ([^|]*) \|", section, re.M))


def documented(cell: str) -> str | None:
    """The default a cell states: its first backticked value, ``None`` for unset, else its text."""
    if cell.startswith("`"):
        return cell.split("`")[1]
    return None if cell.startswith(("unset", "empty")) else cell.strip()


def read_by_settings() -> dict[str, object]:
    """Each variable the site's settings (``pippa_site/*settings*.py``) read with ``env.<cast>("NAME", default=...)``, with its
    default when that is a literal (``...`` when it is computed); the development profile's default
    is the one shown where both profiles read a variable."""
    read: dict[str, object] = {}
    for module in ("host_settings.py", "settings.py", "settings_production.py"):
        tree = ast.parse((ROOT / "pippa_site" / module).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "env"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                continue
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            try:
                value = ast.literal_eval(default) if default else ...
            except ValueError:
                value = ...
            read.setdefault(node.args[0].value, value)
    return read


def test_the_configuration_doc_names_every_webui_setting_with_its_default() -> None:
    rows = host_table()

    for name, default in DEFAULTS.items():
        variable = f"WEBUI_{name}"
        assert variable in rows, f"docs/configuration.md has no row for {variable}"
        if isinstance(default, dict):  # a table of its own: *Cache prices* (test_cache_bill)
            assert rows[variable].startswith("the published prices"), variable
            continue
        assert float(documented(rows[variable]) or "nan") == default, f"default of {variable}"


def test_the_configuration_doc_names_every_variable_the_settings_read_with_its_default() -> None:
    rows = host_table()
    read = read_by_settings()

    assert set(read) - set(rows) == set(), "variables the settings read with no row"
    stale = {v for v in rows if v not in read and v not in NOT_READ_BY_SETTINGS}
    stale -= {f"WEBUI_{name}" for name in DEFAULTS}
    assert stale == set(), "rows for variables nothing reads"
    for variable, default in read.items():
        if default is ... or isinstance(default, list) or variable in DESCRIBED:
            continue
        shown = documented(rows[variable])
        if isinstance(default, bool):
            assert shown == str(default).lower(), variable
        elif isinstance(default, int | float):
            assert float(shown or "nan") == default, variable
        else:
            assert shown == default, variable
