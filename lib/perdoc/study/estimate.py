"""Single-system estimates: both estimands, every interval method of methods.md.

:func:`estimate` is the one entry point the CLI, the notebooks and the API share.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import replace

import numpy as np

from ..methods import micro as _micro
from ..methods import intervals as _methods
from ..methods.bootstrap import BootstrapDraws
from ..methods.diagnostics import diagnose
from ..errors import InputError, ParameterError
from ..methods.macro import macro_mean
from ..methods.results import LEVEL_MAX, LEVEL_MIN, ConfidenceInterval, Estimates, Interval, check_level  # noqa: F401
from ..messages import Message
from ..reading.table import DocTable

__all__ = ["estimate", "estimate_design", "DEFAULT_REPLICATES", "DEFAULT_SEED", "MAX_REPLICATES",
           "MAX_POPULATION_SIZE", "LEVEL_MIN", "LEVEL_MAX"]

DEFAULT_REPLICATES = 9999
DEFAULT_SEED = 1

#: Bootstrap replicates and wild draws are held in memory: about 400 bytes per replicate (the
#: replicate statistics, the wild bootstrap's per-draw sums and the roots of its test inversion),
#: so the bound keeps one call within about 400 MB; by then the Monte Carlo error of the tail
#: probability at an interval's end is below 0.0002.
MAX_REPLICATES = 1_000_000
#: Whole numbers beyond 2^53 are not exact in double precision (nor in JSON readers).
MAX_POPULATION_SIZE = 2**53
_BOUNDED_METHODS = ("korn_graubard", "logit", "wilson")

FPC_HEURISTIC = Message("note.fpc_heuristic", "finite population correction (1 - K/M) applied to a method it "
                        "was not derived for: a heuristic")


def estimate(table: DocTable, *, level: float = 0.95, population_size: int | None = None,
             replicates: int = DEFAULT_REPLICATES, seed: int | None = DEFAULT_SEED, frame=None) -> Estimates:
    """Estimate the micro and macro means of one system with every interval method.

    Parameters
    ----------
    table : DocTable
        Per-document sums (see :func:`perdoc.load_chunks`).
    level : float
        Confidence level, strictly between 0 and 1.
    population_size : int, optional
        M, the number of documents in the population the K documents were drawn from without
        replacement. Multiplies every variance by ``1 - K/M``.
    replicates : int
        Document bootstrap replicates; 0 skips the bootstrap.
    seed : int, optional
        Seed of the bootstrap's random generator (numpy ``default_rng``).
    frame : perdoc.frame.Frame, optional
        The size of every population document (:func:`perdoc.frame.read_frame`). Adds the
        frame-aware micro methods ``frame_ratio``, ``frame_loglinear``, ``frame_rank`` and their
        logit-scale ``logit_frame_*`` (a metric bounded in [0, 1];
        :func:`perdoc.methods.frame_prediction`); ``population_size`` defaults to the frame's
        number of documents (and must equal it when given). Every sampled document must be in the
        frame with the same size.
    """
    return _estimate(table, level=level, population_size=population_size, replicates=replicates, seed=seed,
                     frame=frame)


def working_table(table: DocTable) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """``(n, s, q, k)``: the sums the estimators compute on, ``2^k`` times the true ones
    (:func:`perdoc.micro.working_exponents`); ``s`` and ``q`` are the stored arrays themselves
    when no rescaling is needed."""
    j, k = _micro.working_exponents(table.n, table.s, table.scale)
    s = table.s if j == 0 else _micro.ldexp(table.s, j)
    q = table.q if (table.q is None or j == 0) else _micro.ldexp(table.q, 2 * j)
    return table.n, s, q, k


def metric_range(table: DocTable, n=None, s=None, q=None, k: int = 0) -> tuple[float, float] | None:
    """``(0, 1)`` when the metric is bounded, else None.

    Bounded: the loader's ``source["metric"]`` is ``binary`` or ``proportion`` (it saw every score);
    without it, a 0/1 metric (:attr:`DocTable.binary`), or every rate in [0, 1] with sums of squares
    that scores in [0, 1] can give (``q_d <= s_d``, since ``x^2 <= x`` there). Sums cannot prove that
    every score lies in [0, 1]; this is the check they allow. ``n, s, q, k`` are the working sums of
    :func:`working_table` (the table's own when omitted).
    """
    kind = table.source.get("metric")
    if kind in ("binary", "proportion"):  # the loader saw every score (or checked a declaration)
        return (0.0, 1.0)
    if kind == "score":
        return None
    if s is None:
        n, s, q, k = working_table(table)
    if table.binary:
        return (0.0, 1.0)
    if q is None:
        return None
    # the same check the coverage simulation runs on each sample
    return (0.0, 1.0) if bool(_methods.bounded_by_sums(n, s, q, k)) else None


def _estimate(table: DocTable, *, level, population_size, replicates, seed, bounds="auto",
              difference: bool = False, frame=None) -> Estimates:
    """:func:`estimate`; ``bounds`` is the metric's range (``"auto"``: from the table);
    ``difference``: the table holds paired differences of two systems (:func:`perdoc.compare`)."""
    if frame is not None:
        population_size = _check_frame(table, frame, population_size)
    level, population_size, replicates, seed = _validate(table, level, population_size,
                                                         replicates, seed)
    n, s, q, k = working_table(table)
    mrange = metric_range(table, n, s, q, k) if bounds == "auto" else bounds
    K, N = table.K, table.N
    f = 0.0 if population_size is None else K / population_size
    census = population_size is not None and population_size == K
    flat_reason = _flat_reason(s / n, k)
    ctx = _Ctx(level=level, alpha=1.0 - level, fpc=math.sqrt(1.0 - f), census=census, flat_reason=flat_reason)

    # every method on a batch of one sample: the implementation the coverage simulation runs
    res, batch_draws = _methods.srs_methods(
        n[None, :], s[None, :], None if q is None else q[None, :], fpc=ctx.fpc, level=level, replicates=replicates,
        seeds=[seed], k=k, binary=table.binary, bounded=mrange == (0.0, 1.0), difference=difference,
        pair_bounded=mrange == (-1.0, 1.0), wild=False)
    R = float(res["micro.cr1"].estimate[0])
    rbar = float(res["macro.t"].estimate[0])
    true_scale = set()  # intervals computed on the true scale (they transform the estimate)
    draws = None
    if replicates > 0:
        draws = BootstrapDraws(**{key: v[0] for key, v in batch_draws.items()})
    fpc_note = (FPC_HEURISTIC,) if population_size is not None else ()
    intervals = _intervals(ctx, res, n, s, q, k=k, R=R, N=N, replicates=replicates, seed=seed, mrange=mrange,
                           difference=difference, frame=frame, fpc_note=fpc_note, true_scale=true_scale)
    diag = diagnose(n, s, q, float(res["micro.cr1"].extra["variance"][0]), unit_exp=k,
                    icc=None if q is None else float(np.asarray(res["micro.wald_eff_n"].extra["icc"])[0]))
    notes = _notes(table, census, population_size, f, flat_reason)
    intervals = [_finish(iv, k, mrange, (iv.estimand, iv.method) in true_scale) for iv in intervals]
    if draws is not None and k != 0:
        draws = _true_scale_draws(draws, k)
    out = Estimates(K=K, N=N, level=level, population_size=population_size,
                    micro_estimate=_micro.ldexp(R, -k), macro_estimate=_micro.ldexp(rbar, -k),
                    intervals=tuple(intervals), diagnostics=diag, replicates=replicates, seed=seed,
                    notes=tuple(notes), bootstrap={} if draws is None else {"draws": draws},
                    metric_range=mrange,
                    frame_tail=None if frame is None or census else frame.tail(np.asarray(table.n, dtype=float)))
    return _with_primary(out, difference=mrange is not None and tuple(mrange) == (-1.0, 1.0))


def _flat_reason(r, k: int) -> str | None:
    """Why no document-level interval exists when every document has the same rate ``r`` (working
    scale ``2^k``), else None."""
    if not bool(np.all(r == r[0])):
        return None
    return Message("reason.flat_rate", "zero variance: every document has the same rate ({rate:.6g}), so the "
                   "documents carry no information about sampling error", rate=float(_micro.ldexp(r[0], -k)))


def _intervals(ctx: _Ctx, res, n, s, q, *, k: int, R: float, N: float, replicates: int, seed, mrange,
               difference: bool, frame, fpc_note: tuple, true_scale: set) -> list[Interval]:
    """Every interval of one sample from its batch results ``res``, in the order reports list them:
    micro (analytic, bounded, frame, bootstrap), the contrast baselines, then macro. The names of the
    intervals computed on the true scale are added to ``true_scale``."""
    new = lambda name: ctx.batch(name, res[name], R=R, replicates=replicates, notes=fpc_note,  # noqa: E731
                                 true_scale=true_scale)

    intervals = [
        ctx.t("micro", "cr1", "CR1, t with K-1 df", res["micro.cr1"], role="alternative"),
        ctx.t("micro", "cr2", "CR2, Bell-McCaffrey df", res["micro.cr2"], role="primary", notes=fpc_note),
    ]
    if q is not None:
        intervals.append(ctx.t("micro", "cr2_ik", "CR2, Imbens-Kolesar df", res["micro.cr2_ik"],
                               role="alternative", notes=fpc_note))
    intervals.append(ctx.t("micro", "cr3", "CR3 (jackknife), t with K-1 df", res["micro.cr3"],
                           role="alternative", notes=fpc_note))
    intervals.append(new("micro.jackknife_bc"))
    # the bounded and transformed intervals are computed on the true scale (they transform p); the
    # others on the working scale and divided back below
    intervals += ctx.bounded(res)
    intervals.append(new("micro.atanh_cr2" if difference else "micro.logit_cr2"))

    if frame is not None:
        fres = _methods.frame_methods(n[None, :], s[None, :], None if q is None else q[None, :], frame.totals,
                                      alpha=ctx.alpha, bounded=mrange == (0.0, 1.0), k=k)
        frame_note = (Message("note.frame", "frame: {M:,} population documents, {N:,.0f} chunks", M=frame.M,
                              N=frame.N),)
        intervals += [ctx.batch(name, fres[name], R=R, replicates=replicates, notes=frame_note,
                                true_scale=true_scale) for name in fres]

    if replicates > 0:
        intervals += [
            ctx.boot_t("micro", res["micro.bootstrap_t"], replicates, "bootstrap-t by document (replicate CR1)"),
            ctx.percentile("micro", res["micro.percentile"], replicates),
            ctx.wild(n, s, R, replicates, seed),
        ]
        intervals += [new(m) for m in ("micro.bootstrap_t_logit", "micro.calibrated") if m in res]

    # contrast baselines
    intervals += _baselines(ctx, res, q is not None, N)

    # macro
    intervals.append(ctx.t("macro", "t", "t on document rates, K-1 df", res["macro.t"], role="primary"))
    if replicates > 0:
        intervals += [
            ctx.boot_t("macro", res["macro.bootstrap_t"], replicates,
                       "bootstrap-t by document (replicate sd/sqrt(K))"),
            ctx.percentile("macro", res["macro.percentile"], replicates),
            new("macro.calibrated"),
        ]
    return intervals


def _notes(table: DocTable, census: bool, population_size, f: float, flat_reason: str | None) -> list[str]:
    """The notes of an estimate: the table's own, then what the population size and a flat sample imply."""
    notes = list(table.notes)
    if census:
        notes.append(Message("note.census", "census: the K documents are the whole population (K = M), so there "
                             "is no sampling error and every interval is the estimate itself"))
    elif population_size is not None:
        notes.append(Message("note.fpc_applied", "finite population correction applied: variances times "
                             "1 - K/M = {factor:.6g}", factor=1 - f))
    if flat_reason is not None:
        notes.append(flat_reason)
    return notes


def _true_scale_draws(draws: BootstrapDraws, k: int) -> BootstrapDraws:
    """Bootstrap draws of the working scale ``2^k`` brought back to the true scale."""
    return BootstrapDraws(micro=_micro.ldexp(draws.micro, -k), micro_se=_micro.ldexp(draws.micro_se, -k),
                          macro=_micro.ldexp(draws.macro, -k), macro_se=_micro.ldexp(draws.macro_se, -k),
                          degenerate=draws.degenerate,
                          micro_se_cr2=_micro.ldexp(draws.micro_se_cr2, -k), micro_df=draws.micro_df)


def _check_frame(table: DocTable, frame, population_size):
    """The population size a frame implies (checked against one given), after checking that the
    sample fits the frame (:meth:`perdoc.frame.Frame.check`)."""
    from ..reading.frame import Frame
    if not isinstance(frame, Frame):
        raise ParameterError("frame must be a perdoc.frame.Frame (use perdoc.frame.read_frame or Frame.from_arrays)")
    frame.check(table)
    if population_size is not None and not isinstance(population_size, bool) and population_size != frame.M:
        raise ParameterError(f"population size M = {population_size} differs from the {frame.M:,} documents of "
                             f"{frame.label}; leave it out (the frame gives M) or give the frame's count")
    return frame.M if population_size is None else population_size


def _with_primary(est: Estimates, *, difference: bool) -> Estimates:
    """Mark as ``primary`` the interval the coverage panel supports as the default for each estimand
    (:func:`perdoc.policy.default_method`); the others keep ``alternative`` (baselines stay baselines)."""
    from .policy import default_method, with_lead
    return with_lead(est, {kind: default_method(est, kind, difference=difference) for kind in ("micro", "macro")})


def _finish(iv: Interval, k: int, mrange, true_scale: bool = False) -> Interval:
    """Back to the true scale (the bounded and transformed intervals already are) and the metric's
    range attached."""
    if iv.method not in _BOUNDED_METHODS and not true_scale:
        iv = iv.rescaled(k)
    return iv if mrange is None else replace(iv, metric_range=tuple(mrange))


def _degenerate(name, est):
    if name == "micro.bootstrap_t_logit":
        return Message("reason.all_degenerate_logit", "every bootstrap replicate is degenerate (all drawn documents "
                       "share one rate, or its micro mean is 0 or 1)")
    return Message("reason.all_degenerate", "every bootstrap replicate is degenerate (all drawn documents share one "
                   "rate)")


def _at_bounds(name, est):
    if name == "micro.atanh_cr2":
        return Message("reason.atanh_bounds", "the atanh scale is undefined at a difference of -1 or 1 (the "
                       "difference is {difference:.6g}): no interval", difference=est)
    return Message("reason.logit_bounds", "the logit scale is undefined at a rate of 0 or 1 (the micro mean is "
                   "{mean:.6g}): no interval", mean=est)


def _not_applicable(name, est):
    if name == "micro.atanh_cr2":
        return Message("reason.bounded_difference_only", "defined for differences of two metrics bounded in [0, 1]")
    return Message("reason.bounded_only", "defined for metrics bounded in [0, 1]")


#: Why a batch result (by its code, other than OK and FLAT) has no interval: (method name, estimate) -> Message.
_CODE_REASONS = {
    _methods.ZERO_SE: lambda name, est: Message("reason.zero_se", "zero standard error: no interval"),
    _methods.BAD_DF: lambda name, est: Message("reason.bad_df", "degrees of freedom undefined for this sample"),
    _methods.ALL_DEGENERATE: _degenerate,
    _methods.NO_SPREAD: lambda name, est: Message(
        "reason.no_spread", "the studentised bootstrap distribution has no spread (with so few documents every "
        "usable replicate gives the same t): no interval"),
    _methods.AT_BOUNDS: _at_bounds,
    _methods.UNBOUNDED: lambda name, est: Message(
        "reason.calibrated_unbounded", "the interval is unbounded on one side (a calibrated tail probability is 0 "
        "or 1: no replicate's studentised root reaches past the estimate on that side)"),
    _methods.NOT_IDENTIFIED: lambda name, est: Message(
        "reason.same_size", "every sampled document has the same size, so the trend of the rate in size cannot be "
        "estimated: no interval"),
    _methods.NOT_APPLICABLE: _not_applicable,
}


class _Ctx:
    """What every interval of one call shares: level, FPC factor, census and degeneracy flags."""

    def __init__(self, level, alpha, fpc, census, flat_reason):
        self.level, self.alpha, self.fpc = level, alpha, fpc
        self.census, self.flat_reason = census, flat_reason

    def t(self, estimand, method, label, res, *, role, notes=()) -> Interval:
        """A t interval from its batch result (:func:`perdoc.methods.t_interval`)."""
        est, se, df = _row(res.estimate), _row(res.se), _row(res.df)
        reason, ci = self._reason_or_ci(f"{estimand}.{method}", res, est)
        return Interval(estimand=estimand, method=method, label=label, estimate=est, level=self.level,
                        se=se, df=df, ci=ci, reason=reason, role=role, notes=tuple(notes))

    def z(self, estimand, method, label, res, *, notes=(), extra=None) -> Interval:
        """A contrast baseline from its batch result (:func:`perdoc.methods.z_interval`)."""
        est, se, code = _row(res.estimate), _row(res.se), int(res.code[0])
        reason, ci = None, None
        if code == _methods.NO_VARIANCE:
            reason = notes[0] if notes else Message("reason.no_variance", "no variance")
            se = None
        elif self.census:
            ci = ConfidenceInterval(est, est)
        elif code == _methods.OK:
            ci = ConfidenceInterval(_row(res.low), _row(res.high))
        else:
            reason = Message("reason.zero_chunk_variance", "zero chunk-level variance: every score is the same")
        return Interval(estimand=estimand, method=method, label=label, estimate=est, level=self.level,
                        se=se, ci=ci, reason=reason, role="baseline", notes=tuple(notes),
                        extra=extra or {})

    def bounded(self, res) -> list[Interval]:
        """Korn-Graubard, logit and Wilson intervals (binary metric only), as survey::svyciprop, from
        their batch results (true scale)."""
        out = []
        for method, label in (("korn_graubard", "Korn-Graubard (beta), in [0, 1]"),
                              ("logit", "logit, in [0, 1]"),
                              ("wilson", "Wilson with effective n, in [0, 1]")):
            r = res[f"micro.{method}"]
            p = _row(r.estimate)
            ci, reason, notes, extra, role = None, None, (), {}, "alternative"
            if int(r.code[0]) == _methods.NOT_APPLICABLE:
                reason = Message("reason.binary_only", "defined for a binary (0/1) metric only")
            elif self.census:
                ci = ConfidenceInterval(p, p)
            else:
                fallback = bool(r.extra["fallback"][0])
                ci = ConfidenceInterval(_row(r.low), _row(r.high))
                extra = {"fallback": fallback}
                if fallback:
                    # counts every measurement as an independent case, like the iid baseline: shown to
                    # warn, never a headline (the documents carry no estimate of sampling error here)
                    role = "baseline"
                    notes = (Message("note.bounded_fallback", "the rate is 0 or 1, or its variance is 0, so this "
                                     "method is undefined; fallback used: effective n = N and the Clopper-Pearson "
                                     "interval (Parker et al. 2017), which treats every measurement as an "
                                     "independent case"),)
            out.append(Interval(estimand="micro", method=method, label=label, estimate=p, level=self.level,
                                se=_row(r.se), df=_row(r.df), ci=ci, reason=reason, role=role,
                                notes=notes, extra=extra))
        return out

    def boot_t(self, estimand, res, replicates, label) -> Interval:
        """A bootstrap-t interval by document from its batch result."""
        est, se = _row(res.estimate), _row(res.se)
        extra = {"replicates": replicates, "degenerate_fraction": _row(res.extra["degenerate_fraction"])}
        reason, ci = self._reason_or_ci(f"{estimand}.bootstrap_t", res, est)
        return Interval(estimand=estimand, method="bootstrap_t", label=label, estimate=est,
                        level=self.level, se=se, ci=ci, reason=reason, role="alternative",
                        resampling_unit="document",
                        notes=(FPC_HEURISTIC,) if self.fpc < 1 else (), extra=extra)

    def percentile(self, estimand, res, replicates) -> Interval:
        """A percentile bootstrap interval by document from its batch result."""
        est = _row(res.estimate)
        reason, ci = self._reason_or_ci(f"{estimand}.percentile", res, est)
        return Interval(estimand=estimand, method="percentile", label="percentile bootstrap by document",
                        estimate=est, level=self.level, ci=ci, reason=reason, role="alternative",
                        resampling_unit="document",
                        notes=(FPC_HEURISTIC,) if self.fpc < 1 else (), extra={"replicates": replicates})

    _LABELS = {
        "micro.jackknife_bc": "jackknife bias-corrected ratio, jackknife se, t with K-1 df",
        "micro.logit_cr2": "logit scale, CR2 se, Bell-McCaffrey df, in [0, 1]",
        "micro.atanh_cr2": "atanh scale, CR2 se, Bell-McCaffrey df, in [-1, 1]",
        "micro.bootstrap_t_logit": "bootstrap-t on the logit scale by document (replicate CR1), in [0, 1]",
        ("micro.calibrated", True): "bootstrap-calibrated (prepivoted) logit CR2, Bell-McCaffrey df, in [0, 1]",
        ("micro.calibrated", False): "bootstrap-calibrated (prepivoted) CR2, Bell-McCaffrey df",
        ("macro.calibrated", True): "bootstrap-calibrated (prepivoted) t on the logit of the macro mean, in [0, 1]",
        ("macro.calibrated", False): "bootstrap-calibrated (prepivoted) t on document rates, K-1 df",
        "micro.frame_ratio": "frame: prediction, ratio model, HC2 se, Bell-McCaffrey df",
        "micro.frame_loglinear": "frame: prediction, rate linear in log size, HC2 se, Bell-McCaffrey df",
        "micro.logit_frame_ratio": "frame: prediction, ratio model, HC2 se, Bell-McCaffrey df, logit scale, in [0, 1]",
        "micro.logit_frame_loglinear": ("frame: prediction, rate linear in log size, HC2 se, Bell-McCaffrey df, "
                                        "logit scale, in [0, 1]"),
        "micro.frame_rank": "frame: prediction, rate linear in the size's rank in the frame, HC2 se, Bell-McCaffrey df",
        "micro.logit_frame_rank": ("frame: prediction, rate linear in the size's rank in the frame, HC2 se, "
                                   "Bell-McCaffrey df, logit scale, in [0, 1]"),
        "micro.greg": "frame: GREG (calibrated to the frame's documents and chunks), design-based se, K-2 df",
        "micro.logit_greg": ("frame: GREG (calibrated to the frame's documents and chunks), design-based se, "
                             "K-2 df, logit scale, in [0, 1]"),
    }

    def _reason_or_ci(self, name: str, res, est: float) -> tuple[str | None, ConfidenceInterval | None]:
        """``(reason, ci)`` of an interval read from its batch result: in a census the estimate itself,
        else the batch's interval, or the reason there is none (:meth:`_reason`)."""
        if self.census:
            return None, ConfidenceInterval(est, est)
        reason = self._reason(name, int(res.code[0]), est)
        return reason, (ConfidenceInterval(_row(res.low), _row(res.high)) if reason is None else None)

    def _reason(self, name: str, code: int, est: float) -> str | None:
        M = _methods
        if code == M.OK:
            return None
        if code == M.FLAT:
            return self.flat_reason
        if code not in _CODE_REASONS:
            raise AssertionError(code)
        return _CODE_REASONS[code](name, est)

    def batch(self, name: str, res, *, R: float, replicates: int, notes=(), true_scale: set) -> Interval:
        """The Interval of row 0 of a batch result (:mod:`perdoc.methods`)."""
        estimand, method = name.split(".", 1)
        f = lambda x: None if x is None else float(np.asarray(x)[0])  # noqa: E731
        ts = bool(np.asarray(res.true_scale).reshape(-1)[0]) if np.ndim(res.true_scale) else bool(res.true_scale)
        if ts:
            true_scale.add((estimand, method))
        code = int(res.code[0])
        est, se, df = f(res.estimate), f(res.se), f(res.df)
        extra, out_notes = {}, list(notes)
        ci = None
        if code == _methods.NOT_APPLICABLE:
            reason = self._reason(name, code, est)
            se = df = None
        elif self.census:
            reason = None
            if method == "jackknife_bc":  # the census ratio is the estimand itself: nothing to correct
                est = R
                out_notes.append(Message("note.census_ratio", "census: the estimate is the ratio itself (no bias "
                                         "to correct)"))
            ci = ConfidenceInterval(est, est)
        else:
            reason = self._reason(name, code, est)
            if code == _methods.OK:
                ci = ConfidenceInterval(f(res.low), f(res.high))
        for key, value in res.extra.items():
            if code == _methods.NOT_APPLICABLE:
                break
            v = np.asarray(value)[0]
            if key == "base":
                extra["base"] = ("logit_cr2" if v else "cr2") if estimand == "micro" else ("logit_t" if v else "t")
            elif key in ("calibrated_low", "calibrated_high"):
                if ci is not None and not self.census and math.isfinite(float(v)):
                    extra.setdefault("calibrated_levels", [None, None])[key == "calibrated_high"] = float(v)
            elif key in ("se_logit", "se_atanh", "slope"):
                if math.isfinite(float(v)):
                    extra[key] = float(v)
            else:
                extra[key] = float(v)
        if "degenerate_fraction" in extra:
            extra = {"replicates": replicates, **extra}
        label = self._LABELS.get(name) or self._LABELS[(name, extra.get("base") in ("logit_cr2", "logit_t"))]
        if method in ("calibrated", "bootstrap_t_logit"):
            unit = "document"
        else:
            unit = "none (analytic)"
        return Interval(estimand=estimand, method=method, label=label, estimate=est, level=self.level,
                        se=se, df=df, ci=ci, reason=reason, role="alternative", resampling_unit=unit,
                        notes=tuple(out_notes), extra=extra)

    def wild(self, n, s, est, replicates, seed) -> Interval:
        """Wild cluster restricted bootstrap confidence set (test inversion) for the micro mean:
        ``ci`` is its hull, ``extra["pieces"]`` its pieces (more than one when it is not an interval)."""
        from ..methods.wild import wild_interval
        w = wild_interval(n, s, level=self.level, B=replicates, seed=seed)
        extra = {"weights": w.weights, "enumerated": w.enumerated, "draws": w.draws,
                 "whole_line": w.whole_line, "min_p": w.min_p}
        ci, reason, notes = None, None, []
        if self.census:
            ci = ConfidenceInterval(est, est)
            extra.update(pieces=[(est, est)], connected=True)
        elif self.flat_reason is not None:
            reason = self.flat_reason
        elif w.whole_line:
            reason = Message("reason.wild_whole_line", "with K = {K} documents and {weights} weights no value can "
                             "be rejected at this level (smallest attainable p = {p:.4g}): the interval is the "
                             "whole real line", K=len(n), weights=w.weights, p=w.min_p)
        elif w.low is None or w.high is None:
            reason = Message("reason.unbounded", "the interval is unbounded on one side")
        else:
            pieces = [(_methods.shrink(est, lo, self.fpc), _methods.shrink(est, hi, self.fpc)) for lo, hi in w.pieces]
            ci = ConfidenceInterval(pieces[0][0], pieces[-1][1])
            extra.update(pieces=pieces, connected=w.connected)
            if not w.connected:
                notes.append(Message("note.wild_pieces", "the values the test does not reject are not an interval: "
                                     "{pieces} separate pieces (see pieces); ci is their hull, the smallest interval "
                                     "holding them all", pieces=len(pieces)))
        extra.setdefault("pieces", None)
        extra.setdefault("connected", True)
        if self.fpc < 1:
            notes.append(FPC_HEURISTIC)
        return Interval(estimand="micro", method="wild", label=f"wild cluster bootstrap ({w.weights})",
                        estimate=est, level=self.level, ci=ci, reason=reason, role="alternative",
                        resampling_unit="document (weights)", notes=tuple(notes), extra=extra)


def _row(x):
    """Row 0 of a batch result as a float (None stays None)."""
    return None if x is None else float(np.asarray(x).reshape(-1)[0])


def _baselines(ctx: _Ctx, res, has_q: bool, N: float) -> list[Interval]:
    """Wald iid (every chunk a case) and Wald with effective n = N / DEFF: shown to warn only."""
    if not has_q:
        why = (Message("reason.needs_q", "needs the sums of squared scores (q)"),)
        R = _row(res["micro.cr1"].estimate)
        return [Interval(estimand="micro", method=m, label=label, estimate=R, level=ctx.level, reason=why[0],
                         role="baseline", notes=why)
                for m, label in (("wald_iid", "Wald iid (chunks as cases)"),
                                 ("wald_eff_n", "Wald, effective n = N/DEFF"))]
    iid = ctx.z("micro", "wald_iid", "Wald iid (chunks as cases)", res["micro.wald_iid"],
                notes=(Message("note.baseline_iid", "contrast baseline: treats every chunk as an independent "
                               "case"),), extra={"n": N})
    r = res["micro.wald_eff_n"]
    if int(r.code[0]) != _methods.NO_VARIANCE:
        eff = ctx.z("micro", "wald_eff_n", "Wald, effective n = N/DEFF", r,
                    notes=(Message("note.baseline_eff_n", "contrast baseline: N/DEFF used as if it were "
                                   "independent cases"),),
                    extra={"n_eff": _row(r.extra["n_eff"])})
    else:
        eff = ctx.z("micro", "wald_eff_n", "Wald, effective n = N/DEFF", r,
                    notes=(Message("reason.eff_n_undefined", "effective n undefined (design effect not positive "
                                   "or not available)"),))
    return [iid, eff]


def _validate(table, level, population_size, replicates, seed):
    """The one validator of :func:`estimate`: returns normalised arguments or raises ParameterError."""
    if not isinstance(table, DocTable):
        raise ParameterError("table must be a perdoc.DocTable (use perdoc.load_chunks or DocTable.from_arrays)")
    level = check_level(level)
    replicates = check_replicates(replicates)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ParameterError(f"seed must be a non-negative integer (got {seed!r})")
    if population_size is not None:
        population_size = check_population_size(population_size)
        if population_size < table.K:
            raise ParameterError(f"population size M = {int(population_size)} is below the number of sampled "
                                 f"documents K = {table.K}; M must be at least K")
        population_size = int(population_size)
    return float(level), population_size, int(replicates), None if seed is None else int(seed)


def check_replicates(replicates, name: str = "replicates") -> int:
    """Bootstrap replicates: 0, or 2 .. MAX_REPLICATES; else ParameterError naming the rule."""
    if isinstance(replicates, bool) or not isinstance(replicates, numbers.Integral) or replicates < 0:
        raise ParameterError(f"{name} must be a non-negative integer (got {replicates!r})")
    if replicates == 1:
        raise ParameterError(f"{name} must be 0 (no bootstrap) or at least 2 (got 1)")
    if replicates > MAX_REPLICATES:
        raise ParameterError(f"{name} must be at most {MAX_REPLICATES:,} (got {replicates:,}): the bootstrap and "
                             "wild draws are held in memory, about 400 bytes per replicate (400 MB at the bound), "
                             "where the Monte Carlo error of the tail probability at an interval's end is "
                             "already below 0.0002")
    return int(replicates)


def check_population_size(population_size) -> int:
    """A whole number of documents up to MAX_POPULATION_SIZE (2^53), as an int; else ParameterError."""
    bad = isinstance(population_size, bool) or not isinstance(population_size, numbers.Real)
    if not bad and not isinstance(population_size, numbers.Integral):
        x = float(population_size)
        bad = not (math.isfinite(x) and x.is_integer())
    if bad:
        raise ParameterError(f"population size must be a whole number of documents (got {population_size!r})")
    if population_size > MAX_POPULATION_SIZE:
        raise ParameterError(f"population size must be at most 2^53 = {MAX_POPULATION_SIZE:,} documents "
                             f"(got {_magnitude(population_size)}): larger whole numbers are not exact in double precision; "
                             "for a population that large the finite population correction is 1 anyway, so omit it")
    return int(population_size)


def _magnitude(x) -> str:
    try:
        return f"{float(x):.6g}"
    except OverflowError:
        return f"about 10^{len(str(abs(int(x)))) - 1}"


def estimate_design(table: DocTable, *, design: dict, level: float = 0.95, replicates: int = 0,
                    seed: int | None = DEFAULT_SEED, frame=None) -> Estimates:
    """Estimate under a declared sampling design.

    ``design["sampling"]`` is ``"srs"`` or ``"census"`` (then this is :func:`estimate`),
    ``"stratified"`` (``design["strata"] = {"by": labels per document, "population_sizes": {h: M_h}}``;
    ``"by"`` may be omitted when the table carries the attribute ``stratum``) or ``"two_stage"``
    (``design["population_size"] = M`` and ``design["chunks_in_doc"]`` = N_d per document, or the
    table's attribute ``chunks_in_doc``). Under stratified and two-stage designs the simple-random-
    sampling methods do not apply; the result holds ``micro.design`` and ``macro.design``.
    ``frame`` (simple random sampling or a census only): see :func:`estimate`.
    """
    from ..methods import designs as _designs
    if not isinstance(design, dict) or "sampling" not in design:
        raise ParameterError("design must be a mapping with a 'sampling' key")
    sampling = design["sampling"]
    M = design.get("population_size")
    if sampling in ("srs", "census"):
        if sampling == "census":
            M = table.K if M is None else M
        return estimate(table, level=level, population_size=M, replicates=replicates, seed=seed, frame=frame)
    if frame is not None:
        raise ParameterError("a frame goes with simple random sampling or a census (design.sampling srs or census)")
    level, _, replicates, seed = _validate(table, level, None, replicates, seed)
    n, s, q, k = working_table(table)
    mrange = metric_range(table, n, s, q, k)
    notes = [Message("note.srs_methods_ignore_design", "the simple-random-sampling methods (CR1, CR2, bootstrap, "
                     "...) ignore this design and are not shown"),
             Message("note.diagnostics_unweighted_below", "diagnostics below are computed without design weights")]
    if sampling == "stratified":
        st = design.get("strata") or {}
        by = st.get("by")
        if by is None:
            by = table.attrs.get("stratum")
        if by is None:
            raise ParameterError("design.strata needs the stratum of each document ('by', or a 'stratum' column)")
        if "population_sizes" not in st or not isinstance(st["population_sizes"], dict):
            raise ParameterError("design.strata.population_sizes must map each stratum to its number of documents")
        micro_iv, macro_iv, summary = _designs.stratified(n, s, by, st["population_sizes"], level=level)
        info = {"sampling": "stratified", "strata": summary, "H": len(summary)}
        intervals = (micro_iv, macro_iv)
        M_total = sum(v["M_h"] for v in summary.values())
    elif sampling == "two_stage":
        Nd = design.get("chunks_in_doc")
        if Nd is None:
            Nd = table.attrs.get("chunks_in_doc")
        if Nd is None:
            raise ParameterError("a two-stage design needs design.chunks_in_doc, the chunks in each document")
        try:
            Nd = np.asarray(Nd, dtype=float)
        except ValueError:
            raise InputError("design.chunks_in_doc must hold numbers (chunks in each document)") from None
        if q is None:
            raise InputError("a two-stage design needs the sums of squared scores (q) for the within-document "
                             "variance")
        if M is None or (not isinstance(M, bool) and isinstance(M, numbers.Real) and M < table.K):
            raise ParameterError(f"design.population_size must be at least K = {table.K} for a two-stage design")
        M = check_population_size(M)
        micro_iv, summary = _designs.two_stage(n, s, q, Nd, int(M), level=level)
        info = {"sampling": "two_stage", **summary}
        intervals = (micro_iv,)
        M_total = int(M)
    else:
        raise ParameterError(f"design.sampling must be one of srs, census, stratified, two_stage (got {sampling!r})")
    diag = diagnose(n, s, q, _micro.var_cr1(n, s), unit_exp=k)
    intervals = tuple(_finish(iv, k, mrange) for iv in intervals)
    macro_est = next((iv.estimate for iv in intervals if iv.estimand == "macro"),
                     _micro.ldexp(macro_mean(n, s), -k))
    if not any(iv.estimand == "macro" for iv in intervals):
        notes.append(Message("note.macro_point_only", "macro mean under this design: point estimate of the sampled "
                             "documents only (no design variance implemented)"))
    return Estimates(K=table.K, N=table.N, level=level, population_size=M_total, micro_estimate=intervals[0].estimate,
                     macro_estimate=macro_est, intervals=tuple(intervals), diagnostics=diag, replicates=0,
                     seed=seed, notes=tuple(notes), design=info, metric_range=mrange)
