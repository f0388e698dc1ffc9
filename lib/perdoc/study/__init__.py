"""Study: from a per-document table (and a params file's declarations) to answers. In: a
:class:`~perdoc.reading.table.DocTable` (or a paired one), the design, the level; out: estimates with
every interval and the one that leads (``policy``), comparisons of two or more systems, coverage simulations on
a census, sample-size plans, drawn samples and design plans.

Modules: ``estimate``, ``compare``, ``multi`` (several systems: every pair, Holm p-values, a
simultaneous band and a ranking), ``simulate``, ``plan``, ``sampling`` (perdoc sample),
``design_sim`` and ``design_plan`` (designs simulated and compared), ``policy``, ``pseudo``,
``synthetic`` (censuses to test on), ``params`` (the params file), ``run`` (a params file's study:
load, estimate, simulate).
"""

import importlib as _importlib

_PUBLIC = {name: "run" for name in (
    "load_study_table", "load_study_pairs", "load_study_frame", "frame_path", "sample_path", "load_study_sample",
    "estimate_study", "load_study_census", "simulation_design", "simulate_study", "strata_experiment",
    "design_plan_study")}
_PUBLIC.update({"Study": "params", "load_params": "params", "ParamsError": "params"})
_PUBLIC.update({name: "multi" for name in ("compare_many", "MultiComparison", "PairDifference", "SystemRank")})
_PUBLIC.update({"plan_difference": "plan", "DifferencePlan": "plan"})
__all__ = sorted(_PUBLIC)


def __getattr__(name):
    if name in _PUBLIC:
        return getattr(_importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
