"""The minimal work for a chunk file's per-document table, as its own process: DuckDB's GROUP BY
fetched to numpy (``python benchmarks/groupby_baseline.py FILE binary|score``): count and sum for a
0/1 score, count, sum and sum of squares otherwise; Parquet or CSV by the file's extension. Default
DuckDB connection (in-memory, default threads and memory limit)."""

import sys

import duckdb
import numpy as np


def main(path: str, kind: str) -> None:
    lit = "'" + path.replace("'", "''") + "'"
    rel = f"read_parquet({lit})" if path.endswith(".parquet") else f"read_csv({lit})"
    extra = "" if kind == "binary" else ", sum(hit * hit)"
    res = duckdb.connect().execute(
        f"SELECT doc_id, count(*), sum(hit){extra} FROM {rel} GROUP BY doc_id").fetchnumpy()
    n = np.asarray(list(res.values())[1], dtype=float)
    print(f"{n.size} {int(n.sum())}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
