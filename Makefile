# binlog-spec: `make demo` and `make test` do all set-up themselves.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CLI := $(VENV)/bin/binlog-spec
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
DEMO_FILE := fixtures/demo/mariadb-bin.000001

.PHONY: all setup apt demo test build check-generated bench clean

all: demo

$(STAMP): requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -e .
	touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

apt:
	tools/ensure-apt.sh node:nodejs npm:npm mariadbd:mariadb-server mariadb:mariadb-client

setup: apt $(STAMP) $(NODE_STAMP)

demo: $(STAMP)
	$(CLI) events $(DEMO_FILE)

build: $(STAMP) $(NODE_STAMP)
	$(PY) build.py

check-generated: $(STAMP) $(NODE_STAMP)
	$(PY) build.py --check

test: setup check-generated
	$(PY) -m pytest

bench: setup
	$(PY) benchmarks/bench_reader.py

clean:
	rm -rf $(VENV) node_modules build dist src/*.egg-info
