"""The prompt: its types, its assembly in the fixed order, the pins settled before it, the vault base."""
