"""perdoc: honest per-document uncertainty for retrieval and RAG evaluation.

Thousands of chunks from twenty documents are not thousands of cases: the document is the sampling
unit. perdoc turns per-chunk (or per-query) results into a per-document table and from it into
estimates, intervals and diagnostics whose numbers agree with R's clubSandwich and survey.
"""

from .errors import ColumnError, DataFileError, InputError, ParameterError, PerdocError
from .compare import Comparison, PairTable, compare
from .estimate import estimate, estimate_design
from .results import ConfidenceInterval, Diagnostics, Estimates, Interval
from .table import DocTable, Exclusion

__version__ = "0.1.0"

__all__ = [
    "DocTable", "Exclusion", "estimate", "estimate_design", "load_chunks", "load_docs", "load_pairs",
    "PairTable", "Comparison", "compare",
    "Estimates", "Interval", "ConfidenceInterval", "Diagnostics",
    "PerdocError", "InputError", "DataFileError", "ColumnError", "ParameterError",
]


def __getattr__(name):  # loaders import duckdb lazily
    if name in ("load_chunks", "load_docs", "load_pairs", "write_table"):
        from . import io
        return getattr(io, name)
    raise AttributeError(name)
