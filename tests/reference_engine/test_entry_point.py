"""``python -m reference_engine`` is the engine's own entry point: it runs with Django not
importable at all, the Procfile's ``engine`` line starts it with today's options and variables,
and its settings are one object whose every row ``docs/reference-engine.md`` tabulates."""

import base64
import os
import re
import signal
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
import requests

from reference_engine.config import ConfigError, EngineConfig, read_config
from tests.support.engine_calls import headers
from tests.support.engine_processes import wait_until_answering
from tests.support.engine_token import TOKEN
from tests.support.live_servers import free_port, server_environment

ROOT = Path(__file__).resolve().parents[2]


def without_django(tmp_path: Path) -> dict[str, str]:
    """An environment in which ``import django`` fails (a package of that name that refuses),
    so anything of the site (which imports Django first) fails too."""
    shadow = tmp_path / "no-django"
    (shadow / "django").mkdir(parents=True)
    (shadow / "django" / "__init__.py").write_text(
        'raise ImportError("Django is not importable in this test")\n'
    )
    return server_environment(
        PYTHONPATH=str(shadow), PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    )


def test_help_and_migrate_work_with_django_not_importable(tmp_path: Path) -> None:
    env = without_django(tmp_path)
    proof = subprocess.run(
        [sys.executable, "-c", "import django"], env=env, capture_output=True, text=True
    )
    assert "Django is not importable" in proof.stderr  # the shadow works

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "reference_engine", *args]
        return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)

    top, serve = run("--help"), run("serve", "--help")
    migrate = run("migrate", "--database", str(tmp_path / "engine.sqlite3"))

    assert top.returncode == serve.returncode == migrate.returncode == 0, migrate.stderr
    assert "{serve,migrate,backup}" in top.stdout
    assert "PIPPA_ENGINE_DATABASE_URL" in serve.stdout
    assert migrate.stdout.startswith("applied: 0001_initial")


def procfile_engine_line() -> str:
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("engine:"):
            return line.removeprefix("engine:").strip()
    raise AssertionError("The Procfile has no engine process")


def test_the_procfile_starts_the_engine_without_django_with_todays_options(
    tmp_path: Path,
) -> None:
    """``ENGINE_PORT``, ``PIPPA_MEMORY_TOKEN``, ``WEBUI_ADDR`` and ``ENGINE_OPTIONS`` are read
    as before; ``--seed-demo`` seeds, with the member ``make run`` names."""
    line = procfile_engine_line()
    assert line.startswith("python -m reference_engine ")
    port = free_port()
    env = without_django(tmp_path) | {
        "ENGINE_PORT": str(port),
        "PIPPA_MEMORY_TOKEN": TOKEN,
        "WEBUI_ADDR": "127.0.0.1:9",
        "PIPPA_MEMORY_BRAIN_SECRET": "whsec_" + base64.b64encode(b"p" * 32).decode(),
        "PIPPA_ENGINE_DEMO_MEMBER": "7:Alice",
        "ENGINE_OPTIONS": f"--database {tmp_path / 'engine.sqlite3'} --control",
    }
    with (tmp_path / "engine.log").open("w") as log:
        engine = subprocess.Popen(
            ["sh", "-c", f"exec {line}"], cwd=ROOT, env=env, stdout=log, stderr=log, text=True
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_answering(engine, url)
            head = url + "/v1/souls/pippa/head"
            refused = requests.get(head, headers={"X-Memory-Contract": "3"}, timeout=5)
            alice = requests.get(head, params={"viewer": "7"}, headers=headers(), timeout=5)
            control = requests.get(url + "/_control/requests", headers=headers(), timeout=5)
        finally:
            engine.send_signal(signal.SIGTERM)
            engine.wait(timeout=60)
    said = (tmp_path / "engine.log").read_text()

    assert refused.status_code == 401
    assert alice.status_code == 200
    assert "blue tin" in alice.json()["block"]
    assert "(private) The demo member is planning a surprise" in alice.json()["block"]
    assert control.status_code == 200  # ENGINE_OPTIONS reached it
    assert "thinking through http://127.0.0.1:9/api/memory/brain/" in said
    assert engine.returncode == 0


def test_settings_come_from_flags_then_the_environment_then_the_defaults() -> None:
    environ = {"PIPPA_ENGINE_THREADS": "3", "PIPPA_MEMORY_TOKEN": "", "WEBUI_ADDR": "web:8000"}

    from_env = read_config({}, environ)
    from_flag = read_config({"threads": "5", "control": "true"}, environ)

    assert (from_env.threads, from_env.token, from_env.brain_url) == (3, "", "web:8000")
    assert (from_flag.threads, from_flag.control) == (5, True)
    assert read_config({}, {}) == EngineConfig()
    with pytest.raises(ConfigError, match="PIPPA_ENGINE_POOL_SIZE must be at least 1, not '0'"):
        read_config({}, {"PIPPA_ENGINE_POOL_SIZE": "0"})
    with pytest.raises(ConfigError, match="--port must be a port number up to 65535"):
        read_config({"port": "70000"}, {})


def test_a_bad_setting_stops_the_engine_before_it_starts_saying_which() -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "reference_engine", "--brain-timeout", "soon"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=server_environment(),
    )
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        "python -m reference_engine: --brain-timeout must be a number, not 'soon'"
    )


def documented_settings() -> list[tuple[str, str, str]]:
    """(option, environment variable, default) of each row of the docs' settings table."""
    page = (ROOT / "docs" / "reference-engine.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(--[a-z-]+)` \| ([^|]+) \| ([^|]+) \|", page, flags=re.M)
    return [(flag, env.strip(), default.strip()) for flag, env, default in rows]


def shown_default(value: object) -> str:
    if value is False:
        return "off"
    return "none" if value == "" else f"`{value}`"


def test_the_docs_settings_table_matches_the_config_object_row_for_row() -> None:
    expected = [
        (
            "--" + each.name.replace("_", "-"),
            f"`{each.metadata['env']}`" if each.metadata["env"] else "none",
            shown_default(each.default),
        )
        for each in fields(EngineConfig)
    ]
    assert documented_settings() == expected
