"""Charts for reports: pure functions that build Altair charts from a table and its estimates.

Every builder returns a :class:`Chart` (the Altair chart, its title and a one-line caption) and
never displays or saves anything. :func:`to_svg` renders a chart to a static SVG string with
vl-convert: no JavaScript, no network, and the same string for the same chart on every call.

Charts never hand Altair more than :data:`MAX_ROWS` rows per dataset (Altair refuses more than
5,000): distributions are binned in pandas first, and above :data:`MAX_POINTS` documents the
rate-against-size scatter shows binned cells instead of one point per document.

A chart with nothing to show (every bootstrap replicate equal, no finite half-width, no method with
an interval in any simulated sample) is not drawn: :func:`bootstrap_empty`, :func:`planning_empty`
and :func:`coverage_empty` give the sentence a report shows instead (``None`` when there is
something to draw).

Text that comes from the data (document ids) is passed to Vega as data, never spliced into markup;
Vega's SVG renderer escapes it, so an id such as ``<script>`` cannot become an element.

Charts follow the report's language (:mod:`perdoc.i18n`): titles, axis titles, legends and captions
come from the message catalogs (:func:`perdoc.i18n.tr`), numbers in captions and marks through
:func:`perdoc.i18n.num`, and axis ticks through Vega's number locale (:data:`FORMAT_LOCALES`, handed
to vl-convert by :func:`to_svg`).
Counts (documents, replicates) get whole-number ticks; one format per quantity (:data:`FORMATS`).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from .i18n import N_, THIN, get_language, integer, interval, num, pct, tr
from ..methods.results import Estimates, Interval
from ..reading.table import DocTable
from ..study.memo import memoized

__all__ = ["Chart", "size_distribution", "rate_vs_size", "interval_comparison",
           "bootstrap_distribution", "paired_differences", "planning_curve", "coverage_chart", "to_svg", "WIDTH", "MAX_ROWS", "MAX_POINTS",
           "bootstrap_empty", "planning_empty", "coverage_empty", "baseline_text", "short_label", "FORMATS",
           "FORMAT_LOCALES", "leaderboard_chart"]

WIDTH = 560            # plot width in pixels, every chart
MAX_ROWS = 5000        # never pass more rows than this to Altair (its MaxRowsError limit)
MAX_POINTS = 2000      # above this many documents the scatter is binned
LABEL_CHARS = 28       # document ids longer than this are shortened in labels

ROLE_ORDER = ["primary", "alternative", "baseline"]
ROLE_COLOURS = ["#1f4e79", "#7a8ca3", "#d1495b"]   # baseline: warning red
BASELINE_TEXT = "baseline: chunks as cases"   # the iid Wald's note (English); see baseline_text
#: One number format per quantity (estimates and interval ends, widths, coverage, df).
FORMATS = {"estimate": ".4f", "interval": ".4f", "width": ".4f", "coverage": ".3f", "df": ".2f"}
#: Vega's number locale per report language: Spanish has a decimal comma and a narrow no-break
#: space between thousands (as :mod:`perdoc.i18n`).
FORMAT_LOCALES = {"en": {"decimal": ".", "thousands": ",", "grouping": [3], "currency": ["$", ""]},
                  "es": {"decimal": ",", "thousands": THIN, "grouping": [3], "currency": ["", "\u00a0€"]}}
_COUNT_AXIS = dict(format="d", tickMinStep=1)   # whole-number ticks for counts

_FONT = "sans-serif"
_PLAIN = dict(font=_FONT, background="white")


@dataclass(frozen=True, eq=False)
class Chart:
    """A built chart: the Altair object plus the title and one-line caption for the report."""

    chart: alt.TopLevelMixin
    title: str
    caption: str

    def to_svg(self) -> str:
        return to_svg(self)


# ---------------------------------------------------------------------------------- helpers
def _plain(chart):
    """Fixed, plain look applied to the top-level chart (no global theme is touched).

    The chart was just built and belongs to its builder, so its configuration is set in place: each
    ``configure_*`` call would deep-copy the whole chart, data included (half a report's chart time).
    The spec is the one the chained calls give."""
    chart.config = alt.Config(
        **_PLAIN,
        view=alt.ViewConfig(stroke="#dddddd"),
        axis=alt.AxisConfig(labelFontSize=11, titleFontSize=12, gridColor="#eeeeee",
                            domainColor="#888888", tickColor="#888888"),
        title=alt.TitleConfig(fontSize=15, anchor="start", subtitleFontSize=11, subtitleColor="#555555"),
        legend=alt.LegendConfig(labelFontSize=11, titleFontSize=11))
    return chart


def _data(df: pd.DataFrame) -> pd.DataFrame:
    if len(df) > MAX_ROWS:  # guarded by construction; kept as a hard stop
        raise AssertionError(f"internal: {len(df)} rows would be passed to Altair (limit {MAX_ROWS})")
    return df.reset_index(drop=True)


def _num(x: float, digits: int = 3) -> str:
    if x is None or not math.isfinite(float(x)):
        return tr("chart.not_available")
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return integer(x)
    return num(x, f".{digits}f")


def _unit(unit: str) -> str:
    """The measured unit in the report's language (``chunks`` -> ``fragmentos``)."""
    return {"chunks": tr("unit.chunks"), "queries": tr("unit.queries"),
            "measurements": tr("unit.measurements")}.get(unit, unit)


def baseline_text(iv) -> str | None:
    """The warning written under a contrast baseline's bar: what the baseline treats as cases."""
    if iv.role != "baseline":
        return None
    if iv.method == "wald_iid":
        return tr("chart.baseline.wald_iid")
    if iv.method == "wald_eff_n":
        return tr("chart.baseline.wald_eff_n")
    return tr("chart.baseline.other")


#: The short name of each interval method on a chart's axis, by method id (message keys).
_SHORT = {
    "cr1": N_("chart.short.cr1"),
    "cr2": N_("chart.short.cr2"),
    "cr2_ik": N_("chart.short.cr2_ik"),
    "cr3": N_("chart.short.cr3"),
    "jackknife_bc": N_("chart.short.jackknife_bc"),
    "korn_graubard": N_("chart.short.korn_graubard"),
    "logit": N_("chart.short.logit"),
    "wilson": N_("chart.short.wilson"),
    "logit_cr2": N_("chart.short.logit_cr2"),
    "atanh_cr2": N_("chart.short.atanh_cr2"),
    "bootstrap_t": N_("chart.short.bootstrap_t"),
    "percentile": N_("chart.short.percentile"),
    "wild": N_("chart.short.wild"),
    "bootstrap_t_logit": N_("chart.short.bootstrap_t_logit"),
    "calibrated": N_("chart.short.calibrated"),
    "wald_iid": N_("chart.short.wald_iid"),
    "wald_eff_n": N_("chart.short.wald_eff_n"),
    "t": N_("chart.short.t"),
    "design": N_("chart.short.design"),
    "frame_ratio": N_("chart.short.frame_ratio"),
    "frame_loglinear": N_("chart.short.frame_loglinear"),
    "logit_frame_ratio": N_("chart.short.logit_frame_ratio"),
    "logit_frame_loglinear": N_("chart.short.logit_frame_loglinear"),
    "frame_rank": N_("chart.short.frame_rank"),
    "logit_frame_rank": N_("chart.short.logit_frame_rank"),
    "greg": N_("chart.short.greg"),
    "logit_greg": N_("chart.short.logit_greg"),
    "logit_design": N_("chart.short.logit_design"),
    "ppi": N_("chart.short.ppi"),
    "logit_ppi": N_("chart.short.logit_ppi"),
}


def short_label(iv) -> str:
    """A short name of an interval method for a chart's axis, with its degrees of freedom."""
    key = _SHORT.get(iv.method)
    if key is None:   # a method without a short name: its full name
        from .notebook import method_label
        label = method_label(iv)
    else:
        label = tr(key)
    if iv.df is not None and math.isfinite(iv.df):
        df = tr("chart.df")
        label = f"{label} ({df} {num(iv.df, FORMATS['df'])})"
    return label


#: The header of the every-method table's column (section Intervals) that gives each method's name on
#: the interval chart exactly as :func:`short_label` writes it, so a reader can match a chart row to
#: its table row (message key).
SHORT_LABEL_COLUMN = N_("chart.short.column")


def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _half_holders(n: np.ndarray) -> int:
    """Smallest number of documents whose measurements add up to at least half of N."""
    cum = np.cumsum(np.sort(n)[::-1])
    return int(np.searchsorted(cum, cum[-1] / 2.0) + 1)


def _size_bins(n: np.ndarray, max_bins: int = 30) -> np.ndarray:
    """Integer bin edges, evenly spaced on a log scale, covering [min n, max n]."""
    lo, hi = float(n.min()), float(n.max())
    lo_e = max(math.floor(lo), 1) if lo >= 1 else lo
    hi_e = math.floor(hi) + 1 if hi >= 1 else hi * 1.01
    edges = np.geomspace(lo_e, hi_e, max_bins + 1)
    if lo >= 1:
        edges = np.unique(np.round(edges))
    if edges.size < 2:
        edges = np.array([lo_e, hi_e])
    return edges


# ---------------------------------------------------------------------------------- charts
def size_distribution(table: DocTable, *, unit: str = "chunks") -> Chart:
    """Histogram of n_d (measurements per document) on log-spaced bins and a log x axis."""
    n = np.asarray(table.n, dtype=float)
    K, N = table.K, table.N
    edges = _size_bins(n)
    counts, _ = np.histogram(n, bins=edges)
    df = _data(pd.DataFrame({"lo": edges[:-1], "hi": edges[1:], "documents": counts,
                             "share": counts / K}))
    df = df[df["documents"] > 0]
    k_half = _half_holders(n)
    u = _unit(unit)
    title = tr("chart.sizes.title", unit=u)
    chart = alt.Chart(df).mark_rect(color="#1f4e79", stroke="white", strokeWidth=0.5).encode(
        x=alt.X("lo:Q", scale=alt.Scale(type="log", domain=[float(edges[0]), float(edges[-1])], nice=False),
                title=tr("chart.sizes.x_title", unit=u.capitalize())),
        x2="hi:Q",
        y=alt.Y("documents:Q", title=tr("chart.documents"), axis=alt.Axis(**_COUNT_AXIS)),
        tooltip=[alt.Tooltip("lo:Q", title="from"), alt.Tooltip("hi:Q", title="below"),
                 alt.Tooltip("documents:Q", title="documents")],
    ).properties(width=WIDTH, height=240, title=title)
    med = float(np.median(n))
    caption = tr("chart.sizes.caption", K=integer(K), N=_num(N), unit=u, low=_num(n.min()), high=_num(n.max()),
                 median=_num(med, 1), k_half=integer(k_half), share=pct(k_half / K))
    return Chart(_plain(chart), title, caption)


def rate_vs_size(table: DocTable, estimates: Estimates, *, unit: str = "chunks",
                 label_largest: int = 3) -> Chart:
    """Per-document rate r_d against n_d (log x), with the micro and macro estimates as rules.

    Up to :data:`MAX_POINTS` documents each get a point and the ``label_largest`` largest are
    labelled with their id; above that, documents are binned (log n_d by rate) and the circle
    area shows how many documents fall in each cell.
    """
    n = np.asarray(table.n, dtype=float)
    r = np.asarray(table.rate, dtype=float)
    K = table.K
    u = _unit(unit)
    x_title = tr("chart.sizes.x_title", unit=u.capitalize())
    y_title = tr("chart.rates.y_title")
    x_scale = alt.Scale(type="log", domain=[float(n.min()) / 1.15, float(n.max()) * 1.15], nice=False)

    if K <= MAX_POINTS:
        points, how = _rate_points(table, n, r, x_scale, x_title, y_title)
    else:
        points, how = _rate_cells(n, r, K, x_scale, x_title, y_title)

    R, rbar = estimates.micro_estimate, estimates.macro_estimate
    layers = [points, *_estimate_rules(R, rbar)]

    labelled = ""
    if K <= MAX_POINTS and label_largest > 0:
        labels, labelled = _largest_labels(table, n, r, x_scale, label_largest)
        layers.append(labels)

    title = tr("chart.rates.title")
    chart = alt.layer(*layers).properties(width=WIDTH, height=320, title=title)
    e4 = FORMATS["estimate"]
    caption = tr("chart.rates.caption", how=how, R=num(R, e4), rbar=num(rbar, e4), labelled=labelled)
    return Chart(_plain(chart), title, caption)


def _rate_points(table: DocTable, n: np.ndarray, r: np.ndarray, x_scale, x_title: str,
                 y_title: str) -> tuple[alt.Chart, str]:
    """One point per document of the rate-against-size chart, and the caption's words for it."""
    K = table.K
    pts = _data(pd.DataFrame({"doc": table.doc.astype(str), "n": n, "rate": r}))
    points = alt.Chart(pts).mark_circle(size=36, opacity=0.75 if K <= 200 else 0.45,
                                        color="#1f4e79").encode(
        x=alt.X("n:Q", scale=x_scale, title=x_title),
        y=alt.Y("rate:Q", title=y_title),
        tooltip=[alt.Tooltip("doc:N", title="document"), alt.Tooltip("n:Q", title="n_d"),
                 alt.Tooltip("rate:Q", title="r_d", format=".3f")],
    )
    how = tr("chart.rates.points", K=integer(K))
    return points, how


def _rate_cells(n: np.ndarray, r: np.ndarray, K: int, x_scale, x_title: str,
                y_title: str) -> tuple[alt.Chart, str]:
    """Documents binned by log size and rate (circle area = documents per cell), and the caption's words."""
    x_edges = np.geomspace(n.min(), n.max() * (1 + 1e-9) if n.max() > n.min() else n.min() + 1, 31)
    r_lo, r_hi = float(r.min()), float(r.max())
    r_edges = np.linspace(r_lo, r_hi if r_hi > r_lo else r_lo + 1, 26)
    xi = np.clip(np.searchsorted(x_edges, n, side="right") - 1, 0, x_edges.size - 2)
    ri = np.clip(np.searchsorted(r_edges, r, side="right") - 1, 0, r_edges.size - 2)
    cells = (pd.DataFrame({"xi": xi, "ri": ri, "n": n, "rate": r})
             .groupby(["xi", "ri"], sort=True)
             .agg(n=("n", "mean"), rate=("rate", "mean"), documents=("n", "size"))
             .reset_index())
    cells = _data(cells)
    points = alt.Chart(cells).mark_circle(opacity=0.6, color="#1f4e79").encode(
        x=alt.X("n:Q", scale=x_scale, title=x_title),
        y=alt.Y("rate:Q", title=y_title),
        size=alt.Size("documents:Q", title=tr("chart.documents"),
                      scale=alt.Scale(range=[9, 400], zero=False), legend=alt.Legend(format="d")),
        tooltip=[alt.Tooltip("documents:Q"), alt.Tooltip("n:Q", title="mean n_d", format=".1f"),
                 alt.Tooltip("rate:Q", title="mean r_d", format=".3f")],
    )
    how = tr("chart.rates.cells", K=integer(K))
    return points, how


def _estimate_rules(R: float, rbar: float) -> list:
    """The dashed micro and macro rules of the rate-against-size chart, with their labels."""
    # the higher line is labelled above itself, the lower one below, so labels never cross a line
    micro_high = R >= rbar
    rules_df = _data(pd.DataFrame({
        "estimand": ["micro", "macro"],
        "value": [R, rbar],
        "text": [tr("chart.rates.micro_rule", R=num(R, FORMATS["estimate"])),
                 tr("chart.rates.macro_rule", rbar=num(rbar, FORMATS["estimate"]))],
        "pos": ["above" if micro_high else "below", "below" if micro_high else "above"],
    }))
    colour = alt.Color("estimand:N", legend=None,
                       scale=alt.Scale(domain=["micro", "macro"], range=["#d1495b", "#2e933c"]))
    base = alt.Chart(rules_df)
    rules = base.mark_rule(strokeWidth=1.5, strokeDash=[6, 3]).encode(y="value:Q", color=colour)
    above = base.transform_filter(alt.datum.pos == "above").mark_text(
        align="left", baseline="bottom", dy=-3, fontSize=11, fontWeight="bold").encode(
        x=alt.value(4), y="value:Q", text="text:N", color=colour)
    below = base.transform_filter(alt.datum.pos == "below").mark_text(
        align="left", baseline="top", dy=3, fontSize=11, fontWeight="bold").encode(
        x=alt.value(4), y="value:Q", text="text:N", color=colour)
    return [rules, above, below]


def _largest_labels(table: DocTable, n: np.ndarray, r: np.ndarray, x_scale,
                    label_largest: int) -> tuple[alt.Chart, str]:
    """The ids of the ``label_largest`` largest documents as a text layer, and the caption's words."""
    top = np.argsort(-n, kind="stable")[: min(label_largest, table.K)]
    lab = _data(pd.DataFrame({"doc": [_short(d, LABEL_CHARS) for d in table.doc[top].astype(str)],
                              "n": n[top], "rate": r[top]}))
    labels = alt.Chart(lab).mark_text(align="right", dx=-7, dy=-7, fontSize=10,
                                      color="#333333").encode(
        x=alt.X("n:Q", scale=x_scale), y="rate:Q", text="doc:N")
    labelled = tr("chart.rates.labelled", count=top.size)
    return labels, labelled


def _interval_rows(estimates: Estimates) -> pd.DataFrame:
    from .notebook import library_text
    rows = []
    for i, iv in enumerate(estimates.intervals):
        reason = library_text(iv.reason) if iv.reason else tr("word.not_available")
        rows.append({
            "order": i, "estimand": iv.estimand, "method": iv.method, "label": short_label(iv),
            "role": iv.role, "estimate": float(iv.estimate),
            "low": None if iv.ci is None else float(iv.ci.low),
            "high": None if iv.ci is None else float(iv.ci.high),
            "available": iv.ci is not None,
            "reason": None if iv.ci is not None else _short(tr("chart.intervals.no_interval") + reason, 100),
            "baseline_note": baseline_text(iv),
        })
    return pd.DataFrame(rows)


#: The word a chart's legend shows for each role of an interval (message keys).
ROLE_NAMES = {"primary": N_("chart.role.primary"), "alternative": N_("chart.role.alternative"),
              "baseline": N_("chart.role.baseline")}
LABEL_PX = 290         # room for the method names of the interval chart (never cut: see short_label)


#: The contrast baselines and the estimands as the intervals chart's caption names them.
BASELINE_NAMES = {"wald_iid": N_("chart.baseline_name.wald_iid"), "wald_eff_n": N_("chart.baseline_name.wald_eff_n")}
ESTIMAND_NAMES = {"micro": N_("chart.estimand_name.micro"), "macro": N_("chart.estimand_name.macro")}


def _baselines_wider_than_lead(estimates: Estimates) -> list:
    """The contrast baselines whose interval is at least as wide as their estimand's leading (primary)
    interval: the caption calls the baselines too narrow only when none is, so its claim holds for the
    bars drawn beside it."""
    def width(iv):
        return iv.ci.high - iv.ci.low if iv.ci is not None else None

    lead = {iv.estimand: width(iv) for iv in estimates.intervals if iv.role == "primary"}
    return [iv for iv in estimates.intervals
            if iv.role == "baseline" and width(iv) is not None and lead.get(iv.estimand) is not None
            and width(iv) >= lead[iv.estimand]]


def interval_comparison(estimates: Estimates) -> Chart:
    """Every interval method side by side, one panel per estimand.

    Points are the estimates, bars the [low, high] intervals, coloured by role; baselines are red
    and labelled with what they treat as cases (:func:`baseline_text`: the iid Wald "chunks as
    cases", the effective-n Wald "N/DEFF as cases"); a method without an interval shows its reason.
    """
    from .notebook import fpc_heuristic
    df = _interval_rows(estimates)
    finite = pd.concat([df["estimate"], df["low"].dropna(), df["high"].dropna()]).astype(float)
    finite = finite[np.isfinite(finite)]
    lo, hi = float(finite.min()), float(finite.max())
    pad = 0.06 * (hi - lo) if hi > lo else max(abs(lo) * 0.1, 0.05)
    domain = [lo - pad, hi + pad]
    width = WIDTH - 100
    # notes (baseline warning, reason for a missing interval) sit just under their row, starting
    # at the bar's low end, or at the panel's left edge when the text would run past the right edge
    df["note"] = df["baseline_note"]
    df.loc[~df["available"], "note"] = df.loc[~df["available"], "reason"]
    df["has_note"] = df["note"].notna()
    start = df["low"].where(df["available"], domain[0]).astype(float)
    px = (start - domain[0]) / (domain[1] - domain[0]) * width
    chars = df["note"].fillna("").str.len()
    df["anchor"] = np.where(px + 5.5 * chars + 4 > width, domain[0], start)
    roles = [tr(ROLE_NAMES[r]) for r in ROLE_ORDER]
    df["role_name"] = [tr(ROLE_NAMES[r]) if r in ROLE_NAMES else r for r in df["role"]]
    level = pct(estimates.level, 0)
    x_title = tr("chart.intervals.x_title", level=level)

    x = alt.X("estimate:Q", title=x_title, scale=alt.Scale(domain=domain, zero=False, nice=False))
    colour = alt.Color("role_name:N", title=tr("chart.intervals.role"),
                       scale=alt.Scale(domain=roles, range=ROLE_COLOURS),
                       legend=alt.Legend(labelLimit=0))
    titles = {"micro": tr("chart.intervals.micro_panel"), "macro": tr("chart.intervals.macro_panel")}
    panels = []
    for estimand in ("micro", "macro"):
        sub = _data(df[df["estimand"] == estimand])
        if sub.empty:
            continue
        y = alt.Y("label:N", title=None, sort=alt.EncodingSortField("order", op="min"),
                  axis=alt.Axis(labelLimit=0, minExtent=LABEL_PX, maxExtent=LABEL_PX))
        base = alt.Chart(sub).encode(y=y)
        bars = base.transform_filter(alt.datum.available).mark_rule(strokeWidth=3).encode(
            x=alt.X("low:Q", scale=alt.Scale(domain=domain, zero=False, nice=False), title=x_title),
            x2="high:Q", color=colour)
        points = base.mark_point(filled=True, size=60).encode(x=x, color=colour)
        notes = base.transform_filter(alt.datum.has_note).mark_text(
            align="left", baseline="top", dx=2, dy=6, fontSize=10, fontStyle="italic").encode(
            x=alt.X("anchor:Q", scale=alt.Scale(domain=domain, zero=False, nice=False)),
            text="note:N", color=colour)
        panels.append(alt.layer(bars, points, notes).properties(
            width=width, height=alt.Step(32), title=alt.TitleParams(titles[estimand], fontSize=12)))
    title = tr("chart.intervals.title", level=level)
    chart = alt.vconcat(*panels, spacing=18).resolve_scale(color="shared", x="shared").properties(
        title=title)
    n_none = int((~df["available"]).sum())
    heur = sum(1 for iv in estimates.intervals if fpc_heuristic(iv))
    wider = _baselines_wider_than_lead(estimates)
    K, N = integer(estimates.K), _num(estimates.N)
    caption = ((tr("chart.intervals.caption_wider", K=K, N=N) if wider else tr("chart.intervals.caption", K=K, N=N))
               + "".join(tr("chart.intervals.wider_baseline", baseline=tr(BASELINE_NAMES[iv.method]),
                            estimand=tr(ESTIMAND_NAMES[iv.estimand])) for iv in wider)
               + (tr("chart.intervals.caption_none", count=n_none) if n_none else "")
               + (tr("chart.intervals.caption_fpc", count=heur)
                  if heur and estimates.population_size is not None else "") + ".")
    return Chart(_plain(chart), title, caption)


def bootstrap_distribution(estimates: Estimates, estimand: str = "micro", *,
                           bins: int = 40) -> Chart | None:
    """Histogram of the document-bootstrap replicate estimates with the estimate and the
    bootstrap-t interval marked; ``None`` when the bootstrap was not run (``replicates=0``)."""
    if estimand not in ("micro", "macro"):
        raise ValueError(f"estimand must be 'micro' or 'macro' (got {estimand!r})")
    draws = estimates.bootstrap.get("draws") if estimates.bootstrap else None
    if draws is None or draws.replicates == 0:
        return None
    theta = np.asarray(draws.micro if estimand == "micro" else draws.macro, dtype=float)
    theta = theta[np.isfinite(theta)]
    est = estimates.micro_estimate if estimand == "micro" else estimates.macro_estimate
    no_finite = theta.size == 0
    if no_finite:  # no finite replicate: an empty histogram around the estimate
        theta = np.array([float(est)])
    try:
        iv: Interval | None = estimates.interval(estimand, "bootstrap_t")
    except KeyError:
        iv = None
    t_lo, t_hi = float(theta.min()), float(theta.max())
    if t_hi > t_lo:
        edges = np.linspace(t_lo, t_hi, bins + 1)
    else:
        edges = np.array([t_lo - 0.5e-3, t_hi + 0.5e-3])
    counts, _ = np.histogram(theta, bins=edges)
    if no_finite:
        counts = np.zeros_like(counts)
    hist = _data(pd.DataFrame({"lo": edges[:-1], "hi": edges[1:], "replicates": counts}))
    level = pct(estimates.level, 0)
    e4 = FORMATS["estimate"]
    mark = tr("chart.bootstrap.estimate_mark", estimate=num(est, e4))
    marks = [{"kind": "estimate", "value": float(est), "text": mark}]
    if iv is not None and iv.ci is not None:
        marks += [{"kind": "bootstrap-t", "value": float(iv.ci.low), "text": num(iv.ci.low, e4)},
                  {"kind": "bootstrap-t", "value": float(iv.ci.high), "text": num(iv.ci.high, e4)}]
    marks_df = _data(pd.DataFrame(marks))
    name = tr("chart.micro_mean_r") if estimand == "micro" else tr("estimand.macro_mean")
    x_title = tr("chart.bootstrap.x_title", name=name)
    all_x = np.concatenate([edges, marks_df["value"].to_numpy()])
    domain = [float(all_x.min()), float(all_x.max())]

    x_scale = alt.Scale(domain=domain, zero=False, nice=False)
    hist_layer = alt.Chart(hist).mark_rect(color="#9fb3c8", stroke="white", strokeWidth=0.5).encode(
        x=alt.X("lo:Q", scale=x_scale, title=x_title), x2="hi:Q",
        y=alt.Y("replicates:Q", title=tr("chart.bootstrap.replicates"), axis=alt.Axis(**_COUNT_AXIS)))
    legend_bt = tr("chart.bootstrap.legend_interval", level=level)
    legend_est = tr("chart.bootstrap.legend_estimate")
    colour = alt.Color("kind:N", title=None,
                       scale=alt.Scale(domain=["estimate", "bootstrap-t"], range=["#1f4e79", "#d1495b"]),
                       legend=alt.Legend(symbolType="stroke", labelLimit=0, orient="bottom",
                                         labelExpr=f"datum.label == 'bootstrap-t' ? {legend_bt!r} : {legend_est!r}"))
    mbase = alt.Chart(marks_df)
    rules = mbase.mark_rule(strokeWidth=2).encode(
        x=alt.X("value:Q", scale=x_scale), color=colour,
        strokeDash=alt.StrokeDash("kind:N", scale=alt.Scale(domain=["estimate", "bootstrap-t"],
                                                            range=[[1, 0], [6, 3]]), legend=None))
    texts = mbase.mark_text(align="left", dx=4, baseline="top", fontSize=10).encode(
        x=alt.X("value:Q", scale=x_scale), y=alt.value(4), text="text:N", color=colour)
    title = tr("chart.bootstrap.title", name=name)
    chart = alt.layer(hist_layer, rules, texts).properties(width=WIDTH, height=240, title=title)

    from .notebook import library_text
    B = draws.replicates
    deg = draws.degenerate_fraction
    if iv is not None and iv.ci is not None:
        iv_text = tr("chart.bootstrap.interval", level=level, ci=interval(iv.ci.low, iv.ci.high, e4))
    else:
        reason = library_text(iv.reason) if iv is not None and iv.reason else tr("word.not_computed")
        iv_text = tr("chart.bootstrap.no_interval", reason=reason)
    seed = "" if estimates.seed is None else tr("chart.bootstrap.seed", seed=estimates.seed)
    caption = tr("chart.bootstrap.caption", B=integer(B), seed=seed, degenerate=pct(deg, 2), interval=iv_text)
    return Chart(_plain(chart), title, caption)


def bootstrap_empty(estimates: Estimates, estimand: str = "micro") -> str | None:
    """Why :func:`bootstrap_distribution` has no distribution to show, or ``None`` when it has one."""
    draws = estimates.bootstrap.get("draws") if estimates.bootstrap else None
    if draws is None or draws.replicates == 0:
        return tr("chart.bootstrap.not_run")
    theta = np.asarray(draws.micro if estimand == "micro" else draws.macro, dtype=float)
    theta = theta[np.isfinite(theta)]
    B = draws.replicates
    if theta.size == 0:
        return tr("chart.bootstrap.none_finite", B=integer(B))
    if float(np.ptp(theta)) == 0.0:
        return tr("chart.bootstrap.all_same", B=integer(B), estimate=num(theta[0], ".4g"))
    return None


def planning_empty(curves: dict) -> str | None:
    """Why :func:`planning_curve` has nothing to show, or ``None`` when some half-width is positive."""
    values = np.array([h for pts in curves.values() for _, h in pts], dtype=float)
    if values.size == 0 or not np.any(np.isfinite(values) & (values > 0)):
        return tr("chart.planning.empty")
    return None


def coverage_empty(frame: pd.DataFrame) -> str | None:
    """Why :func:`coverage_chart` has nothing to show, or ``None`` when some method has a coverage."""
    if frame is None or len(frame) == 0:
        return tr("chart.coverage.no_methods")
    cov = pd.to_numeric(frame["coverage"], errors="coerce")
    if not np.isfinite(cov).any():
        return tr("chart.coverage.no_interval")
    return None


# ---------------------------------------------------------------------------------- rendering
_ID_RE = re.compile(r'\bid="([^"]+)"')


def paired_differences(pairs, comparison) -> Chart:
    """Per-document rate of system A against system B; ties sit on the diagonal.

    Points are sized by n_d; above the diagonal A does better on that document. Documents with the
    same pair of rates are drawn once, with their count, so at most MAX_ROWS marks reach Altair.
    """
    a_name, b_name = pairs.names
    n = pairs.n_a
    ra, rb = pairs.s_a / n, pairs.s_b / n
    df = pd.DataFrame({"ra": ra, "rb": rb, "n": n})
    df = df.groupby(["ra", "rb"], as_index=False).agg(documents=("n", "size"), chunks=("n", "sum"))
    if len(df) > MAX_ROWS:
        df = df.sort_values("chunks", ascending=False).head(MAX_ROWS)
    tied, differ = tr("chart.pairs.tied"), tr("chart.pairs.differ")
    df["tied"] = np.where(df.ra == df.rb, tied, differ)
    title = tr("chart.pairs.title", a=a_name, b=b_name)
    points = alt.Chart(_data(df)).mark_circle(opacity=0.7).encode(
        x=alt.X("rb:Q", title=tr("chart.pairs.axis", system=b_name),
                scale=alt.Scale(domain=[0, max(1e-9, float(max(ra.max(), rb.max())))])),
        y=alt.Y("ra:Q", title=tr("chart.pairs.axis", system=a_name)),
        size=alt.Size("chunks:Q", title=tr("unit.measurements"), scale=alt.Scale(range=[30, 600]),
                      legend=alt.Legend(format="d")),
        color=alt.Color("tied:N", title="", scale=alt.Scale(domain=[tied, differ], range=["#7a8ca3", "#d1495b"])),
    )
    top = float(max(ra.max(), rb.max(), 1e-9))
    diag = alt.Chart(pd.DataFrame({"x": [0.0, top], "y": [0.0, top]})).mark_line(
        color="#888888", strokeDash=[4, 4]).encode(x="x:Q", y="y:Q")
    chart = (diag + points).properties(width=WIDTH, height=360, title=title)
    ties = comparison.ties_fraction
    caption = tr("chart.pairs.caption", K=integer(pairs.K), ties=pct(ties, 0), a=a_name)
    return Chart(_plain(chart), title, caption)


def judge_vs_gold(rates: pd.DataFrame, agreement: dict) -> Chart:
    """Per labelled document, the judge's rate against the gold rate on the same chunks
    (:func:`perdoc.report.notebook.judge_document_rates`): on the diagonal they agree; points are sized
    by the document's labelled chunks, and documents with the same pair of rates are drawn once."""
    df = rates.groupby(["gold", "judge"], as_index=False).agg(documents=("n", "size"), chunks=("n", "sum"))
    if len(df) > MAX_ROWS:
        df = df.sort_values("chunks", ascending=False).head(MAX_ROWS)
    same, differ = tr("chart.judge.agree"), tr("chart.judge.differ")
    df["agree"] = np.where(np.isclose(df.gold, df.judge, rtol=0, atol=1e-12), same, differ)
    top = float(max(df.gold.max(), df.judge.max(), 1e-9))
    title = tr("chart.judge.title")
    points = alt.Chart(_data(df)).mark_circle(opacity=0.7).encode(
        x=alt.X("gold:Q", title=tr("chart.judge.x"), scale=alt.Scale(domain=[0, top])),
        y=alt.Y("judge:Q", title=tr("chart.judge.y"), scale=alt.Scale(domain=[0, top])),
        size=alt.Size("chunks:Q", title=tr("unit.measurements"), scale=alt.Scale(range=[30, 600]),
                      legend=alt.Legend(format="d")),
        color=alt.Color("agree:N", title="", scale=alt.Scale(domain=[same, differ], range=["#7a8ca3", "#d1495b"])),
    )
    diag = alt.Chart(pd.DataFrame({"x": [0.0, top], "y": [0.0, top]})).mark_line(
        color="#888888", strokeDash=[4, 4]).encode(x="x:Q", y="y:Q")
    chart = (diag + points).properties(width=WIDTH, height=360, title=title)
    K = int(len(rates))
    agreeing = int(np.sum(np.isclose(rates.gold, rates.judge, rtol=0, atol=1e-12)))
    caption = tr("chart.judge.caption", K=integer(K), agree=integer(agreeing))
    return Chart(_plain(chart), title, caption)


def planning_curve(curves: dict, *, target: float | None = None, current_k: int | None = None,
                   estimand: str = "micro", realised: float | None = None) -> Chart:
    """Half-width against the number of documents K, one line per curve (e.g. with and without FPC).

    ``curves`` maps a label to ``[(K, half_width), ...]`` (see :func:`perdoc.plan.curve`);
    ``realised``: this study's own half-width at ``current_k``, drawn as a point.
    """
    rows = [{"K": k, "half_width": h, "curve": label} for label, pts in curves.items() for k, h in pts]
    df = pd.DataFrame(rows)
    name = {"micro": tr("estimand.micro_mean"), "macro": tr("estimand.macro_mean")}.get(estimand, estimand)
    title = tr("chart.planning.title", name=name)
    lines = alt.Chart(_data(df)).mark_line(point=False).encode(
        x=alt.X("K:Q", title=tr("chart.planning.x_title"),
                scale=alt.Scale(type="log"), axis=alt.Axis(format="d")),
        y=alt.Y("half_width:Q", title=tr("chart.planning.y_title")),
        color=alt.Color("curve:N", title=tr("chart.planning.legend"),
                        legend=alt.Legend(orient="bottom", labelLimit=0, titleLimit=0)),
    )
    layers = [lines]
    if target is not None:
        layers.append(alt.Chart(pd.DataFrame({"y": [target]})).mark_rule(color="#d1495b", strokeDash=[4, 4])
                      .encode(y="y:Q"))
    if current_k is not None:
        layers.append(alt.Chart(pd.DataFrame({"x": [current_k]})).mark_rule(color="#555555", strokeDash=[2, 2])
                      .encode(x="x:Q"))
    if current_k is not None and realised is not None and math.isfinite(realised):
        layers.append(alt.Chart(pd.DataFrame({"x": [current_k], "y": [realised]})).mark_point(
            shape="diamond", filled=True, size=70, color="#555555").encode(x="x:Q", y="y:Q"))
    chart = alt.layer(*layers).properties(width=WIDTH, height=300, title=title)
    bits = []
    if target is not None:
        bits.append(tr("chart.planning.target", target=num(target, "g")))
    if current_k is not None:
        bits.append(tr("chart.planning.current_k", K=integer(current_k)))
    if current_k is not None and realised is not None and math.isfinite(realised):
        bits.append(tr("chart.planning.realised", width=num(realised, FORMATS["width"])))
    caption = (tr("chart.planning.caption")
               + ("; " + "; ".join(bits) if bits else "") + ".")
    return Chart(_plain(chart), title, caption)


def coverage_chart(frame: pd.DataFrame, *, level: float, subject: str | None = None) -> Chart:
    """Simulated coverage of each method with a 2 x Monte Carlo SE bar, and the nominal level.

    ``subject`` names what was simulated (e.g. the study's means, or a paired difference); it goes in
    the title and caption, so that two coverage charts of one report never share a caption.

    ``frame`` has columns method, estimand, coverage, mc_se, baseline (bool). Rows whose coverage
    is missing (NaN) are not drawn and are named in the caption.
    """
    df = frame.copy()
    shown = np.isfinite(pd.to_numeric(df["coverage"], errors="coerce").astype(float))
    left_out = [str(m) for m in df.loc[~shown, "method"]]
    df = df[shown]  # a method without a coverage (no interval in any sample) has no bar to draw
    df["lo"] = (df["coverage"] - 2 * df["mc_se"]).clip(lower=0)
    df["hi"] = (df["coverage"] + 2 * df["mc_se"]).clip(upper=1)
    method_name, baseline_name = tr("chart.coverage.method"), tr("chart.coverage.baseline")
    df["kind"] = np.where(df["baseline"], baseline_name, method_name)
    title = tr("chart.coverage.title")
    if subject:
        title += f": {subject}"
    base = alt.Chart(_data(df))
    y = alt.Y("method:N", title=None, sort=None, axis=alt.Axis(labelLimit=0))
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("lo:Q", title=tr("chart.coverage.x_title"),
                scale=alt.Scale(zero=False)), x2="hi:Q", y=y,
        color=alt.Color("kind:N", title="", scale=alt.Scale(domain=[method_name, baseline_name],
                                                            range=["#1f4e79", "#d1495b"])))
    pts = base.mark_point(filled=True, size=50).encode(x="coverage:Q", y=y, color="kind:N")
    nominal = alt.Chart(pd.DataFrame({"x": [level]})).mark_rule(color="#555555", strokeDash=[4, 4]).encode(x="x:Q")
    chart = alt.layer(bars, pts, nominal).properties(width=WIDTH, height=max(120, 22 * len(df)), title=title)
    about = f" ({subject})" if subject else ""
    caption = (tr("chart.coverage.caption", about=about, level=pct(level, 0))
               + (tr("chart.coverage.not_drawn", methods=", ".join(left_out)) if left_out else ""))
    return Chart(_plain(chart), title, caption)


