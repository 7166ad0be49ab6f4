# Every target sets itself up: a fresh machine needs only python3 and pip.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
EXTRAS ?= test,plot,al,progress,dask,pandas

.PHONY: demo test lint bench reproduce-smoke install clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/crowdopt demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

test: $(STAMP) lint
	$(BIN)/python -m pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

# every paper's reproduction at smoke scale (minutes); reports in out/<paper>/report.md
reproduce-smoke: $(STAMP)
	for p in olas lsol optkg cltap selection; do \
	  $(BIN)/crowdopt reproduce $$p --scale smoke -o out/$$p || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
