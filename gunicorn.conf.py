"""gunicorn settings for the playground; gunicorn reads this file from the working directory.

    gunicorn playground.wsgi              # what `make serve` runs; flags on the command line win

Workers are plain sync workers: each serves one request at a time and hands allocation runs to
its own bounded worker process (allocator/worker.py). WEB_CONCURRENCY sets how many.
"""
import os

bind = os.environ.get("BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", 2 * (os.cpu_count() or 1)))
# Longer than ALLOCATOR_TIMEOUT (10 s), so a stopped run still gets its answer out.
timeout = 30
graceful_timeout = 20
# Recycle workers now and then, staggered, so none holds on to fragmented memory for days.
max_requests = 2000
max_requests_jitter = 200
accesslog = "-"


def post_worker_init(worker):
    # Start the allocation worker process before the first request needs it.
    from allocator.worker import warm_up

    warm_up()
