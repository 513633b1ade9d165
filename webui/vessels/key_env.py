"""Which environment variables may hold a vessel's API key (the vessel stores only the name)."""

import re

KEY_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*(KEY|TOKEN)[A-Z0-9_]*$")
# The project's own secrets: a vessel naming one of these would send it to the provider as a key.
RESERVED_ENV_PREFIXES = ("DJANGO_", "PIPPA_", "DATABASE_", "WEBUI_")


def api_key_env_problem(name: str) -> str | None:
    """Why ``name`` cannot hold a vessel's key, or ``None``."""
    if name.startswith(RESERVED_ENV_PREFIXES):
        return f"{name} belongs to the project's own settings and cannot hold a vessel's key."
    if not KEY_ENV_NAME.match(name):
        return (
            f"{name} is not a key variable name: use capitals, digits and underscores, with KEY or "
            "TOKEN in it (for example ANTHROPIC_API_KEY)."
        )
    return None
