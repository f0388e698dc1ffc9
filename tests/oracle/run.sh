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
