"""The memory plug-in: gives every soul memory served by a separate memory engine over HTTP."""