def _vl_version() -> str | None:
    import vl_convert as vlc
    m = re.match(r"v?(\d+)\.(\d+)", alt.SCHEMA_VERSION)
    want = f"{m.group(1)}.{m.group(2)}" if m else None
    return want if want in vlc.get_vegalite_versions() else None


def to_svg(chart: Chart | alt.TopLevelMixin) -> str:
    """Render a chart to a standalone SVG string, offline and deterministic.

    The spec embeds its data (no URLs) and vl-convert is told to load nothing from any base URL.
    Vega numbers clip paths and gradients with a per-process counter (``clip1``, ``clip2``, ...);
    those ids are renamed in order of appearance with a prefix taken from the spec's hash, so the
    same chart always gives the same string and two different charts inlined in one HTML page do
    not share ids.
    """
    import vl_convert as vlc

    # not validated again here: every builder's spec is validated against the schema in the tests
    # (tests/test_charts.py), and validation is a third of a report's chart time
    spec = (chart.chart if isinstance(chart, Chart) else chart).to_json(indent=None, validate=False)
    locale = FORMAT_LOCALES.get(get_language(), FORMAT_LOCALES["en"])
    svg = _vega_svg(spec, _vl_version(), locale, getattr(vlc, "__version__", None))
    ids = list(dict.fromkeys(_ID_RE.findall(svg)))
    if ids:
        prefix = "pd" + hashlib.sha256(spec.encode("utf-8")).hexdigest()[:10]
        mapping = {old: f"{prefix}-{i}" for i, old in enumerate(ids, 1)}
        alternatives = "|".join(re.escape(o) for o in sorted(mapping, key=len, reverse=True))
        svg = re.sub(r'(\bid="|url\(#|href="#)(' + alternatives + r')(?=["\)])',
                     lambda m: m.group(1) + mapping[m.group(2)], svg)
    return svg


