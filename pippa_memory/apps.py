from django.apps import AppConfig


def memory_secret_values() -> list[str]:
    """The plug-in's own secrets, for the host to mask wherever it shows or logs text: the
    engine's bearer token and the brain door's signing secrets (several during a rotation)."""
    from pippa_memory.conf import memory_settings

    return [memory_settings.TOKEN, *memory_settings.BRAIN_SECRET.split()]


class PippaMemoryConfig(AppConfig):
    """Connects the memory seams and doors to the host through its named extension points."""

    name = "pippa_memory"
    verbose_name = "Pippa memory"

    def ready(self) -> None:
        from pippa_memory import checks  # noqa: F401  (registers the system checks)
        from pippa_memory.extension import MemoryExtension
        from webui.extensions import register_extension
        from webui.text.redaction import register_secret_source
        from webui.web.navigation import NavigationLink, register_navigation_link
        from webui.web.page_slots import ConversationPanel, register_conversation_panel

        register_extension(MemoryExtension())
        register_navigation_link(NavigationLink(label="Memory", url_name="memory-page"))
        register_secret_source(memory_secret_values)

        from pippa_memory.items.conversation_panel import render_memory_panel

        register_conversation_panel(ConversationPanel(name="memory", render=render_memory_panel))

        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_delete, post_save

        from pippa_memory.signals import emit_turn_event, forget_deleted_member
        from webui.models import Message

        post_save.connect(emit_turn_event, sender=Message, dispatch_uid="pippa_memory.turn_event")
        post_delete.connect(
            forget_deleted_member,
            sender=get_user_model(),
            dispatch_uid="pippa_memory.forget_deleted_member",
        )
