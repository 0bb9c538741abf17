"""What the playground stores: scenarios that someone chose to share, and nothing else."""
from django.db import models


class SharedScenario(models.Model):
    """A scenario with the settings it was shared with. Rows are written once and never changed.

    The id is taken from the content's digest, so sharing the same content again finds the
    same row, and different content can never take over an existing link.
    """

    id = models.CharField(primary_key=True, max_length=52, editable=False)
    # sha256 of the canonical content (scenario text, node, every gate per component, versions if any).
    digest = models.CharField(max_length=64, unique=True, editable=False)
    scenario = models.TextField()
    node = models.CharField(max_length=253, blank=True)
    # {component: {gate: bool}} with a value for every gate the playground knew when sharing.
    gates = models.JSONField(default=dict)
    # {component: {"emulated": "X.Y", "minCompat": "X.Y"}} as chosen; {} for shares made before versions.
    versions = models.JSONField(default=dict, blank=True)
    # The pending claims judged each alone (the page's "judge each claim alone"), not as one pod's.
    each_claim_alone = models.BooleanField(default=False)
    # allocator.version.VERSION of the playground that first stored it.
    version = models.CharField(max_length=64)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"shared scenario {self.id}"


class SharedWorkshop(models.Model):
    """A workshop file an instructor shared, stored like a shared scenario: content-addressed,
    written once, never changed. Only workshops that lint clean are stored."""

    id = models.CharField(primary_key=True, max_length=52, editable=False)
    # sha256 of the workshop text (UTF-8).
    digest = models.CharField(max_length=64, unique=True, editable=False)
    text = models.TextField()
    title = models.CharField(max_length=200)
    version = models.CharField(max_length=64)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"shared workshop {self.id}"


from allocator.models_rooms import Room, RoomAttendee, RoomProgress  # noqa: E402,F401  (rooms: models_rooms.py)
