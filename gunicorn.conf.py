"""gunicorn settings for the playground; gunicorn reads this file from the working directory.

    gunicorn playground.wsgi              # what `make serve` runs; flags on the command line win

Workers are threaded (gthread): each of WEB_CONCURRENCY processes serves GUNICORN_THREADS
requests at a time and hands allocation runs to its own bounded worker processes
(allocator/worker.py). A client that sends its request slowly (slowloris) holds one thread,
never a whole process, and only for a bounded time:

- every read from a client must bring data within CLIENT_IDLE_TIMEOUT seconds, and the request
  line, headers and body must all have arrived within CLIENT_READ_TIMEOUT seconds of a thread
  taking the request; a request that misses it is dropped (headers) or answered 408 (body);
- one client address may hold at most CLIENT_CONNECTIONS connections per process (browsers
  open at most six per site); more are closed at once. Behind a proxy (PROXY_COUNT) every
  connection comes from the proxy, so this is off there, as it should be for a room behind
  one NAT address (CLIENT_CONNECTIONS=0).
"""
import os
import socket
import threading
import time

from gunicorn.http.errors import NoMoreData
from gunicorn.workers.gthread import ThreadWorker

bind = os.environ.get("BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", 2 * (os.cpu_count() or 1)))
# Each thread may hold a database connection: 16 x 2 per CPU stays under PostgreSQL's default 100.
# GUNICORN_WORKER_CLASS picks another worker model (for comparison); gunicorn turns "sync" into
# plain gthread when threads > 1, so another model gets one thread unless told otherwise.
threads = int(os.environ.get("GUNICORN_THREADS") or (1 if os.environ.get("GUNICORN_WORKER_CLASS") else 16))
# Longer than ALLOCATOR_TIMEOUT (10 s), so a stopped run still gets its answer out.
timeout = 30
graceful_timeout = 20
keepalive = 5
# Recycle workers now and then, staggered, so none holds on to fragmented memory for days. A room of
# 100 attendees checking every 3 s sends about 8 requests a second to each of 4 workers: at 20,000 a
# worker restarts (and forks a new warm allocation server, about 0.25 s of CPU) every 40 minutes or so,
# not every 4.
max_requests = 20000
max_requests_jitter = 2000
accesslog = "-"

CLIENT_IDLE_TIMEOUT = float(os.environ.get("CLIENT_IDLE_TIMEOUT", 5))
CLIENT_READ_TIMEOUT = float(os.environ.get("CLIENT_READ_TIMEOUT", 15))
CLIENT_WRITE_TIMEOUT = float(os.environ.get("CLIENT_WRITE_TIMEOUT", 30))
CLIENT_CONNECTIONS = 0 if int(os.environ.get("PROXY_COUNT") or 0) else int(os.environ.get("CLIENT_CONNECTIONS", 6))


class BoundedClientSocket(socket.socket):
    """A client connection whose reads and writes never block without end.

    gunicorn switches a connection between non-blocking (while it waits in the poller) and
    blocking (while a thread serves it); here "blocking" means "with a timeout". Reads also
    share a deadline set when a thread starts on a request.
    """

    read_deadline = None
    on_close = None

    def setblocking(self, flag):
        if flag:
            super().settimeout(CLIENT_IDLE_TIMEOUT)
        else:
            super().setblocking(False)

    def start_request(self):
        self.read_deadline = time.monotonic() + CLIENT_READ_TIMEOUT

    def _bounded_read(self, read, *args):
        if self.gettimeout() == 0.0:  # non-blocking, in the poller's hands
            return read(*args)
        remaining = CLIENT_IDLE_TIMEOUT
        if self.read_deadline is not None:
            remaining = min(remaining, self.read_deadline - time.monotonic())
        if remaining <= 0:
            raise NoMoreData()
        super().settimeout(remaining)
        try:
            return read(*args)
        except (socket.timeout, TimeoutError):
            # Reported as a client that went away: gunicorn drops it quietly, Django's body
            # reader turns it into UnreadablePostError (a 408 from RequestBodyMiddleware).
            raise NoMoreData() from None

    def recv(self, *args):
        return self._bounded_read(super().recv, *args)

    def recv_into(self, *args):
        return self._bounded_read(super().recv_into, *args)

    def close(self):
        on_close, self.on_close = self.on_close, None
        try:
            super().close()
        finally:
            if on_close is not None:
                on_close()

    def __del__(self):  # a connection dropped without close() still gives its count back
        on_close, self.on_close = self.on_close, None
        if on_close is not None:
            on_close()

    def sendall(self, *args):
        if self.gettimeout() != 0.0:
            super().settimeout(CLIENT_WRITE_TIMEOUT)
        return super().sendall(*args)


def bounded(sock: socket.socket) -> BoundedClientSocket:
    wrapped = BoundedClientSocket(sock.family, sock.type, sock.proto, fileno=sock.detach())
    wrapped.setblocking(True)
    return wrapped


class BoundedThreadWorker(ThreadWorker):
    """gthread with BoundedClientSocket connections."""

    def accept(self, listener):
        bounded_listener = _ListenerProxy(listener)
        return super().accept(bounded_listener)

    def handle(self, conn):
        start = getattr(conn.sock, "start_request", None)
        if start is not None:
            start()
        return super().handle(conn)


class _ListenerProxy:
    """The listening socket, handing out bounded client sockets, at most CLIENT_CONNECTIONS
    at a time per client address."""

    open_by_address: dict = {}
    lock = threading.RLock()  # __del__ may release a count while accept() holds it

    def __init__(self, listener):
        self._listener = listener

    def accept(self):
        while True:
            client, address = self._listener.accept()
            host = address[0] if isinstance(address, tuple) else address
            if not CLIENT_CONNECTIONS:
                return bounded(client), address
            with self.lock:
                held = self.open_by_address.get(host, 0)
                if held < CLIENT_CONNECTIONS:
                    self.open_by_address[host] = held + 1
                    break
            client.close()  # one address holding this many connections is not a browser
        wrapped = bounded(client)
        wrapped.on_close = lambda: self._release(host)
        return wrapped, address

    @classmethod
    def _release(cls, host):
        with cls.lock:
            held = cls.open_by_address.get(host, 0) - 1
            if held > 0:
                cls.open_by_address[host] = held
            else:
                cls.open_by_address.pop(host, None)

    def __getattr__(self, name):
        return getattr(self._listener, name)


worker_class = os.environ.get("GUNICORN_WORKER_CLASS") or BoundedThreadWorker


def post_worker_init(worker):
    # Start the allocation worker process before the first request needs it.
    from allocator.worker import warm_up

    warm_up()
