# binlog-spec: `make demo` and `make test` do all set-up themselves.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CLI := $(VENV)/bin/binlog-spec
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
DEMO_FILE := fixtures/demo/mariadb-bin.000001

.PHONY: all setup apt demo test build check-generated bench bench-rows bench-analyze bench-spark bench-speed clean

all: demo

# The editable install imports the package through a finder that pkgutil.iter_modules cannot list;
# pyspark finds its `pyspark_*` data sources that way (src/pyspark_binlog.py), so src/ goes on the path.
$(STAMP): requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -e .
	$(PY) -c 'import sysconfig, pathlib; pathlib.Path(sysconfig.get_paths()["purelib"], "binlog_spec_src.pth").write_text("$(CURDIR)/src\n")'
	touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

apt:
	tools/ensure-apt.sh node:nodejs npm:npm mariadbd:mariadb-server mariadb:mariadb-client chromium:chromium java:openjdk-17-jre-headless

setup: apt $(STAMP) $(NODE_STAMP)

demo: $(STAMP)
	$(CLI) events $(DEMO_FILE)

build: $(STAMP) $(NODE_STAMP)
	$(PY) build.py

check-generated: $(STAMP) $(NODE_STAMP)
	$(PY) build.py --check

test: setup check-generated
	$(PY) -m pytest

# Each benchmark rewrites its own section of docs/benchmarks.md.
bench: setup
	$(PY) benchmarks/bench_reader.py

bench-rows: setup
	$(PY) benchmarks/bench_rows.py

bench-analyze: setup
	$(PY) benchmarks/bench_analyze.py

bench-spark: setup
	$(PY) benchmarks/bench_spark.py

# Issue 16's targets side by side with mariadb-binlog: `make bench-speed SCALE=0.2 ROUNDS=5`.
bench-speed: setup
	$(PY) benchmarks/bench_speed.py $(if $(SCALE),--scale $(SCALE)) $(if $(ROUNDS),--rounds $(ROUNDS))

clean:
	rm -rf $(VENV) node_modules build dist src/*.egg-info
