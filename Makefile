# The two commands of the README: `make run` starts the playground, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000

.PHONY: run test install install-test conformance bench clean test-postgres test-upstream test-scheduler test-validation services serve loadtest

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.installed-test: requirements-test.txt requirements.txt $(VENV)/.installed
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
	touch $@

# The project's bytecode and the tables of compiled dataclass methods and patterns
# (allocator/engine/dataclass_code.py), built as an installed copy has them: `manage.py allocate`
# starts in a third of the time with them.
install: $(VENV)/.installed
	@$(PY) -m compileall -q allocator playground manage.py >/dev/null
	@$(PY) -c "from allocator.cli import build_code_tables; build_code_tables()"

install-test: $(VENV)/.installed-test

run: install
	DEBUG=$${DEBUG:-1} $(PY) manage.py migrate --noinput
	DEBUG=$${DEBUG:-1} $(PY) manage.py runserver 127.0.0.1:$(PORT)

# Browser tests drive Debian's Chromium, never a downloaded one. As root, a missing one is installed;
# anyone else gets a message and those tests skip. fonts-noto-cjk: the Korean screenshots show Hangul.
CHROMIUM ?= /usr/bin/chromium
test: install-test
	@if [ ! -x $(CHROMIUM) ] || ! (fc-list 2>/dev/null | grep -qi "noto sans cjk"); then \
	  if [ "$$(id -u)" = 0 ]; then \
	    DEBIAN_FRONTEND=noninteractive apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium fonts-noto-cjk; \
	  else \
	    echo "make test: $(CHROMIUM) or fonts-noto-cjk is missing and installing them needs root (sudo apt-get install chromium fonts-noto-cjk); browser tests may be skipped or show boxes for Hangul."; \
	  fi; \
	fi
	@./.ci/services
	@command -v go >/dev/null || echo "make test: Go is not installed; the comparisons with Kubernetes' own allocator and kube-scheduler (tests/upstream) are skipped, their stored regressions still run."
	@# The Go oracles build in the background from here, overlapping the tests that need no Go (tests/upstream/prebuild.py).
	@if command -v go >/dev/null; then ($(PY) -m tests.upstream.prebuild >/dev/null 2>&1 &); fi
	CHROMIUM=$(CHROMIUM) $(PY) -m pytest -n 2 tests
	@$(MAKE) --no-print-directory test-postgres

# PostgreSQL and Redis on 127.0.0.1 for the tests and the load test: started (installed first, as root)
# when nothing answers there; without root, nothing changes and those tests keep to SQLite / skip.
services:
	@./.ci/services

# The engine against Kubernetes' own allocator (tests/upstream, needs Go): every conformance case,
# N generated scenarios (2,000 in `make test`) and the regressions. `make test-upstream N=50000`.
N ?= 2000
test-upstream: install-test
	DRA_UPSTREAM_EXAMPLES=$(N) $(PY) -m pytest -p no:cacheprovider -q tests/upstream

# Pod scheduling against kube-scheduler 1.37.2's own framework (tests/kube/cmd/schedule, needs Go):
# N generated dumps (2,000 in `make test`) and the regressions. `make test-scheduler N=20000`.
test-scheduler: install-test
	DRA_SCHEDULER_EXAMPLES=$(N) $(PY) -m pytest -p no:cacheprovider -q tests/upstream/test_scheduler_upstream.py

# The engine's validation against kube-apiserver 1.37.2's create path (tests/kube/cmd/validate, needs Go):
# every conformance case, every real-world manifest and N mutated objects (5,000 by default, as in
# `make test`, which runs seed 20). Object i of seed s is the same
# object in every run: `make test-validation SEED=s FROM=i N=1` runs it again; `make test-validation N=50000 SEED=7`.
SEED ?= 20
test-validation: N = 5000
test-validation: install-test
	DRA_VALIDATION_EXAMPLES=$(N) DRA_VALIDATION_SEED=$(SEED) DRA_VALIDATION_FROM=$(or $(FROM),0) $(PY) -m pytest -p no:cacheprovider -q tests/upstream/test_validation_upstream.py

# The share store's tests again on PostgreSQL when a server answers (`make services` starts one on
# 127.0.0.1:5432 as root); pytest-django creates and drops its own test_* database there.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/dra_playground
test-postgres: install-test
	@if $(PY) -c "import socket, sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); socket.create_connection((p.hostname or '127.0.0.1', p.port or 5432), 2).close()" "$(TEST_DATABASE_URL)" 2>/dev/null; then \
	  echo "Sharing tests on PostgreSQL ($(TEST_DATABASE_URL))"; \
	  CHROMIUM=$(CHROMIUM) DATABASE_URL="$(TEST_DATABASE_URL)" $(PY) -m pytest -n 2 -p no:cacheprovider tests/web/test_sharing.py tests/workshops/test_sharing.py tests/rooms/test_rooms.py; \
	else \
	  echo "No PostgreSQL at $(TEST_DATABASE_URL): the sharing tests ran on SQLite only."; \
	fi

# Production on this machine (README: "Running it for a workshop"); needs SECRET_KEY and
# ALLOWED_HOSTS in the environment, and HTTPS=0 when no TLS proxy is in front.
# gunicorn.conf.py holds the server settings (WEB_CONCURRENCY workers, BIND address).
serve: install
	DJANGO_PRODUCTION=1 $(PY) manage.py migrate --noinput
	DJANGO_PRODUCTION=1 $(PY) manage.py collectstatic --noinput
	DJANGO_PRODUCTION=1 $(VENV)/bin/gunicorn playground.wsgi

# 50 clients for 60 s against gunicorn and PostgreSQL on loopback (a script, not a test).
# LOADTEST_ARGS="--own-services --redis --redis-outage", "--mode noisy", "--mode slowloris": see the README.
loadtest: install
	@./.ci/services
	$(PY) scripts/loadtest.py $(LOADTEST_ARGS)

conformance: install
	$(PY) ../shared/conformance/check.py $(PY)

bench: install
	$(PY) scripts/bench_allocate.py

clean:
	rm -rf $(VENV) staticfiles .pytest_cache tests/upstream/.build tests/kube/.build

# 100 attendees checking every 3 s plus the instructor's page, against gunicorn, PostgreSQL and Redis
# with the production settings (a benchmark, not a test; README "Rooms"). BENCH_ROOM_ARGS="--no-room".
# Key → result painted per gallery example and per-key time in a 1.2 MB document, in Chromium (README "Page speed").
.PHONY: bench-browser
bench-browser: install
	$(PY) scripts/bench_browser.py

.PHONY: bench-room
bench-room: install
	@./.ci/services
	$(PY) scripts/bench_room.py $(BENCH_ROOM_ARGS)

# The server's CPU per edit request, per gallery example (engine in-process; README "Page speed").
.PHONY: bench-page-cpu
bench-page-cpu: install
	$(PY) scripts/bench_page.py --cpu

# The victim's p99 (a small page and API run) alone and while 8 attackers post the worst search to a
# workshop Check, or to /compare (a benchmark, not a test; README "Serving a room"). Target: under 500 ms.
.PHONY: loadtest-check loadtest-compare
loadtest-check: install
	@./.ci/services
	$(PY) scripts/loadtest.py --mode paths --noisy-target check --own-services --duration 40 $(LOADTEST_ARGS)

loadtest-compare: install
	@./.ci/services
	$(PY) scripts/loadtest.py --mode paths --noisy-target compare --own-services --duration 40 $(LOADTEST_ARGS)
