"""The admin: souls, vessels and unattended runs (:mod:`.vessels`), what was said, read only
(:mod:`.conversations`), and the read-only base for rows the system writes (:mod:`.read_only`).
Every admin refuses query-string lookups on free text (:mod:`.member_words`); installed apps'
admins are registered again to do the same (:mod:`.installed_apps`).

Django's admin autodiscovery imports this package; importing each module registers its models.
"""

from webui.admin import conversations, installed_apps, vessels  # noqa: F401
