"""The SYNTHETIC example of the whole workflow: frame, drawn sample, labels (then the report
params/example_pps.yaml).

* ``frame.csv``: one row per document of the SYNTHETIC census with its number of chunks (``doc_id``,
  ``n``): what an index knows without labelling anything (one GROUP BY over its chunk table).
* ``pps_manifest.csv`` and ``pps_manifest.json``: what ``perdoc sample --frame frame.csv --doc doc_id
  --k 20 --design pps --take 10 --seed 20261201 --out pps_manifest.csv`` writes: 20 documents drawn
  with probability proportional to size (Brewer's method, the longest taken whole when their
  probability reaches 1), 10 random chunks of each.
* ``pps_labels.csv``: the labels of those units, looked up in the census (``bm25`` and ``tfidf`` of
  the chunk at 0-based position ``chunk``, i.e. ``chunk_id = chunk + 1``), as a labeller would return
  them: the manifest's ``doc_id``, ``chunk`` and ``draw`` plus the label columns.

Deterministic: ``python data/example/make_drawn.py [OUTDIR]`` writes the same bytes.
"""

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "lib"))

SEED = 20261201


def main(out: Path = HERE) -> None:
    from perdoc.cli import main as perdoc
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    census = pd.read_csv(HERE / "census.csv", dtype={"doc_id": str})
    sizes = census.groupby("doc_id").size().sort_index().rename("n").reset_index()
    sizes.to_csv(out / "frame.csv", index=False, lineterminator="\n")
    code = perdoc(["sample", "--frame", str(out / "frame.csv"), "--doc", "doc_id", "--k", "20", "--design", "pps",
                   "--take", "10", "--seed", str(SEED), "--out", str(out / "pps_manifest.csv")])
    if code != 0:
        raise SystemExit(code)
    man = pd.read_csv(out / "pps_manifest.csv", dtype={"doc_id": str})
    units = man[["doc_id", "chunk", "draw"]].assign(chunk_id=man["chunk"] + 1)
    labels = units.merge(census, on=["doc_id", "chunk_id"], how="left", validate="many_to_one")
    if labels[["bm25", "tfidf"]].isna().any().any():
        raise SystemExit("a manifest unit is not in the census")
    labels[["doc_id", "chunk", "draw", "bm25", "tfidf"]].to_csv(out / "pps_labels.csv", index=False,
                                                              lineterminator="\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
