"""Gunicorn's settings for the site: ``gunicorn -c python:pippa_site.gunicorn_conf pippa_site.wsgi``.

A streamed reply (``Accept: text/event-stream``) holds its request thread for as long as the reply
is being written. Under gunicorn's default sync worker that is one whole process per stream, so a
few open streams would stop every page. The gthread worker gives each process a pool of threads
instead: ``workers * threads`` requests at once (streams included), the rest queued. The numbers
and why they were chosen are in ``docs/deployment.md``; flags on the command line (``--workers``,
``--threads``, ``-b``) override them.

On SIGTERM (a deploy, a restart) a worker stops taking requests and gives the running ones
``graceful_timeout`` seconds before it is killed. A reply still being written by then would be
lost, so the hooks below tell the worker's turns (:mod:`webui.turns.shutdown`): they may run on
for :data:`REPLY_SHARE_OF_GRACE` of the grace, then each stops at its next piece and saves what
had arrived, marked interrupted, in the rest.
"""

import signal
from types import FrameType
from typing import Any

from webui.turns.shutdown import begin_shutdown

wsgi_app = "pippa_site.wsgi"
bind = "127.0.0.1:8000"
worker_class = "gthread"
# Two processes, so a crash or a slow garbage collection in one leaves the other answering.
workers = 2
# Threads per process: 2 x 32 = 64 requests at once, e.g. 30 open streams and 8 brain-door calls
# (its cap, 4 per process) with 26 threads left for pages.
threads = 32
# A process takes a connection only while one of its threads is free (worker_connections follows
# threads, ``on_starting`` below), so a request never queues behind a process whose threads all
# hold streams while the other has threads to spare: it waits in the listening socket for
# whichever frees first. Connections are therefore not kept alive (keep-alive would need room
# beyond the threads); the proxy in front keeps its own.
worker_connections = threads
keepalive = 0
# gthread's main thread keeps the worker's heartbeat while requests run, so a long stream is not
# killed; the timeout only catches a worker that is stuck as a whole.
timeout = 60
# On shutdown, running requests (and streams) get this long to finish before the worker is killed;
# a reply still being written after two thirds of it is saved as far as it got (below).
graceful_timeout = 30
# No request-line limit of gunicorn's own (0: up to its hard bound of about a megabyte): past it
# gunicorn answers an HTML page of its own, so the site refuses a long address itself, with a 414
# in its own shape (webui/web/long_url_guard.py).
limit_request_line = 0
# gunicorn's control socket (runtime management) is a fixed path in the home folder by default, so
# two sites on one machine would clash over it; nothing here uses it.
control_socket_disable = True

#: The share of ``graceful_timeout`` a reply being written may still take after SIGTERM; the rest
#: of the grace is left for saving what had arrived.
REPLY_SHARE_OF_GRACE = 2 / 3


def on_starting(server: Any) -> None:
    """Tie ``worker_connections`` to ``threads``, as set here or by ``--threads``."""
    server.cfg.set("worker_connections", server.cfg.threads)


def post_worker_init(worker: Any) -> None:
    """Chain the worker's SIGTERM handler (gunicorn's graceful stop) with the turns' shutdown:
    they may run for :data:`REPLY_SHARE_OF_GRACE` of the grace, then stop and save. Start the
    worker's heartbeat."""
    stop_worker = signal.getsignal(signal.SIGTERM)
    finish_within = worker.cfg.graceful_timeout * REPLY_SHARE_OF_GRACE

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        begin_shutdown(finish_within=finish_within)
        if callable(stop_worker):
            stop_worker(signum, frame)

    signal.signal(signal.SIGTERM, on_sigterm)
    signal.siginterrupt(signal.SIGTERM, False)  # as gunicorn has it: no system call is cut short

    # The health page's "web server" line (webui.health): the app is loaded by now, so Django is.
    from webui.health.beats import ProcessBeat

    ProcessBeat("web").start()


def worker_int(worker: Any) -> None:
    """SIGINT or SIGQUIT (Ctrl-C, a quick stop): the worker exits at once, so its running turns
    stop now and save what had arrived, marked interrupted, before the process ends."""
    begin_shutdown(finish_within=0)
