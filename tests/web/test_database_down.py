"""PostgreSQL stopped for real under a running gunicorn: every caller gets a 503 with Retry-After
in its own format (JSON for the API, the share box's fragment for htmx, a page otherwise), the
pages that need no database keep serving, and the service recovers when the database is back.

The test starts a PostgreSQL cluster of its own on a free port (not the one `.ci/services`
shares with other test runs), so stopping it disturbs nobody. Needs root (to run PostgreSQL as
its `postgres` user) and Debian's PostgreSQL binaries; skips with a message otherwise."""
import glob
import http.client
import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
PG_BINS = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: [int(x) for x in re.findall(r"\d+", p)])
SCENARIO = "# shared before the outage\n"


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "stopping a real PostgreSQL needs root (to run it as its postgres user)"
    if not PG_BINS or not os.path.exists(PG_BINS[-1] + "/pg_ctl"):
        return "no PostgreSQL binaries under /usr/lib/postgresql (./.ci/services installs them)"
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "no postgres user"
    return None


class Postgres:
    """A throwaway cluster: trust authentication on 127.0.0.1 only, no fsync."""

    def __init__(self):
        self.bin = PG_BINS[-1]
        self.folder = tempfile.mkdtemp(prefix="dra-db-down-", dir="/var/tmp")
        os.chmod(self.folder, 0o755)
        self.data = os.path.join(self.folder, "data")
        os.mkdir(self.data, 0o700)
        shutil.chown(self.data, "postgres", "postgres")
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"
        self._as_postgres(f"'{self.bin}/initdb' -D '{self.data}' -U postgres --auth=trust -E UTF8 >/dev/null")

    def _as_postgres(self, command: str) -> None:
        subprocess.run(["su", "postgres", "-s", "/bin/sh", "-c", command], check=True, timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def start(self) -> None:
        options = (f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories='{self.data}' "
                   f"-c fsync=off")
        self._as_postgres(f"'{self.bin}/pg_ctl' -D '{self.data}' -l '{self.data}/server.log' -w "
                          f"-o \"{options}\" start >/dev/null")

    def stop(self) -> None:
        self._as_postgres(f"'{self.bin}/pg_ctl' -D '{self.data}' -m fast -w stop >/dev/null")

    def remove(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass  # not running
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="module")
def server():
    why = _why_not()
    if why:
        pytest.skip(f"database-down test skipped: {why}")
    database = Postgres()
    process = None
    try:
        database.start()
        env = {**os.environ, "DATABASE_URL": database.url, "SECRET_KEY": "database-down-test-" + "x" * 40,
               "ALLOCATOR_ISOLATION": "inline", "REDIS_URL": "", "DJANGO_PRODUCTION": "", "DEBUG": ""}
        subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, env=env,
                       check=True, timeout=120)
        port = free_port()
        process = subprocess.Popen([sys.executable, "-m", "gunicorn", "playground.wsgi:application",
                                    "-b", f"127.0.0.1:{port}", "-w", "1", "-k", "gthread", "--threads", "4"],
                                   cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    pytest.fail("gunicorn did not start")
                time.sleep(0.2)
        yield port, database
    finally:
        if process is not None:
            process.kill()
            process.wait(10)
        database.remove()  # stopped and deleted, even when the test failed with it stopped


def call(port, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), data.decode()


def test_with_postgresql_stopped_every_caller_gets_a_503_in_its_format_and_it_recovers(server):
    port, database = server
    status, _, body = call(port, "POST", "/api/v1/scenarios", SCENARIO, {"Content-Type": "application/yaml"})
    assert status == 201, body
    share_id = json.loads(body)["id"]
    status, headers, page = call(port, "GET", "/")
    assert status == 200
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    cookie = headers["Set-Cookie"].split(";")[0]
    share_form = urlencode({"csrfmiddlewaretoken": token, "scenario": "# during the outage\n", "gates-submitted": "1"})
    form_headers = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie,
                    "Referer": f"http://127.0.0.1:{port}/", "Origin": f"http://127.0.0.1:{port}"}

    database.stop()
    try:
        status, headers, body = call(port, "GET", f"/api/v1/scenarios/{share_id}")
        assert status == 503 and headers["Content-Type"] == "application/json"
        assert "database is not answering" in json.loads(body)["message"] and headers["Retry-After"] == "10"

        status, headers, body = call(port, "POST", "/api/v1/workshops", "title: t\n", {"Content-Type": "application/yaml"})
        assert status == 503 and headers["Content-Type"] == "application/json" and headers["Retry-After"] == "10"

        status, headers, body = call(port, "POST", "/share", share_form, {**form_headers, "HX-Request": "true"})
        assert status == 503 and headers["Retry-After"] == "10"
        assert body.lstrip().startswith('<p class="share-error" role="alert">The database is not answering')

        status, headers, body = call(port, "GET", f"/s/{share_id}")
        assert status == 503 and headers["Content-Type"].startswith("text/html") and headers["Retry-After"] == "10"
        assert "<h1>Unavailable for a moment</h1>" in body and "database is not answering" in body

        assert call(port, "GET", "/")[0] == 200, "the playground needs no database"
        assert call(port, "GET", "/readyz")[0] == 503
    finally:
        database.start()

    deadline = time.monotonic() + 15
    while True:
        status, _, body = call(port, "GET", f"/api/v1/scenarios/{share_id}")
        if status == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert status == 200 and json.loads(body)["scenario"] == SCENARIO
    assert call(port, "POST", "/share", share_form, {**form_headers, "HX-Request": "true"})[0] in (200, 201)
