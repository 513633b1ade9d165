"""The household owns its memory: a member's download, and an admin's export, import and checks
of a soul's whole memory in the versioned export file (``docs/memory-export.md``)."""
