"""``python -m reference_engine``: the engine's own entry point (no Django, no site).

``serve`` (the default) applies pending migrations, seeds the demo when asked, and serves the
engine under gunicorn until SIGTERM; ``migrate`` applies pending migrations and prints which
(``--check``: applies nothing, and exits 1 when some are pending, naming them). Settings come
from :class:`~.config.EngineConfig`: flags, else environment, else its defaults.
"""

import argparse
import logging
import sys
from collections.abc import Sequence

from reference_engine.config import ConfigError, EngineConfig, add_options, read_config

COMMANDS = ("serve", "migrate", "backup")


def parser() -> argparse.ArgumentParser:
    """The command line: ``serve`` (default) with every setting, ``migrate`` with the database."""
    top = argparse.ArgumentParser(
        prog="python -m reference_engine",
        description="The reference memory engine (engine contract v3 and v2), under gunicorn.",
        epilog="Without a command it serves: `python -m reference_engine serve --help` lists "
        "every setting, each with its environment variable and default.",
    )
    commands = top.add_subparsers(dest="command", metavar="{serve,migrate,backup}")
    serve = commands.add_parser("serve", help="serve the engine until SIGTERM (the default)")
    add_options(serve)
    migrate = commands.add_parser(
        "migrate", help="apply the database's pending schema migrations, printing each"
    )
    add_options(migrate, ["database", "log_level"])
    migrate.add_argument(
        "--check",
        action="store_true",
        help="apply nothing; exit 1 (naming them) when migrations are pending",
    )
    backup = commands.add_parser(
        "backup", help="copy the SQLite database consistently while the engine serves"
    )
    add_options(backup, ["database", "log_level"])
    backup.add_argument("file", help="the copy to write (replaced whole, only once checked)")
    return top


def with_command(argv: Sequence[str]) -> list[str]:
    """``argv`` with ``serve`` put first when it names no command (the Procfile gives none)."""
    argv = list(argv)
    if argv and (argv[0] in COMMANDS or argv[0] in ("-h", "--help")):
        return argv
    return ["serve", *argv]


def run_migrate(config: EngineConfig, *, check: bool) -> int:
    from reference_engine.storage.database import Database
    from reference_engine.storage.schema import migrate, pending

    database = Database(config.database)
    try:
        if check:
            todo = pending(database)
            for each in todo:
                print(f"pending: {each}")
            print(f"{len(todo)} migration(s) pending on {config.database}.")
            return 1 if todo else 0
        applied = migrate(database)
    finally:
        database.close()
    for each in applied:
        print(f"applied: {each}")
    print(f"{len(applied) or 'No'} migration(s) applied; {config.database} is up to date.")
    return 0


def run_backup(config: EngineConfig, file: str) -> int:
    from pathlib import Path

    from reference_engine.backup import BackupRefused, backup_database

    try:
        count = backup_database(config.database, Path(file))
    except (BackupRefused, OSError) as refused:
        print(f"python -m reference_engine backup: {refused}", file=sys.stderr)
        return 1
    print(f"Backed up {config.database} to {file}: {count} memories, integrity check ok.")
    return 0


def run_serve(config: EngineConfig) -> int:
    from reference_engine.demo import seed_demo
    from reference_engine.service import brain_of, open_state, serve
    from reference_engine.storage.language import UnknownLanguage

    log = logging.getLogger("reference_engine")
    try:
        state = open_state(config)  # migrations are applied here, before gunicorn forks
    except UnknownLanguage as bad:
        print(f"error: {bad}", file=sys.stderr)
        return 2
    try:
        if config.seed_demo:
            seed_demo(state, member=config.demo_member, say=log.info)
    finally:
        state.database.close()  # the worker opens its own connections
    brain = brain_of(config)
    thinks = f"thinking through {brain.url}" if brain.configured else brain.problem
    log.info(
        "Reference memory engine on http://%s:%s (contract v3), memories in %s, blocks within "
        "%s characters, recall by %s (%s); %s. SIGTERM stops it gracefully.",
        config.host,
        config.port,
        config.database,
        config.block_chars,
        "words and meaning" if config.recall == "meaning" else "words only",
        config.language,
        thinks,
    )
    serve(config)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(with_command(sys.argv[1:] if argv is None else argv))
    try:
        config = read_config(
            {k: v for k, v in vars(args).items() if k not in ("command", "check", "file")}
        )
    except ConfigError as bad:
        print(f"python -m reference_engine: {bad}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=config.log_level.upper(),
        format="%(asctime)s [%(process)d] [%(levelname)s] %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("yoyo").setLevel(logging.WARNING)  # this module says what was applied
    if args.command == "migrate":
        return run_migrate(config, check=args.check)
    if args.command == "backup":
        return run_backup(config, args.file)
    return run_serve(config)


if __name__ == "__main__":
    sys.exit(main())
