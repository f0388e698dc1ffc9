"""TREC runs and qrels: per-query measures computed by ir-measures, one row per query, each query
assigned to the document it belongs to by a two-column map (query id, document id).

Conventions (stated in the notes the adapter returns):

* the measured queries are those judged in the qrels (trec_eval's convention); a query ranked in a
  run but not judged has no measure and is left out, counted;
* a judged query the run does not rank scores 0 (trec_eval ``-c``, the standard IR convention:
  a system that returns nothing for a query found nothing relevant); how many is reported;
* a judged query not in the map is left out, counted (it belongs to no known document).
"""

from __future__ import annotations

import csv
import gzip
import math
import os
from collections import Counter

from ...errors import DataFileError, InputError, ParameterError
from ..table import Exclusion
from ._core import check_file

_QUERY_HEADS = ("query_id", "qid", "query", "topic", "topic_id", "query-id")
_DOC_HEADS = ("doc_id", "doc", "document", "document_id", "docid", "doc-id")


def _ir_measures():
    try:
        import ir_measures
    except ImportError:
        raise ParameterError("TREC runs need ir-measures: pip install ir-measures "
                             "(or perdoc[frameworks])") from None
    return ir_measures


def column_names(run, measure: str, compare_run=None) -> tuple[str, str | None]:
    """The score column(s) of the table: the measure for one run; the runs' file names (without
    extension) for a comparison, ``A`` and ``B`` when those are equal."""
    if compare_run is None:
        return str(measure), None
    a = os.path.splitext(os.path.basename(os.fspath(run)))[0]
    b = os.path.splitext(os.path.basename(os.fspath(compare_run)))[0]
    if not a or not b or a == b or a in ("query", "doc") or b in ("query", "doc"):
        return "A", "B"
    return a, b


def read_doc_map(path, queries: set, *, allow_similar_ids: bool = False) -> dict:
    """query id -> document id from a two-column CSV/TSV. A header line is recognised by its names
    (query_id/qid/..., doc_id/doc/...) or by a first cell that is no query of the qrels or runs.
    Document ids that differ only in letter case or Unicode form are refused, as in the data, unless
    ``allow_similar_ids``."""
    path = check_file(path, "the document map")
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise DataFileError(f"cannot read {path} as the document map: it is not UTF-8 text") from None
    first = text.split("\n", 1)[0]
    delim = "\t" if "\t" in first else "," if "," in first else ("\t" if path.lower().endswith(".tsv") else ",")
    rows = [r for r in csv.reader(text.splitlines(), delimiter=delim) if r and any(c.strip() for c in r)]
    if not rows:
        raise InputError(f"{path}: the document map is empty")
    head = [c.strip().lower() for c in rows[0]]
    q_col, d_col, d_name = 0, 1, "2"
    if len(head) >= 2 and (head[0] in _QUERY_HEADS or head[1] in _DOC_HEADS or rows[0][0].strip() not in queries):
        for i, h in enumerate(head):
            if h in _QUERY_HEADS:
                q_col = i
            if h in _DOC_HEADS:
                d_col = i
        d_name = rows[0][d_col].strip() if d_col < len(rows[0]) else str(d_col + 1)
        rows = rows[1:]
    out, clash = {}, []
    for number, r in enumerate(rows, start=2):
        if len(r) <= max(q_col, d_col):
            raise InputError(f"{path}: a line has {len(r)} field(s); the document map needs two columns "
                             "(query id, document id)")
        q, d = r[q_col].strip(), r[d_col].strip()
        if not q or not d:
            raise InputError(f"{path}: a line has an empty query or document id ({r!r})")
        if q in out and out[q] != d:
            clash.append((q, out[q], d))
        out[q] = d
    if clash:
        q, d1, d2 = clash[0]
        raise InputError(f"{path}: {len(clash)} query id(s) map to more than one document (e.g. {q!r}: {d1!r} and "
                         f"{d2!r}); each query belongs to one document")
    from .._rows import _similar_ids
    _similar_ids(list(dict.fromkeys(out.values())), d_name, f"the document map {path}", allow_similar_ids)
    return out


