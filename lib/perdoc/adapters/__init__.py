"""Evaluation-framework outputs in: each adapter turns one framework's per-sample results into a
plain chunk-level table (a pandas DataFrame, one row per measurement), the rows it left out
(:class:`perdoc.table.Exclusion`, with the reason) and notes on the conventions it applied, so the
ordinary loaders aggregate it unchanged.

* ``inspect``: inspect_ai logs (``.eval``, ``.json``), one row per sample and epoch;
* ``lm-eval``: lm-evaluation-harness ``--log_samples`` JSON Lines;
* ``ragas``: ragas per-sample exports (CSV, JSON, JSON Lines, Parquet);
* ``deepeval``: DeepEval ``EvaluationResult`` JSON (``test_results[].metrics_data[]``);
* TREC run + qrels with per-query measures from ir-measures: :func:`read_trec`.

Fields are dotted paths (``metadata.source_doc``, ``doc.source_id``, ``metrics.faithfulness``) or
name a score (an inspect scorer, an lm-eval metric, a DeepEval metric).
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import ParameterError
from .trec import column_names as trec_column_names
from .trec import read_trec

__all__ = ["FORMATS", "read", "read_trec", "trec_column_names", "is_adapter", "load_chunks", "load_pairs",
           "load_trec", "load_trec_pairs"]

#: The formats an adapter reads (``fmt=``, ``--format``, ``data.format``).
FORMATS = ("inspect", "lm-eval", "ragas", "deepeval")
_ALIASES = {"inspect": "inspect", "inspect-ai": "inspect", "inspect_ai": "inspect",
            "lm-eval": "lm-eval", "lm_eval": "lm-eval", "lmeval": "lm-eval", "lm-eval-harness": "lm-eval",
            "ragas": "ragas", "deepeval": "deepeval"}


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


def _attach(table, source, fmt: str, exclusions, notes):
    """The loaded table with the adapter's path, format, notes and exclusions in it."""
    import os
    info = dict(table.source)
    info["path"] = os.fspath(source) if isinstance(source, (str, os.PathLike)) else info.get("path")
    info["format"] = fmt
    info["notes"] = list(info.get("notes") or []) + list(notes)
    return replace(table, source=info, exclusions=tuple(table.exclusions) + tuple(exclusions))


def load_chunks(source, fmt: str, doc: str, score: str, *, attrs=None, metric=None, allow_similar_ids=False):
    """:func:`perdoc.io.load_chunks` on an adapter's table; notes in ``table.source["notes"]``."""
    from .. import io
    fields = [doc, score, *(attrs or {}).values()]
    df, exclusions, notes = read(source, fmt, fields)
    table = io.load_chunks(df, doc=doc, score=score, attrs=attrs, metric=metric,
                           allow_similar_ids=allow_similar_ids)
    return _attach(table, source, _ALIASES[fmt.lower()], exclusions, notes)


def load_pairs(source, fmt: str, doc: str, a: str, b: str, *, unpaired=False, metric=None, allow_similar_ids=False):
    """:func:`perdoc.io.load_pairs` on an adapter's table (rows lacking either score are left out,
    counted, so the rows kept are paired)."""
    from .. import io
    df, exclusions, notes = read(source, fmt, [doc, a, b])
    pairs = io.load_pairs(df, doc=doc, a=a, b=b, unpaired=unpaired, metric=metric,
                          allow_similar_ids=allow_similar_ids)
    return _attach(pairs, source, _ALIASES[fmt.lower()], exclusions, notes)


def load_trec(run, qrels, measure: str, doc_map, *, metric=None, allow_similar_ids=False):
    """The per-document table of one run's per-query ``measure`` (documents from ``doc_map``)."""
    from .. import io
    df, exclusions, notes = read_trec(run, qrels, measure, doc_map, allow_similar_ids=allow_similar_ids)
    score = df.columns[2]  # the measure as ir-measures names it (ndcg_cut_10 -> nDCG@10)
    table = io.load_chunks(df, doc="doc", score=score, metric=metric, allow_similar_ids=allow_similar_ids)
    return _attach(table, run, "trec", exclusions, notes)


def load_trec_pairs(run, compare_run, qrels, measure: str, doc_map, *, metric=None, allow_similar_ids=False):
    """The paired table of two runs' per-query ``measure`` on the same judged queries."""
    from .. import io
    df, exclusions, notes = read_trec(run, qrels, measure, doc_map, compare_run=compare_run,
                                      allow_similar_ids=allow_similar_ids)
    a, b = df.columns[2], df.columns[3]
    pairs = io.load_pairs(df, doc="doc", a=a, b=b, metric=metric, allow_similar_ids=allow_similar_ids)
    return _attach(pairs, run, "trec", exclusions, notes)
