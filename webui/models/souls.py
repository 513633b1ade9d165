"""Souls and what they are made of: the persona, and its vault base as a conversation first read it."""

from django.db import models


class Soul(models.Model):
    """A persona whose identity lives in an Obsidian vault folder."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    vault_path = models.CharField(
        max_length=500,
        help_text="Folder of the soul's Obsidian vault; a relative path is read from the project folder.",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class VaultSnapshot(models.Model):
    """A soul's rendered vault base as a conversation first read it. Immutable per content."""

    soul = models.ForeignKey(Soul, on_delete=models.CASCADE, related_name="vault_snapshots")
    sha256 = models.CharField(max_length=64)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["soul", "sha256"], name="vault_snapshot_once")
        ]

    def __str__(self) -> str:
        return f"{self.soul} vault {self.sha256[:12]}"
