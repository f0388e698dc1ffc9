"""Generate the chunk-level datasets used by the R oracle (tests/oracle/oracle.R).

Usage: python tests/oracle/make_data.py [OUTPUT_DIR]

Writes OUTPUT_DIR/data/<name>.csv (columns doc,y; one row per chunk) and OUTPUT_DIR/cases.json.
OUTPUT_DIR defaults to the directory of this script. Output is deterministic: every dataset has
its own fixed seed, scores are written with a fixed number of decimals, and rows are sorted by doc.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def _ids(k: int) -> list[str]:
    return [f"d{i:03d}" for i in range(1, k + 1)]


def _binary(rng, sizes, rates):
    rows = []
    for doc, n, r in zip(_ids(len(sizes)), sizes, rates):
        y = (rng.random(int(n)) < r).astype(int)
        rows += [(doc, str(v)) for v in y]
    return rows


def _skewed_sizes(rng, k, total=None, mu=2.5, sigma=1.1, nmin=1):
    raw = rng.lognormal(mu, sigma, size=k)
    if total is not None:
        raw = raw / raw.sum() * total
    sizes = np.maximum(np.rint(raw).astype(int), nmin)
    if total is not None:  # fix rounding so the total is exact; adjust the largest document
        sizes[np.argmax(sizes)] += total - sizes.sum()
    return sizes


def make_unequal():
    rng = np.random.default_rng(20240101)
    sizes = _skewed_sizes(rng, 20, mu=2.3, sigma=1.0)
    rates = rng.beta(1.0, 3.0, size=20)
    return _binary(rng, sizes, rates)


def make_dominant():
    rng = np.random.default_rng(20240102)
    small = rng.integers(5, 16, size=11)
    big = int(round(small.sum() * 0.7 / 0.3))  # ~70% of all chunks
    sizes = np.concatenate([[big], small])
    rates = rng.beta(2.0, 5.0, size=12)
    return _binary(rng, sizes, rates)


def make_k2():
    rng = np.random.default_rng(20240103)
    return _binary(rng, [31, 9], [0.35, 0.7])


def make_k3():
    rng = np.random.default_rng(20240104)
    return _binary(rng, [12, 25, 6], [0.2, 0.45, 0.6])


def make_equal():
    rng = np.random.default_rng(20240105)
    rates = rng.beta(2.0, 3.0, size=10)
    return _binary(rng, np.full(10, 15), rates)


def make_continuous():
    """MRR-like: per chunk, with doc-level probability of a hit, score 1/rank (rank 1..10), else 0."""
    rng = np.random.default_rng(20240106)
    sizes = _skewed_sizes(rng, 15, mu=2.2, sigma=0.9, nmin=2)
    hit = rng.beta(2.0, 2.0, size=15)
    rows = []
    for doc, n, h in zip(_ids(15), sizes, hit):
        found = rng.random(int(n)) < h
        rank = np.minimum(rng.geometric(0.5, size=int(n)), 10)
        y = np.where(found, 1.0 / rank, 0.0)
        rows += [(doc, f"{v:.6f}") for v in y]
    return rows


def make_continuous_big():
    """Scores with mean ~50 and sd ~3 (doc effect sd 1.5, within sd 2.6): numerical robustness."""
    rng = np.random.default_rng(20240107)
    sizes = rng.integers(4, 30, size=8)
    effects = rng.normal(0.0, 1.5, size=8)
    rows = []
    for doc, n, e in zip(_ids(8), sizes, effects):
        y = 50.0 + e + rng.normal(0.0, 2.6, size=int(n))
        rows += [(doc, f"{v:.4f}") for v in y]
    return rows


def make_article_like():
    """K=20 sampled documents, 764 chunks, skewed sizes, micro ~0.20, macro ~0.18."""
    rng = np.random.default_rng(20240125)
    sizes = _skewed_sizes(rng, 20, total=764, mu=3.0, sigma=1.3, nmin=2)
    rates = rng.beta(0.6, 2.6, size=20)
    return _binary(rng, sizes, rates)


DATASETS = {
    "unequal": make_unequal,
    "dominant": make_dominant,
    "k2": make_k2,
    "k3": make_k3,
    "equal": make_equal,
    "continuous": make_continuous,
    "continuous_big": make_continuous_big,
    "article_like": make_article_like,
}

# population sizes: "unequal" FPC case uses M = 3K = 60
CASES = {
    "unequal": {"data": "unequal.csv", "population_size": None, "level": 0.95},
    "unequal_fpc": {"data": "unequal.csv", "population_size": 60, "level": 0.95},
    "unequal_90": {"data": "unequal.csv", "population_size": None, "level": 0.90},
    "dominant": {"data": "dominant.csv", "population_size": None, "level": 0.95},
    "k2": {"data": "k2.csv", "population_size": None, "level": 0.95},
    "k3": {"data": "k3.csv", "population_size": None, "level": 0.95},
    "equal": {"data": "equal.csv", "population_size": None, "level": 0.95},
    "equal_fpc": {"data": "equal.csv", "population_size": 25, "level": 0.95},
    "continuous": {"data": "continuous.csv", "population_size": None, "level": 0.95},
    "continuous_fpc": {"data": "continuous.csv", "population_size": 40, "level": 0.95},
    "continuous_big": {"data": "continuous_big.csv", "population_size": None, "level": 0.95},
    "article_like": {"data": "article_like.csv", "population_size": None, "level": 0.95},
    "article_like_fpc": {"data": "article_like.csv", "population_size": 1300, "level": 0.95},
    "article_like_fpc_90": {"data": "article_like.csv", "population_size": 1300, "level": 0.90},
}


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    (out / "data").mkdir(parents=True, exist_ok=True)
    for name, fn in DATASETS.items():
        rows = sorted(fn(), key=lambda r: r[0])  # stable: keeps within-doc order
        text = "doc,y\n" + "".join(f"{d},{y}\n" for d, y in rows)
        (out / "data" / f"{name}.csv").write_bytes(text.encode("ascii"))
    (out / "cases.json").write_bytes((json.dumps(CASES, indent=2, sort_keys=True) + "\n").encode("ascii"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
