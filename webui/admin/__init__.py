"""The admin: souls, vessels and unattended runs (:mod:`.vessels`), what was said, read only
(:mod:`.conversations`), and the read-only base for rows the system writes (:mod:`.read_only`).

Django's admin autodiscovery imports this package; importing each module registers its models.
"""

from webui.admin import conversations, vessels  # noqa: F401
