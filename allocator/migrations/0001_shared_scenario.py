"""Shared scenarios: one immutable row per distinct content."""
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="SharedScenario",
            fields=[
                ("id", models.CharField(editable=False, max_length=52, primary_key=True, serialize=False)),
                ("digest", models.CharField(editable=False, max_length=64, unique=True)),
                ("scenario", models.TextField()),
                ("node", models.CharField(blank=True, max_length=253)),
                ("gates", models.JSONField(default=dict)),
                ("version", models.CharField(max_length=64)),
                ("created", models.DateTimeField(auto_now_add=True)),
            ],
            options={"ordering": ["-created"]},
        ),
    ]
