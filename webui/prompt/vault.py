"""Reads a soul's Obsidian vault into the vault base, the first section of every system prompt.

Notes are read in a stable order (their paths relative to the vault, compared as POSIX strings), YAML
front matter is stripped, and wikilinks are rendered as the plain text Obsidian shows for them. The
same files always give the same bytes, so the front of the prompt stays put.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
# ![[embed]], [[target]], [[target|alias]], [[target#heading]], [[target#heading|alias]]
WIKILINK = re.compile(r"!?\[\[([^\[\]|]*)(?:\|([^\[\]]*))?\]\]")


class VaultError(Exception):
    """The vault cannot be read; the message says which folder and why."""


@dataclass(frozen=True)
class VaultBase:
    """The rendered vault: the text that opens the system prompt, and the notes it came from."""

    text: str
    notes: tuple[str, ...]


def resolve_vault_path(vault_path: str) -> Path:
    """The vault folder, with a relative path read from the project folder."""
    path = Path(vault_path).expanduser()
    if not path.is_absolute():
        path = Path(settings.BASE_DIR) / path
    return path


def render_wikilinks(text: str) -> str:
    """Replace wikilinks with what Obsidian displays: the alias, or the target with ``#`` as ``>``."""

    def display(match: re.Match[str]) -> str:
        target, alias = match.group(1), match.group(2)
        if alias is not None and alias.strip():
            return alias.strip()
        parts = [part.strip() for part in target.split("#") if part.strip()]
        return " > ".join(parts)

    return WIKILINK.sub(display, text)


def render_note(raw: str) -> str:
    """One note's body: front matter stripped, wikilinks rendered, line endings and edges tidied."""
    text = raw.replace("\r\n", "\n").lstrip("\ufeff")
    text = FRONT_MATTER.sub("", text, count=1)
    return render_wikilinks(text).strip()


def note_paths(root: Path) -> list[Path]:
    """Markdown notes under ``root`` in a stable order, skipping hidden folders such as ``.obsidian``."""
    notes = []
    for path in root.rglob("*.md"):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if path.is_file():
            notes.append(path)
    return sorted(notes, key=lambda p: p.relative_to(root).as_posix())


def read_vault(vault_path: str) -> VaultBase:
    """Read the vault at ``vault_path`` into a :class:`VaultBase`.

    Raises :class:`VaultError` when the folder is missing, is not a folder, holds no notes, or a note
    cannot be read as UTF-8.
    """
    root = resolve_vault_path(vault_path)
    if not root.exists():
        raise VaultError(f"The vault folder {root} does not exist.")
    if not root.is_dir():
        raise VaultError(f"The vault path {root} is not a folder.")
    try:
        paths = note_paths(root)
    except OSError as exc:
        raise VaultError(
            f"The vault folder {root} cannot be listed: {exc.strerror or exc}."
        ) from exc
    if not paths:
        raise VaultError(f"The vault folder {root} holds no Markdown notes.")
    sections = []
    names = []
    for path in paths:
        name = path.relative_to(root).with_suffix("").as_posix()
        try:
            raw = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise VaultError(f"The note {name} in {root} is not UTF-8 text.") from exc
        except OSError as exc:
            raise VaultError(
                f"The note {name} in {root} cannot be read: {exc.strerror or exc}."
            ) from exc
        body = render_note(raw)
        sections.append(f"## {name}\n\n{body}" if body else f"## {name}")
        names.append(name)
    return VaultBase(text="\n\n".join(sections), notes=tuple(names))


def vault_problem(vault_path: str) -> str | None:
    """What is wrong with the vault, in words for a page or a system check, or ``None`` if it reads."""
    try:
        read_vault(vault_path)
    except VaultError as exc:
        return str(exc)
    return None
