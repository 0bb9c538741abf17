"""Workshop rooms: an instructor's room, its anonymous attendees, and each attendee's latest result per
step. Every table is bounded by its room: attendees by ROOM_MAX_ATTENDEES, results to one row per
attendee and step. Nothing else is kept. The rules live in allocator/rooms.py."""
from django.db import models


class Room(models.Model):
    """A room for one workshop (shipped, by slug, or shared, by id).

    `id` is the public code in the attendee link. The instructor's link carries a secret token;
    only its sha256 is stored, so the table alone does not open anyone's instructor page."""

    id = models.CharField(primary_key=True, max_length=16, editable=False)
    token_digest = models.CharField(max_length=64, editable=False)
    workshop_kind = models.CharField(max_length=8)  # "shipped" or "shared"
    workshop_ident = models.CharField(max_length=100)
    title = models.CharField(max_length=200)
    # [{"number": 1, "title": "...", "checks": [{"id": "1", "label": "..."}, ...]}, ...]: the steps and checks as the
    # room was opened, so the instructor's page needs no workshop parse on every poll.
    lessons = models.JSONField(default=list)
    # Seats taken; compared and raised in one UPDATE, so concurrent joins cannot pass the bound.
    attendees = models.PositiveIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)
    expires = models.DateTimeField(db_index=True)
    closed = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"room {self.id}"


class RoomAttendee(models.Model):
    """Someone who joined, known only by this row's id in a signed cookie. `lesson` is the step of
    their latest recorded Check and `last_check` its time (both null until the first)."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="+")
    lesson = models.PositiveSmallIntegerField(null=True, blank=True)
    joined = models.DateTimeField(auto_now_add=True)
    last_check = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["room", "lesson"], name="room_attendee_lesson")]


class RoomProgress(models.Model):
    """One attendee's Checks of one step: how many, whether one ever passed, whether the latest did, and
    which checks the latest failed: bit i for the lesson's check i (the room's first 62 checks of a
    lesson), so the instructor's page counts each check's failures in one aggregate query."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="+")
    attendee = models.ForeignKey(RoomAttendee, on_delete=models.CASCADE, related_name="+")
    lesson = models.PositiveSmallIntegerField()
    lesson_key = models.CharField(max_length=100, blank=True)  # the lesson's own id or slug, when it has one
    attempts = models.PositiveIntegerField(default=0)
    passed = models.BooleanField(default=False)  # every check passed at least once
    passing = models.BooleanField(default=False)  # ... in the latest Check
    failing = models.BigIntegerField(default=0)
    updated = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["attendee", "lesson"], name="room_progress_once")]
        indexes = [models.Index(fields=["room", "lesson"], name="room_progress_lesson")]
