"""Display helpers for the notebooks: they format what the library computed, and escape every
piece of user text (document ids, params text) before it reaches the HTML report."""

from __future__ import annotations

import html

import pandas as pd

__all__ = ["show_chart", "show_table", "show_text", "note", "warning", "esc"]


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
