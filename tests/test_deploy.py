"""Serving it for real: `check --deploy` is clean with the production settings, static files are
collected compressed and hashed, and gunicorn serves the app with its security headers."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.test_settings import KEY, clean_env

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION = {
    "DJANGO_PRODUCTION": "1",
    "SECRET_KEY": KEY,
    "ALLOWED_HOSTS": "play.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://play.example.org",
}


def manage(*args, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=clean_env(**env),
                          capture_output=True, text=True, timeout=300)


def test_check_deploy_is_clean_with_the_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_names_what_plain_http_gives_up():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION, HTTPS="0")
    assert result.returncode != 0
    for check in ("security.W004", "security.W008", "security.W016"):
        assert check in result.stderr


def test_templates_have_no_inline_script_for_the_content_security_policy():
    """CSP allows scripts from this site only: no inline <script> and no on* handler attributes."""
    for template in sorted((ROOT / "templates").rglob("*.html")):
        text = template.read_text(encoding="utf-8")
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag, f"{template.name}: inline script {tag}"
        assert not re.search(r"<[^>]+\son[a-z]+\s*=", text), f"{template.name}: inline event handler"
        assert "javascript:" not in text, f"{template.name}: javascript: URL"


def test_collectstatic_writes_compressed_hashed_files(tmp_path):
    result = manage("collectstatic", "--noinput", **PRODUCTION, STATIC_ROOT=str(tmp_path))
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "staticfiles.json").read_text())["paths"]
    hashed = manifest["playground/share.js"]
    assert re.fullmatch(r"playground/share\.[0-9a-f]{12}\.js", hashed)
    assert (tmp_path / hashed).exists() and (tmp_path / f"{hashed}.gz").exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(port, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    base = {"Host": "play.example.org", "X-Forwarded-Proto": "https", "X-Forwarded-For": "192.0.2.10"}
    connection.request(method, path, body=body, headers={**base, **(headers or {})})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response, data


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in path.read_text().split()] if path.exists() else []


def allocation_workers(worker: int) -> list[int]:
    """A gunicorn worker's allocation worker processes (children of its forkserver)."""
    return [grandchild for child in children(worker) for grandchild in children(child)]


def all_warm(master: int) -> bool:
    workers = children(master)
    return bool(workers) and all(allocation_workers(w) for w in workers)


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve")
    env = {
        **PRODUCTION,
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "STATIC_ROOT": str(folder / "static"),
        "PROXY_COUNT": "1",
        "ALLOCATOR_WORKERS": "1",
        "CLIENT_IDLE_TIMEOUT": "2",
        "CLIENT_READ_TIMEOUT": "3",
    }
    for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"]):
        result = manage(*command, **env)
        assert result.returncode == 0, result.stderr
    port = free_port()
    script = Path(sys.executable).parent / "gunicorn"
    launcher = [str(script)] if script.exists() else [sys.executable, "-m", "gunicorn"]
    log = open(folder / "gunicorn.log", "w")
    server = subprocess.Popen(
        [*launcher, "playground.wsgi", "--workers", "2", "--bind", f"127.0.0.1:{port}", "--timeout", "30"],
        cwd=ROOT, env=clean_env(**env), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if fetch(port, "GET", "/healthz")[0].status == 200:
                    break
            except OSError:
                pass
            assert server.poll() is None, (folder / "gunicorn.log").read_text()
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.2)
        # One worker answering /healthz says nothing of the other: wait until both have warmed up.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all_warm(server.pid):
            time.sleep(0.2)
        yield SimpleNamespace(port=port, pid=server.pid)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def test_gunicorn_serves_the_page_with_security_headers(gunicorn):
    response, body = fetch(gunicorn.port, "GET", "/")
    assert response.status == 200 and b"DRA Playground" in body
    csp = response.getheader("Content-Security-Policy")
    assert "script-src 'self';" in csp and "frame-ancestors 'none'" in csp and "unsafe-eval" not in csp
    assert response.getheader("X-Content-Type-Options") == "nosniff"
    assert response.getheader("Referrer-Policy") == "same-origin"
    assert response.getheader("X-Frame-Options") == "DENY"
    assert response.getheader("Strict-Transport-Security").startswith("max-age=31536000")


def test_gunicorn_workers_start_their_allocation_worker_before_the_first_request(gunicorn):
    """gunicorn.conf.py warms each worker's pool: worker -> forkserver -> allocation worker."""
    workers = children(gunicorn.pid)
    assert len(workers) == 2
    for worker in workers:
        assert allocation_workers(worker), f"gunicorn worker {worker} has no allocation worker"


