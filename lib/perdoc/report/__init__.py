"""Report: from a params file to one offline HTML report with its JSON summary. In: a validated
study (:mod:`perdoc.study.params`) and what the study step computes; out: the analysis object
(``build.analyse``), the notebooks' helpers (``notebook``, ``charts``, ``checklist``, ``i18n``,
``_spanish``, ``teach``), and the rendering (``build.build_report``: papermill, nbconvert, the
``templates``).
"""

import importlib as _importlib

_PUBLIC = {name: "build" for name in (
    "Analysis", "analyse", "summary", "design_description", "build_report", "build_reports", "ReportError",
    "NOTEBOOKS", "notebook_dir", "frame_leads", "choose_headline", "Headline", "drawn_description",
    "combined_notebook", "package_versions", "input_name", "perdoc_folder", "markdown_literal", "render",
    "to_html", "BuildInterrupted")}
__all__ = sorted(_PUBLIC)


def __getattr__(name):   # lazily: papermill and nbconvert load only when a report is built
    if name in _PUBLIC:
        return getattr(_importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
