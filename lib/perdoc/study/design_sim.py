"""Coverage of a sampling design and its design-based interval on a census (``perdoc.survey``).

Repeatedly draw a sample with :func:`perdoc.sampling.draw_sample` from the census's frame, label it
from the census (whole documents, or a take of m chunks: for a 0/1 metric the hits among m chunks
drawn without replacement from a document with s hits in n are hypergeometric, so only the census's
per-document sums are needed), estimate with :func:`perdoc.survey.design_estimate` and count how
often the interval holds the census's value. This is what ``perdoc simulate --design`` reports and
what the coverage panel checks; its coverage must not fall as K grows.
"""

from __future__ import annotations

import math
import os

import numpy as np

from .memo import memoized
from ..errors import ParameterError

__all__ = ["census_chunk_scores", "load_census", "needs_chunk_scores", "require_chunk_scores", "simulate_design"]

#: What :func:`require_chunk_scores` says when a take of a continuous metric comes without chunk scores.
NEEDS_CHUNK_SCORES = ("--take in a simulation of a continuous metric needs the census's chunk scores "
                      "(chunk_scores); a 0/1 census needs only its sums")


def needs_chunk_scores(census, takes) -> bool:
    """Whether simulating a take (any of ``takes`` that is not None) on ``census`` needs the census's
    chunk scores: a take of a continuous metric labels real chunks, a take of a 0/1 metric only needs
    the per-document sums (hypergeometric hits; 0/1 as :func:`simulate_design` judges it from the
    sums). A census without its sums of squares needs nothing: the simulation refuses it anyway."""
    if all(m is None for m in takes) or census.q is None:
        return False
    return not _binary_sums(census)


def require_chunk_scores(census, take, chunk_scores) -> None:
    """The rule of :func:`needs_chunk_scores`, enforced: a ParameterError when a take of a continuous
    metric comes without the census's chunk scores."""
    if chunk_scores is None and needs_chunk_scores(census, (take,)):
        raise ParameterError(NEEDS_CHUNK_SCORES)


def load_census(source, *, doc: str, score: str, takes=(None,), **read_options):
    """``(census, chunk_scores)``: the census file read once (:func:`perdoc.io.load_chunks`, with
    ``read_options``) and, when a simulated take (``takes``) needs them (:func:`needs_chunk_scores`),
    its chunk scores from the same read (:func:`perdoc.io.load_chunks_and_scores`); else None."""
    from ..reading.io import load_chunks, load_chunks_and_scores
    if all(m is None for m in takes):
        return load_chunks(source, doc=doc, score=score, **read_options), None
    census, x = load_chunks_and_scores(source, doc=doc, score=score, **read_options)
    if not needs_chunk_scores(census, takes):
        return census, None
    if x is None and isinstance(source, (str, os.PathLike)):   # read where the data live: read the file here
        x = census_chunk_scores(census, source, doc=doc, score=score)
    return census, x


def check_simulation(reps, seed, level) -> tuple[int, int, float]:
    """A simulation's repetitions (1 .. :data:`perdoc.simulate.MAX_REPS`), seed (>= 0) and level,
    checked as :func:`perdoc.simulate.simulate` checks them; else ParameterError naming the rule."""
    from .estimate import check_level
    from .simulate import MAX_REPS, _check_int
    reps = _check_int("reps", reps, 1)
    if reps > MAX_REPS:
        raise ParameterError(f"reps must be at most {MAX_REPS:,} (got {reps:,})")
    return reps, _check_int("seed", seed, 0), float(check_level(level))


def check_take(take) -> None:
    """A take (chunks labelled per drawn document): None (whole documents) or a whole number >= 1."""
    if take is not None and (isinstance(take, bool) or not isinstance(take, (int, np.integer)) or take < 1):
        raise ParameterError(f"--take must be a whole number of chunks >= 1, got {take!r}")


