"""Evaluation-framework outputs in: each adapter turns one framework's per-sample results into a
plain chunk-level table (a pandas DataFrame, one row per measurement), the rows it left out
(:class:`perdoc.table.Exclusion`, with the reason) and notes on the conventions it applied, so the
ordinary loaders aggregate it unchanged.

* ``inspect``: inspect_ai logs (``.eval``, ``.json``), one row per sample and epoch (a ``.eval``
  file is read as one without naming the format);
* ``lm-eval``: lm-evaluation-harness ``--log_samples`` JSON Lines;
* ``ragas``: ragas per-sample exports (CSV, JSON, JSON Lines, Parquet);
* ``deepeval``: DeepEval ``EvaluationResult`` JSON (``test_results[].metrics_data[]``);
* TREC run + qrels with per-query measures from ir-measures: :func:`read_trec`.

Fields are dotted paths (``metadata.source_doc``, ``doc.source_id``, ``metrics.faithfulness``) or
name a score (an inspect scorer, an lm-eval metric, a DeepEval metric). The per-document tables of
an adapter's output are :mod:`perdoc.reading.adapted`'s (which loads what these read).
"""

from __future__ import annotations

from ...errors import ParameterError
from .. import formats as _formats
from .trec import column_names as trec_column_names
from .trec import read_trec

__all__ = ["FORMATS", "read", "read_trec", "trec_column_names", "is_adapter"]

#: The formats an adapter reads (``fmt=``, ``--format``, ``data.format``), from the one registry
#: (:mod:`perdoc.reading.formats`; a ``.eval`` file is inspect's without naming it).
FORMATS = _formats.names(adapter=True)
_ALIASES = {n: f.name for f in _formats.FORMATS if f.adapter and f.flag is None
            for n in (f.name, *f.aliases, *f.spellings)}


def is_adapter(fmt) -> bool:
    """Whether ``fmt`` names an evaluation-framework adapter (not a plain file format)."""
    return isinstance(fmt, str) and fmt.lower() in _ALIASES


def read(source, fmt: str, fields=None):
    """``(pandas.DataFrame, list[Exclusion], list[str] notes)`` from one framework's results.

    ``fields`` are the dotted names the caller needs (document id, score(s), document attributes);
    they come back as columns with exactly those names. Records lacking one of them (an errored
    sample, a failed metric, no score) are left out and counted in the exclusions, by reason.
    """
    if not is_adapter(fmt):
        raise ParameterError(f"fmt={fmt!r} names no evaluation-framework adapter; use one of {', '.join(FORMATS)}")
    kind = _ALIASES[fmt.lower()]
    fields = list(fields or [])
    if not fields or not all(isinstance(f, str) and f for f in fields):
        raise ParameterError(f"the {kind} adapter needs fields: the document id and score field names "
                             "(non-empty strings)")
    if kind == "inspect":
        from .inspect_log import read as reader
    elif kind == "lm-eval":
        from .lm_eval import read as reader
    elif kind == "ragas":
        from .tabular import read_ragas as reader
    else:
        from .tabular import read_deepeval as reader
    return reader(source, list(dict.fromkeys(fields)))