@memoized
def _vega_svg(spec: str, vl_version: str | None, locale: dict, converter: str | None) -> str:
    """vl-convert's SVG of a Vega-Lite spec: a pure function of its arguments (``converter`` is
    vl-convert's version), so it is stored with the simulations when ``PERDOC_MEMO_DIR`` is set."""
    import vl_convert as vlc
    return vlc.vegalite_to_svg(spec, vl_version=vl_version, allowed_base_urls=[], format_locale=locale)


# ---------------------------------------------------------------------- several systems: the leaderboard
def _leaderboard_frames(m) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The leaderboard chart's data: systems (highest mean first, with their rank text), the pairs'
    intervals in long form (pointwise and simultaneous) and the pairs' estimates."""
    systems = pd.DataFrame([{"system": r.system, "micro": float(r.micro), "order": i,
                             "label": (tr("chart.leaderboard.rank_fixed", system=r.system, rank=r.rank)
                                       if r.low == r.high else
                                       tr("chart.leaderboard.rank_range", system=r.system, rank=r.rank, low=r.low,
                                          high=r.high))}
                            for i, r in enumerate(m.ranking)])
    pointwise = tr("chart.leaderboard.pointwise", level=pct(m.level, 0))
    simultaneous = tr("chart.leaderboard.simultaneous")
    bars, points = [], []
    for i, p in enumerate(m.pairs):
        points.append({"pair": p.label, "order": i, "estimate": float(p.interval.estimate)})
        for kind, iv in ((simultaneous, p.simultaneous), (pointwise, p.interval)):
            if iv.ci is not None:
                bars.append({"pair": p.label, "order": i, "kind": kind, "low": float(iv.ci.low),
                             "high": float(iv.ci.high)})
    bars = pd.DataFrame(bars, columns=["pair", "order", "kind", "low", "high"])
    return _data(systems), _data(bars), _data(pd.DataFrame(points))


