"""Coverage simulation: which interval can I trust on MY data?

Treat a census (or a pilot standing in for the population) as the population, draw ``reps``
samples of ``k`` documents under the declared design, compute every interval method of
:func:`perdoc.estimate` on each sample, and report per method

* ``coverage``: share of the ``reps`` samples whose interval contains the census value. A sample
  where the method gave no interval (every document has the same rate, zero standard error, every
  bootstrap replicate degenerate, undefined df) counts as NOT covered: the analyst is left without
  an interval. An infinite or whole-line interval (the wild bootstrap with too few documents)
  counts as covered, because it does contain the truth; see ``infinite``. The wild bootstrap's
  set may have several pieces: it covers when the truth lies in one of them (not merely in their
  hull), and its width is that of the hull, as the reported ``ci``.
* ``mc_se``: Monte Carlo standard error of the coverage, ``sqrt(c (1 - c) / reps)``;
* ``mean_width``: mean width of the finite intervals (NaN when there is none);
* ``rmse``: root mean squared error of the method's point estimate around the census value;
* ``no_interval`` and ``infinite``: the shares of samples with no interval and with an interval
  that is infinite on at least one side;
* ``miss_low`` and ``miss_high``: the shares of samples whose interval lies entirely below the
  census value (``high < truth``) and entirely above it (``low > truth``); for the wild set, of its
  hull. ``miss_gap`` (the wild set only): the share where the truth falls between two of its
  pieces. ``coverage + miss_low + miss_high (+ miss_gap) + no_interval = 1``: a sample without an
  interval counts in ``no_interval`` only;
* ``n``: the number of samples (``reps``).

Census values: micro ``sum s / sum n`` and macro ``mean(s / n)`` over the census documents.

Scale: as :func:`perdoc.estimate`, the simulation computes on the census sums times a power of two
that keeps them near 1 when they are far from it (and divides ``DocTable.scale`` out); truths,
widths, errors and per-repetition intervals are reported on the true scale, exactly.

Bounds: ``reps`` at most 1,000,000, ``replicates`` at most 1,000,000 and ``replicates * k`` at most
2^24 (one sample's resampling cells are held at once), ``level`` between 1e-9 and 1 - 1e-9.

Designs (``design=``):

* ``None`` or ``{"sampling": "srs"}``: ``k`` documents by simple random sampling without
  replacement; every single-system method, with the finite population correction ``M`` = number of
  census documents, exactly as ``perdoc.estimate(sample, population_size=M, replicates=R, seed=...)``.
* ``{"sampling": "stratified", "strata": {"by": labels, "k": {label: k_h}}}``: ``k_h`` documents
  per stratum (``k = sum k_h``); ``micro.design`` and ``macro.design``
  (:func:`perdoc.designs.stratified`, population sizes = the census counts per stratum).
* ``{"sampling": "two_stage", "chunks_per_doc": m}`` or ``{"sampling": "two_stage",
  "fraction": f}``: ``k`` documents, then ``min(m, N_d)`` (or ``min(N_d, max(2, ceil(f N_d)))``)
  of the ``N_d`` chunks of each; binary census only, because then the hits in the chunk subsample are
  hypergeometric given ``(N_d, s_d)`` and no chunk-level data are needed. ``micro.design``
  (:func:`perdoc.designs.two_stage`).

Recommendation rule, per estimand: among the non-baseline methods (the baselines
``micro.wald_iid`` and ``micro.wald_eff_n`` are never recommended) a method *qualifies* when its
coverage is within Monte Carlo error of the nominal level, ``coverage >= level - 2 * mc_se``. The
recommended method is the qualifying one with the smallest mean width; a method that ever gave an
infinite interval ranks after every method that never did (ties: the order of the method list).
When no method qualifies, ``recommended`` is None and the note says so and names the best available
method (highest coverage) with its coverage.

Speed: repetitions are processed in blocks (arrays of shape ``(block, k)``) and every method runs
on the whole block at once, through the same batch implementation :func:`perdoc.estimate` uses
with a batch of one sample (:func:`perdoc.methods.srs_methods`, :mod:`perdoc.micro`,
:mod:`perdoc.bootstrap`, :mod:`perdoc.wild`, :mod:`perdoc.designs`): there is no second copy of
any formula here. The document bootstrap and the wild bootstrap are vectorised across
repetitions x replicates, and the wild bootstrap's test inversion runs all repetitions of a block
at once. Repetition ``i`` uses its own seed ``seeds[i]`` for the bootstrap and the wild
weights, exactly as ``perdoc.estimate(sample_i, ..., seed=seeds[i])`` would, so every interval of
every repetition can be reproduced by the library itself (:func:`rep_intervals` returns them with
the sampled documents and the seeds). Results do not depend on the block size. With resampling,
blocks are computed by several threads at once (:func:`workers`: the processors available, at
most 4; ``PERDOC_THREADS=1`` computes in one), with the same results.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .memo import memoized
from ..methods import designs as _designs
from ..methods import intervals as _methods
from ..methods import micro as _micro
from ..reading.pairs import PairTable
from ..errors import ParameterError
from ..messages import Message
from ..methods.results import _num
from ..reading.table import DocTable

__all__ = ["simulate", "simulate_pairs", "rep_intervals", "RepIntervals", "SimulationResult",
           "recommend", "BASELINES"]

from .policy import BASELINES  # noqa: E402  (the methods shown only to warn; defined with the policy)
#: Repetitions per simulation: each keeps its widths and errors (about 250 bytes) for the summary.
MAX_REPS = 1_000_000
#: Bootstrap replicates x documents per sample: one sample's draws, about 40 bytes a cell, are
#: held at once (2^24 cells: well under a gigabyte).
MAX_RESAMPLING_CELLS = 1 << 24
BLOCK_CELLS = 1 << 21      # repetitions x replicates of the blocks in flight (the bootstrap and wild
                           # code bound their own repetition x replicate x document cells)
MAX_BLOCK_REPS = 2048      # block size without resampling
SEED_MAX = 2**63 - 1

_ANALYTIC_MICRO = ("cr1", "cr2", "cr2_ik", "cr3")
_BOUNDED = ("korn_graubard", "logit", "wilson")


# ====================================================================== results
@dataclass(frozen=True)
class SimulationResult:
    """Coverage of every interval method over ``reps`` simulated samples of ``k`` documents."""

    #: "micro.cr2" -> {coverage, mc_se, mean_width, rmse, no_interval, infinite, n, miss_low, miss_high}
    #: (and miss_gap for a method whose set may have several pieces)
    methods: dict
    truth: dict            # {"micro": ..., "macro": ...}: the census values
    k: int
    reps: int
    seed: int
    level: float
    design: dict
    recommended: dict      # {"micro": name or None, "macro": name or None}
    recommendation_notes: dict = field(default_factory=dict)
    replicates: int = 0
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: NaN and infinities become None."""
        keys = ("coverage", "mc_se", "mean_width", "rmse", "no_interval", "infinite", "miss_low", "miss_high",
                "miss_gap", "out_of_range")
        return {
            "k": self.k, "reps": self.reps, "seed": self.seed, "level": self.level,
            "replicates": self.replicates,
            "truth": {k: _num(v) for k, v in self.truth.items()},
            "design": self.design,
            "methods": {name: {key: _num(m[key]) for key in keys if key in m} for name, m in self.methods.items()},
            "recommended": dict(self.recommended),
            "recommendation_notes": dict(self.recommendation_notes),
            "notes": list(self.notes),
        }

    def to_frame(self):
        """One row per method: method, estimand, coverage, mc_se, mean_width, rmse, no_interval,
        infinite, n, miss_low, miss_high, miss_gap (NaN but for the wild set), baseline, recommended
        (a pandas DataFrame)."""
        import pandas as pd
        rows = []
        for name, m in self.methods.items():
            est = name.split(".", 1)[0]
            rows.append({"method": name, "estimand": est, **m, "baseline": name in BASELINES,
                         "recommended": self.recommended.get(est) == name})
        return pd.DataFrame(rows)