def _lines(path: str, what: str):
    """(line number, fields) of each non-blank line of a TREC file (gzip-compressed when it ends in
    .gz, as ir-measures reads it), split on white space."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if line.strip():
                    yield number, line.split()
    except UnicodeDecodeError:
        raise DataFileError(f"cannot read {path} as {what}: it is not UTF-8 text") from None
    except (OSError, EOFError) as e:
        raise DataFileError(f"cannot read {path} as {what}: {getattr(e, 'strerror', None) or e}") from None


def _duplicates_note(path: str, what: str, count: int, first) -> str:
    q, d, a, b = first
    return (f"{count} repeated line(s) in {os.path.basename(path)} (the same query, document and {what} as an earlier "
            f"line) counted once, e.g. query {q}, document {d} at lines {a} and {b}")


class _Refused(ValueError):
    """A value a TREC line may not hold: the line is refused as ``the <column> <value> is <what> (query
    ..., document ...)<why>``."""

    def __init__(self, what: str, why: str = ""):
        super().__init__(what, why)
        self.what, self.why = what, why


def _grade(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _Refused("not an integer") from None


def _score(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise _Refused("not a number") from None
    if not math.isfinite(x):
        raise _Refused("not a finite number", "; a run ranks documents by finite scores")
    return x


def _checked_lines(path: str, *, what: str, kind: str, columns: tuple, value: str, parse, conflict: str, make):
    """``(rows, notes)`` of a TREC file whose lines hold ``columns`` (the query id first, the document
    id third), checked line by line: a line with another number of fields, or whose ``value`` column
    ``parse`` refuses (:class:`_Refused`), is refused with its number (``kind``: the file's kind in
    that message; ``what``: in :func:`_lines`'). So is a query-document pair given twice with
    different values: ``conflict`` formatted with ``q``, ``d``, the earlier value and line ``a``,
    ``i`` and the later ``b``, ``j``. A line repeating an earlier one's query, document and value is
    counted once, in a note; each other line gives the row ``make(parts, parsed value)``."""
    at = columns.index(value)
    rows, seen, repeats, first = [], {}, 0, None
    for number, parts in _lines(path, what):
        if len(parts) != len(columns):
            raise DataFileError(f"{path}: line {number} has {len(parts)} field(s); a {kind} line has {len(columns)} "
                                f"({', '.join(columns)})")
        q, d, text = parts[0], parts[2], parts[at]
        try:
            x = parse(text)
        except _Refused as e:
            raise DataFileError(f"{path}: line {number}: the {value} {text[:40]!r} is {e.what} (query {q}, "
                                f"document {d}){e.why}") from None
        earlier = seen.get((q, d))
        if earlier is not None:
            if earlier[0] != x:
                raise InputError(f"{path}: " + conflict.format(q=q, d=d, a=earlier[0], i=earlier[1], b=x, j=number))
            repeats += 1
            first = first or (q, d, earlier[1], number)
            continue
        seen[(q, d)] = (x, number)
        rows.append(make(parts, x))
    notes = [_duplicates_note(path, value, repeats, first)] if repeats else []
    return rows, notes


def read_qrels(irm, path: str) -> tuple[list, list[str]]:
    """The judgements of a TREC qrels file (query id, iteration, document id, integer grade), as
    ir-measures' ``read_trec_qrels`` gives them, checked line by line: a line that is not four fields
    with an integer grade is refused with its number, and so is a query-document pair judged twice
    with different grades (which grade counts would otherwise be decided silently by the order of the
    lines). A line repeating an earlier judgement exactly is counted once, in a note."""
    return _checked_lines(
        path, what="TREC qrels", kind="TREC qrels", columns=("query id", "iteration", "document id", "grade"),
        value="grade", parse=_grade,
        conflict="query {q}, document {d} is judged twice with different grades: {a} at line {i} and {b} at line "
                 "{j}; keep one judgement per query and document",
        make=lambda parts, g: irm.Qrel(query_id=parts[0], doc_id=parts[2], relevance=g, iteration=parts[1]))


def read_run(irm, path: str) -> tuple[list, list[str]]:
    """The ranked documents of a TREC run (query id, Q0, document id, rank, score, tag), as
    ir-measures' ``read_trec_run`` gives them, checked line by line: a line that is not six fields, a
    score that is not a number, or is NaN or infinite (the ranking is by score: such a score has no
    place in it), is refused with its number; so is a document ranked twice for one query with
    different scores. A line repeating an earlier one's query, document and score is counted once."""
    return _checked_lines(
        path, what="a TREC run", kind="TREC run", columns=("query id", "Q0", "document id", "rank", "score", "run tag"),
        value="score", parse=_score,
        conflict="query {q} ranks document {d} twice with different scores: {a} at line {i} and {b} at line {j}; "
                 "a run ranks each document once per query",
        make=lambda parts, x: irm.ScoredDoc(query_id=parts[0], doc_id=parts[2], score=x))


def _per_query(irm, measure, qrels, run_path: str, notes: list) -> tuple[dict, set]:
    run, more = read_run(irm, run_path)
    notes.extend(more)
    if not run:
        raise InputError(f"{run_path}: the TREC run is empty")
    ranked = {r.query_id for r in run}
    values = {m.query_id: float(m.value) for m in irm.iter_calc([measure], qrels, run)}
    return values, ranked


def read_trec(run, qrels, measure: str, doc_map, *, compare_run=None, allow_similar_ids: bool = False):
    """``(DataFrame, exclusions, notes)``: columns ``query``, ``doc`` and the score column(s) named by
    :func:`column_names` (two with ``compare_run``: both runs on the same judged queries)."""
    import pandas as pd
    irm = _ir_measures()
    try:
        m = irm.parse_measure(str(measure))
    except Exception:
        try:  # trec_eval's names: ndcg_cut.10, recip_rank, P.5
            found = list(irm.parse_trec_measure(str(measure)))
        except Exception:
            found = []
        if len(found) != 1:
            found = []
        m = found[0] if found else None
    if m is None:
        raise ParameterError(f"measure {measure!r} is not one ir-measures parses (e.g. nDCG@10, RR, P@5, R@100, AP): "
                             "see ir-measures' list of measures") from None
    qrels_path = check_file(qrels, "the qrels")
    judged_rows, qrels_notes = read_qrels(irm, qrels_path)
    if not judged_rows:
        raise InputError(f"{qrels_path}: the qrels are empty")
    judged = {r.query_id for r in judged_rows}
    runs = [check_file(run, "the TREC run")] + ([check_file(compare_run, "the TREC run")] if compare_run else [])
    names = [n for n in column_names(runs[0], str(m), compare_run) if n is not None]
    results, ranked_all = [], set()
    notes = [f"per-query {m} computed by ir-measures {getattr(irm, '__version__', '')} from the qrels "
             f"{os.path.basename(qrels_path)} ({len(judged)} judged queries)"] + qrels_notes
    zero_filled = {}
    for path, name in zip(runs, names):
        values, ranked = _per_query(irm, m, judged_rows, path, notes)
        ranked_all |= ranked
        absent = sorted(judged - ranked)
        zero_filled[name] = len(absent)
        values = {q: 0.0 if q in absent else values.get(q, 0.0) for q in judged}
        results.append(values)
        if absent:
            notes.append(f"{len(absent)} judged quer{'y' if len(absent) == 1 else 'ies'} not ranked by "
                         f"{os.path.basename(path)} score 0 (trec_eval -c, the standard IR convention), "
                         f"e.g. {', '.join(absent[:3])}")
    mapping = read_doc_map(doc_map, judged | ranked_all, allow_similar_ids=allow_similar_ids)
    exclusions = []
    unjudged = sorted(ranked_all - judged)
    if unjudged:
        exclusions.append(Exclusion(len(unjudged), "queries ranked in the run(s) but not judged in the qrels (no "
                                                   f"measure; e.g. {', '.join(unjudged[:3])})"))
    unmapped = sorted(q for q in judged if q not in mapping)
    if unmapped:
        exclusions.append(Exclusion(len(unmapped), "judged queries not in the document map (e.g. "
                                                   f"{', '.join(unmapped[:3])})"))
    rows = [(q, mapping[q], *(r[q] for r in results)) for q in sorted(judged) if q in mapping]
    if not rows:
        raise InputError(f"no judged query of {qrels_path} is in the document map {os.fspath(doc_map)}; "
                         "check that the map's first column holds the qrels' query ids")
    df = pd.DataFrame(rows, columns=["query", "doc", *names])
    per_doc = Counter(mapping[q] for q in judged if q in mapping)
    notes.append(f"each judged query is one measurement of the document the map assigns it to: {len(rows)} "
                 f"queries in {len(per_doc)} documents")
    if compare_run:
        notes.append(f"paired comparison: {names[0]} = {os.path.basename(runs[0])}, {names[1]} = "
                     f"{os.path.basename(runs[1])}, both on the same judged queries")
    return df, exclusions, notes
