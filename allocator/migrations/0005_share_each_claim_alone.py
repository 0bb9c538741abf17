from django.db import migrations, models


class Migration(migrations.Migration):
    """Shares keep whether the pending claims were judged each alone (rows from before hold false)."""

    dependencies = [
        ("allocator", "0004_rooms"),
    ]

    operations = [
        migrations.AddField(
            model_name="sharedscenario",
            name="each_claim_alone",
            field=models.BooleanField(default=False),
        ),
    ]
