#!/usr/bin/env bash
# Regenerate the oracle data and golden values, then compare perdoc against them.
# Exits non-zero when any step fails or any value differs.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${PYTHON:-python}"
if [ -x .venv/bin/python ] && [ -z "${PYTHON:-}" ]; then PY=.venv/bin/python; fi
"$PY" tests/oracle/make_data.py
Rscript tests/oracle/oracle.R
"$PY" -m pytest -q tests/test_oracle.py "$@"
# second oracle: paired comparison, strata, two stages, bounded intervals, wild bootstrap
"$PY" tests/oracle/make_data2.py
Rscript tests/oracle/oracle2.R
"$PY" -m pytest -q tests/test_oracle2.py "$@"
# third oracle: design-based estimates of drawn samples (PPS, take-all strata, size strata, two stages)
"$PY" tests/oracle/make_data3.py
Rscript tests/oracle/oracle3.R
"$PY" -m pytest -q tests/test_oracle3.py "$@"
# fourth oracle: prediction-powered inference against ppi_py (iid items), in a virtual environment
# of its own (ppi_py pins numba); PPI_VENV names another one
PPI_VENV="${PPI_VENV:-.oracle-ppi-venv}"
if [ ! -x "$PPI_VENV/bin/python" ]; then
  python3 -m venv "$PPI_VENV"
  "$PPI_VENV/bin/pip" install --quiet "ppi-python==0.2.3"
fi
"$PPI_VENV/bin/python" tests/oracle/ppi_oracle.py
"$PY" -m pytest -q tests/test_oracle_ppi.py "$@"
