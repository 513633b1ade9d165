"""The plug-in's settings table in ``docs/configuration.md`` names every ``PIPPA_MEMORY_*`` setting
with the default ``pippa_memory.conf`` states (the turn-event delivery's ``OUTBOX_*`` ones in the
table of ``docs/turn-events.md`` it points to), and no setting the plug-in does not have."""

import re
from pathlib import Path

from pippa_memory.conf import DEFAULTS

DOCS = Path(__file__).resolve().parents[2] / "docs"
ROW = re.compile(r"^\| `(?:PIPPA_MEMORY_)?([A-Z_*]+)` \| ([^|]*) \|", re.M)


def plug_in_table() -> dict[str, str]:
    """Setting name -> default cell, from the plug-in's section of the configuration doc and the
    turn-event doc's *Operating it* table."""
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    section = text.split("## The memory plug-in (`pippa_memory`)", 1)[1].split("\n## ", 1)[0]
    rows = {name: cell for name, cell in ROW.findall(section) if name != "OUTBOX_*"}
    events = (DOCS / "turn-events.md").read_text(encoding="utf-8")
    rows |= {name: cell for name, cell in ROW.findall(events) if name.startswith("OUTBOX_")}
    return rows


def shown(default: object) -> str | None:
    """How the doc states ``default``: ``true``/``false``, ``None`` for an unset string, else the
    value as written."""
    if isinstance(default, bool):
        return str(default).lower()
    return None if default == "" else str(default)


def documented(cell: str) -> str | None:
    cell = cell.strip()
    if cell.startswith(("unset", "empty")):
        return None
    return cell.split("`")[1] if cell.startswith("`") else cell


def test_every_plug_in_setting_has_a_row_with_its_default_and_no_row_is_stale() -> None:
    rows = plug_in_table()

    assert sorted(set(DEFAULTS) - set(rows)) == [], "settings with no row"
    assert sorted(set(rows) - set(DEFAULTS)) == [], "rows for settings the plug-in lacks"
    for name, default in DEFAULTS.items():
        said = documented(rows[name])
        if isinstance(default, int | float) and not isinstance(default, bool):
            assert float(said or "nan") == default, f"default of {name}: {said}"
        else:
            assert said == shown(default), f"default of {name}: {said!r}"
