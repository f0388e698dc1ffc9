"""Display helpers for the notebooks: they format what the library computed, and escape every
piece of user text (document ids, params text) before it reaches the HTML report."""

from __future__ import annotations

import html
import math

import pandas as pd

__all__ = ["show_chart", "show_table", "show_text", "note", "warning", "esc", "fmt", "no_sampling_error",
           "headline_sentences"]


def esc(text) -> str:
    """HTML-escape user-provided text (document ids, population descriptions, ...)."""
    return html.escape(str(text), quote=True)


def _display_html(markup: str) -> None:
    from IPython.display import HTML, display
    display(HTML(markup))


def show_chart(chart) -> None:
    """Display a :class:`perdoc.charts.Chart` as inline SVG with its caption (offline, no script)."""
    from .charts import to_svg
    if chart is None:
        return
    svg = to_svg(chart.chart)
    _display_html(f'<figure class="perdoc-figure" aria-label="{esc(chart.title)}">{svg}'
                  f'<figcaption class="perdoc-caption">{esc(chart.caption)}</figcaption></figure>')


def show_table(df: pd.DataFrame, *, floatfmt: str = "{:.4g}", index: bool = False) -> None:
    """Display a DataFrame as an escaped HTML table."""
    shown = df.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            shown[col] = shown[col].map(lambda v: "—" if pd.isna(v) else floatfmt.format(v))
    shown = shown.astype(object).where(shown.notna(), "—")
    _display_html(shown.to_html(index=index, classes="perdoc", border=0, escape=True, na_rep="—"))


def show_text(text: str, *, tag: str = "p", cls: str | None = None) -> None:
    """Display one paragraph of (escaped) text."""
    klass = f' class="{cls}"' if cls else ""
    _display_html(f"<{tag}{klass}>{esc(text)}</{tag}>")


def note(text: str) -> None:
    show_text(text, tag="div", cls="perdoc-note")


def warning(text: str) -> None:
    show_text(text, tag="div", cls="perdoc-warning")


def fmt(x, spec: str = ".4g", none: str = "—") -> str:
    """A number for a sentence or table cell; ``none`` for None, NaN or infinity."""
    if x is None or isinstance(x, bool):
        return none if x is None else str(x)
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    return format(v, spec) if math.isfinite(v) else none


def no_sampling_error(sim) -> tuple[str, ...]:
    """The estimands (micro, macro) whose every simulated sample gave the census value exactly (RMSE 0
    for every method): the census documents do not differ, so there is no sampling error to cover
    and coverage cannot tell the methods apart."""
    out = []
    for estimand in ("micro", "macro"):
        rmse = [m.get("rmse") for name, m in sim.methods.items() if name.split(".", 1)[0] == estimand]
        truth = sim.truth.get(estimand)
        tol = 1e-12 * max(1.0, abs(truth) if truth is not None and math.isfinite(truth) else 1.0)
        if rmse and all(r is not None and math.isfinite(r) and abs(r) <= tol for r in rmse):
            out.append(estimand)
    return tuple(out)


def headline_sentences(h, est, kind: str) -> tuple[str, str]:
    """The headline (estimate, interval, method, df, K, N) and the sentence on the evidence behind it,
    from a :class:`perdoc.report.Headline`. The two never disagree with the simulation shown below."""
    p = h.interval
    lvl = f"{est.level:.0%}"
    if p.ci is not None:
        df_text = f"df = {p.df:.2f}; " if p.df is not None and p.df == p.df else ""
        approx = "APPROXIMATE " if h.approximate else ""
        title = (f"{kind} mean = {p.estimate:.4f}, {approx}{lvl} interval [{p.ci.low:.4f}, {p.ci.high:.4f}] "
                 f"({p.label}; {df_text}K = {est.K} documents; N = {est.N:,.0f} measurements).")
    else:
        title = f"{kind} mean = {p.estimate:.4f}: no interval ({p.label}): {p.reason or 'not available'}."
    where = {"census": "on the census", "pseudo-population": "on a pseudo-population built from this sample "
             "(weaker evidence than a census: it holds only documents like those sampled)"}.get(h.basis)
    if where is None:
        evidence = ("Not checked by simulation: no census was given, so this is the default method "
                    f"({p.label}), whose coverage on data like these is unknown. Add a census (key census.path) to "
                    "check every method on data like yours.")
    elif h.coverage is None:
        evidence = f"Checked by simulation {where}: {h.reason}."
    else:
        cov = f"{h.coverage:.3f} (Monte Carlo SE {h.mc_se:.3f}) of {h.reps:,} samples of K = {h.k} documents"
        if h.verified:
            evidence = (f"Checked by simulation {where}: this method covered {cov}, within Monte Carlo error of "
                        f"{lvl}; {h.reason}.")
        else:
            evidence = (f"Approximate: checked by simulation {where}, no method reached {lvl}; this one came closest, "
                        f"covering {cov}. Read the interval as narrower than its nominal {lvl}.")
    if p.out_of_range:
        lo_r, hi_r = p.metric_range
        evidence += f" The interval leaves the range [{lo_r:g}, {hi_r:g}] the metric cannot leave."
    return title, evidence
