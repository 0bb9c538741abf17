import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
application = get_wsgi_application()


def _settle() -> None:
    """Load what every request needs, then take it out of the cycle collector's reach: it lives
    as long as the process, and a full collection walking it paused a request for about 25 ms
    every few dozen requests."""
    from django.template.loader import get_template

    from allocator import gallery

    get_template("index.html")
    gallery.all_examples()
    gc.freeze()


_settle()
