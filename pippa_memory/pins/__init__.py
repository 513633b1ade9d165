"""The pinned head: pinning at the first turn, tombstones, and forgetting that reaches live pins."""
