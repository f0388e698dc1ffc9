"""benchmarks/groupby_matrix.py --summary: the matrix as the present code's runs measured it, a cell's
latest run standing for it, and how much of the issue's 216-cell matrix is covered."""

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import groupby_matrix as gm  # noqa: E402


def _cell(rows, ids, ratio, *, error=None):
    med = {"baseline": {"wall_s": 1.0, "maxrss_mib": 100.0}, "perdoc": {"wall_s": ratio, "maxrss_mib": 110.0}}
    return {"rows": rows, "ids": ids, "scores": "int8", "sizes": "equal", "order": "sorted", "format": "parquet",
            "file_mib": 1.0, "pairs": 3, "samples": {}, "error": error, "median": med, "time_ratio": ratio,
            "rss_ratio": 1.1, "paired_time_ratio": ratio}


def test_a_later_run_replaces_a_cell_and_the_cover_is_counted(tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"results": [_cell(10**6, "int64", 1.5), _cell(10**7, "int64", 1.3)]}))
    new.write_text(json.dumps({"results": [_cell(10**6, "int64", 1.1)]}))
    text = gm.summary([old, new, tmp_path / "absent.json"])
    head, _, table = text.partition("\n\n")
    assert "runs merged: old.json, new.json;" in head and "cells measured: 2 of the matrix's 216" in head
    # every value never measured is named: rows 10^8, int32 and string ids, bool and float64 scores, ...
    for missing in ("rows 100000000", "ids int32", "ids string", "scores bool", "sizes lognormal",
                    "order shuffled", "format csv"):
        assert missing in head
    assert "ids int64" not in head and "rows 1000000," not in head
    rows = [line for line in table.splitlines() if line.startswith("| 1e")]
    assert len(rows) == 2 and "| 1.10 (1.10) |" in rows[0] and "| **1.30** (1.30) |" in rows[1]
    assert "cells: 2; time ratio <= 1.2: 1;" in table


def test_the_committed_runs_are_the_ones_make_bench_prints():
    text = gm.summary([BENCH / name for name in gm.CURRENT])
    head = text.partition("\n\n")[0]
    assert all(name in head for name in gm.CURRENT)
