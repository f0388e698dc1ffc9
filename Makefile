# perdoc: `make report` and `make test` are all a fresh machine needs (Python 3.11+ and make).
# With an activated conda environment (CONDA_PREFIX set), that environment is used instead of .venv.

PYTHON ?= python3
VENV   := .venv

ifneq ($(strip $(CONDA_PREFIX)),)
BIN    := $(CONDA_PREFIX)/bin
STAMP  := $(CONDA_PREFIX)/.perdoc-installed
else
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.perdoc-installed
endif
PY     := $(BIN)/python
# optional extras installed by setup, e.g. `make test EXTRAS=test,frameworks` (what CI runs)
EXTRAS ?= test

.PHONY: setup report test test-all oracle bench coverage catalogs clean

setup: $(STAMP)

$(STAMP): pyproject.toml
ifeq ($(strip $(CONDA_PREFIX)),)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
endif
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'
	@touch $@

# One offline HTML report per params file: reports/<name>/report.html, summary.json, documents.csv.
report: setup
	$(BIN)/perdoc report params/*.yaml --out reports

# JOBS parallel workers (pytest-xdist; auto: one per core, each test file on one worker, so a file's
# rendered reports are made once; the workers share one store of simulation results). JOBS=0 runs
# everything in this process. (A run that once waited forever on a notebook kernel was the teaching
# lab's widgets cell under nbclient, in one process as in several; the headless run leaves it out.)
JOBS ?= auto
# perdoc's bytecode compiled once first, as an installed package's is: with PYTHONDONTWRITEBYTECODE set
# (many CI images), every notebook kernel and command the tests start would compile it again
test: setup
	$(PY) -m compileall -q lib/perdoc >/dev/null
	$(PY) -m pytest -q -m "not slow" -n $(JOBS) --dist loadfile

test-all: setup
	$(PY) -m compileall -q lib/perdoc >/dev/null
	$(PY) -m pytest -q -n $(JOBS) --dist loadfile

# Regenerates the golden values with R (clubSandwich, survey) and compares. Needs Rscript.
oracle: setup
	PATH="$(abspath $(BIN)):$$PATH" bash tests/oracle/run.sh

bench: setup
	PATH="$(abspath $(BIN)):$$PATH" bash benchmarks/run.sh

# The coverage panel: every interval method on synthetic and real censuses at K = 5, 10, 20, 40
# (benchmarks/coverage_panel.json, .md and the summary in benchmarks/README.md).
coverage: setup
	$(PY) benchmarks/coverage_panel.py --reps 2000 --replicates 499

# The report's message catalogs (perdoc.i18n): extract the keys of tr, translate and N_ calls into
# lib/perdoc/locale/perdoc.pot, add new keys to (and drop old ones from) the en and es .po files, and
# compile them to the perdoc.mo files the report reads. Options: [tool.babel.*] in pyproject.toml.
# A new key's texts are then written in both .po files and `make catalogs` run again.
catalogs: setup
	$(BIN)/pybabel extract
	$(BIN)/pybabel update
	$(BIN)/pybabel compile

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis lib/*.egg-info
