from django.apps import AppConfig


class WebuiConfig(AppConfig):
    """The host: souls, vessels, conversations, the turn service and the pages."""

    name = "webui"
    verbose_name = "Household WebUI"

    def ready(self) -> None:
        from webui import checks  # noqa: F401  (registers the system checks)
        from webui.cache_views import CACHE_LINK
        from webui.navigation import register_navigation_link
        from webui.redaction import install_log_masking

        install_log_masking()
        register_navigation_link(CACHE_LINK)
