from django.apps import AppConfig


class WebuiConfig(AppConfig):
    """The host: souls, vessels, conversations, the turn service and the pages."""

    name = "webui"
    verbose_name = "Household WebUI"

    def ready(self) -> None:
        from webui import checks  # noqa: F401  (registers the system checks)
        from webui.health.views import HEALTH_LINK
        from webui.text.redaction import install_log_masking
        from webui.web.ledger import CACHE_LINK
        from webui.web.navigation import register_navigation_link

        install_log_masking()
        register_navigation_link(CACHE_LINK)
        register_navigation_link(HEALTH_LINK)

        from django.db.models.signals import post_delete

        from webui.models import Conversation
        from webui.prompt.history import drop_deleted_history

        post_delete.connect(
            drop_deleted_history, sender=Conversation, dispatch_uid="webui.history.drop_deleted"
        )
