"""The reference engine's settings: one object (:class:`EngineConfig`), read once at start.

Each setting is a field whose default is stated here and nowhere else. A value comes from the
command line (``--name``), else from the setting's environment variable, else the default; an
empty environment variable counts as unset. ``docs/reference-engine.md`` tabulates these fields
(a test holds the table to them). Nothing here imports Django or the site.
"""

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

from reference_engine.block_budget import (
    DEFAULT_BLOCK_CHARS,
    FEWEST_BLOCK_CHARS,
    BadBudget,
    block_chars,
)

TRUE_WORDS, FALSE_WORDS = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}
LOG_LEVELS = ("debug", "info", "warning", "error")
RECALL_MODES = ("meaning", "words")


def setting(default: Any, *, env: str | None, help: str, minimum: float | None = None) -> Any:  # noqa: A002 - argparse's word
    """A field of :class:`EngineConfig`: its one default, its environment variable (None: only
    the flag sets it), what it does, and the least value it may take."""
    return field(default=default, metadata={"env": env, "help": help, "minimum": minimum})


@dataclass(frozen=True)
class EngineConfig:
    """Everything the engine is started with; read by :func:`read_config`."""

    host: str = setting("127.0.0.1", env="PIPPA_ENGINE_HOST", help="the address it listens on")
    port: int = setting(
        8765, env="PIPPA_ENGINE_PORT", help="the port it listens on (0: any free one)", minimum=0
    )
    token: str = setting(
        "",
        env="PIPPA_MEMORY_TOKEN",
        help="the bearer token every contract call must carry (empty: none is asked for)",
    )
    database: str = setting(
        "engine.sqlite3",
        env="PIPPA_ENGINE_DATABASE_URL",
        help="its own database: a SQLite file (relative to the folder it starts in) or "
        "sqlite:/// URL, or a postgres:// URL",
    )
    threads: int = setting(8, env="PIPPA_ENGINE_THREADS", help="request threads", minimum=1)
    pool_size: int = setting(
        10,
        env="PIPPA_ENGINE_POOL_SIZE",
        help="PostgreSQL only: most connections open at once (a request waits for a free one)",
        minimum=1,
    )
    block_chars: int = setting(
        DEFAULT_BLOCK_CHARS,
        env="PIPPA_ENGINE_BLOCK_CHARS",
        help="the character budget of every block, brief and bundle; at most the plug-in's "
        "block limit (PIPPA_MEMORY_MAX_BLOCK_CHARS, else 16000)",
        minimum=FEWEST_BLOCK_CHARS,
    )
    answer_delay: float = setting(
        1.0,
        env="PIPPA_ENGINE_ANSWER_DELAY",
        help="seconds before an ask is due; then it is answered in the background",
        minimum=0,
    )
    brain_url: str = setting(
        "",
        env="WEBUI_ADDR",
        help="the site's brain door: a URL, or the host:port the web server binds "
        "(empty: asks and briefs say the door is not configured)",
    )
    brain_secret: str = setting(
        "",
        env="PIPPA_MEMORY_BRAIN_SECRET",
        help="the whsec_ secret(s) brain-door calls are signed with, space-separated while "
        "rotating (better in the environment than on a command line)",
    )
    brain_connect_timeout: float = setting(
        3.0,
        env="PIPPA_ENGINE_BRAIN_CONNECT_TIMEOUT",
        help="seconds to connect to the brain door",
        minimum=0.1,
    )
    brain_timeout: float = setting(
        30.0,
        env="PIPPA_ENGINE_BRAIN_TIMEOUT",
        help="seconds one brain-door call may take before it counts as failed",
        minimum=0.1,
    )
    brain_max_bytes: int = setting(
        1_048_576,
        env="PIPPA_ENGINE_BRAIN_MAX_BYTES",
        help="the largest brain-door answer read; a longer one counts as failed",
        minimum=1024,
    )
    graceful_timeout: int = setting(
        35,
        env="PIPPA_ENGINE_GRACEFUL_TIMEOUT",
        help="seconds a stopping engine (SIGTERM) gives in-flight requests and the thinker's "
        "current brain call to finish",
        minimum=1,
    )
    recall: str = setting(
        "meaning",
        env="PIPPA_ENGINE_RECALL",
        help="how recall ranks: meaning (words and meaning fused) or words (words only, as "
        "before meaning existed)",
    )
    language: str = setting(
        "english",
        env="PIPPA_ENGINE_LANGUAGE",
        help="the language of the memories: its stemmer and stop words (PostgreSQL: a "
        "text-search configuration, e.g. english, french, german; SQLite: english only)",
    )
    decide_confidence: float = setting(
        0.7,
        env="PIPPA_ENGINE_DECIDE_CONFIDENCE",
        help="the least confidence (0 to 1) the brain door's decide must give before a new "
        "memory replaces an older one; below it both are kept",
        minimum=0,
    )
    backup_dir: str = setting(
        "",
        env="PIPPA_ENGINE_BACKUP_DIR",
        help="a folder for a copy a day of a SQLite database, taken while it serves "
        "(empty: none; PostgreSQL is backed up with pg_dump)",
    )
    backup_keep: int = setting(
        7,
        env="PIPPA_ENGINE_BACKUP_KEEP",
        help="the daily copies kept in --backup-dir; older ones are deleted",
        minimum=1,
    )
    log_level: str = setting(
        "info", env="PIPPA_ENGINE_LOG_LEVEL", help="debug, info, warning or error"
    )
    seed_demo: bool = setting(
        False,
        env="PIPPA_ENGINE_SEED_DEMO",
        help="give the demo soul pippa two household memories (and one private to "
        "--demo-member) if it keeps none yet",
    )
    demo_member: str = setting(
        "",
        env="PIPPA_ENGINE_DEMO_MEMBER",
        help="the demo member --seed-demo gives a private memory, as id:name (make run "
        "passes the one load_demo made)",
    )
    control: bool = setting(
        False,
        env=None,
        help="open /_control/ (faults, direct writes, the request log) for tests and "
        "benches; never for a household's engine, so only a flag opens it",
    )


