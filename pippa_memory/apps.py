from django.apps import AppConfig


class PippaMemoryConfig(AppConfig):
    """Connects the memory seams and doors to the host through its named extension points."""

    name = "pippa_memory"
    verbose_name = "Pippa memory"

    def ready(self) -> None:
        from pippa_memory import checks  # noqa: F401  (registers the system checks)
        from pippa_memory.extension import MemoryExtension
        from webui.extensions import register_extension

        register_extension(MemoryExtension())

        from django.db.models.signals import post_save

        from pippa_memory.signals import emit_turn_event
        from webui.models import Message

        post_save.connect(emit_turn_event, sender=Message, dispatch_uid="pippa_memory.turn_event")
