# Every target sets itself up: a fresh machine needs only python3 and pip.
# The set-up installs the committed lock (requirements/lock.txt: exact versions of every runtime
# dependency, every extra but `peer`, and pip/setuptools/wheel), then crowdopt itself without
# resolving anything. pyproject.toml keeps compatible ranges for library users.
# `make lock` refreshes the lock to the newest releases with uv and runs the suite against them.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# crowd-kit (benchmark-only) lives in its own venv: the main one stays exactly at the lock
PEER_VENV ?= .venv-peer
PEER_STAMP := $(PEER_VENV)/.installed-stamp
LOCK := requirements/lock.txt
PEER_LOCK := requirements/peer.txt
UV_VERSION := 0.13.9
TOOLS := .venv-tools
# the suite runs on every core (pytest-xdist, an idle worker takes tests queued on the other;
# `make test TEST_WORKERS=0` runs it in one process)
TEST_WORKERS ?= auto
# the extras in the main lock (`peer` has its own lock: it pulls transformers, nltk, pyarrow)
LOCK_EXTRAS := --extra test --extra plot --extra al --extra progress --extra pandas \
               --extra dask --extra serve --extra postgres --extra docs
UV_COMPILE = $(TOOLS)/bin/uv pip compile --quiet --universal --python-version 3.11 \
             --no-header --annotation-style line

.PHONY: demo test test-fast soak lint bench bench-peer reproduce-smoke install docs lock relock clean

# the lock's wheels through uv (parallel downloads, byte-compiled as pip does: about 40 s where
# pip takes 125 s), or through pip where uv cannot be had or cannot reach the index; either
# installs the lock's pins
$(STAMP): pyproject.toml $(LOCK)
	rm -rf $(VENV)
	$(PY) -m venv $(VENV)
	{ $(MAKE) --no-print-directory $(TOOLS)/bin/uv && $(TOOLS)/bin/uv pip install --quiet \
	    --compile-bytecode --python $(BIN)/python --no-deps -r $(LOCK); } || \
	  $(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -r $(LOCK)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps \
	    --no-build-isolation -e .
	$(BIN)/python -m pip check
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/crowdopt demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples tools

test: $(STAMP) lint
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist worksteal

# the suite without the tests marked slow (a few seconds' feedback while editing)
test-fast: $(STAMP) lint
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) -m "not slow"

# the long soundness campaigns only (thousands of random instances against enumeration and an
# independent solver); `make test` runs a sample of each
soak: $(STAMP)
	CROWDOPT_SOAK=1 $(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) -m soak

# the documentation site in site/ (MkDocs; warnings are errors; `make test` builds it too)
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

# crowd-kit side by side (benchmark-only extra, in its own venv from its own lock)
$(PEER_STAMP): pyproject.toml $(LOCK) $(PEER_LOCK)
	rm -rf $(PEER_VENV)
	$(PY) -m venv $(PEER_VENV)
	$(PEER_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
	    -r $(LOCK) -r $(PEER_LOCK)
	$(PEER_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
	    --no-build-isolation -e .
	$(PEER_VENV)/bin/python -m pip check
	touch $(PEER_STAMP)

bench-peer: $(PEER_STAMP)
	$(PEER_VENV)/bin/python benchmarks/bench_aggregation.py --peer

# every paper's reproduction at smoke scale (minutes); reports in out/<paper>/report.md
reproduce-smoke: $(STAMP)
	for p in olas lsol optkg cltap selection; do \
	  $(BIN)/crowdopt reproduce $$p --scale smoke -o out/$$p || exit 1; done

$(TOOLS)/bin/uv:
	$(PY) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# Refresh the lock to the newest releases of the day, rebuild the venv from it and run the whole
# suite against it: a version bump is a reviewed commit of requirements/, never an accident.
lock: $(TOOLS)/bin/uv
	$(UV_COMPILE) --upgrade pyproject.toml requirements/build.in $(LOCK_EXTRAS) -o $(LOCK)
	$(UV_COMPILE) --upgrade pyproject.toml requirements/build.in $(LOCK_EXTRAS) --extra peer \
	    -c $(LOCK) -o $(PEER_LOCK)
	rm -rf $(VENV)
	$(MAKE) test

# Re-resolve after editing pyproject.toml, keeping every pin that still fits (no upgrades).
relock: $(TOOLS)/bin/uv
	$(UV_COMPILE) pyproject.toml requirements/build.in $(LOCK_EXTRAS) -o $(LOCK)
	$(UV_COMPILE) pyproject.toml requirements/build.in $(LOCK_EXTRAS) --extra peer \
	    -c $(LOCK) -o $(PEER_LOCK)

clean:
	rm -rf $(VENV) $(PEER_VENV) $(TOOLS) build site *.egg-info src/*.egg-info
