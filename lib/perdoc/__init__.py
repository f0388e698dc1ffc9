"""perdoc: honest per-document uncertainty for retrieval and RAG evaluation.

Thousands of chunks from twenty documents are not thousands of cases: the document is the sampling
unit. perdoc turns per-chunk (or per-query) results into a per-document table and from it into
estimates, intervals and diagnostics whose numbers agree with R's clubSandwich and survey.

The package follows the data's way, one subpackage per step, each importing only from the steps
before it:

* :mod:`perdoc.reading`: files, streams, evaluation-framework logs, engines, the frame and the
  sampling manifest in; a per-document table (:class:`~perdoc.reading.table.DocTable`) out;
* :mod:`perdoc.methods`: pure functions of per-document arrays (intervals, bootstrap, designs,
  distributions), batch-aware, no I/O;
* :mod:`perdoc.study`: a study's estimates, comparisons, simulations, plans and samples, and which
  interval leads (the policy);
* :mod:`perdoc.report`: the analysis of a params file, the notebooks' helpers, charts, checklist,
  languages and rendering.

:mod:`perdoc.cli` formats what the steps compute, and nothing imports it. The earlier flat module
names (``perdoc.table``, ``perdoc.io``, ``perdoc.simulate``, ...) still import: each gives the moved
module itself (:data:`MOVED`).
"""

import importlib as _importlib
import importlib.abc as _abc
import importlib.util as _util
import sys as _sys

#: The flat module names of earlier versions and where each module lives now.
MOVED = {
    "table": "reading.table", "_rows": "reading._rows", "io": "reading.io", "engines": "reading.engines",
    "export": "reading.export", "pairs": "reading.pairs", "frame": "reading.frame",
    "sample_io": "reading.manifest", "adapters": "reading.adapters",
    "adapters._core": "reading.adapters._core", "adapters.inspect_log": "reading.adapters.inspect_log",
    "adapters.lm_eval": "reading.adapters.lm_eval", "adapters.tabular": "reading.adapters.tabular",
    "adapters.trec": "reading.adapters.trec",
    "_dist": "methods._dist", "_quantiles": "methods._quantiles", "bootstrap": "methods.bootstrap",
    "bounded": "methods.bounded", "micro": "methods.micro", "macro": "methods.macro", "wild": "methods.wild",
    "designs": "methods.designs", "diagnostics": "methods.diagnostics", "results": "methods.results",
    "survey": "methods.survey",
    "estimate": "study.estimate", "compare": "study.compare", "simulate": "study.simulate", "plan": "study.plan",
    "sampling": "study.sampling", "design_sim": "study.design_sim", "design_plan": "study.design_plan",
    "policy": "study.policy", "pseudo": "study.pseudo", "synthetic": "study.synthetic", "params": "study.params",
    "notebook": "report.notebook", "charts": "report.charts", "checklist": "report.checklist",
    "i18n": "report.i18n", "_spanish": "report._spanish", "teach": "report.teach",
}


class _Moved(_abc.MetaPathFinder, _abc.Loader):
    """``import perdoc.table`` gives the module ``perdoc.reading.table`` itself: one module object, so
    its attributes, patches and classes are the same whichever name imported it."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("perdoc.") and fullname[7:] in MOVED:
            return _util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        module = _importlib.import_module("perdoc." + MOVED[spec.name[7:]])
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module):
        # the import system has just set the module's __spec__ to the old name's: give it back its own
        module.__spec__ = module.__spec__.loader_state


if not any(type(f).__name__ == "_Moved" for f in _sys.meta_path):
    _sys.meta_path.insert(0, _Moved())

from .errors import ColumnError, DataFileError, InputError, ParameterError, PerdocError  # noqa: E402
from .methods.results import ConfidenceInterval, Diagnostics, Estimates, Interval  # noqa: E402
from .reading.table import DocTable, Exclusion  # noqa: E402
from .study.compare import Comparison, PairTable, compare  # noqa: E402
from .study.estimate import estimate, estimate_design  # noqa: E402
from .study.policy import Headline, lead  # noqa: E402

# perdoc.estimate and perdoc.compare are the functions; their modules' old names point at the modules
# already loaded, so importing them later cannot rebind the functions' names
for _old in ("estimate", "compare"):
    _sys.modules.setdefault(f"{__name__}.{_old}", _sys.modules[f"{__name__}.{MOVED[_old]}"])

__version__ = "0.1.0"

__all__ = [
    "DocTable", "Exclusion", "estimate", "estimate_design", "load_chunks", "load_docs", "load_pairs",
    "PairTable", "Comparison", "compare", "compare_many", "MultiComparison", "lead", "Headline",
    "Estimates", "Interval", "ConfidenceInterval", "Diagnostics",
    "PerdocError", "InputError", "DataFileError", "ColumnError", "ParameterError",
]


def __getattr__(name):  # loaders import duckdb lazily; the many-systems comparison is imported when used
    if name in ("load_chunks", "load_docs", "load_pairs", "write_table"):
        from .reading import io
        return getattr(io, name)
    if name in ("compare_many", "MultiComparison"):   # several systems: imported when first asked for
        from .study import multi
        return getattr(multi, name)
    if name in MOVED:   # perdoc.diagnostics and the like: the moved module
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(name)
