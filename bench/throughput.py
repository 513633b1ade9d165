"""Chat turns under the production server: turns per second, p50 and p99 latency and errors with
1, 4 and 16 household members chatting at once, each in their own conversation, on the offline
vessel (unpaced), memory on against off, and persistent database connections on against off.

The processes are the ``Procfile``'s, under the production profile: gunicorn with
``pippa_site.gunicorn_conf`` (its ``web`` line), the delivery processes, and the reference engine in
its own process. Three sites run side by side on the same database, so the arms interleave
without restarts: memory on, memory off (both with the profile's persistent connections), and
memory on with ``DJANGO_CONN_MAX_AGE=0``. Each member is a distinct logged-in user (a session
made in the database) posting ``POST /api/conversations/<id>/messages/`` as the page does.

Memory on is held to at least 0.9 of memory off's turns/s at each level; beside it, the CPU
seconds the engine process and the delivery processes used while the memory-on arm ran (from
``/proc``: what memory costs on the machine's other processes, which the turns/s alone hide).

    .venv/bin/python bench/throughput.py [--database sqlite|postgres] [--turns 160] [--rounds 2]
"""

import secrets
import threading
import time
from typing import Any

import requests
from _processes import (
    SECRET_KEY,
    Process,
    Spec,
    cpu_seconds,
    delivery_processes,
    engine_command,
    free_port,
    procfile,
    production_environment,
    running,
)
from _report import figure, none_wanted
from _setup import arguments, backend_name, household, median, percentile, setup_django

SECTION = "Throughput under the production server"
LEVELS = (1, 4, 16)
#: name: (memory on, persistent connections)
SITES = {
    "memory on": ("true", None),
    "memory off": ("false", None),
    "memory on, no CONN_MAX_AGE": ("true", "0"),
}


def members(h: dict[str, Any], count: int) -> list[tuple[Any, dict[str, str]]]:
    """``count`` members, each with a session made in the database and the headers that send it
    (the production cookies are Secure, so they are sent by hand over loopback HTTP)."""
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )
    from django.contrib.sessions.backends.db import SessionStore

    found = []
    for index in range(count):
        user, _ = get_user_model().objects.get_or_create(username=f"member{index}")
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        csrf = secrets.token_hex(16)
        headers = {
            "Cookie": f"sessionid={session.session_key}; csrftoken={csrf}",
            "X-CSRFToken": csrf,
            "Accept": "application/json",
        }
        found.append((user, headers))
    return found


def load(
    site: str, h: dict[str, Any], crowd: list[tuple[Any, dict[str, str]]], turns: int
) -> tuple[float, list[float], int]:
    """Each member of ``crowd`` takes ``turns`` timed turns at once (after one untimed first turn)
    in a new conversation of their own; seconds taken, latencies, errors."""
    from webui.models import Conversation

    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    urls = [
        f"{site}/api/conversations/"
        f"{Conversation.objects.create(soul=h['soul'], vessel=h['vessel'], viewer=user).pk}/messages/"
        for user, _ in crowd
    ]

    def member(url: str, headers: dict[str, str], ready: threading.Barrier) -> None:
        http = requests.Session()
        http.post(url, json={"text": "hello"}, headers=headers, timeout=60)
        ready.wait()
        for index in range(turns):
            started = time.perf_counter()
            try:
                answer = http.post(
                    url,
                    json={"text": f"turn {index}: how is the garden?"},
                    headers=headers,
                    timeout=60,
                )
                failed = answer.status_code != 201
            except requests.RequestException:
                failed = True
            with lock:
                latencies.append(time.perf_counter() - started)
                errors[0] += failed

    ready = threading.Barrier(len(crowd) + 1)
    threads = [
        threading.Thread(target=member, args=(url, headers, ready))
        for url, (_, headers) in zip(urls, crowd, strict=True)
    ]
    for thread in threads:
        thread.start()
    ready.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, latencies, errors[0]


def site_processes() -> tuple[list[Spec], dict[str, str]]:
    """The three sites (the Procfile's ``web`` line, each with its own settings) and their URLs."""
    specs, urls = [], {}
    for name, (enabled, max_age) in SITES.items():
        port = free_port()
        settings = {"WEBUI_ADDR": f"127.0.0.1:{port}", "PIPPA_MEMORY_ENABLED": enabled}
        if max_age is not None:
            settings["DJANGO_CONN_MAX_AGE"] = max_age
        urls[name] = f"http://127.0.0.1:{port}"
        specs.append(Spec(name, procfile()["web"], f"{urls[name]}/accounts/login/", settings))
    return specs, urls


