"""The vault reader: stable order, front matter stripped, wikilinks as plain text, clear errors."""

from pathlib import Path

import pytest
from django.core import checks

from webui.models import Soul
from webui.prompt.vault import VaultError, read_vault, render_wikilinks


def test_notes_are_read_in_stable_path_order_with_headings(vault: Path) -> None:
    (vault / "b.md").write_text("Bee", encoding="utf-8")
    (vault / "a").mkdir()
    (vault / "a" / "z.md").write_text("Zed", encoding="utf-8")
    (vault / "A.md").write_text("Capital", encoding="utf-8")

    base = read_vault(str(vault))

    assert base.notes == ("A", "a/z", "b")
    assert base.text == "## A\n\nCapital\n\n## a/z\n\nZed\n\n## b\n\nBee"


def test_same_files_give_the_same_bytes_every_read(vault: Path) -> None:
    for index in range(20):
        (vault / f"note-{index:02}.md").write_text(f"Note {index} ✓", encoding="utf-8")

    assert read_vault(str(vault)).text == read_vault(str(vault)).text


def test_yaml_front_matter_is_stripped(vault: Path) -> None:
    (vault / "Identity.md").write_text(
        "---\ntags: [a, b]\ncreated: 2026-01-01\n---\n# Pippa\n\nWarm.\n", encoding="utf-8"
    )

    text = read_vault(str(vault)).text

    assert "tags" not in text
    assert text == "## Identity\n\n# Pippa\n\nWarm."


def test_a_rule_later_in_the_note_is_not_taken_for_front_matter(vault: Path) -> None:
    (vault / "n.md").write_text("Intro\n---\nnot: front matter\n---\n", encoding="utf-8")

    assert "not: front matter" in read_vault(str(vault)).text


@pytest.mark.parametrize(
    ("source", "rendered"),
    [
        ("See [[Voice]].", "See Voice."),
        ("See [[doctrine/Siblings|my siblings]].", "See my siblings."),
        ("See [[Memory#Honesty]].", "See Memory > Honesty."),
        ("See [[Memory#Honesty|being honest]].", "See being honest."),
        ("![[diagram.png]]", "diagram.png"),
        ("[[a]] and [[b|B]]", "a and B"),
        ("No links [here](https://example.org).", "No links [here](https://example.org)."),
    ],
)
def test_wikilinks_render_as_obsidian_shows_them(source: str, rendered: str) -> None:
    assert render_wikilinks(source) == rendered


def test_hidden_folders_such_as_obsidian_settings_are_skipped(vault: Path) -> None:
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "secret.md").write_text("settings", encoding="utf-8")
    (vault / "note.md").write_text("kept", encoding="utf-8")

    assert read_vault(str(vault)).notes == ("note",)


def test_missing_vault_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="does not exist"):
        read_vault(str(tmp_path / "nowhere"))


def test_vault_without_notes_is_a_clear_error(vault: Path) -> None:
    with pytest.raises(VaultError, match="holds no Markdown notes"):
        read_vault(str(vault))


def test_note_that_is_not_utf8_is_named_in_the_error(vault: Path) -> None:
    (vault / "broken.md").write_bytes(b"\xff\xfe\x00bad")

    with pytest.raises(VaultError, match="broken"):
        read_vault(str(vault))


def test_the_demo_vault_reads() -> None:
    base = read_vault("demo/vaults/pippa")

    assert "I am Pippa" in base.text
    assert "[[" not in base.text
    assert "tags:" not in base.text


@pytest.mark.django_db
def test_system_check_reports_a_soul_whose_vault_is_missing(tmp_path: Path) -> None:
    Soul.objects.create(slug="lost", name="Lost", vault_path=str(tmp_path / "gone"))

    found = [m for m in checks.run_checks() if m.id == "webui.W001"]

    assert len(found) == 1
    assert "Lost's vault cannot be read" in found[0].msg


@pytest.mark.django_db
def test_system_check_is_quiet_for_a_readable_vault(soul: Soul) -> None:
    assert not [m for m in checks.run_checks() if m.id == "webui.W001"]
