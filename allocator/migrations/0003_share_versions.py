from django.db import migrations, models


class Migration(migrations.Migration):
    """Shares keep the versions they were made with (rows from before versions hold none)."""

    dependencies = [
        ("allocator", "0002_shared_workshop"),
    ]

    operations = [
        migrations.AddField(
            model_name="sharedscenario",
            name="versions",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