@dataclass(frozen=True)
class RepIntervals:
    """Every interval of every repetition: for tests, and to look at single samples.

    ``index[i]`` are the census positions of the documents of sample i, in the order the sample
    table has them (``census.take(index[i])``); ``seeds[i]`` the seed ``perdoc.estimate`` would need
    to reproduce its bootstrap and wild intervals; ``chunks`` (two-stage only) the sampled chunks
    and hits per document. ``low``/``high``: NaN when the method gave no interval, +-inf when the
    interval is unbounded.
    """

    index: np.ndarray
    seeds: np.ndarray
    estimate: dict
    low: dict
    high: dict
    chunks: dict | None = None
    #: For methods whose set may have several pieces (``micro.wild``): ``(rep, low, high)``, one
    #: entry per piece, sorted by repetition and position; ``low``/``high`` above are the hulls.
    pieces: dict = field(default_factory=dict)

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(self.low)

    def pieces_of(self, method: str, i: int) -> list[tuple[float, float]]:
        """The pieces of repetition i's set for ``method`` (its one interval for most methods;
        empty when there is none)."""
        if method in self.pieces:
            rep, lo, hi = self.pieces[method]
            sel = rep == i
            return [(float(a), float(b)) for a, b in zip(lo[sel], hi[sel])]
        lo, hi = self.low[method][i], self.high[method][i]
        return [] if (np.isnan(lo) or np.isnan(hi)) else [(float(lo), float(hi))]


