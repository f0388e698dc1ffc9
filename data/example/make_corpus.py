"""Make the SYNTHETIC example corpus: a 1,300-document census and a 20-document study sample.

The data are SYNTHETIC. No real document, chunk or query is in them. They are calibrated to the
aggregate figures a published study reports for a real regulatory-document corpus (ANEEL-TAESA);
only those figures are known to us, so everything else (sizes, which chunks hit) is made up.

Each row is one chunk and the result of its query: ``doc_id, chunk_id, bm25, tfidf``, where ``bm25``
and ``tfidf`` are the 0/1 hit@k of two retrievers scored on the same chunks (BM25 is the system of
record). Targets met exactly or within the stated tolerance on every run:

* 1,300 documents; exactly 129 have more than 76 chunks and they hold 59% of all chunks;
* BM25 micro mean (over chunks) 0.1846 and macro mean (mean of per-document rates) 0.1596;
* BM25 and TF-IDF have identical per-document hit counts in 70% of documents;
* BM25 - TF-IDF is +0.0062 micro and +0.0027 macro.

How (by construction, then a small deterministic adjustment; no seed was searched):

1. Sizes: one draw in each of 1,300 equal-probability strata of a lognormal whose two parameters
   are solved from the 129-documents / 59% figures, so exactly 129 sizes exceed 76; the excess of
   the long documents over 77 is then rescaled so that their share is 59% exactly.
2. BM25: a document's hit probability is 0 for a few "dead" documents (queries that never hit;
   short documents more often) and otherwise logistic in a document effect (sd RATE_SD on the
   logit) and log(size). Intercept and size slope are solved so that the EXPECTED micro and macro
   means equal the targets for the drawn sizes and effects; chunk hits are Bernoulli draws.
3. TF-IDF agrees with BM25 except on a few chunks: it misses a BM25 hit with probability alpha * w
   and hits a BM25 miss with probability beta * w, w = (size / median) ** DISAGREE_SIZE; alpha and
   beta solve the two linear equations E[micro difference] = 0.0062, E[macro difference] = 0.0027.
4. Adjustment, one hit at a time in chosen documents, until the sums are exact: BM25 hits are
   added to or removed from long documents (total = micro), then moved in pairs between a short
   and a long document (mean of rates = macro, total unchanged); documents with rate 0 or 1 are
   never touched. For TF-IDF, ties are broken or made one document at a time (70%), then the
   per-document differences of non-tied documents are moved the same two ways, never to 0.

The study sample is a simple random sample without replacement of K=20 documents (seed
SAMPLE_SEED, population_size 1300), with all their rows.

Only uniform draws and permutations of numpy's PCG64 Generator and stdlib's NormalDist are used, and
the files hold only integers, so the bytes written are identical on every run (and, as far as
floating-point exp/log agree, on every platform).

Run: python data/example/make_corpus.py [OUTDIR]   (default: the folder of this script; writes
census.csv, sample.csv and README.md)
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from statistics import NormalDist

import numpy as np

SEED = 20260415
SAMPLE_SEED = 4  # first of 1, 2, 3, ... whose sample holds 700-800 chunks (see README)
D = 1300  # documents in the census
K = 20  # documents in the study sample
BIG = 76  # "long" documents have more than BIG chunks
N_BIG = 129  # ... and there are exactly this many
SHARE_BIG = 0.59  # ... holding this share of all chunks
MICRO = 0.1846  # BM25 hit rate over all chunks
MACRO = 0.1596  # mean of per-document BM25 hit rates
TIE = 0.70  # share of documents where BM25 and TF-IDF have the same number of hits
DMICRO = 0.0062  # BM25 - TF-IDF, micro
DMACRO = 0.0027  # BM25 - TF-IDF, macro

# Generative model, set by hand once (the parameters matched to the targets are solved in code).
MAX_U = 1.0 - 0.2 / D  # cap on the size quantile (keeps the longest document under ~2,600 chunks)
RATE_SD = 1.1  # BM25: sd of the document effect on the logit (spread of rates between documents)
DEAD = 0.08  # BM25: share of documents whose queries never hit (short ones more often)
DISAGREE_SIZE = 0.08  # TF-IDF vs BM25 disagreement grows like size ** this (sets ~70% ties)

NORM = NormalDist()


# ------------------------------------------------------------------------------------- sizes
def make_sizes(rng: np.random.Generator) -> np.ndarray:
    """Document sizes: exactly N_BIG above BIG, holding SHARE_BIG of all chunks."""
    q = N_BIG / D
    z_q = NORM.inv_cdf(1.0 - q)
    sigma = z_q + NORM.inv_cdf(SHARE_BIG)  # share above t of a lognormal is Phi(sigma - z_q)
    mu = math.log(BIG + 0.5) - sigma * z_q  # so that P(size > BIG + 0.5) = q
    u = (np.arange(D) + rng.random(D)) / D  # one draw in each of D equal-probability strata
    u = np.minimum(u, MAX_U)
    x = np.exp(mu + sigma * np.array([NORM.inv_cdf(v) for v in u]))
    n = np.floor(x + 0.5).astype(np.int64)
    small, big = n[: D - N_BIG].clip(1, BIG), n[D - N_BIG :]
    assert big.min() > BIG
    # Rescale the excess of the long documents over BIG + 1 so their share is SHARE_BIG exactly.
    want = SHARE_BIG / (1.0 - SHARE_BIG) * small.sum()
    lo, hi = 0.0, 10.0
    for _ in range(100):
        k = (lo + hi) / 2
        if ((BIG + 1) + np.floor((big - BIG - 1) * k + 0.5)).sum() < want:
            lo = k
        else:
            hi = k
    big = (BIG + 1) + np.floor((big - BIG - 1) * hi + 0.5).astype(np.int64)
    n = np.concatenate([small, big])
    return n[rng.permutation(D)]  # document ids say nothing about size


# ---------------------------------------------------------------------------- adjustment
def bisect(f, lo, hi, iters=64):
    """Root of an increasing function f on [lo, hi] (fixed number of steps: same result every run)."""
    for _ in range(iters):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _pick(rng, idx, weight=None):
    """One index from idx, at random (weighted), drawn with a uniform so streams stay stable."""
    if weight is None:
        return idx[int(rng.random() * len(idx))]
    c = np.cumsum(weight, dtype=float)
    return idx[min(int(np.searchsorted(c, rng.random() * c[-1], side="right")), len(idx) - 1)]


def fix_total(rng, x, lo, hi, n, pool, target):
    """Move x (integer per document, lo <= x <= hi) by +-1 in documents of `pool` (chosen with
    probability proportional to size) until x.sum() == target. Returns the number of moves."""
    moves = 0
    while (r := target - int(x.sum())) != 0:
        step = 1 if r > 0 else -1
        ok = pool[(x[pool] + step >= lo[pool]) & (x[pool] + step <= hi[pool])]
        d = _pick(rng, ok, n[ok])
        x[d] += step
        moves += 1
    return moves


def fix_rates(rng, x, lo, hi, n, small, large, target, tol):
    """Pair moves (+1 in one document, -1 in another) so that sum(x / n) is within tol of target
    while x.sum() does not change. Each move takes the largest gain that does not overshoot."""
    moves = 0
    while abs(r := target - float((x / n).sum())) > tol:
        step = 1 if r > 0 else -1
        okl = large[(x[large] - step >= lo[large]) & (x[large] - step <= hi[large])]
        j = _pick(rng, okl, n[okl])
        oks = small[(x[small] + step >= lo[small]) & (x[small] + step <= hi[small])]
        gain = 1.0 / n[oks] - 1.0 / n[j]
        fits = gain <= abs(r) + tol / 2
        if not fits.any():  # what is left is smaller than any move: as close as it gets
            break
        best = gain[fits].max()
        i = _pick(rng, oks[fits & (gain == best)])
        x[i] += step
        x[j] -= step
        moves += 1
    return moves


# ---------------------------------------------------------------------------------- corpus
def make_census(rng: np.random.Generator):
    n = make_sizes(rng)
    N = int(n.sum())
    big = n > BIG
    ids = np.arange(D)

    # BM25: per-document hit probability p = 0 for "dead" documents (queries that never hit; short
    # documents more often) and otherwise logistic in a document effect and log(size). The intercept
    # and size slope are solved so that the EXPECTED micro and macro means equal the targets for
    # these very sizes and effects; only the chunk-level Bernoulli noise is left for adjusting.
    z = np.empty(D)  # document effects: stratified normal quantiles, shuffled within each group
    for grp in (ids[big], ids[~big]):
        k = len(grp)
        z[grp] = np.array([NORM.inv_cdf(v) for v in (np.arange(k) + 0.5) / k])[rng.permutation(k)]
    dead = rng.random(D) < DEAD * 2.0 / (1.0 + np.sqrt(n / np.median(n)))
    x = np.log(n) - np.median(np.log(n))

    def prob(a, slope):
        p = 1.0 / (1.0 + np.exp(-(a + slope * x + RATE_SD * z)))
        return np.where(dead, 0.0, p)

    def intercept(slope):  # expected micro mean = MICRO
        return bisect(lambda a: (n * prob(a, slope)).sum() / N - MICRO, -10.0, 10.0)

    slope = bisect(lambda sl: MACRO - prob(intercept(sl), sl).mean(), -2.0, 2.0)
    p = prob(intercept(slope), slope)
    s = np.bincount(np.repeat(ids, n), weights=rng.random(N) < np.repeat(p, n), minlength=D)
    s = s.astype(np.int64)
    gen = s.copy()

    # Exact BM25 micro: move hits in long documents that have some hits and some misses
    # (no document changes to rate 0 or 1). Then macro to within 0.01 / D by paired moves.
    live = (s > 0) & (s < n)
    lo_s, hi_s = np.where(live, 1, s), np.where(live, n - 1, s)
    fix_total(rng, s, lo_s, hi_s, n, ids[big & live], round(MICRO * N))
    fix_rates(rng, s, lo_s, hi_s, n, ids[~big & live], ids[big & live], MACRO * D, 0.01)

    # TF-IDF: b = chunks BM25 hits and TF-IDF misses, c = the other way round. Per chunk, TF-IDF
    # misses a BM25 hit with probability alpha * w and hits a BM25 miss with probability beta * w,
    # w = (size / median size) ** DISAGREE_SIZE (long documents disagree more). alpha and beta solve
    # the two linear equations E[micro difference] = DMICRO, E[macro difference] = DMACRO.
    w = (n / np.median(n)) ** DISAGREE_SIZE
    r = s / n
    A = np.array([[(w * s).sum(), -(w * (n - s)).sum()], [(w * r).sum(), -(w * (1 - r)).sum()]])
    alpha, beta = np.linalg.solve(A, [DMICRO * N, DMACRO * D])
    assert 0 < beta < alpha and alpha * w.max() < 1
    u = rng.random(N)
    start = np.concatenate([[0], np.cumsum(n)[:-1]])
    pos = np.arange(N) - np.repeat(start, n)
    hit = pos < np.repeat(s, n)
    W = np.repeat(w, n)
    b = np.bincount(np.repeat(ids, n), weights=hit & (u < alpha * W), minlength=D).astype(np.int64)
    c = np.bincount(np.repeat(ids, n), weights=~hit & (u < beta * W), minlength=D).astype(np.int64)
    b0, c0, gen_tie = b.copy(), c.copy(), int((b == c).sum())

    # Exact tie count: break ties in (mostly long) documents, or make |b - c| = 1 documents tie.
    want_tie = round(TIE * D)
    while (extra := int((b == c).sum()) - want_tie) != 0:
        if extra > 0:
            cand = ids[(b == c) & ((b < s) | (c < n - s))]
            d = _pick(rng, cand, n[cand])
            if (b[d] < s[d]) and (c[d] == n[d] - s[d] or rng.random() < 0.6):
                b[d] += 1
            else:
                c[d] += 1
        else:
            cand = ids[np.abs(b - c) == 1]
            d = _pick(rng, cand)
            if b[d] > c[d]:
                b[d] -= 1
            else:
                c[d] -= 1
    # Exact micro difference, then macro difference, through delta = b - c in non-tied documents;
    # delta never crosses 0, so the tie count stays. Moving delta by +1 is b + 1 (or c - 1).
    delta = b - c
    pos_ = delta > 0
    lo_d = np.where(pos_, 1, np.where(delta < 0, -(n - s), 0))
    hi_d = np.where(pos_, s, np.where(delta < 0, -1, 0))
    nt = delta != 0
    fix_total(rng, delta, lo_d, hi_d, n, ids[big & nt], round(DMICRO * N))
    fix_rates(rng, delta, lo_d, hi_d, n, ids[~big & nt], ids[big & nt], DMACRO * D, 0.01)
    # Back to (b, c): keep the TF-IDF-only count c where the new delta allows it.
    c = np.clip(c, np.maximum(0, -delta), np.minimum(n - s, s - delta))
    b = c + delta
    assert ((b >= 0) & (b <= s) & (c >= 0) & (c <= n - s)).all()

    # Chunk rows: within a document the chunks in random order are [BM25 and TF-IDF hits]
    # [BM25-only] [TF-IDF-only] [misses].
    key = np.repeat(ids, n) + rng.random(N)  # sort chunks inside each document at random
    rank = np.empty(N, np.int64)
    order = np.argsort(key, kind="stable")
    rank[order] = pos
    S, B, C = np.repeat(s, n), np.repeat(b, n), np.repeat(c, n)
    bm25 = (rank < S).astype(np.int64)
    tfidf = ((rank < S - B) | ((rank >= S) & (rank < S + C))).astype(np.int64)
    info = {
        "size slope of the BM25 logit (solved)": f"{slope:.4f}",
        "TF-IDF alpha, beta (solved)": f"{alpha:.4f}, {beta:.4f}",
        "BM25 hits changed by the adjustment": f"{int(np.abs(s - gen).sum())} of {int(s.sum())}",
        "BM25 micro, macro before adjustment": f"{gen.sum() / N:.4f}, {(gen / n).mean():.4f}",
        "TF-IDF disagreements changed by the adjustment":
            f"{int(np.abs(b - b0).sum() + np.abs(c - c0).sum())} of {int((b + c).sum())}",
        "tied documents before adjustment": f"{gen_tie}",
    }
    return n, bm25, tfidf, info


# ---------------------------------------------------------------------------------- output
def rows(n, bm25, tfidf, docs) -> str:
    """CSV text of all chunks of the given documents (0-based indices, ascending)."""
    start = np.concatenate([[0], np.cumsum(n)])
    out = ["doc_id,chunk_id,bm25,tfidf"]
    for d in docs:
        lo = start[d]
        out += [f"doc{d + 1:04d},{j + 1},{bm25[lo + j]},{tfidf[lo + j]}" for j in range(n[d])]
    return "\n".join(out) + "\n"


def summary(n, bm25, tfidf):
    """The calibration quantities of a set of documents, from chunk rows."""
    ids = np.repeat(np.arange(len(n)), n)
    s = np.bincount(ids, bm25, len(n))
    t = np.bincount(ids, tfidf, len(n))
    N, big = n.sum(), n > BIG
    r = s / n
    # One-way ANOVA intraclass correlation of the BM25 hits (documents as groups).
    k, n0 = len(n), (N - (n**2).sum() / N) / (len(n) - 1)
    msb = (n * (r - s.sum() / N) ** 2).sum() / (k - 1)
    msw = (s - n * r**2).sum() / (N - k)
    return {
        "K": len(n), "N": int(N), "big": int(big.sum()), "share": n[big].sum() / N,
        "micro": s.sum() / N, "macro": r.mean(), "tie": (s == t).mean(),
        "dmicro": (s - t).sum() / N, "dmacro": ((s - t) / n).mean(),
        "tf_micro": t.sum() / N, "tf_macro": (t / n).mean(),
        "zero": (s == 0).mean(), "one": (s == n).mean(), "icc": (msb - msw) / (msb + (n0 - 1) * msw),
        "micro_big": s[big].sum() / max(n[big].sum(), 1), "micro_small": s[~big].sum() / n[~big].sum(),
        "macro_big": r[big].mean() if big.any() else float("nan"), "macro_small": r[~big].mean(),
        "median": float(np.median(n)), "max": int(n.max()), "min": int(n.min()),
    }


def readme(c, smp, pick, info) -> str:
    pct = lambda v: f"{100 * v:.2f}%"  # noqa: E731
    docs = ", ".join(f"doc{d + 1:04d}" for d in pick)
    lines = [
        "# data/example: SYNTHETIC census and study sample (not real data)",
        "",
        "Everything in this folder that `make_corpus.py` writes is **synthetic**: made up by a seeded",
        "script and calibrated to the aggregate figures a published study reports for a real",
        "regulatory-document corpus (ANEEL-TAESA). Only those figures are known; no real document,",
        "chunk, query or judgement is in these files.",
        "",
        "Regenerate (byte-identical every run): `python data/example/make_corpus.py [OUTDIR]`",
        "(default OUTDIR is this folder; `tests/test_example_corpus.py` checks the bytes and targets).",
        "",
        "## Files",
        "",
        "| file | what |",
        "|---|---|",
        f"| `census.csv` | SYNTHETIC census: all {c['K']:,} documents, {c['N']:,} chunks, one row per chunk |",
        f"| `sample.csv` | SYNTHETIC study sample: simple random sample without replacement of K = {K} "
        f"of the {D:,} documents (population_size {D}), all their rows, same columns |",
        "| `README.md` | this file (written by the script) |",
        "| `make_corpus.py` | the seeded generator (method in its docstring) |",
        "| `stratified_sample.csv`, `two_stage_sample.csv`, `census_stratified.csv.gz` | SYNTHETIC design "
        "examples drawn from the census by `make_designs.py`: 10 large + 10 small documents (stratum "
        "`size_stratum`, more than 76 chunks is large); 20 documents then a quarter of each one's chunks "
        "(`chunks_in_doc`); the census with the `size_stratum` column |",
        "",
        "Columns of `census.csv` and `sample.csv` (one row per chunk, i.e. per (chunk, query) result:",
        "each chunk has its own query and the retriever either finds the chunk in its top k or not):",
        "",
        "| column | meaning |",
        "|---|---|",
        "| `doc_id` | document (cluster) id, `doc0001` ... `doc1300` (ids say nothing about size) |",
        "| `chunk_id` | chunk number within its document, 1 ... size |",
        "| `bm25` | 1 if BM25 retrieved the chunk for its query (hit@k), else 0; system of record |",
        "| `tfidf` | 1 if TF-IDF retrieved the chunk for the same query (hit@k), else 0 |",
        "",
        "## Calibration targets (census, BM25 unless stated)",
        "",
        "| quantity | target | achieved |",
        "|---|---|---|",
        f"| documents | 1,300 | {c['K']:,} |",
        f"| chunks | 40,000-60,000 (heavy-tailed sizes) | {c['N']:,} |",
        f"| documents with more than {BIG} chunks | {N_BIG} exactly | {c['big']} |",
        f"| share of chunks in those documents | 59% +- 0.5 | {100 * c['share']:.3f}% |",
        f"| micro mean (hits / chunks) | 0.1846 +- 0.0005 | {c['micro']:.5f} |",
        f"| macro mean (mean of per-document rates) | 0.1596 +- 0.0005 | {c['macro']:.5f} |",
        f"| documents where BM25 and TF-IDF hit counts tie | 70% +- 1 | {pct(c['tie'])} |",
        f"| BM25 - TF-IDF, micro | +0.0062 +- 0.0005 | {c['dmicro']:+.5f} |",
        f"| BM25 - TF-IDF, macro | +0.0027 +- 0.0003 | {c['dmacro']:+.5f} |",
        f"| documents with rate 0 | many (30-45%) | {pct(c['zero'])} |",
        f"| documents with rate 1 | few | {pct(c['one'])} |",
        f"| intraclass correlation of hits (ANOVA) | well above 0 | {c['icc']:.3f} |",
        f"| micro, long (> {BIG}) vs short documents | long higher | "
        f"{c['micro_big']:.4f} vs {c['micro_small']:.4f} |",
        f"| macro, long vs short documents | long higher | {c['macro_big']:.4f} vs {c['macro_small']:.4f} |",
        "",
        f"Document sizes: median {c['median']:g}, smallest {c['min']}, largest {c['max']:,} chunks.",
        f"TF-IDF micro {c['tf_micro']:.4f}, macro {c['tf_macro']:.4f}.",
        "",
        "How the targets are reached (details in the script's docstring): sizes are built to have",
        f"exactly {N_BIG} long documents holding 59% of chunks; the BM25 and TF-IDF models' parameters",
        "are solved so that the expected values equal the targets for the drawn sizes; then a",
        "deterministic step changes a few hits in chosen documents to make the sums exact:",
        "",
        "| step | value |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in info.items()],
        "",
        f"## Study sample (seed {SAMPLE_SEED})",
        "",
        f"K = {smp['K']} documents, N = {smp['N']:,} chunks; BM25 micro {smp['micro']:.4f}, macro "
        f"{smp['macro']:.4f}; TF-IDF micro {smp['tf_micro']:.4f}, macro {smp['tf_macro']:.4f};",
        f"{smp['big']} of the {smp['K']} documents have more than {BIG} chunks.",
        f"Population size for finite-population corrections: {D}.",
        "",
        f"Documents: {docs}.",
        "",
        "The seed was chosen as the first of 1, 2, 3, ... whose sample holds 700-800 chunks (the",
        "published study's 20-document sample had 764); no other property was looked at.",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description="Write the SYNTHETIC example census and sample.")
    ap.add_argument("outdir", nargs="?", default=str(Path(__file__).resolve().parent))
    out = Path(ap.parse_args(argv).outdir)
    out.mkdir(parents=True, exist_ok=True)
    n, bm25, tfidf, info = make_census(np.random.default_rng(SEED))
    pick = np.sort(np.random.default_rng(SAMPLE_SEED).permutation(D)[:K])
    start = np.concatenate([[0], np.cumsum(n)])
    sel = np.concatenate([np.arange(start[d], start[d + 1]) for d in pick])
    census, smp = summary(n, bm25, tfidf), summary(n[pick], bm25[sel], tfidf[sel])
    # Self-check of the calibration targets (the tests check them again on the written files).
    assert census["K"] == D and census["big"] == N_BIG and abs(census["share"] - SHARE_BIG) <= 0.005
    assert abs(census["micro"] - MICRO) <= 0.0005 and abs(census["macro"] - MACRO) <= 0.0005
    assert abs(census["tie"] - TIE) <= 0.01
    assert abs(census["dmicro"] - DMICRO) <= 0.0005 and abs(census["dmacro"] - DMACRO) <= 0.0003
    for name, text in [
        ("census.csv", rows(n, bm25, tfidf, range(D))),
        ("sample.csv", rows(n, bm25, tfidf, pick)),
        ("README.md", readme(census, smp, pick, info)),
    ]:
        with open(out / name, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)


if __name__ == "__main__":
    main()