def test_gunicorn_serves_hashed_static_files_compressed_and_cached_for_ever(gunicorn):
    _, body = fetch(gunicorn.port, "GET", "/")
    css = re.search(rb'href="(/static/playground/playground\.[0-9a-f]{12}\.css)"', body).group(1).decode()
    response, data = fetch(gunicorn.port, "GET", css, headers={"Accept-Encoding": "gzip"})
    assert response.status == 200 and response.getheader("Content-Encoding") == "gzip"
    assert "immutable" in response.getheader("Cache-Control")


def test_plain_http_is_redirected_to_https_except_the_health_check(gunicorn):
    response, _ = fetch(gunicorn.port, "GET", "/", headers={"X-Forwarded-Proto": "http"})
    assert response.status == 301 and response.getheader("Location") == "https://play.example.org/"
    assert fetch(gunicorn.port, "GET", "/healthz", headers={"X-Forwarded-Proto": "http"})[0].status == 200


def test_gunicorn_shares_and_serves_a_scenario_with_a_bounded_run(gunicorn):
    scenario = (ROOT / "allocator" / "examples" / "simple-gpu.yaml").read_bytes()
    response, body = fetch(gunicorn.port, "POST", "/api/v1/scenarios?node=worker-1", scenario,
                           {"Content-Type": "application/yaml"})
    assert response.status == 201, body
    shared = json.loads(body)
    assert shared["url"].startswith("https://play.example.org/s/")
    assert fetch(gunicorn.port, "GET", f"/s/{shared['id']}.yaml")[1] == scenario
    response, body = fetch(gunicorn.port, "GET", f"/s/{shared['id']}")
    assert response.status == 200 and b"Allocated on node worker-1" in body
    response, body = fetch(gunicorn.port, "GET", f"/s/{shared['id']}/embed")
    assert response.status == 200 and response.getheader("X-Frame-Options") is None
    assert response.getheader("Content-Security-Policy").endswith("frame-ancestors * file:")


def test_gunicorn_reads_a_chunked_upload_and_allocates_it(gunicorn):
    scenario = (ROOT / "allocator" / "examples" / "simple-gpu.yaml").read_bytes()
    connection = http.client.HTTPConnection("127.0.0.1", gunicorn.port, timeout=30)
    headers = {"Host": "play.example.org", "X-Forwarded-Proto": "https", "Content-Type": "application/yaml"}
    connection.request("POST", "/api/v1/allocate?node=worker-1", body=iter([scenario[:100], scenario[100:]]),
                       headers=headers, encode_chunked=True)
    response = connection.getresponse()
    data = json.loads(response.read())
    connection.close()
    assert response.status == 200 and data["outcome"] == "allocated"
    assert [c["metadata"]["name"] for c in data["claims"]] == ["single-gpu"]


def slow_body(port: int) -> socket.socket:
    """A client that announces a body and sends one byte of it now and then (slowloris)."""
    client = socket.create_connection(("127.0.0.1", port), timeout=30)
    client.sendall(b"POST /api/v1/allocate HTTP/1.1\r\nHost: play.example.org\r\nX-Forwarded-Proto: https\r\n"
                   b"Content-Type: application/yaml\r\nContent-Length: 100000\r\n\r\n#")
    return client


def test_slow_clients_hold_a_thread_for_a_bounded_time_and_the_server_keeps_answering(gunicorn):
    """With sync workers, more slow bodies than workers held every worker until gunicorn's
    timeout and /healthz timed out meanwhile."""
    slow = [slow_body(gunicorn.port) for _ in range(8)]
    started = time.monotonic()
    try:
        latencies = []
        while time.monotonic() - started < 2.5:
            for client in slow:
                try:
                    client.send(b"#")
                except OSError:
                    pass
            before = time.monotonic()
            assert fetch(gunicorn.port, "GET", "/healthz")[0].status == 200
            latencies.append(time.monotonic() - before)
            time.sleep(0.25)
        assert max(latencies) < 1.0, latencies
        answers = []
        for client in slow:
            client.settimeout(10)
            answers.append(client.recv(200))
        assert all(answer.startswith(b"HTTP/1.1 408") for answer in answers), answers
        assert time.monotonic() - started < 3 + 5, "each slow body is cut off at CLIENT_READ_TIMEOUT"
    finally:
        for client in slow:
            client.close()
