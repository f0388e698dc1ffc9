"""Display helpers for the notebooks: they format what the library computed, and escape every
piece of user text (document ids, params text) before it reaches the HTML report."""

from __future__ import annotations

import html
import math

import pandas as pd

__all__ = ["show_chart", "show_table", "show_text", "note", "warning", "esc", "fmt", "no_sampling_error"]


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
