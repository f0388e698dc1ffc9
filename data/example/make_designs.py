"""Draw the SYNTHETIC design examples from the SYNTHETIC census (data/example/census.csv).

* ``stratified_sample.csv``: documents stratified by size, as in the study that motivates perdoc:
  stratum ``large`` = the 129 documents with more than 76 chunks, ``small`` = the other 1,171;
  10 documents drawn without replacement in each; all their chunks; column ``size_stratum``.
* ``census_stratified.csv.gz``: the census with the ``size_stratum`` column, so that a stratified
  design can be simulated on it (gzip with a fixed timestamp: the same bytes every run).
* ``two_stage_sample.csv``: 20 of the 1,300 documents drawn without replacement, then within each
  document a simple random sample of ``min(N_d, max(2, ceil(N_d / 4)))`` chunks (documents of at
  most 2 chunks are taken whole); column ``chunks_in_doc`` holds N_d, the document's chunk count.

Seeded and deterministic: ``python data/example/make_designs.py [OUTDIR]`` writes the same bytes.
"""

import gzip
import io
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
SEED_STRATIFIED = 20261012
SEED_TWO_STAGE = 20261013
LARGE = 76  # documents with more than 76 chunks form the "large" stratum


def main(out: Path = HERE) -> None:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    census = pd.read_csv(HERE / "census.csv", dtype={"doc_id": str})
    sizes = census.groupby("doc_id").size().sort_index()
    docs = sizes.index.to_numpy()

    rng = np.random.default_rng(SEED_STRATIFIED)
    stratum = pd.Series(np.where(sizes.to_numpy() > LARGE, "large", "small"), index=docs)
    chosen = []
    for h in ("large", "small"):
        pool = np.sort(stratum.index[stratum == h].to_numpy())
        chosen += list(rng.choice(pool, size=10, replace=False))
    strat = census[census.doc_id.isin(chosen)].copy()
    strat.insert(1, "size_stratum", strat.doc_id.map(stratum))
    strat.to_csv(out / "stratified_sample.csv", index=False, lineterminator="\n")
    full = census.copy()
    full.insert(1, "size_stratum", full.doc_id.map(stratum))
    buf = io.StringIO()
    full.to_csv(buf, index=False, lineterminator="\n")
    with open(out / "census_stratified.csv.gz", "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
            gz.write(buf.getvalue().encode())

    rng = np.random.default_rng(SEED_TWO_STAGE)
    picked = np.sort(rng.choice(docs, size=20, replace=False))
    parts = []
    for d in picked:
        rows = census[census.doc_id == d]
        N_d = len(rows)
        n_d = N_d if N_d <= 2 else min(N_d, max(2, math.ceil(N_d / 4)))
        take = np.sort(rng.choice(N_d, size=n_d, replace=False))
        part = rows.iloc[take].copy()
        part.insert(1, "chunks_in_doc", N_d)
        parts.append(part)
    pd.concat(parts).to_csv(out / "two_stage_sample.csv", index=False, lineterminator="\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
