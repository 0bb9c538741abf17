# The two commands of the README: `make run` starts the playground, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000

.PHONY: run test install install-test conformance bench clean

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.installed-test: requirements-test.txt requirements.txt $(VENV)/.installed
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

run: install
	DEBUG=$${DEBUG:-1} $(PY) manage.py migrate --noinput
	DEBUG=$${DEBUG:-1} $(PY) manage.py runserver 127.0.0.1:$(PORT)

test: install-test
	$(PY) -m pytest -n 2 tests

conformance: install
	$(PY) ../shared/conformance/check.py $(PY)

bench: install
	$(PY) scripts/bench_allocate.py

clean:
	rm -rf $(VENV) staticfiles .pytest_cache
