"""The memory export file, version 1: JSON Lines, a header then one memory a line, held to
``docs/memory-export.schema.json``.

:func:`checked_file` reads a soul export through once, keeping only each id's text digest, and
raises :class:`BadExportFile` naming the line for anything an import must refuse: a format or
version it does not know, a file for another soul or a member's download, a line that is not JSON
or not a memory, a count that does not match (a file cut short), an id named twice with two texts.
"""

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "memory-export.schema.json"
FORMAT = "pippa-memory-export"
VERSION = 1


class BadExportFile(ValueError):
    """A file an import refuses whole, with what is wrong and on which line."""


@cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


@cache
def validator(part: str) -> Draft202012Validator:
    """The validator of one part of a file: ``header`` or ``memory``."""
    return Draft202012Validator({"$ref": f"#/$defs/{part}", "$defs": schema()["$defs"]})


def header(
    *,
    kind: str,
    soul: str,
    member: dict[str, str] | None,
    count: int | None,
    revision: str | None = None,
) -> str:
    """The header line (with its newline) of an export made now."""
    exported_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    fields = {
        "format": FORMAT,
        "version": VERSION,
        "kind": kind,
        "soul": soul,
        "member": member,
        "exported_at": exported_at,
        "count": count,
        "revision": revision,
    }
    return line(fields)


def line(value: dict[str, Any]) -> str:
    """One line of the file: compact JSON, non-ASCII as it is, and its newline."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


def memory_line(item: dict[str, Any]) -> dict[str, Any]:
    """A memory line's fields, taken from an engine's item (export item or listing item)."""
    names = (
        *("id", "text", "at", "scope", "said_by", "source", "keep", "history"),
        *("superseded_by", "yours"),
    )
    found = {name: item[name] for name in names if name in item}
    if item.get("supersedes"):
        found["supersedes"] = item["supersedes"]
    return found


@dataclass
class CheckedFile:
    """What a whole-file check found: how many memories, and which members own private ones
    (member id: how many)."""

    count: int = 0
    revision: str | None = None
    private_owners: dict[str, int] = field(default_factory=dict)


def problem(where: str, error: Any) -> str:
    place = "/".join(str(p) for p in error.absolute_path) or "the line"
    return f"{where}: {place} breaks the export schema (rule: {error.validator})"


def parsed(number: int, text: str, *, last: bool) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        hint = " (the file looks cut short)" if last else ""
        raise BadExportFile(f"Line {number} is not JSON{hint}.") from None


def checked_header(first: str, soul: str) -> dict[str, Any]:
    top = parsed(1, first, last=False)
    if not isinstance(top, dict) or top.get("format") != FORMAT:
        raise BadExportFile(f"Line 1 is not a {FORMAT} header: this is not a memory export file.")
    version = top.get("version")
    if isinstance(version, int) and version > VERSION:
        raise BadExportFile(
            f"Line 1: the file is export version {version}, from a newer site; this site reads "
            f"version {VERSION}. Upgrade this site, then import it."
        )
    error = next(iter(validator("header").iter_errors(top)), None)
    if error is not None:
        raise BadExportFile(problem("Line 1 (the header)", error))
    if top["kind"] != "soul":
        raise BadExportFile(
            "Line 1: this is a member's download, not a soul export: it cannot be imported."
        )
    if top["soul"] != soul:
        raise BadExportFile(f"Line 1: the file is for soul {top['soul']!r}, not {soul!r}.")
    return top


def numbered_lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    """``(line number, text, is last)`` for each line of ``path``, read a line at a time."""
    with path.open(encoding="utf-8") as handle:
        previous: tuple[int, str] | None = None
        for number, text in enumerate(handle, start=1):
            if previous is not None:
                yield previous[0], previous[1], False
            previous = (number, text)
        if previous is not None:
            yield previous[0], previous[1], True


def checked_file(path: Path, *, soul: str) -> CheckedFile:
    """Check the whole soul export at ``path`` for ``soul``; :class:`BadExportFile` naming the
    line for the first thing wrong. Memory held: one digest per id, never the texts."""
    found, seen = CheckedFile(), {}
    replaced: dict[str, tuple[int, str]] = {}  # item id: (its line, the id that replaced it)
    top: dict[str, Any] | None = None
    try:
        for number, text, last in numbered_lines(path):
            if top is None:
                top = checked_header(text, soul)
                continue
            memory = parsed(number, text, last=last)
            error = next(iter(validator("memory").iter_errors(memory)), None)
            if error is not None:
                raise BadExportFile(problem(f"Line {number}", error))
            digest = hashlib.sha256(memory["text"].encode("utf-8")).digest()
            earlier = seen.setdefault(memory["id"], (number, digest))
            if earlier[1] != digest:
                raise BadExportFile(
                    f"Line {number}: item {memory['id']!r} is also on line {earlier[0]} with "
                    "another text; one id is one memory."
                )
            found.count += 1
            if memory.get("superseded_by"):
                replaced[memory["id"]] = (number, memory["superseded_by"]["id"])
            if memory["scope"] == "private":
                if memory["said_by"] is None:
                    raise BadExportFile(
                        f"Line {number}: item {memory['id']!r} is private but no member said it."
                    )
                owner = memory["said_by"]["member"]
                found.private_owners[owner] = found.private_owners.get(owner, 0) + 1
    except UnicodeDecodeError:
        raise BadExportFile("The file is not UTF-8 text.") from None
    if top is None:
        raise BadExportFile("The file is empty: it has no header line.")
    found.revision = top["revision"]
    for item_id, (number, by) in replaced.items():
        if by not in seen:
            raise BadExportFile(
                f"Line {number}: item {item_id!r} was replaced by {by!r}, which the file does not "
                "hold; a soul export holds every memory that replaced another."
            )
    if found.count != top["count"]:
        raise BadExportFile(
            f"The header says {top['count']} memories but the file holds {found.count}: it was "
            "cut short (or added to). Export it again."
        )
    return found


def memories_of(path: Path) -> Iterator[dict[str, Any]]:
    """Each memory line of a file :func:`checked_file` passed, in order, one at a time."""
    with path.open(encoding="utf-8") as handle:
        next(handle)
        for text in handle:
            yield json.loads(text)
