# binlog-spec: `make demo` and `make test` do all set-up themselves.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CLI := $(VENV)/bin/binlog-spec
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
DEMO_FILE := fixtures/demo/mariadb-bin.000001

.PHONY: all setup apt demo test docs build check-generated fuzz proof bench bench-rows bench-analyze bench-spark bench-speed clean

all: demo

# The editable install imports the package through a finder that pkgutil.iter_modules cannot list;
# pyspark finds its `pyspark_*` data sources that way (src/pyspark_binlog.py), so src/ goes on the path.
# The editable install also builds the compiled core in place (setup.py, with the pinned Cython and
# setuptools of requirements-dev.txt); $(COMPILED) rebuilds it when a .pyx changes.
$(STAMP): requirements-dev.txt pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(PY) -c 'import sysconfig, pathlib; pathlib.Path(sysconfig.get_paths()["purelib"], "binlog_spec_src.pth").write_text("$(CURDIR)/src\n")'
	touch $@

# The compiled core: every src/binlog_spec/**/_c*.pyx (setup.py), with what they include (_cbytes.pxd, _c*.pxi,
# _crc32.h: ISA-L's CRC32, libisal-dev of the apt target). Without a C compiler the build warns and
# the pure-Python core runs; `make test` fails then (tests/test_compiled_core.py).
PYX := $(shell find src/binlog_spec -name '_c*.pyx' -o -name '_c*.pxd' -o -name '_c*.pxi' -o -name '_crc32.h')
COMPILED := $(VENV)/.compiled
$(COMPILED): $(STAMP) $(PYX)
	$(PY) setup.py -q build_ext --inplace
	touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# gcc and the Python headers build the compiled core (the headers of $(PYTHON), wherever they are: a
# pyenv Python has its own; Debian's python3 needs python3-dev).
PY_HEADER := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h
apt:
	tools/ensure-apt.sh node:nodejs npm:npm jq:jq mariadbd:mariadb-server mariadb:mariadb-client chromium:chromium java:openjdk-17-jre-headless \
		gcc:gcc $(PY_HEADER):python3-dev /usr/include/isa-l/crc.h:libisal-dev

setup: apt $(STAMP) $(COMPILED) $(NODE_STAMP)

demo: $(STAMP)
	$(CLI) events $(DEMO_FILE)

build: $(STAMP) $(NODE_STAMP)
	$(PY) build.py

check-generated: $(STAMP) $(NODE_STAMP)
	$(PY) build.py --check

test: setup check-generated docs
	$(PY) -m pytest

# The user guide (docs/, mkdocs.yml): strict, so a page missing from the nav, a broken relative link
# or an unknown anchor fails the build; the site goes to build/site/ (ignored by git).
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict --site-dir build/site

# Coverage-guided fuzzing (atheris) of the library API for FUZZ_SECONDS, from the small corpus and
# fixture binlogs; bugs (inputs and tracebacks) land in $(FUZZ_DIR)/bugs, then the coverage of src/
# the fuzzer's corpus reaches is reported. `make test` runs the bounded mutation run instead.
FUZZ_SECONDS ?= 300
FUZZ_DIR ?= /tmp/binlog-spec-fuzz
fuzz: $(STAMP)
	$(PY) tests/fuzz/seeds.py $(FUZZ_DIR)/corpus
	$(PY) tests/fuzz/fuzz_atheris.py $(FUZZ_DIR)/bugs $(FUZZ_DIR)/corpus -max_total_time=$(FUZZ_SECONDS) \
		-max_len=131072 -timeout=60 -rss_limit_mb=4096 -print_final_stats=1
	$(PY) -m coverage run --data-file=$(FUZZ_DIR)/.coverage --source=src/binlog_spec \
		tests/fuzz/fuzz_atheris.py --replay $(FUZZ_DIR)/corpus $(FUZZ_DIR)/bugs
	$(PY) -m coverage report --data-file=$(FUZZ_DIR)/.coverage | tail -n 45
	cat $(FUZZ_DIR)/bugs/stats.json

# Random tables and workloads replayed on a private MariaDB for SECONDS (new seeds; docs/proof.md): each
# failure is saved as a reproducer in $(PROOF_DIR)/seed-N/ (case.sql, binlog); copied to
# tests/proof/proof_cases/ it is a regression test. `make test` runs a seeded run of 20 rounds.
SECONDS ?= 300
PROOF_DIR ?= /tmp/binlog-spec-proof
proof: setup
	$(PY) tests/proof/run_proof.py --seconds $(SECONDS) --out $(PROOF_DIR)

# Each benchmark rewrites its own section of docs/benchmarks.md.
bench: setup
	$(PY) benchmarks/bench_reader.py

bench-rows: setup
	$(PY) benchmarks/bench_rows.py

bench-analyze: setup
	$(PY) benchmarks/bench_analyze.py

bench-spark: setup
	$(PY) benchmarks/bench_spark.py

# Issues 16 and 29's targets side by side with mariadb-binlog, on the OLTP and the mixed-type workloads:
# `make bench-speed SCALE=0.2 ROUNDS=5`, `make bench-speed WORKLOAD=mixed,mixed-minimal`.
bench-speed: setup
	$(PY) benchmarks/bench_speed.py $(if $(SCALE),--scale $(SCALE)) $(if $(ROUNDS),--rounds $(ROUNDS)) \
		$(if $(WORKLOAD),--workload $(WORKLOAD))

clean:
	rm -rf $(VENV) node_modules build dist src/*.egg-info
	find src -name '_c*.c' -o -name '*.so' | xargs rm -f
