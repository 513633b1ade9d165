"""Streamed against not streamed: time to the first text and total time of one chat turn.

Each turn goes over loopback HTTP to the chat route, as the page sends it: with ``Accept:
application/json`` (the first text is the whole reply, at the 201) or ``Accept: text/event-stream``
(the first text is the first ``delta`` event, the total is the ``done`` event). Two vessels:

- the offline vessel, unpaced: what streaming itself costs (a worker thread, a queue, the events);
- an OpenAI Chat Completions double on a loopback port that writes its reply in ``--pieces``
  pieces, one every ``--pace`` seconds (chunks shaped as OpenAI documents, ``data: [DONE]`` last),
  or answers once after the same total when the request is not streamed.

Arms run interleaved, one fresh conversation per turn; medians over ``--rounds`` rounds.

    .venv/bin/python bench/streaming.py [--rounds 9] [--pieces 20]
"""

import json
import os
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from _report import figure
from _setup import arguments, household, median, setup_django, vessel

KEY_ENV = "BENCH_PROVIDER_API_KEY"
#: Seconds between the provider double's pieces.
PACE = 0.05


def provider_double(pieces: int, pace: float) -> ThreadingHTTPServer:
    """A loopback OpenAI Chat Completions double answering at a fixed pace."""
    words = [f"word{n} " for n in range(pieces)]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if request.get("stream"):
                self.stream(request)
            else:
                time.sleep(pace * pieces)
                self.respond(200, "application/json", json.dumps(completion("".join(words))))

        def respond(self, code: int, kind: str, body: str) -> None:
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def stream(self, request: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for word in words:
                time.sleep(pace)
                self.chunk({"choices": [{"index": 0, "delta": {"content": word}}]})
            self.chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            if request.get("stream_options", {}).get("include_usage"):
                self.chunk({"choices": [], "usage": usage(pieces)})
            self.wfile.write(b"data: [DONE]\n\n")

        def chunk(self, fields: dict[str, Any]) -> None:
            body = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0}
            body.update(model="bench-1", **fields)
            self.wfile.write(f"data: {json.dumps(body)}\n\n".encode())
            self.wfile.flush()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def usage(pieces: int) -> dict[str, int]:
    return {"prompt_tokens": 100, "completion_tokens": pieces, "total_tokens": 100 + pieces}


def completion(text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 0,
        "model": "bench-1",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage(len(text.split())),
    }


def site() -> str:
    """The chat site on a loopback port, in this process."""
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler)
    server.set_app(get_wsgi_application())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def logged_in(user: Any) -> Any:
    import requests
    from django.test import Client

    browser = Client()
    browser.force_login(user)
    token = secrets.token_hex(16)
    session = requests.Session()
    session.cookies.set("sessionid", browser.cookies["sessionid"].value)
    session.cookies.set("csrftoken", token)
    session.headers.update({"X-CSRFToken": token})
    return session


def lines_as_they_arrive(response: Any) -> Any:
    """The body's lines as soon as each has arrived. ``iter_lines`` would wait for 512 bytes (its
    chunk size) before giving the first, which would time the buffer, not the stream."""
    pending = b""
    while True:
        chunk = response.raw.read1(65536)
        if not chunk:
            break
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line.decode("utf-8")
    if pending:
        yield pending.decode("utf-8")


def timed_turn(http: Any, url: str, *, streamed: bool) -> tuple[float, float]:
    """Seconds to the first text and to the end of one turn."""
    accept = "text/event-stream" if streamed else "application/json"
    started = time.perf_counter()
    response = http.post(url, json={"text": "hello"}, headers={"Accept": accept}, stream=streamed)
    if not streamed:
        assert response.status_code == 201, response.text
        total = time.perf_counter() - started
        return total, total
    first = None
    for line in lines_as_they_arrive(response):
        if line == "event: delta" and first is None:
            first = time.perf_counter() - started
        elif line == "event: done":
            break
        elif line == "event: error":
            raise RuntimeError(f"the streamed turn failed: {response.text}")
    total = time.perf_counter() - started
    return first if first is not None else total, total


def main() -> None:
    args = arguments(__doc__.splitlines()[0], rounds=(9, 2), pieces=(20, 20))
    args.pace = PACE
    setup_django(database=args.database, label="streaming", PIPPA_MEMORY_ENABLED="false")
    from webui.models import Conversation

    h = household()
    double = provider_double(args.pieces, args.pace)
    os.environ[KEY_ENV] = "bench-key"
    provider = vessel(
        "provider-double",
        name="Provider double",
        adapter="openai",
        model="bench-1",
        base_url=f"http://127.0.0.1:{double.server_address[1]}/v1",
        api_key_env=KEY_ENV,
    )
    base = site()
    http = logged_in(h["user"])
    vessels = {"offline": h["vessel"], f"provider double ({args.pieces} x {args.pace}s)": provider}
    arms = [(name, streamed) for name in vessels for streamed in (False, True)]
    samples: dict[tuple[str, bool], list[tuple[float, float]]] = {arm: [] for arm in arms}
    for _ in range(args.rounds):
        for name, streamed in arms:
            conversation = Conversation.objects.create(
                soul=h["soul"], vessel=vessels[name], viewer=h["user"]
            )
            url = f"{base}/api/conversations/{conversation.pk}/messages/"
            samples[name, streamed].append(timed_turn(http, url, streamed=streamed))
    for name in vessels:
        plain, sse = samples[name, False], samples[name, True]
        cells = [median([s[i] for s in arm]) * 1000 for i in (0, 1) for arm in (plain, sse)]
        first_plain, first_sse, total_plain, total_sse = cells
        figure(
            f"streaming, {name}",
            f"first text {first_sse:.1f} ms streamed vs {first_plain:.1f} ms not; whole turn "
            f"{total_sse:.1f} ms vs {total_plain:.1f} ms",
            what=(
                "one chat turn over loopback HTTP to the chat route, Accept: text/event-stream "
                "(first text: the first delta event) against application/json (first text: the "
                f"201), a fresh conversation per turn, medians of {args.rounds} interleaved rounds"
            ),
            section="Streaming",
        )
    double.shutdown()


if __name__ == "__main__":
    main()
