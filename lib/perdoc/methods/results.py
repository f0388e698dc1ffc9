"""Typed results. Computing and formatting live apart: these objects hold numbers; the CLI,
the notebooks and :meth:`Estimates.tidy` format them.

An interval that cannot be computed honestly (zero variance, every bootstrap replicate degenerate,
undefined degrees of freedom) has ``low = high = None`` and a ``reason``; it is never replaced by a
zero-width interval.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import ParameterError

__all__ = ["ConfidenceInterval", "Interval", "Diagnostics", "Estimates", "check_level", "LEVEL_MIN", "LEVEL_MAX"]


@dataclass(frozen=True)
class ConfidenceInterval:
    low: float
    high: float

    def __iter__(self):
        return iter((self.low, self.high))

    @property
    def width(self) -> float:
        return self.high - self.low


@dataclass(frozen=True)
class Interval:
    """One interval method applied to one estimand.

    ``role`` is ``"primary"`` for the method of the article, ``"alternative"`` for other valid
    choices and ``"baseline"`` for the contrast baselines shown only to warn (Wald iid, Wald with
    effective n).
    """

    estimand: str
    method: str
    label: str
    estimate: float
    level: float
    se: float | None = None
    df: float | None = None
    ci: ConfidenceInterval | None = None
    reason: str | None = None
    role: str = "primary"
    resampling_unit: str = "none (analytic)"
    notes: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)
    #: The range the estimand cannot leave, when the metric is bounded: ``(0, 1)`` for a 0/1 or
    #: [0, 1] metric, ``(-1, 1)`` for a difference of two such metrics; None otherwise.
    metric_range: tuple[float, float] | None = None

    @property
    def available(self) -> bool:
        return self.ci is not None

    @property
    def out_of_range(self) -> bool:
        """Whether the interval reaches outside the range of a bounded metric (it is not clipped)."""
        if self.ci is None or self.metric_range is None:
            return False
        lo, hi = self.metric_range
        return bool(self.ci.low < lo or self.ci.high > hi)

    @property
    def pieces(self) -> list[tuple[float, float]] | None:
        """The pieces of the set of values the method does not reject: one piece (the interval
        itself) except for the wild bootstrap, whose set may have several (``ci`` is their hull)."""
        if self.ci is None:
            return None
        if self.extra.get("pieces") is not None:
            return [tuple(p) for p in self.extra["pieces"]]
        return [(self.ci.low, self.ci.high)]

    def rescaled(self, k: int) -> "Interval":
        """The interval with every location and scale value divided by ``2^k`` (exact)."""
        if k == 0:
            return self
        f = lambda x: None if x is None else _ldexp(float(x), -k)  # noqa: E731
        extra = dict(self.extra)
        if extra.get("pieces") is not None:
            extra["pieces"] = [(f(lo), f(hi)) for lo, hi in extra["pieces"]]
        return replace(self, estimate=f(self.estimate), se=f(self.se),
                       ci=None if self.ci is None else ConfidenceInterval(f(self.ci.low), f(self.ci.high)),
                       extra=extra)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.se is not None:
            out["se"] = _num(self.se)
        if self.df is not None:
            out["df"] = _num(self.df)
        out["ci"] = None if self.ci is None else [_num(self.ci.low), _num(self.ci.high)]
        for k, v in self.extra.items():
            if k == "pieces":
                out[k] = None if v is None else [[_num(lo), _num(hi)] for lo, hi in v]
            elif not isinstance(v, np.ndarray):
                out[k] = _num(v) if isinstance(v, float) else v
        out["out_of_range"] = self.out_of_range
        out["reason"] = self.reason
        out["label"] = self.label
        out["role"] = self.role
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class Diagnostics:
    """Design diagnostics (methods.md, "Diagnostics"). Diagnostics explain; they do not replace
    the document-level variance."""

    icc: float
    deff: float
    n_eff: float
    deff_realised: float
    g_star: float
    max_share: float
    frac_rate_0: float
    frac_rate_1: float
    n_quantiles: dict
    rate_quantiles: dict
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "icc": _num(self.icc), "deff": _num(self.deff), "n_eff": _num(self.n_eff),
            "deff_realised": _num(self.deff_realised), "g_star": _num(self.g_star),
            "max_share": _num(self.max_share), "frac_rate_0": _num(self.frac_rate_0),
            "frac_rate_1": _num(self.frac_rate_1),
            "n_quantiles": {k: _num(v) for k, v in self.n_quantiles.items()},
            "rate_quantiles": {k: _num(v) for k, v in self.rate_quantiles.items()},
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Estimates:
    """Every estimate and interval of one system on one sample of documents."""

    K: int
    N: float
    level: float
    population_size: int | None
    micro_estimate: float
    macro_estimate: float
    intervals: tuple[Interval, ...]
    diagnostics: Diagnostics
    replicates: int
    seed: int | None
    notes: tuple[str, ...] = ()
    bootstrap: dict = field(default_factory=dict, repr=False)
    design: dict | None = None
    #: ``(0, 1)`` when the metric is bounded (0/1 scores, or every rate in [0, 1] with sums of
    #: squares that scores in [0, 1] can give), ``(-1, 1)`` for a difference of such metrics.
    metric_range: tuple[float, float] | None = None
    #: With a frame under simple random sampling: how much of the population a sample of this size
    #: cannot see (:func:`perdoc.frame.unseen_tail`), with ``warn`` when it is large.
    frame_tail: dict | None = None

    def interval(self, estimand: str, method: str) -> Interval:
        for iv in self.intervals:
            if iv.estimand == estimand and iv.method == method:
                return iv
        raise KeyError(f"no interval {estimand}.{method}")

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of ``perdoc estimate --json`` (keys are stable; new keys may be added)."""
        out: dict[str, Any] = {
            "K": self.K,
            "N": _int_if_whole(self.N),
            "level": self.level,
            "population_size": self.population_size,
            "fpc": None if self.population_size is None else _num(1 - self.K / self.population_size),
            "replicates": self.replicates,
            "seed": self.seed,
        }
        for estimand, est in (("micro", self.micro_estimate), ("macro", self.macro_estimate)):
            block: dict[str, Any] = {"estimate": _num(est)}
            for iv in self.intervals:
                if iv.estimand == estimand:
                    d = iv.to_dict()
                    # a method with a point estimate of its own (the bias-corrected jackknife, the
                    # frame-aware predictions) says so
                    if iv.estimate is not None and est is not None and iv.estimate != est \
                            and math.isfinite(iv.estimate):
                        d = {"estimate": _num(iv.estimate), **d}
                    block[iv.method] = d
            out[estimand] = block
        out["diagnostics"] = self.diagnostics.to_dict()
        out["metric_range"] = None if self.metric_range is None else list(self.metric_range)
        if self.design is not None:
            out["design"] = self.design
        if self.frame_tail is not None:
            out["frame_tail"] = dict(self.frame_tail)
        out["notes"] = list(self.notes)
        return out

    def tidy(self):
        """One row per (estimand, method): estimate, se, df, low, high, role, reason (a DataFrame)."""
        import pandas as pd
        rows = []
        for iv in self.intervals:
            rows.append({
                "estimand": iv.estimand, "method": iv.method, "label": iv.label,
                "estimate": iv.estimate, "se": iv.se, "df": iv.df,
                "low": None if iv.ci is None else iv.ci.low,
                "high": None if iv.ci is None else iv.ci.high,
                "width": None if iv.ci is None else iv.ci.width,
                "level": iv.level, "role": iv.role, "resampling_unit": iv.resampling_unit,
                "reason": iv.reason, "out_of_range": iv.out_of_range,
            })
        out = pd.DataFrame(rows)
        # the reasons as the intervals hold them (None, or a perdoc.messages.Message with its code): a
        # column of strings would drop the codes a report finds the reader's language by
        out["reason"] = pd.Series([iv.reason for iv in self.intervals], dtype=object, index=out.index)
        return out


def _ldexp(x: float, e: int) -> float:
    from .micro import ldexp
    return ldexp(x, e)


def _num(x):
    """JSON-safe float: NaN and infinities become None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _int_if_whole(x):
    x = float(x)
    return int(x) if x.is_integer() else x


#: Closer to 0 or 1, the quantile argument ``1 - (1 - level)/2`` keeps too few significant digits
#: (at level 1 - 1e-9 its tail probability is still exact to 1e-6; at 1 - 1e-16 it rounds to 1).
LEVEL_MIN = 1e-9
LEVEL_MAX = 1.0 - 1e-9


def check_level(level) -> float:
    """The confidence level as a float, or ParameterError (the rule: LEVEL_MIN <= level <= LEVEL_MAX)."""
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not (0.0 < float(level) < 1.0):
        raise ParameterError(f"level must be a number strictly between 0 and 1 (got {level!r})")
    if not (LEVEL_MIN <= float(level) <= LEVEL_MAX):
        raise ParameterError(f"level must lie between {LEVEL_MIN:g} and 1 - {1 - LEVEL_MAX:.0e} (got {level!r}): "
                             "closer to 0 or 1 its quantiles are not computed reliably in double precision")
    return float(level)
