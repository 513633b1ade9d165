"""The household's health: each process's heartbeat (beats.py), the lines the health page shows
in a family's words with what to do (lines.py), and the page, its JSON and the load balancer's
``/health/`` (views.py). A plug-in adds its own lines through
:meth:`webui.extensions.TurnExtension.health_lines`."""
