"""A reply the server stopped while shutting down is marked interrupted, apart from one the member
stopped. Existing rows are not interrupted."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("webui", "0012_admin_log_labels_conversations_without_titles"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="interrupted",
            field=models.BooleanField(
                default=False,
                help_text="The server stopped the reply (it was shutting down): the text is what had arrived by then.",
            ),
        ),
    ]