# ====================================================================== public API
@memoized
def simulate(census: DocTable, *, k: int, reps: int, seed: int = 1, level: float = 0.95,
             design: dict | None = None, replicates: int = 999,
             progress: Callable[[int, int], Any] | None = None, frame: bool = False) -> SimulationResult:
    """Simulate the coverage of every interval method on samples drawn from ``census``.

    Parameters
    ----------
    census : DocTable
        The population (or a pilot treated as one): per-document n, s, q.
    k : int
        Documents per sample (for a stratified design, the sum of the ``k_h``).
    reps : int
        Number of simulated samples.
    seed : int
        Seeds every draw: the samples, the per-repetition bootstrap seeds, the chunk subsamples.
    level : float
        Confidence level of every interval.
    design : dict, optional
        See the module docstring (simple random sampling by default).
    replicates : int
        Document bootstrap replicates and wild bootstrap draws per sample (0 skips them).
    progress : callable, optional
        ``progress(done, total)`` after each block of repetitions.
    frame : bool
        The sizes of every population document are known (the census is the frame): adds the
        frame-aware micro methods (``micro.frame_ratio``, ``micro.frame_loglinear``, ``micro.frame_rank``
        and, for a metric bounded in [0, 1], their logit-scale ``micro.logit_frame_*``;
        :func:`perdoc.methods.frame_prediction`) under simple random sampling, as
        ``perdoc.estimate(sample, frame=...)`` computes them.

    Coverage counts a sample without an interval as a miss and an infinite interval as a hit
    (``no_interval`` and ``infinite`` report how often each happened). Recommendation, per
    estimand: among the non-baseline methods (never ``wald_iid`` or ``wald_eff_n``) those with
    ``coverage >= level - 2 * mc_se`` qualify, and the qualifying method with the smallest mean
    width is recommended (methods that ever gave an infinite interval rank last); when none
    qualifies the recommendation is None and the note names the method with the highest coverage.
    """
    plan = _Plan(census, k=k, reps=reps, seed=seed, level=level, design=design, replicates=replicates,
                 frame=frame)
    return plan.run(progress)


@memoized
def simulate_pairs(census_pairs: PairTable, *, k: int, reps: int, seed: int = 1, level: float = 0.95,
                   replicates: int = 999, progress: Callable[[int, int], Any] | None = None) -> SimulationResult:
    """Coverage of the paired difference A - B (as :func:`perdoc.compare`): every single-system
    method applied to the per-document differences of a paired census, simple random sampling.
    The intervals bounded to [0, 1] do not apply to a difference and are left out."""
    if not isinstance(census_pairs, PairTable):
        raise ParameterError("census_pairs must be a perdoc PairTable (use perdoc.load_pairs)")
    plan = _Plan(census_pairs, k=k, reps=reps, seed=seed, level=level, design=None, replicates=replicates)
    return plan.run(progress)


def rep_intervals(census: DocTable | PairTable, *, k: int, reps: int, seed: int = 1, level: float = 0.95,
                  design: dict | None = None, replicates: int = 999, frame: bool = False) -> RepIntervals:
    """The intervals of every repetition of :func:`simulate` (same arguments, same draws)."""
    plan = _Plan(census, k=k, reps=reps, seed=seed, level=level, design=design, replicates=replicates,
                 frame=frame)
    blocks = list(plan.blocks())
    k = plan.unit_exp
    cat = lambda dicts: {m: np.concatenate([d[m] for d in dicts]) for m in dicts[0]}  # noqa: E731
    true = lambda d: {m: _micro.ldexp(v, -k) for m, v in d.items()} if k else d  # noqa: E731
    chunks = None
    if blocks[0].chunks is not None:
        chunks = cat([b.chunks for b in blocks])
    pieces = {}
    for m in blocks[0].pieces:
        offsets = np.cumsum([0] + [b.index.shape[0] for b in blocks[:-1]])
        pieces[m] = (np.concatenate([b.pieces[m][0] + off for b, off in zip(blocks, offsets)]),
                     _micro.ldexp(np.concatenate([b.pieces[m][1] for b in blocks]), -k),
                     _micro.ldexp(np.concatenate([b.pieces[m][2] for b in blocks]), -k))
    return RepIntervals(index=np.concatenate([b.index for b in blocks]),
                        seeds=np.concatenate([b.seeds for b in blocks]),
                        estimate=true(cat([b.estimate for b in blocks])), low=true(cat([b.low for b in blocks])),
                        high=true(cat([b.high for b in blocks])), chunks=chunks, pieces=pieces)


def recommend(methods: dict, level: float) -> tuple[dict, dict]:
    """Apply the recommendation rule (module docstring) to a ``methods`` mapping.

    Returns ``(recommended, notes)``, both keyed by estimand (``micro``, ``macro``).
    """
    rec, notes = {}, {}
    for est in ("micro", "macro"):
        names = [m for m in methods if m.split(".", 1)[0] == est]
        cands = [m for m in names if m not in BASELINES]
        if not cands:
            rec[est] = None
            notes[est] = Message("recommendation.none_applies", "no {estimand} method applies under this design",
                                 estimand=est)
            continue
        ok = [m for m in cands if methods[m]["coverage"] >= level - 2.0 * methods[m]["mc_se"]]
        if ok:
            def key(m):
                w = methods[m]["mean_width"]
                return (methods[m].get("out_of_range", 0.0) > 0, methods[m]["infinite"] > 0,
                        w if w == w else math.inf)
            best = min(ok, key=key)
            rec[est] = best
            notes[est] = _qualifies_note(methods, best, ok, level, est)
        else:
            best = max(cands, key=lambda m: methods[m]["coverage"])
            rec[est] = None
            notes[est] = _not_reached_note(methods[best], best, level, est)
    return rec, notes


