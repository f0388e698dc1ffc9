"""Generate the synthetic chunk files of benchmark 1 (deterministic, seeded; git-ignored output).

10^7 chunk rows in 10^5 documents, rows in random order (as a retrieval log ordered by query would
be), document sizes skewed (lognormal weights; every document has at least one row), each document
with its own hit rate (Beta(0.6, 2.6)). Two files with the same content:

* ``chunks_str.parquet``: ``doc_id`` string (``d0000001`` ...), ``hit`` int8 (0/1);
* ``chunks_int.parquet``: ``doc_id`` int64, ``hit`` double (0.0/1.0).

Same seed, same numpy/pyarrow versions -> byte-identical files. Run:
``python benchmarks/gen_data.py [--rows 10000000] [--docs 100000] [--force]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

SEED = 20260501
ROWS = 10_000_000
DOCS = 100_000
ROW_GROUP = 1 << 20
OUT = Path(__file__).resolve().parent / "data"


def paths(rows: int = ROWS, docs: int = DOCS) -> dict[str, Path]:
    tag = f"{rows}x{docs}"
    return {"str": OUT / f"chunks_str_{tag}.parquet", "int": OUT / f"chunks_int_{tag}.parquet"}


def generate(rows: int = ROWS, docs: int = DOCS, force: bool = False) -> dict[str, Path]:
    out = paths(rows, docs)
    if not force and all(p.exists() for p in out.values()):
        return out
    OUT.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rng = np.random.default_rng(SEED)
    weights = rng.lognormal(mean=0.0, sigma=1.0, size=docs)
    rates = rng.beta(0.6, 2.6, size=docs)
    # every document once, the rest by weight; then shuffle the rows
    extra = np.searchsorted(np.cumsum(weights / weights.sum()), rng.random(rows - docs), side="right")
    doc = np.concatenate([np.arange(docs), np.minimum(extra, docs - 1)])
    rng.shuffle(doc)
    hit = (rng.random(rows) < rates[doc]).astype(np.int8)

    names = pa.array([f"d{d + 1:07d}" for d in range(docs)], type=pa.string())
    doc_idx = pa.array(doc.astype(np.int32))
    tables = {
        "str": pa.table({"doc_id": names.take(doc_idx), "hit": pa.array(hit)}),
        "int": pa.table({"doc_id": pa.array(doc.astype(np.int64) + 1), "hit": pa.array(hit.astype(np.float64))}),
    }
    for key, table in tables.items():
        tmp = out[key].with_suffix(".parquet.tmp")
        pq.write_table(table, tmp, row_group_size=ROW_GROUP, compression="snappy")
        tmp.replace(out[key])
    print(f"generated {rows:,} rows in {docs:,} documents in {time.perf_counter() - t0:.1f} s: "
          + ", ".join(f"{p.name} ({p.stat().st_size / 2**20:.0f} MiB)" for p in out.values()))
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=ROWS)
    ap.add_argument("--docs", type=int, default=DOCS)
    ap.add_argument("--force", action="store_true", help="regenerate even if the files exist")
    a = ap.parse_args()
    generate(a.rows, a.docs, a.force)