@memoized
def simulate_design(census, *, design: str, k: int, reps: int = 1000, seed: int = 1, level: float = 0.95,
                    take: int | None = None, chunk_scores=None, **options) -> dict:
    """Coverage, Monte Carlo SE, mean width and misses of the design-based intervals (micro mean) over
    ``reps`` samples of ``census`` (:class:`perdoc.table.DocTable`) under ``design``.

    ``chunk_scores``: every chunk's score, document after document in the census's order (``n[0]``
    scores of the first document, then the second's...), so that a take of a continuous metric labels
    real chunks; a 0/1 census needs only its sums (hypergeometric takes)."""
    from ..reading.frame import Frame
    from .sampling import prepare_design
    from ..methods.survey import design_estimate
    from ..reading.manifest import SampleData, stage_fractions
    reps, seed, level = check_simulation(reps, seed, level)
    check_take(take)
    n = np.asarray(census.n, dtype=float)
    s = np.asarray(census.s, dtype=float) / census.scale
    q = None if census.q is None else np.asarray(census.q, dtype=float) / census.scale ** 2
    binary = _binary_sums(census)
    if q is None:
        raise ParameterError("the census needs the sums of squared scores")
    x, starts = _chunk_scores(chunk_scores, census.scale, n, s)
    require_chunk_scores(census, take, chunk_scores)
    in_unit = bool(np.all((s >= 0) & (s <= n) & (q <= s + 1e-9 * np.maximum(1, s))))   # every chunk in [0, 1]
    truth = float(s.sum() / n.sum())
    truths = {"micro": truth, "macro": float(np.mean(s / n))}
    frame = Frame.from_arrays(census.doc, n, allow_similar_ids=True)   # the census's ids: checked when loaded
    # the strata and their allocation, the certainty cut, Brewer's probabilities: worked out once, not per sample
    prepared = prepare_design(frame, design=design, k=k, **options)
    rng = np.random.Generator(np.random.PCG64(seed))
    seeds = rng.integers(0, 2**62, size=reps)
    pos = {d: i for i, d in enumerate(np.asarray(frame.doc).tolist())}
    tally = {}
    labels = 0.0
    for r in range(reps):
        smp = prepared.draw(int(seeds[r]))
        idx = np.array([pos[d] for d in smp.doc.tolist()])
        N = n[idx]
        m, ss, qq = _label(smp, idx, N, s, q, take=take, binary=binary, x=x, starts=starts, rng=rng)
        labels += float(np.sum(m))
        f, _ = stage_fractions(smp.stratum, smp.prob, smp.draw)
        data = SampleData(doc=smp.doc.astype(str), draw=smp.draw, stratum=smp.stratum.astype(str), prob=smp.prob,
                          N=N, m=m.astype(float), s=ss, q=qq, f=f)
        _count(tally, design_estimate(data, level=level, bounded=in_unit), truths)
    out = {"design": design, "k": k, "take": take, "reps": reps, "level": level, "truth": truth,
           "truth_macro": truths["macro"], "labels_mean": labels / reps, "methods": {}}
    for method, t in tally.items():
        cov = t["hit"] / reps   # a sample without an interval counts as a miss
        out["methods"][method] = {
            "coverage": cov, "mc_se": math.sqrt(max(cov * (1 - cov), 1e-12) / reps),
            "mean_width": t["width"] / t["n"] if t["n"] else None,
            "miss_low": t["low"] / reps, "miss_high": t["high"] / reps, "no_interval": t["none"] / reps,
            "infinite": 0.0, "rmse": float("nan"), "n": t["n"]}
    return out


def _binary_sums(census) -> bool:
    """Whether the census's sums are those of 0/1 scores (``q = s``, whole ``s`` in [0, n]): its takes are
    then hypergeometric."""
    if census.q is None:
        return False
    n = np.asarray(census.n, dtype=float)
    s = np.asarray(census.s, dtype=float) / census.scale
    q = np.asarray(census.q, dtype=float) / census.scale ** 2
    return bool(np.array_equal(q, s) and np.all((s >= 0) & (s <= n) & (s == np.round(s))))


