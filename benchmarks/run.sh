#!/usr/bin/env bash
# Run every perdoc benchmark, write benchmarks/results.json, refresh the tables in
# benchmarks/README.md and print a summary. Called by `make bench` with the venv's bin first on
# PATH; uses the `python` and `perdoc` found on PATH. About 5-6 minutes on 2 cores.
#
#   BENCH_RUNS=5      timed runs of each side in benchmark 1 (alternating; at least 3)
#   BENCH_STRICT=1    exit 1 when a target fails (default: exit 1 only when a benchmark breaks)
#   BENCH_LARGE=1     also benchmark 1 at 10^8 rows (target 1.1x)
#   BENCH_REPORT_RUNS=1  rounds of benchmark 7 (each bundled report against an empty notebook)
#   BENCH_MATRIX=1    rerun the GROUP BY matrix (groupby_matrix.py; long), else print its last table
#
# Other processes on the machine distort the timings: run it on an otherwise idle machine.
set -uo pipefail
cd "$(dirname "$0")/.."

runs="${BENCH_RUNS:-5}"
if [ "$runs" -lt 3 ]; then runs=3; fi
status=0
step() {
    echo
    echo "== $*"
    "$@" || { echo "!! failed: $*"; status=1; }
}

command -v python >/dev/null || { echo "python not on PATH"; exit 2; }
command -v perdoc >/dev/null || { echo "perdoc not on PATH (run 'make bench')"; exit 2; }
echo "load before start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"

# stale per-benchmark results must not leak into this run's report
rm -f benchmarks/data/results/*.json
# perdoc's bytecode compiled once, as an installed package's is (numpy's and DuckDB's always are):
# with PYTHONDONTWRITEBYTECODE set, an edited module would otherwise be compiled again on every start
python -m compileall -q lib/perdoc >/dev/null || true

step python benchmarks/gen_data.py
step python benchmarks/bench_cli.py --runs "$runs"
step python benchmarks/profile_load.py --variant str
step python benchmarks/profile_load.py --variant int
step python benchmarks/bench_cr2.py
step python benchmarks/bench_bootstrap.py --runs 1
step python benchmarks/bench_simulate.py --runs 1
# a report of each bundled params file against an empty notebook (about 5 minutes a round)
step python benchmarks/bench_report.py --runs "${BENCH_REPORT_RUNS:-1}"
# --engine spark against --engine duckdb on benchmark 1's file (needs perdoc[spark] and Java)
if python -c "import pyspark, ibis" 2>/dev/null && command -v java >/dev/null; then
    step python benchmarks/bench_engines.py --runs 2
fi
# benchmark 1 at 10^8 rows (a 415 MiB file, about 3 minutes): BENCH_LARGE=1
if [ "${BENCH_LARGE:-0}" = "1" ]; then
    step python benchmarks/bench_cli.py --runs 3 --rows 100000000
fi
# perdoc against the minimal GROUP BY over the matrix of chunk files (ids, scores, sizes, order, format,
# rows): BENCH_MATRIX=1 reruns it (about 40 s a cell at 10^7 rows with 11 pairs; BENCH_MATRIX_ROWS,
# BENCH_MATRIX_PAIRS); otherwise the table of the present code's runs, merged (a cell's latest), is printed
if [ "${BENCH_MATRIX:-0}" = "1" ]; then
    step python benchmarks/groupby_matrix.py --rows "${BENCH_MATRIX_ROWS:-1e6,1e7}" --pairs "${BENCH_MATRIX_PAIRS:-11}"
elif [ -f benchmarks/groupby_matrix.json ]; then
    step python benchmarks/groupby_matrix.py --summary
fi
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"

strict=()
if [ "${BENCH_STRICT:-0}" = "1" ]; then strict=(--strict); fi
echo
python benchmarks/report.py "${strict[@]}" || status=1
exit $status