def main() -> None:
    args = arguments(__doc__.splitlines()[0], turns=(160, 16), rounds=(2, 1))
    database_url = setup_django(
        database=args.database, label="throughput", DJANGO_SECRET_KEY=SECRET_KEY
    )
    h = household()
    crowd = members(h, max(LEVELS))
    engine_port = free_port()
    engine_url = f"http://127.0.0.1:{engine_port}"
    env = production_environment(
        database_url, PIPPA_MEMORY_URL=engine_url, WEBUI_OFFLINE_PACE_SECONDS="0"
    )
    sites, urls = site_processes()
    helpers = [Spec("engine", engine_command(engine_port), f"{engine_url}/_control/requests")]
    helpers += [Spec(name, command) for name, command in delivery_processes().items()]
    results: dict[tuple[str, int], list[tuple[float, list[float], int]]] = {}
    used: dict[tuple[str, int], float] = {}
    with running(helpers + sites, env) as started:
        helping = {p.name: p for p in started[: len(helpers)]}
        for name in SITES:
            load(urls[name], h, crowd[:4], 2)  # warm every worker process
        for level in LEVELS:
            per_member = max(1, args.turns // level)
            for _ in range(args.rounds):
                for name in SITES:
                    before = helper_cpu(helping)
                    outcome = load(urls[name], h, crowd[:level], per_member)
                    if name == "memory on":
                        for helper, seconds in helper_cpu(helping).items():
                            used[helper, level] = used.get((helper, level), 0.0) + (
                                seconds - before[helper]
                            )
                    results.setdefault((name, level), []).append(outcome)
    report(args, results, used)


def helper_cpu(helping: dict[str, Process]) -> dict[str, float]:
    """CPU seconds used so far by the engine and by the delivery processes, all together."""
    engine = cpu_seconds(helping["engine"].popen.pid)
    delivery = sum(cpu_seconds(p.popen.pid) for n, p in helping.items() if n != "engine")
    return {"engine": engine, "delivery": delivery}


def report(
    args: Any,
    results: dict[tuple[str, int], list[tuple[float, list[float], int]]],
    used: dict[tuple[str, int], float],
) -> None:
    backend = backend_name(args.database)
    rates: dict[tuple[str, int], float] = {}
    for (name, level), outcomes in results.items():
        rates[name, level] = median([len(o[1]) / o[0] for o in outcomes])
        latencies = [seconds for o in outcomes for seconds in o[1]]
        errors = sum(o[2] for o in outcomes)
        figure(
            f"throughput, {level} member{'s' if level > 1 else ''}, {name}, {backend}",
            f"{rates[name, level]:.1f} turns/s, p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
            f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms, {errors} errors",
            **none_wanted(errors, "errors"),
            what=(
                f"{len(latencies)} turns over loopback HTTP to gunicorn (production profile, "
                f"Procfile's web line), {level} logged-in members at once, each in a conversation "
                f"of their own, offline vessel unpaced; turns/s the median of {args.rounds} "
                "interleaved rounds, latencies pooled"
            ),
            section=SECTION,
        )
    for level in LEVELS:
        ratio = rates["memory on", level] / rates["memory off", level]
        turns = sum(len(o[1]) for o in results["memory on", level])
        engine, delivery = used["engine", level], used["delivery", level]
        figure(
            f"throughput, memory on vs off, {level} member{'s' if level > 1 else ''}, {backend}",
            f"{ratio:.2f} of memory off's turns/s; while memory on ran, the engine used "
            f"{engine:.2f} CPU s ({engine / turns * 1000:.1f} ms a turn) and the delivery "
            f"processes {delivery:.2f} CPU s ({delivery / turns * 1000:.1f} ms a turn)",
            target="at least 0.90",
            met=ratio >= 0.9,
            what=(
                "the two sites' turns/s above, side by side in the same rounds; CPU seconds "
                "(user and system) of the engine process and of the delivery processes "
                f"(the Procfile's {', '.join(delivery_processes())}), read from /proc before and "
                f"after each memory-on run and summed over the {args.rounds} rounds' {turns} "
                "turns (deliveries of an earlier arm's events still under way count too)"
            ),
            section=SECTION,
        )
        ratio = rates["memory on", level] / rates["memory on, no CONN_MAX_AGE", level]
        figure(
            f"throughput, persistent connections vs none, {level} member{'s' if level > 1 else ''}, "
            f"{backend}",
            f"{ratio:.2f} times the turns/s of DJANGO_CONN_MAX_AGE=0",
            what=(
                "memory on, the production profile's CONN_MAX_AGE against DJANGO_CONN_MAX_AGE=0, "
                "side by side in the same rounds"
            ),
            section=SECTION,
        )


if __name__ == "__main__":
    main()