def _qualifies_note(methods: dict, best: str, ok: list, level: float, est: str) -> Message:
    """Why ``best`` is recommended: its coverage, level and width, among the ``ok`` qualifying methods."""
    b = methods[best]
    if b.get("out_of_range", 0.0) > 0:
        tail = Message("recommendation.tail.all_left_range", "; every qualifying method left the metric's range "
                       "in some samples (this one in {share:.1%})", share=b["out_of_range"])
    elif any(methods[m].get("out_of_range", 0.0) > 0 for m in ok):
        tail = Message("recommendation.tail.others_left_range", "; qualifying methods whose intervals left the "
                       "metric's range rank after it")
    else:
        tail = ""
    args = dict(method=best, coverage=b["coverage"], mc_se=b["mc_se"], level=level, width=b["mean_width"],
                count=len(ok), estimand=est, tail=tail)
    text = ("{method}: coverage {coverage:.3f} (Monte Carlo se {mc_se:.3f}) is within 2 Monte Carlo se of the "
            "nominal {level:.3g}, and its mean width {width:.4g} is the smallest of the {count} qualifying "
            "{estimand} method(s){tail}")
    if len(ok) == 1:   # the same English; other languages say "the only qualifying method"
        del args["count"]
        return Message("recommendation.qualifies_only", text.replace("{count}", "1"), **args)
    return Message("recommendation.qualifies", text, **args)


def _not_reached_note(b: dict, best: str, level: float, est: str) -> Message:
    """Why nothing is recommended: the best available method ``best`` (its row ``b``) and what to do."""
    if b.get("no_interval", 0.0) < 0.5:
        why = Message("recommendation.why.too_narrow", "its intervals are too narrow, so sample more documents or "
                      "report it as approximate")
    else:
        why = Message("recommendation.why.no_interval", "it gave no interval in {share:.0%} of the samples "
                      "(samples without spread: every document at the same rate), so sample more documents",
                      share=b["no_interval"])
    return Message("recommendation.not_reached", "no {estimand} method reaches the nominal {level:.3g} within "
                   "Monte Carlo error (coverage >= level - 2 se) on samples like these; the best available is "
                   "{method} with coverage {coverage:.3f} (Monte Carlo se {mc_se:.3f}): {why}", estimand=est,
                   level=level, method=best, coverage=b["coverage"], mc_se=b["mc_se"], why=why)


