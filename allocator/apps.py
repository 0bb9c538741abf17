from django.apps import AppConfig


class AllocatorConfig(AppConfig):
    name = "allocator"
    verbose_name = "DRA allocator"
