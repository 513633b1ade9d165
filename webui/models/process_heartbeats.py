"""A :class:`ProcessHeartbeat` row per kind of process and host: when it last said it was alive.

The web server's workers, the scheduler and (through the host's helpers, from the memory
plug-in) the delivery worker each write theirs every ``WEBUI_HEARTBEAT_SECONDS``; the health
page (:mod:`webui.health`) reads them. One row per role and host, updated in place, so the
table stays as small as the household's machines.
"""

from django.db import models


class ProcessHeartbeat(models.Model):
    """The newest beat of one kind of process (``role``) on one machine (``host``).

    ``pid`` and ``started_at`` are those of the process that beat last (several processes of
    one role on one host take turns, such as gunicorn's workers). A role that stands for a
    service the site only reaches (the memory engine) has neither: its beat is the last time a
    process of the site reached it.
    """

    role = models.CharField(max_length=40)
    host = models.CharField(max_length=255)
    pid = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    beat_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["role", "host"], name="one_heartbeat_per_role_host")
        ]
        ordering = ["role", "host"]

    def __str__(self) -> str:
        return f"{self.role} on {self.host}"
