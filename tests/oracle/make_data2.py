"""Generate the datasets and cases for the second R oracle (tests/oracle/oracle2.R).

Usage: python tests/oracle/make_data2.py [OUTPUT_DIR]

Writes OUTPUT_DIR/data2/<name>.csv and OUTPUT_DIR/cases2.json. OUTPUT_DIR defaults to the directory
of this script. Deterministic: every dataset has its own fixed seed, scores are written with a fixed
number of decimals (per-document sums with repr, which round-trips), rows are sorted by document.

Features (one "kind" per case in cases2.json):

* compare     paired comparison of systems a and b on the same chunks (chunk CSV: doc,a,b)
* stratified  stratified sample of documents (document CSV: doc,h,n,s,q; or a chunk CSV of
              tests/oracle/data with one stratum)
* two_stage   documents SRSWOR K of M, chunks SRSWOR n_d of N_d (chunk CSV: doc,chunk,y,N_d)
* ciprop      bounded intervals for binary metrics (chunk CSV: doc,y; mostly tests/oracle/data)
* wild        enumerated Rademacher wild cluster restricted bootstrap (chunk CSV: doc,y,
              tests/oracle/data)

Paths in cases2.json ("data") are relative to the oracle directory (tests/oracle): "data2/..." is
written here, "data/..." is written by make_data.py (read only, never modified here).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def _ids(k: int, width: int = 3) -> list[str]:
    return [f"d{i:0{width}d}" for i in range(1, k + 1)]


def _sizes(rng, k, mu, sigma, nmin):
    return np.maximum(np.rint(rng.lognormal(mu, sigma, size=k)).astype(int), nmin)


def _csv(header: str, rows) -> bytes:
    return (header + "\n" + "".join(",".join(r) + "\n" for r in rows)).encode("ascii")


# ------------------------------------------------------------------------------ A. paired comparison
def _pairs_binary(seed: int, k: int, n_diff: int) -> bytes:
    """Binary a; b equals a chunk by chunk except in n_diff documents, whose sums are made to differ,
    so exactly (k - n_diff)/k of the documents have s_a == s_b (all-zero documents included)."""
    rng = np.random.default_rng(seed)
    sizes = _sizes(rng, k, 2.4, 1.0, 2)
    rates = rng.beta(0.8, 2.5, size=k)
    diff = set(rng.choice(k, size=n_diff, replace=False).tolist())
    rows = []
    for d, (doc, n, r) in enumerate(zip(_ids(k), sizes, rates)):
        a = (rng.random(int(n)) < r).astype(int)
        b = a.copy()
        if d in diff:
            while b.sum() == a.sum():  # b loses some hits of a, gains a few
                lose = rng.random(int(n)) < 0.45
                gain = rng.random(int(n)) < 0.12
                b = np.where(a == 1, np.where(lose, 0, 1), np.where(gain, 1, 0))
        rows += [(doc, str(x), str(y)) for x, y in zip(a, b)]
    return _csv("doc,a,b", rows)


def _pairs_continuous(seed: int, k: int, n_tied: int) -> bytes:
    """MRR-like scores 1/rank (6 decimals). n_tied documents have identical a and b chunk by chunk
    (exact ties); in the others the per-document sums differ by more than 1e-3 (no near ties)."""
    rng = np.random.default_rng(seed)
    sizes = _sizes(rng, k, 2.2, 0.9, 2)
    hit_a = rng.beta(2.0, 2.0, size=k)
    tied = set(rng.choice(k, size=n_tied, replace=False).tolist())
    rows = []

    def draw(n, h):
        found = rng.random(n) < h
        rank = np.minimum(rng.geometric(0.5, size=n), 10)
        return np.array([float(f"{v:.6f}") for v in np.where(found, 1.0 / rank, 0.0)])

    for d, (doc, n, h) in enumerate(zip(_ids(k), sizes, hit_a)):
        a = draw(int(n), h)
        if d in tied:
            b = a.copy()
        else:
            b = draw(int(n), max(h - 0.15, 0.05))
            while abs(a.sum() - b.sum()) <= 1e-3:
                b = draw(int(n), max(h - 0.15, 0.05))
        rows += [(doc, f"{x:.6f}", f"{y:.6f}") for x, y in zip(a, b)]
    return _csv("doc,a,b", rows)


# ------------------------------------------------------------------------------ B. stratified
def _docs_csv(docs) -> bytes:
    rows = [(doc, h, str(int(n)), repr(float(s)), repr(float(q))) for doc, h, n, s, q in sorted(docs)]
    return _csv("doc,h,n,s,q", rows)


def make_strat2() -> bytes:
    """The article's design: a population of 1300 documents split by size into 129 large and 1171
    small; 10 + 10 sampled without replacement. Binary metric (q = s)."""
    rng = np.random.default_rng(20240201)
    M = 1300
    sizes = _sizes(rng, M, 3.0, 1.2, 1)
    order = np.argsort(-sizes, kind="stable")
    large = np.sort(order[:129])
    small = np.sort(order[129:])
    assert sizes[large].min() >= sizes[small].max()
    rates = rng.beta(0.7, 2.8, size=M)
    docs = []
    for h, members in (("large", large), ("small", small)):
        for i in np.sort(rng.choice(members, size=10, replace=False)):
            n = int(sizes[i])
            s = float((rng.random(n) < rates[i]).sum())
            docs.append((f"d{i + 1:04d}", h, n, s, s))
    return _docs_csv(docs)


def make_strat3() -> bytes:
    """Three strata with k_h = 2, 3, 5 sampled documents; continuous scores (q from the chunks)."""
    rng = np.random.default_rng(20240202)
    docs = []
    spec = (("h1", 2, 3.6, 0.6), ("h2", 3, 2.6, 0.6), ("h3", 5, 1.6, 0.7))
    i = 0
    for h, k, mu, sigma in spec:
        for _ in range(k):
            i += 1
            n = int(max(round(rng.lognormal(mu, sigma)), 2))
            hit = rng.beta(2.0, 3.0)
            found = rng.random(n) < hit
            rank = np.minimum(rng.geometric(0.45, size=n), 10)
            y = np.array([float(f"{v:.6f}") for v in np.where(found, 1.0 / rank, 0.0)])
            docs.append((f"d{i:03d}", h, n, float(y.sum()), float((y * y).sum())))
    return _docs_csv(docs)


# ------------------------------------------------------------------------------ C. two-stage
def _two_stage(seed: int, binary: bool, all_chunks: bool) -> bytes:
    """K = 10 documents (of M = 200). N_d population chunks per document. Unless all_chunks, three
    documents are fully enumerated (n_d = N_d), one has n_d = 2, the rest n_d ~ 40% of N_d (>= 2)."""
    rng = np.random.default_rng(seed)
    K = 10
    N_pop = np.maximum(_sizes(rng, K, 3.0, 0.8, 4), 4)
    rates = rng.beta(1.0, 2.5, size=K)
    if all_chunks:
        n_take = N_pop.copy()
    else:
        n_take = np.maximum(np.rint(0.4 * N_pop).astype(int), 2)
        full = rng.choice(K, size=4, replace=False)
        n_take[full[:3]] = N_pop[full[:3]]
        n_take[full[3]] = 2
    rows = []
    for doc, Nd, nd, r in zip(_ids(K), N_pop, n_take, rates):
        if binary:
            y = [str(v) for v in (rng.random(int(nd)) < r).astype(int)]
        else:
            y = [f"{v:.5f}" for v in rng.gamma(2.0, r, size=int(nd))]
        chunks = np.sort(rng.choice(int(Nd), size=int(nd), replace=False)) + 1
        rows += [(doc, f"{doc}_c{c:03d}", v, str(int(Nd))) for c, v in zip(chunks, y)]
    return _csv("doc,chunk,y,N_d", rows)


# ------------------------------------------------------------------------------ D. p close to 0
def make_rare() -> bytes:
    """K = 15 documents; only one has hits (3 of its 18 chunks): p ~ 0.01."""
    rng = np.random.default_rng(20240401)
    sizes = _sizes(rng, 15, 2.8, 0.8, 3)
    sizes[6] = 18
    rows = []
    for d, (doc, n) in enumerate(zip(_ids(15), sizes)):
        y = np.zeros(int(n), dtype=int)
        if d == 6:
            y[[2, 9, 13]] = 1
        rows += [(doc, str(v)) for v in y]
    return _csv("doc,y", rows)


DATASETS = {
    "pairs_bin12.csv": lambda: _pairs_binary(20240301, 12, 4),     # ties 8/12
    "pairs_bin25.csv": lambda: _pairs_binary(20240302, 25, 9),     # ties 16/25
    "pairs_cont15.csv": lambda: _pairs_continuous(20240303, 15, 5),
    "pairs_small8.csv": lambda: _pairs_continuous(20240304, 8, 3),
    "strat2.csv": make_strat2,
    "strat3.csv": make_strat3,
    "two_stage_bin.csv": lambda: _two_stage(20240501, True, False),
    "two_stage_cont.csv": lambda: _two_stage(20240502, False, False),
    "two_stage_all.csv": lambda: _two_stage(20240503, True, True),
    "rare.csv": make_rare,
}


def _c(kind, data, level=0.95, **kw):
    return {"kind": kind, "data": data, "level": level, **kw}


CASES = {
    # A. paired comparison (population_size None: no FPC)
    "cmp_bin12": _c("compare", "data2/pairs_bin12.csv", population_size=None),
    "cmp_bin12_90": _c("compare", "data2/pairs_bin12.csv", 0.90, population_size=None),
    "cmp_bin25": _c("compare", "data2/pairs_bin25.csv", population_size=None),
    "cmp_bin25_fpc": _c("compare", "data2/pairs_bin25.csv", population_size=100),
    "cmp_cont15": _c("compare", "data2/pairs_cont15.csv", population_size=None),
    "cmp_small8": _c("compare", "data2/pairs_small8.csv", population_size=None),
    # B. stratified (population_sizes: M_h per stratum)
    "strat2": _c("stratified", "data2/strat2.csv", population_sizes={"large": 129, "small": 1171}),
    "strat3_90": _c("stratified", "data2/strat3.csv", 0.90, population_sizes={"h1": 12, "h2": 40, "h3": 250}),
    # one stratum "all" over a chunk CSV of the first oracle: equals its unequal_fpc case
    "strat1_unequal": _c("stratified", "data/unequal.csv", population_sizes={"all": 60},
                         single_stratum="all", same_as="unequal_fpc"),
    # C. two-stage (M documents; N_d is a column of the data)
    "two_stage_bin": _c("two_stage", "data2/two_stage_bin.csv", population_size=200),
    "two_stage_cont_90": _c("two_stage", "data2/two_stage_cont.csv", 0.90, population_size=200),
    "two_stage_all": _c("two_stage", "data2/two_stage_all.csv", population_size=200),
    # D. bounded intervals for binary metrics
    "ciprop_unequal": _c("ciprop", "data/unequal.csv", population_size=None),
    "ciprop_unequal_fpc": _c("ciprop", "data/unequal.csv", population_size=60),
    "ciprop_dominant": _c("ciprop", "data/dominant.csv", population_size=None),
    "ciprop_k2": _c("ciprop", "data/k2.csv", population_size=None),
    "ciprop_k3": _c("ciprop", "data/k3.csv", population_size=None),
    "ciprop_equal_90": _c("ciprop", "data/equal.csv", 0.90, population_size=None),
    "ciprop_article_like": _c("ciprop", "data/article_like.csv", population_size=None),
    "ciprop_article_like_fpc": _c("ciprop", "data/article_like.csv", population_size=1300),
    "ciprop_rare": _c("ciprop", "data2/rare.csv", population_size=None),
    "ciprop_rare_fpc": _c("ciprop", "data2/rare.csv", population_size=40),
    # E. wild cluster restricted bootstrap, Rademacher, enumerated (grid of mu0 chosen in oracle2.R)
    "wild_dominant": _c("wild", "data/dominant.csv"),
    "wild_equal": _c("wild", "data/equal.csv"),
    "wild_continuous_big": _c("wild", "data/continuous_big.csv"),
}


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    (out / "data2").mkdir(parents=True, exist_ok=True)
    for name, fn in DATASETS.items():
        (out / "data2" / name).write_bytes(fn())
    (out / "cases2.json").write_bytes((json.dumps(CASES, indent=2, sort_keys=True) + "\n").encode("ascii"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