# ====================================================================== plan and blocks
class _Plan:
    """Validated arguments, census arrays, method list and the random streams."""

    def __init__(self, census, *, k, reps, seed, level, design, replicates, frame=False):
        self.paired = isinstance(census, PairTable)
        if not isinstance(frame, bool):
            raise ParameterError(f"frame must be true or false (got {frame!r})")
        table = self._census_table(census)
        self._check_sizes(table, k=k, reps=reps, seed=seed, level=level, replicates=replicates)
        self.M = table.K
        self.binary = table.binary and not self.paired
        # metric bounded in [0, 1] (logit intervals; the calibrated intervals' base), per sample as
        # perdoc.estimate decides it on that sample; a difference: both systems bounded (atanh)
        from .estimate import metric_range
        self.kind = table.source.get("metric")
        self.source_binary = table.source.get("binary") if "binary" in table.source else None
        self.stored = (table.n, table.s, table.q)
        if self.paired:
            self.bounded = False
            self.pair_bounded = all(metric_range(census.system(x)) == (0.0, 1.0) for x in ("a", "b"))
        else:
            self.bounded = metric_range(table) == (0.0, 1.0)
            self.pair_bounded = False
        self._set_working_sums(table)
        # the census as the frame: the sizes of every population document (frame-aware methods)
        self.frame = _methods.FrameTotals(self.n) if (frame and not self.paired) else None
        self.truth = {"micro": float(self.s.sum() / self.n.sum()), "macro": float(np.mean(self.s / self.n))}
        self.notes: list[str] = []
        design = {"sampling": "srs"} if design is None else design
        if not isinstance(design, dict) or "sampling" not in design:
            raise ParameterError("design must be a mapping with a 'sampling' key (srs, stratified or two_stage)")
        self.sampling = design["sampling"]
        if self.paired and self.sampling != "srs":
            raise ParameterError("simulate_pairs supports simple random sampling only")
        if self.sampling == "srs":
            self._setup_srs(census, table, frame)
        elif self.sampling == "stratified":
            self._setup_stratified(design, table)
        elif self.sampling == "two_stage":
            self._setup_two_stage(design, table)
        else:
            raise ParameterError(f"design.sampling must be one of srs, stratified, two_stage (got {self.sampling!r})")
        self._set_streams()

    def _census_table(self, census) -> DocTable:
        """The census as one table: itself, or the per-document differences of a paired census."""
        if self.paired:
            if not census.paired:
                raise ParameterError("simulate_pairs needs paired data (both systems scored on every row)")
            return census.difference()
        if isinstance(census, DocTable):
            return census
        raise ParameterError("census must be a perdoc.DocTable (use perdoc.load_chunks or DocTable.from_arrays)")

    def _check_sizes(self, table, *, k, reps, seed, level, replicates) -> None:
        """Level, repetitions, seed, replicates and sample size checked (within the memory bounds) and kept."""
        self.level = _check_level(level)
        self.reps = _check_int("reps", reps, 1)
        if self.reps > MAX_REPS:
            raise ParameterError(f"reps must be at most {MAX_REPS:,} (got {self.reps:,}): every repetition keeps its "
                                 "widths and errors for an exact summary, and Monte Carlo error is already about "
                                 "0.0002 on a coverage at that size")
        self.seed = _check_int("seed", seed, 0)
        self.replicates = _check_replicates(replicates)
        self.k = _check_int("k", k, 2)
        if self.k > table.K:
            raise ParameterError(f"k = {self.k} must be below the number of census documents ({table.K})")
        if self.replicates * self.k > MAX_RESAMPLING_CELLS:
            raise ParameterError(f"replicates x k must be at most {MAX_RESAMPLING_CELLS:,} (got {self.replicates:,} x "
                                 f"{self.k:,}): each simulated sample holds its bootstrap and wild draws for every "
                                 "document, about 40 bytes per cell; use fewer replicates")

    def _set_working_sums(self, table) -> None:
        """The census's sums ``n, s, q`` on the working scale ``2^unit_exp`` the samples are computed on."""
        # compute on sums of about unit size (perdoc.micro.working_exponents); a 0/1 census is
        # brought back to its true sums, which are whole numbers (and the two-stage draws need them)
        n, s, q, scale = table.n, table.s, table.q, table.scale
        if table.binary and scale != 1.0:
            ks = _micro._exponent_of_power_of_two(scale)
            s, q, scale = _micro.ldexp(s, -ks), None if q is None else _micro.ldexp(q, -2 * ks), 1.0
        j, self.unit_exp = _micro.working_exponents(n, s, scale)
        if j:
            s, q = _micro.ldexp(s, j), None if q is None else _micro.ldexp(q, 2 * j)
        self.n, self.s, self.q = n, s, q

    def _set_streams(self) -> None:
        """The block size and the random streams: per-repetition bootstrap seeds, samples, chunk subsamples."""
        # with resampling (where the time goes), as many blocks as threads at least, of even size; the
        # blocks in flight together hold at most BLOCK_CELLS repetitions x replicates
        self.threads = workers() if self.replicates else 1
        most = max(1, min(MAX_BLOCK_REPS, BLOCK_CELLS // (max(1, self.replicates) * self.threads)))
        parts = -(-self.reps // most)
        if self.threads > 1:
            parts = -(-max(parts, self.threads) // self.threads) * self.threads
        self.block = max(1, -(-self.reps // parts))
        self.threads = min(self.threads, -(-self.reps // self.block))
        ss = np.random.SeedSequence(self.seed)
        seed_ss, sample_ss, chunk_ss = ss.spawn(3)
        self.rep_seeds = np.random.default_rng(seed_ss).integers(0, SEED_MAX, size=self.reps, dtype=np.int64)
        self.sample_rng = np.random.default_rng(sample_ss)
        self.chunk_rng = np.random.default_rng(chunk_ss)

    # ------------------------------------------------------------------ designs
    def _srs_methods(self, table) -> list[str]:
        micro = ["cr1", "cr2"] + (["cr2_ik"] if self.q is not None else []) + ["cr3", "jackknife_bc"]
        if self.binary:
            micro += list(_BOUNDED)
        elif not self.paired:
            self.notes.append("the intervals bounded to [0, 1] (Korn-Graubard, logit, Wilson) are for a binary "
                              "metric only and are left out")
        if self.bounded:
            micro += ["logit_cr2"]
        elif not self.paired:
            self.notes.append("the logit-scale intervals (logit_cr2, bootstrap_t_logit) are for a metric bounded in "
                              "[0, 1] and are left out")
        if self.paired:
            if self.pair_bounded:
                micro += ["atanh_cr2"]
            else:
                self.notes.append("the atanh-scale interval (atanh_cr2) is for a difference of two metrics bounded "
                                  "in [0, 1] and is left out")
        if self.replicates:
            micro += ["bootstrap_t", "percentile", "wild"]
            micro += (["bootstrap_t_logit"] if self.bounded else []) + ["calibrated"]
        if self.q is not None:
            micro += ["wald_iid", "wald_eff_n"]
        else:
            self.notes.append("the census has no sums of squared scores (q): CR2 with Imbens-Kolesar df and the "
                              "Wald baselines are left out")
        macro = ["t"] + (["bootstrap_t", "percentile", "calibrated"] if self.replicates else [])
        return [f"micro.{m}" for m in micro] + [f"macro.{m}" for m in macro]

    def _setup_srs(self, census, table, frame: bool) -> None:
        """Simple random sampling: the methods to simulate (the frame-aware ones with a frame) and the design."""
        if self.k >= self.M:
            raise ParameterError(f"k = {self.k} must be below the number of census documents ({self.M}); "
                                 "a sample of every document has no sampling error")
        self.methods = self._srs_methods(table)
        self.design = {"sampling": "srs", "population_size": self.M}
        if self.frame is not None:
            self.methods += [f"micro.{m}" for m in _methods.FRAME_METHODS
                             if self.bounded or not m.startswith("logit_")]
            self.design["frame"] = True
        elif frame:
            self.notes.append("the frame-aware methods are for one system's micro mean and are left out of a "
                              "paired difference")
        if self.paired:
            self.design.update({"paired": True, "difference": f"{census.names[0]} - {census.names[1]}"})

    def _setup_stratified(self, design, table):
        st = design.get("strata")
        if not isinstance(st, dict):
            raise ParameterError("a stratified design needs design.strata = {'by': labels, 'k': {label: k_h}}")
        by = st.get("by")
        if by is None:
            by = table.attrs.get("stratum")
        if by is None:
            raise ParameterError("design.strata.by must give the stratum of every census document")
        # grouped by sorting (O(M log M)), not one pass over the census per stratum
        names, inverse = _designs._stratum_index(by)
        if inverse.size != self.M:
            raise ParameterError(f"design.strata.by must hold one label per census document ({self.M}); "
                                 f"got {inverse.size}")
        kh = st.get("k")
        if not isinstance(kh, dict) or not kh:
            raise ParameterError("design.strata.k must map each stratum to its number of sampled documents")
        kh = {str(h): v for h, v in kh.items()}
        missing = [h for h in names if h not in kh]
        if missing:
            raise ParameterError(f"design.strata.k: stratum {missing[0]!r} of the census has no sample size; "
                                 "every stratum needs at least 2 sampled documents")
        present = set(names)
        unknown = [h for h in kh if h not in present]
        if unknown:
            raise ParameterError(f"design.strata.k: stratum {unknown[0]!r} is not in the census labels")
        self.strata = []
        for h, pos in zip(names, _designs._columns_by_stratum(inverse, len(names))):
            k_h = _check_int(f"design.strata.k.{h}", kh[h], 2)
            if k_h > pos.size:
                raise ParameterError(f"design.strata.k.{h} = {k_h} exceeds the {pos.size} census documents "
                                     "of that stratum")
            self.strata.append((h, pos, k_h))
        total = sum(x[2] for x in self.strata)
        if self.k != total:
            raise ParameterError(f"k = {self.k} must equal the sum of the stratum sample sizes ({total})")
        self.methods = ["micro.design", "macro.design"]
        self.design = {"sampling": "stratified", "population_size": self.M,
                       "strata": {h: {"M_h": int(pos.size), "k_h": k_h} for h, pos, k_h in self.strata}}
        self.notes.append("the simple-random-sampling methods ignore a stratified design and are not simulated")

    def _setup_two_stage(self, design, table):
        if not table.binary:
            raise ParameterError("a two-stage simulation needs a binary (0/1) census: the chunk subsample of a "
                                 "document is then hypergeometric given its chunks and hits; for other scores "
                                 "simulate from chunk-level data")
        if self.k >= self.M:
            raise ParameterError(f"k = {self.k} must be below the number of census documents ({self.M})")
        has_m, has_f = "chunks_per_doc" in design, "fraction" in design
        if has_m == has_f:
            raise ParameterError("a two-stage design needs exactly one of design.chunks_per_doc (chunks sampled "
                                 "per document) or design.fraction (share of each document's chunks)")
        if np.any(self.n != np.round(self.n)):
            raise ParameterError("a two-stage simulation needs whole chunk counts n in the census")
        Nd = self.n.astype(np.int64)
        if has_m:
            m = _check_int("design.chunks_per_doc", design["chunks_per_doc"], 2)
            self.m_d = np.minimum(Nd, m)
            self.design = {"sampling": "two_stage", "population_size": self.M, "chunks_per_doc": m}
        else:
            f = design["fraction"]
            if isinstance(f, bool) or not isinstance(f, numbers.Real) or not (0.0 < float(f) <= 1.0):
                raise ParameterError(f"design.fraction must be a number in (0, 1] (got {f!r})")
            f = float(f)
            self.m_d = np.minimum(Nd, np.maximum(2, np.ceil(f * Nd).astype(np.int64)))
            self.design = {"sampling": "two_stage", "population_size": self.M, "fraction": f,
                           "chunks_per_doc_rule": "min(N_d, max(2, ceil(fraction * N_d)))"}
        self.Nd = Nd
        self.methods = ["micro.design"]
        self.notes.append("two-stage design: no design-based macro interval is implemented")

    # ------------------------------------------------------------------ draws
    def _draw_index(self, b: int) -> np.ndarray:
        rng = self.sample_rng
        if self.sampling == "stratified":
            out = np.empty((b, self.k), dtype=np.int64)
            for i in range(b):
                j = 0
                for _, pos, k_h in self.strata:
                    out[i, j:j + k_h] = pos[rng.choice(pos.size, size=k_h, replace=False)]
                    j += k_h
            return out
        return np.stack([rng.choice(self.M, size=self.k, replace=False) for _ in range(b)]).astype(np.int64)

    def _bounded_rows(self, idx, n, s, q) -> np.ndarray:
        """Per sample: is the metric bounded in [0, 1], as perdoc.estimate.metric_range decides on it."""
        rows = idx.shape[0]
        if self.paired or self.kind == "score":
            return np.zeros(rows, dtype=bool)
        if self.kind in ("binary", "proportion"):
            return np.ones(rows, dtype=bool)
        if self.source_binary is not None:
            binary = np.full(rows, bool(self.source_binary))
        else:
            sn, ss, sq = self.stored
            binary = _methods.binary_by_sums(sn[idx], ss[idx], None if sq is None else sq[idx])
        return binary | _methods.bounded_by_sums(n, s, q, self.unit_exp)

    def blocks(self):
        """The repetitions' intervals, block by block in order (:class:`RepIntervals` per block).
        Samples and chunk subsamples are drawn here, in order; blocks are computed by
        :func:`workers` threads at once (numpy releases the interpreter lock in its array work),
        which changes no result: every repetition's intervals depend only on its sample and seed."""
        jobs = (self._block_args(start, min(self.block, self.reps - start))
                for start in range(0, self.reps, self.block))
        if self.threads <= 1:
            for args in jobs:
                yield self._compute(*args)
            return
        from collections import deque
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(self.threads, thread_name_prefix="perdoc-simulate") as pool:
            pending = deque()
            try:
                for args in jobs:
                    pending.append(pool.submit(self._compute, *args))
                    if len(pending) >= self.threads:
                        yield pending.popleft().result()
                while pending:
                    yield pending.popleft().result()
            finally:   # an error or an abandoned generator: drop what has not started
                for f in pending:
                    f.cancel()

    def _block_args(self, start: int, b: int) -> tuple:
        """The random draws of the block of ``b`` repetitions from ``start`` (taken in block order)."""
        idx = self._draw_index(b)
        seeds = self.rep_seeds[start:start + b]
        hits = None
        if self.sampling == "two_stage":
            S = self.s[idx].astype(np.int64)
            hits = self.chunk_rng.hypergeometric(S, self.Nd[idx] - S, self.m_d[idx]).astype(float)
        return idx, seeds, hits

    def _compute(self, idx, seeds, hits) -> RepIntervals:
        """Every method's intervals on the block's samples ``idx`` (and chunk hits ``hits``)."""
        n, s = self.n[idx], self.s[idx]
        q = None if self.q is None else self.q[idx]
        chunks = None
        if self.sampling == "srs":
            res = _srs_block(n, s, q, seeds, M=self.M, level=self.level, B=self.replicates,
                             binary=self.binary, methods=self.methods, unit_exp=self.unit_exp,
                             bounded=self._bounded_rows(idx, n, s, q), difference=self.paired,
                             pair_bounded=self.pair_bounded, frame=self.frame)
        elif self.sampling == "stratified":
            res = _stratified_block(n, s, [(pos.size, k_h) for _, pos, k_h in self.strata], self.level)
        else:
            m = self.m_d[idx]
            chunks = {"n": m.astype(float), "s": hits}
            res = _two_stage_block(m.astype(float), hits, self.Nd[idx].astype(float), self.M, self.level)
        est, low, high = res[:3]
        pieces = res[3] if len(res) > 3 else {}
        return RepIntervals(index=idx, seeds=seeds, estimate=est, low=low, high=high, chunks=chunks, pieces=pieces)

    def run(self, progress) -> SimulationResult:
        # counts are exact; widths and squared errors are kept per repetition and summed once with
        # math.fsum (correctly rounded), so the result does not depend on the block size
        # covered, none, infinite, finite, entirely below the truth, entirely above it, truth in a gap
        counts = {m: np.zeros(8, dtype=np.int64) for m in self.methods}
        # the range a bounded metric (or a difference of two) cannot leave, on the working scale
        rng_lim = None
        if self.bounded or self.pair_bounded:
            one = _micro.ldexp(1.0, self.unit_exp)
            rng_lim = (-one if self.pair_bounded else 0.0, one)
        gaps = set()
        widths = {m: [] for m in self.methods}
        sq_err = {m: [] for m in self.methods}
        done = 0
        for blk in self.blocks():
            for m in self.methods:
                truth = self.truth[m.split(".", 1)[0]]
                lo, hi, est = blk.low[m], blk.high[m], blk.estimate[m]
                none = np.isnan(lo) | np.isnan(hi)
                inf = ~none & (np.isinf(lo) | np.isinf(hi))
                fin = ~none & ~inf
                if m in blk.pieces:  # covered: the truth lies in one of the pieces
                    prow, plo, phi = blk.pieces[m]
                    cov = np.zeros(lo.size, dtype=bool)
                    cov[prow[(plo <= truth) & (truth <= phi)]] = True
                    gaps.add(m)
                else:
                    with np.errstate(invalid="ignore"):
                        cov = ~none & (lo <= truth) & (truth <= hi)
                # misses by side (a set of several pieces: its hull); a sample without an interval
                # counts in no_interval only
                with np.errstate(invalid="ignore"):
                    below = ~none & (hi < truth)
                    above = ~none & (lo > truth)
                gap = ~none & ~cov & ~below & ~above
                if rng_lim is not None:
                    with np.errstate(invalid="ignore"):
                        outside = ~none & ((lo < rng_lim[0]) | (hi > rng_lim[1]))
                else:
                    outside = np.zeros(lo.size, dtype=bool)
                counts[m] += [cov.sum(), none.sum(), inf.sum(), fin.sum(), below.sum(), above.sum(), gap.sum(),
                              outside.sum()]
                widths[m].append((hi - lo)[fin])
                err = est - truth
                sq_err[m].append(err * err)
            done += blk.index.shape[0]
            if progress is not None:
                progress(done, self.reps)
        R = float(self.reps)
        methods = {}
        for m in self.methods:
            cov, none, inf, nfin, below, above, gap, outside = (int(x) for x in counts[m])
            c = cov / R
            wsum = math.fsum(np.concatenate(widths[m]).tolist())
            sse = math.fsum(np.concatenate(sq_err[m]).tolist())
            methods[m] = {"coverage": c, "mc_se": math.sqrt(c * (1.0 - c) / R),
                          "mean_width": _micro.ldexp(wsum / nfin, -self.unit_exp) if nfin else float("nan"),
                          "rmse": _micro.ldexp(math.sqrt(sse / R), -self.unit_exp), "no_interval": none / R,
                          "infinite": inf / R, "n": self.reps, "miss_low": below / R, "miss_high": above / R,
                          "out_of_range": outside / R}
            if m in gaps:
                methods[m]["miss_gap"] = gap / R
        rec, notes = recommend(methods, self.level)
        if self.sampling == "two_stage":
            notes["macro"] = Message("recommendation.two_stage_macro", "no macro method under a two-stage design")
        truth = {m: _micro.ldexp(v, -self.unit_exp) for m, v in self.truth.items()}
        return SimulationResult(methods=methods, truth=truth, k=self.k, reps=self.reps, seed=self.seed,
                                level=self.level, design=self.design, recommended=rec, recommendation_notes=notes,
                                replicates=self.replicates if self.sampling == "srs" else 0,
                                notes=tuple(self.notes))


# ====================================================================== simple random sampling
def _srs_block(n, s, q, seeds, *, M, level, B, binary, methods, unit_exp=0, bounded=None, difference=False,
               pair_bounded=False, frame=None):
    """Every interval of ``perdoc.estimate(sample, population_size=M, replicates=B, seed=seed)``
    for each row of the (reps, k) arrays: the library's own batch implementation
    (:func:`perdoc.methods.srs_methods`), results brought to the working scale."""
    nb, K = n.shape
    fpc = math.sqrt(1.0 - K / M)
    res, _ = _methods.srs_methods(n, s, q, fpc=fpc, level=level, replicates=B, seeds=seeds, k=unit_exp,
                                  binary=binary, bounded=np.zeros(nb, dtype=bool) if bounded is None else bounded,
                                  difference=difference, pair_bounded=pair_bounded)
    if frame is not None:
        res.update(_methods.frame_methods(n, s, q, frame, alpha=1.0 - level,
                                          bounded=np.zeros(nb, dtype=bool) if bounded is None else bounded,
                                          k=unit_exp))
    est, low, high, pieces = {}, {}, {}, {}
    for name in methods:
        r = res[name]
        ts = r.true_scale
        if unit_exp and np.any(ts):  # true-scale results back to the working scale
            w = lambda x: np.where(ts, _micro.ldexp(x, unit_exp), x)  # noqa: E731
        else:
            w = lambda x: x  # noqa: E731
        est[name], low[name], high[name] = w(r.estimate), w(r.low), w(r.high)
        if "pieces" in r.extra:
            pieces[name] = r.extra["pieces"]
    return est, low, high, pieces


# ====================================================================== other designs
def _stratified_block(n, s, strata, level):
    """perdoc.designs.stratified for every row (:func:`perdoc.designs.stratified_batch`); columns
    are grouped by stratum in sorted order."""
    nb, K = n.shape
    groups, j = [], 0
    for M_h, k_h in strata:
        groups.append((M_h, np.arange(j, j + k_h)))
        j += k_h
    Rc, se_micro, macro, se_macro, df = _designs.stratified_batch(n, s, groups)
    alpha = 1 - level
    flat = np.zeros(nb, dtype=bool)
    dfs = np.full(nb, df)
    mi = _methods.t_interval(Rc, se_micro, dfs, alpha, flat)[:2]
    ma = _methods.t_interval(macro, se_macro, dfs, alpha, flat)[:2]
    return ({"micro.design": Rc, "macro.design": macro}, {"micro.design": mi[0], "macro.design": ma[0]},
            {"micro.design": mi[1], "macro.design": ma[1]})


def _two_stage_block(n, s, Nd, M, level):
    """perdoc.designs.two_stage for every row (binary scores: q = s; :func:`perdoc.designs.two_stage_batch`)."""
    nb, K = n.shape
    R2, se = _designs.two_stage_batch(n, s, s, Nd, M)
    lo, hi = _methods.t_interval(R2, se, np.full(nb, K - 1.0), 1 - level, np.zeros(nb, dtype=bool))[:2]
    return {"micro.design": R2}, {"micro.design": lo}, {"micro.design": hi}


# ====================================================================== threads
THREADS_ENV = "PERDOC_THREADS"
MAX_THREADS = 4


def workers() -> int:
    """Threads a simulation computes its blocks with: ``PERDOC_THREADS`` when set (1 computes in
    the calling thread only), else the processors this process may use, at most :data:`MAX_THREADS`."""
    import os
    text = os.environ.get(THREADS_ENV, "").strip()
    if text:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise ParameterError(f"{THREADS_ENV} must be a whole number of threads, 1 or more (got {text!r})")
        return value
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_THREADS, cpus))


# ====================================================================== validation
def _check_int(name, x, minimum):
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < minimum:
        raise ParameterError(f"{name} must be an integer of at least {minimum} (got {x!r})")
    return int(x)


def _check_level(level):
    from .estimate import check_level
    return check_level(level)


def _check_replicates(replicates):
    from .estimate import check_replicates
    return check_replicates(replicates)