def _leaderboard_domain(values) -> list[float]:
    """A padded x domain around finite values."""
    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    lo, hi = float(v.min()), float(v.max())
    pad = 0.08 * (hi - lo) if hi > lo else max(abs(lo) * 0.1, 0.01)
    return [lo - pad, hi + pad]


def leaderboard_chart(m) -> Chart:
    """Several systems (a :class:`perdoc.MultiComparison`): above, each system's micro mean, highest
    first, labelled with its rank and the ranks the simultaneous band allows; below, each pair's
    difference with its interval and its simultaneous interval, and the line at 0."""
    systems, bars, points = _leaderboard_frames(m)
    pointwise = tr("chart.leaderboard.pointwise", level=pct(m.level, 0))
    simultaneous = tr("chart.leaderboard.simultaneous")
    x_means = alt.Scale(domain=_leaderboard_domain(systems["micro"]), zero=False, nice=False)
    y_sys = alt.Y("label:N", title=None, sort=alt.EncodingSortField("order", op="min"), axis=alt.Axis(labelLimit=0))
    means = alt.Chart(systems).mark_point(filled=True, size=70, color="#1f4e79", opacity=1).encode(
        x=alt.X("micro:Q", scale=x_means, title=tr("chart.leaderboard.x_mean")), y=y_sys,
    ).properties(width=WIDTH - 120, height=alt.Step(28), title=alt.TitleParams(
        tr("chart.leaderboard.means_panel"), fontSize=12))
    ends = list(bars["low"]) + list(bars["high"]) + list(points["estimate"]) + [0.0]
    x_diff = alt.Scale(domain=_leaderboard_domain(ends), zero=False, nice=False)
    y_pair = alt.Y("pair:N", title=None, sort=alt.EncodingSortField("order", op="min"), axis=alt.Axis(labelLimit=0))
    colour = alt.Color("kind:N", title=None, scale=alt.Scale(domain=[simultaneous, pointwise],
                                                             range=["#9fb3c8", "#1f4e79"]),
                       legend=alt.Legend(orient="bottom", labelLimit=0))
    width = alt.Size("kind:N", scale=alt.Scale(domain=[simultaneous, pointwise], range=[9, 3]), legend=None)
    diffs = alt.layer(
        alt.Chart(bars).mark_rule().encode(x=alt.X("low:Q", scale=x_diff, title=tr("chart.leaderboard.x_difference")),
                                           x2="high:Q", y=y_pair, color=colour, strokeWidth=width),
        alt.Chart(points).mark_point(filled=True, size=50, color="#1f4e79").encode(
            x=alt.X("estimate:Q", scale=x_diff), y=y_pair),
        alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(color="#555555", strokeDash=[4, 4]).encode(x="x:Q"),
    ).properties(width=WIDTH - 120, height=alt.Step(30), title=alt.TitleParams(
        tr("chart.leaderboard.pairs_panel"), fontSize=12))
    title = tr("chart.leaderboard.title")
    chart = alt.vconcat(means, diffs, spacing=22).resolve_scale(x="independent", y="independent").properties(
        title=title)
    return Chart(_plain(chart), title, _leaderboard_caption(m))


def _leaderboard_caption(m) -> str:
    """The leaderboard chart's caption: what is drawn, and how many simultaneous intervals exclude 0."""
    from ..study.compare import verdict
    drawn = [p for p in m.pairs if p.simultaneous.ci is not None]
    separated = sum(1 for p in drawn if verdict(p.simultaneous) != "includes_zero")
    caption = tr("chart.leaderboard.caption", count=integer(len(m.systems)), pairs=integer(len(drawn)),
                 level=pct(m.level, 0), separated=integer(separated))
    missing = [p.label for p in m.pairs if p.simultaneous.ci is None]
    return caption + (tr("chart.leaderboard.not_drawn", pairs="; ".join(missing)) if missing else "")
