"""Baseline of benchmark 1: the bare DuckDB GROUP BY of a chunk file, fetched to numpy.

Run as its own process (``python benchmarks/baseline_groupby.py FILE``) so that its wall time and
peak memory include interpreter start and imports, exactly like the ``perdoc`` process it is
compared with. Default DuckDB connection (in-memory, default threads and memory limit).
"""

import sys

import duckdb
import numpy as np


def main(path: str) -> None:
    lit = "'" + path.replace("'", "''") + "'"
    con = duckdb.connect()
    res = con.execute(
        f"SELECT doc_id, count(*), sum(hit), sum(hit*hit) FROM read_parquet({lit}) GROUP BY doc_id"
    ).fetchnumpy()
    cols = list(res.values())
    n = np.asarray(cols[1], dtype=float)
    print(f"{n.size} {int(n.sum())}")


if __name__ == "__main__":
    main(sys.argv[1])