DEFAULTS = EngineConfig()
"""Every setting at its default: what code that is not started from a config (the in-process
engine of the tests, a bench) falls back on, so no default is stated twice."""


class ConfigError(ValueError):
    """A setting's value cannot be used; the message names the flag or variable."""


def flag_of(name: str) -> str:
    return "--" + name.replace("_", "-")


def parse_value(name: str, raw: str, default: Any, minimum: float | None, source: str) -> Any:
    """``raw`` as the type of ``default``, checked against ``minimum``; a ConfigError naming
    ``source`` when it is not one."""
    if name == "log_level" and raw.lower() not in LOG_LEVELS:
        raise ConfigError(f"{source} must be one of {', '.join(LOG_LEVELS)}, not {raw!r}")
    if name == "recall" and raw.lower() not in RECALL_MODES:
        raise ConfigError(f"{source} must be one of {', '.join(RECALL_MODES)}, not {raw!r}")
    if name == "language" and not (raw.isascii() and raw.replace("_", "").isalnum()):
        raise ConfigError(f"{source} must be a language name such as english, not {raw!r}")
    if isinstance(default, bool):
        if raw.lower() not in TRUE_WORDS | FALSE_WORDS:
            raise ConfigError(f"{source} must be true or false, not {raw!r}")
        return raw.lower() in TRUE_WORDS
    if isinstance(default, int | float):
        try:
            value = type(default)(raw)
        except ValueError:
            kind = "a whole number" if isinstance(default, int) else "a number"
            raise ConfigError(f"{source} must be {kind}, not {raw!r}") from None
        if value != value or (minimum is not None and value < minimum):  # NaN, or too small
            raise ConfigError(f"{source} must be at least {minimum:g}, not {raw!r}")
        if name == "decide_confidence" and value > 1:
            raise ConfigError(f"{source} must be a number from 0 to 1, not {raw!r}")
        if name == "port" and value > 65535:
            raise ConfigError(f"{source} must be a port number up to 65535, not {raw!r}")
        return value
    return raw.lower() if name in ("log_level", "recall", "language") else raw


def add_options(parser: argparse.ArgumentParser, names: Sequence[str] | None = None) -> None:
    """The config's flags on ``parser`` (only ``names`` when given); each flag's default is
    left unset, so :func:`read_config` can tell a flag from the environment."""
    for each in fields(EngineConfig):
        if names is not None and each.name not in names:
            continue
        env, minimum = each.metadata["env"], each.metadata["minimum"]
        default = f"{each.default}" if each.default != "" else "none"
        said = f"{each.metadata['help']} (default: {default}" + (f"; {env}" if env else "") + ")"
        if isinstance(each.default, bool):
            parser.add_argument(
                flag_of(each.name), action="store_const", const="true", default=None, help=said
            )
        else:
            metavar = each.name.upper() if minimum is None else "N"
            parser.add_argument(flag_of(each.name), default=None, metavar=metavar, help=said)


def read_config(
    flags: argparse.Namespace | Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> EngineConfig:
    """The config from ``flags`` (parsed by a parser :func:`add_options` made), else
    ``environ`` (the process's environment by default), else each field's default."""
    given = vars(flags) if isinstance(flags, argparse.Namespace) else dict(flags)
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for each in fields(EngineConfig):
        assert each.default is not MISSING
        env, minimum = each.metadata["env"], each.metadata["minimum"]
        if given.get(each.name) is not None:
            source, raw = flag_of(each.name), str(given[each.name])
        elif env and environ.get(env, "") != "":
            source, raw = env, environ[env]
        else:
            continue
        values[each.name] = parse_value(each.name, raw, each.default, minimum, source)
    config = replace(DEFAULTS, **values)
    try:
        block_chars(config.block_chars)  # no more than the plug-in takes
    except BadBudget as bad:
        raise ConfigError(f"--block-chars: {bad}") from bad
    if config.backup_dir and config.database.startswith(("postgres://", "postgresql://")):
        raise ConfigError(
            "--backup-dir (PIPPA_ENGINE_BACKUP_DIR) copies a SQLite database; this engine's is "
            "PostgreSQL: back it up with pg_dump (docs/deployment.md)"
        )
    return config
