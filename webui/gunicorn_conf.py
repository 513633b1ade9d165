"""Gunicorn's settings for the site: ``gunicorn -c python:webui.gunicorn_conf webui.wsgi``.

A streamed reply (``Accept: text/event-stream``) holds its request thread for as long as the reply
is being written. Under gunicorn's default sync worker that is one whole process per stream, so a
few open streams would stop every page. The gthread worker gives each process a pool of threads
instead: ``workers * threads`` requests at once (streams included), the rest queued. The numbers
and why they were chosen are in ``docs/deployment.md``; flags on the command line (``--workers``,
``--threads``, ``-b``) override them.
"""

wsgi_app = "webui.wsgi"
bind = "127.0.0.1:8000"
worker_class = "gthread"
# Two processes, so a crash or a slow garbage collection in one leaves the other answering.
workers = 2
# Threads per process: 2 x 16 = 32 requests at once, e.g. 16 open streams and 16 page loads.
threads = 16
# gthread's main thread keeps the worker's heartbeat while requests run, so a long stream is not
# killed; the timeout only catches a worker that is stuck as a whole.
timeout = 60
# On shutdown, running requests (and streams) get this long to finish before the worker is killed.
graceful_timeout = 30
keepalive = 5
# gunicorn's control socket (runtime management) is a fixed path in the home folder by default, so
# two sites on one machine would clash over it; nothing here uses it.
control_socket_disable = True
