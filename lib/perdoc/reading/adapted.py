"""Per-document tables of evaluation-framework outputs: what :mod:`perdoc.reading.adapters` reads,
loaded by :mod:`perdoc.reading.io` as any other table, with the adapter's exclusions, notes, path and
format attached. In: a framework's output (or a TREC run, qrels and document map); out: a
:class:`~perdoc.reading.table.DocTable` or a paired table."""

from __future__ import annotations

from dataclasses import replace

from . import io
from .adapters import _ALIASES as ALIASES
from .adapters import read, read_trec

__all__ = ["load_chunks", "load_pairs", "load_trec", "load_trec_pairs"]


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
    fields = [doc, score, *(attrs or {}).values()]
    df, exclusions, notes = read(source, fmt, fields)
    table = io.load_chunks(df, doc=doc, score=score, attrs=attrs, metric=metric,
                           allow_similar_ids=allow_similar_ids)
    return _attach(table, source, ALIASES[fmt.lower()], exclusions, notes)


def load_pairs(source, fmt: str, doc: str, a: str, b: str, *, unpaired=False, metric=None, allow_similar_ids=False):
    """:func:`perdoc.io.load_pairs` on an adapter's table (rows lacking either score are left out,
    counted, so the rows kept are paired)."""
    df, exclusions, notes = read(source, fmt, [doc, a, b])
    pairs = io.load_pairs(df, doc=doc, a=a, b=b, unpaired=unpaired, metric=metric,
                          allow_similar_ids=allow_similar_ids)
    return _attach(pairs, source, ALIASES[fmt.lower()], exclusions, notes)


def load_trec(run, qrels, measure: str, doc_map, *, metric=None, allow_similar_ids=False):
    """The per-document table of one run's per-query ``measure`` (documents from ``doc_map``)."""
    df, exclusions, notes = read_trec(run, qrels, measure, doc_map, allow_similar_ids=allow_similar_ids)
    score = df.columns[2]  # the measure as ir-measures names it (ndcg_cut_10 -> nDCG@10)
    table = io.load_chunks(df, doc="doc", score=score, metric=metric, allow_similar_ids=allow_similar_ids)
    return _attach(table, run, "trec", exclusions, notes)


def load_trec_pairs(run, compare_run, qrels, measure: str, doc_map, *, metric=None, allow_similar_ids=False):
    """The paired table of two runs' per-query ``measure`` on the same judged queries."""
    df, exclusions, notes = read_trec(run, qrels, measure, doc_map, compare_run=compare_run,
                                      allow_similar_ids=allow_similar_ids)
    a, b = df.columns[2], df.columns[3]
    pairs = io.load_pairs(df, doc="doc", a=a, b=b, metric=metric, allow_similar_ids=allow_similar_ids)
    return _attach(pairs, run, "trec", exclusions, notes)