def _chunk_scores(chunk_scores, scale: float, n, s):
    """``(x, starts)``: every census chunk's true score and where each document's scores start, checked
    against the census's sums; ``(None, None)`` without chunk scores."""
    if chunk_scores is None:
        return None, None
    x = np.asarray(chunk_scores, dtype=float) / scale
    if x.ndim != 1 or x.size != int(n.sum()):
        raise ParameterError(f"chunk_scores must hold one score per census chunk ({int(n.sum()):,}), got {x.size:,}")
    starts = np.concatenate([[0], np.cumsum(n.astype(np.int64))[:-1]])
    if not (np.allclose(np.add.reduceat(x, starts), s, rtol=1e-9, atol=1e-9) if x.size else True):
        raise ParameterError("chunk_scores do not add up to the census's per-document sums (wrong order?)")
    return x, starts


def _label(smp, idx, N, s, q, *, take, binary, x, starts, rng):
    """``(m, s, q)`` of one drawn sample's documents (census rows ``idx``, sizes ``N``): labelled whole, or a
    take of chunks (hypergeometric hits for a 0/1 census, else real chunks without replacement)."""
    from .sampling import doc_takes
    if take is None:
        return N, s[idx], q[idx]
    m = doc_takes(N, smp.prob, take, smp.info).astype(float)
    if binary:
        ss = rng.hypergeometric(s[idx].astype(np.int64), (N - s[idx]).astype(np.int64),
                                m.astype(np.int64)).astype(float)
        return m, ss, ss
    # a take of real chunks, without replacement within each drawn document
    ss = np.empty(idx.size)
    qq = np.empty(idx.size)
    for j, (i, nj, mj) in enumerate(zip(idx.tolist(), N.astype(np.int64).tolist(), m.astype(np.int64).tolist())):
        at = np.arange(nj) if mj >= nj else rng.choice(nj, size=mj, replace=False)
        v = x[starts[i] + at]
        ss[j] = v.sum()
        qq[j] = (v * v).sum()
    return m, ss, qq


def _count(tally: dict, est, truths: dict) -> None:
    """Add one sample's intervals to ``tally``: hit, missed low or high, none, and the width."""
    for iv in est.intervals:
        t = tally.setdefault(f"{iv.estimand}.{iv.method}",
                             {"hit": 0, "low": 0, "high": 0, "none": 0, "width": 0.0, "n": 0})
        value = truths[iv.estimand]
        if iv.ci is None:
            t["none"] += 1
            continue
        t["n"] += 1
        t["width"] += iv.ci.high - iv.ci.low
        if value < iv.ci.low:
            t["low"] += 1
        elif value > iv.ci.high:
            t["high"] += 1
        else:
            t["hit"] += 1


def as_simulation_result(res: dict, *, seed: int):
    """:func:`simulate_design`'s result as a :class:`perdoc.simulate.SimulationResult` (what a report's
    headline is chosen from)."""
    from .simulate import SimulationResult, recommend
    rec, notes = recommend(res["methods"], res["level"])
    design = {"sampling": "drawn", "design": res["design"], "take": res["take"], "labels_mean": res["labels_mean"]}
    return SimulationResult(methods=res["methods"], truth={"micro": res["truth"], "macro": res["truth_macro"]},
                            k=res["k"], reps=res["reps"], seed=seed, level=res["level"], design=design,
                            recommended=rec, recommendation_notes=notes,
                            notes=(f"samples drawn as the study's own: {res['design']} design, K = {res['k']}"
                                   + (f", {res['take']} chunks each" if res["take"] else ""),))


def census_chunk_scores(census, path, *, doc: str, score: str):
    """Every chunk's score of the census file at ``path`` (one row per chunk), document after document
    in ``census``'s order, as :func:`simulate_design` needs for a take of a continuous metric. Rows the
    census left out (a missing score) make the sums disagree, and the simulation then refuses them."""
    import pandas as pd

    from ..reading.manifest import read_table_file
    df = read_table_file(path, "the census")
    for col in (doc, score):
        if col not in df.columns:
            raise ParameterError(f"the census {path}: no column {col!r}")
    where = {d: i for i, d in enumerate(np.asarray(census.doc).astype(str).tolist())}
    code = df[doc].astype(str).map(where)
    values = pd.to_numeric(df[score], errors="coerce").to_numpy(dtype=float)
    keep = code.notna().to_numpy() & np.isfinite(values)
    order = np.argsort(code.to_numpy()[keep].astype(np.int64), kind="stable")
    return values[keep][order]
