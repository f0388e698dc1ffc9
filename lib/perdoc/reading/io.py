"""Reading chunk-level results and per-document tables; writing the per-document table.

Two routes lead to a :class:`~perdoc.table.DocTable`:

* :func:`load_chunks` reads one row per chunk (or query) -- a CSV/TSV, Parquet or JSON Lines file,
  or a pandas DataFrame -- and aggregates it to per-document sums with DuckDB in one streaming
  ``GROUP BY`` pass, so a file larger than memory works (DuckDB spills to a temporary folder).
  The same pass counts bad values (missing document ids, missing, non-numeric, NaN or infinite
  scores), so no second scan of the file is needed.
* :func:`load_docs` reads a table that is already aggregated, one row per document, e.g. the
  result of running this in Spark or a warehouse (see :data:`GROUP_BY_SQL`)::

      SELECT doc_id, COUNT(*) AS n, SUM(score) AS s, SUM(score*score) AS q FROM results GROUP BY doc_id

A source is a file path, ``"-"`` for standard input, a pipe (``<(zcat runs.csv.gz)``) or a
DataFrame: pandas, polars, a pyarrow Table or RecordBatchReader and a DuckDB relation are scanned by
DuckDB in memory; an Ibis table or a Spark DataFrame is aggregated where it lives
(:mod:`perdoc.engines`), as is a file with ``engine="spark"`` or a warehouse table with
``backend={"url": ..., "table": ...}``. A file's format comes from ``fmt`` when given, else from
its extension (:mod:`perdoc.reading.formats`, the one registry: ``.csv``, ``.tsv``, ``.jsonl``,
``.json``, ``.parquet``, and ``.eval``, an inspect_ai log read by its adapter). A stream has no file
name to tell its format from: pass ``fmt`` (``--format`` on the command line); it is copied into
DuckDB's temporary folder (deleted afterwards) and read from there,
gzip-compressed or not. Paths are always local files, never URLs: DuckDB gets absolute paths and
never installs or loads an extension. A file whose bytes contradict its name (gzip or Parquet data
in a ``.csv``, an Excel workbook, UTF-16 text) is refused with a message saying what it is.

:func:`write_table` (from :mod:`perdoc.export`) writes the per-document table for audit (``.csv`` or
``.parquet``), atomically, with formula-like text cells neutralised in CSV.

Bad input raises :class:`~perdoc.errors.DataFileError`, :class:`~perdoc.errors.ColumnError` or
:class:`~perdoc.errors.InputError` with a one-line message naming the file, the column and the rule.
"""

from __future__ import annotations

import csv
import difflib
import functools
import gzip
import json
import math
import os
import re
import stat
import sys
import tempfile
import unicodedata
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import duckdb
import numpy as np

from .. import _allocator
from ..errors import ColumnError, DataFileError, InputError, ParameterError, PerdocError
from .export import neutralise_csv_cell, write_table
from ..messages import Message
from .table import AsciiIds, DocTable
from ._rows import (  # noqa: F401  (shared with perdoc.engines; re-exported)
    _SCALE_HI, _SCALE_LO,
    _ASCII_SPACE, _COLUMN_RE, _DECLARED, _EXTENSIONS, _FMT_ALIASES, _PASS_FORMAT,
    _REASONS, _SIMILAR_EXAMPLES, _STDIN, _ascii_ids, _build, _check_scores, _chunk_metric, _folded,
    _chunk_rows, _chunk_table, _format_of, _id_key, _metric_info, _not_found,
    _pairs_table, _plain, _scale_for, _short, _similar_ids, _violates,
    _violation_error,
)

__all__ = ["load_chunks", "load_chunks_and_scores", "load_cross_sums", "load_cross_sums_many", "load_docs", "load_pairs", "write_table", "neutralise_csv_cell", "GROUP_BY_SQL",
           "DUCKDB_MEMORY_LIMIT", "METRICS"]

#: The one aggregation to run where the logs live (Spark SQL, BigQuery, Snowflake, DuckDB, ...).
#: Feed its output to :func:`load_docs` with ``doc="doc_id", n="n", s="s", q="q"``.
GROUP_BY_SQL = "SELECT doc_id, COUNT(*) AS n, SUM(score) AS s, SUM(score*score) AS q FROM results GROUP BY doc_id"

#: Memory DuckDB may use before it spills the GROUP BY to its temporary folder.
DUCKDB_MEMORY_LIMIT = "1GB"

#: The most bytes read from a stream (standard input, a named pipe, ``<(...)``, a device): a stream is
#: copied to a temporary file first, and an endless one (``/dev/zero``) must not fill the disk. The
#: environment variable PERDOC_STREAM_LIMIT sets another cap (bytes, or with a K, M, G or T suffix).
STREAM_LIMIT = 4 << 30

#: The kinds of metric a user may declare (``metric=``, ``--metric``, params ``data.metric``).
METRICS = ("binary", "proportion", "score")

_FMT_NAMES = {"csv": "CSV", "tsv": "TSV", "parquet": "Parquet", "jsonl": "JSON Lines",
              "json": "JSON", "dataframe": "DataFrame"}
_INTEGER_TYPES = frozenset(("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                            "UINTEGER", "UBIGINT", "UHUGEINT"))
_INT64_TYPES = _INTEGER_TYPES - {"HUGEINT", "UHUGEINT"}  # fetched as int8 ... uint64 arrays
_NUMERIC_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                  "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "REAL", "DOUBLE", "DECIMAL")
# Scores whose largest size lies outside [2**-200, 2**200] are summed rescaled by a power of two
# (DocTable.scale): far inside the double range for every product the estimators form, and far
# outside any ordinary metric, whose sums then stay bit-identical and cost no extra pass.
# Below this size a score's square is no longer a normal double: precision is lost.
_SQUARE_UNDERFLOW = 1e-150


# ====================================================================== public API
def load_chunks(source, doc: str, score: str, *, fmt: str | None = None,
                attrs: dict[str, str] | None = None, metric: str | None = None,
                allow_similar_ids: bool = False, engine: str | None = None,
                backend: dict | None = None) -> DocTable:
    """Aggregate one-row-per-chunk results to the per-document table.

    ``source`` is a path to a CSV/TSV (optionally ``.gz``), Parquet or JSON Lines file, or an
    evaluation framework's output (an inspect_ai ``.eval`` log, ...: read by its adapter of
    :mod:`perdoc.reading.adapters`, ``doc`` and ``score`` then dotted field names) -- the format
    comes from the extension unless ``fmt`` is given (:mod:`perdoc.reading.formats` lists every
    format and extension; ``.eval`` is inspect's) -- ``"-"`` or a pipe (then ``fmt`` is needed), or
    a pandas DataFrame. ``doc`` names the document-id column (ids are compared as
    text, exactly), ``score`` the score column (numbers, or booleans counted as 1/0). Per document:
    ``n = count(*)``, ``s = sum(score)``, ``q = sum(score*score)``, sorted by document id.

    ``attrs`` maps names to columns that describe the document rather than the chunk (a stratum, the
    number of chunks in the document's population); each must hold one value per document.

    ``metric`` declares the kind of score: ``"binary"`` (only 0 and 1), ``"proportion"`` (in
    [0, 1]) or ``"score"`` (any finite number); a score that breaks the declaration is refused.
    Without it the kind is inferred. Either way ``table.source`` records ``metric``,
    ``metric_declared`` and ``metric_reason``.

    Ids that differ only in surrounding spaces, letter case or Unicode normal form (``"d7"`` and
    ``"d7 "``) are refused unless ``allow_similar_ids=True``; then they stay distinct documents and
    ``table.source["similar_ids"]`` counts the groups, with a few examples.

    Scores so large (or so small) that their squares leave the double range are summed multiplied
    by a power of two, recorded as :attr:`DocTable.scale`; ordinary scores keep ``scale = 1``.
    """
    return _load_chunks(source, doc, score, fmt=fmt, attrs=attrs, metric=metric,
                        allow_similar_ids=allow_similar_ids, engine=engine, backend=backend)[0]


def load_chunks_and_scores(source, doc: str, score: str, **options) -> tuple[DocTable, np.ndarray | None]:
    """:func:`load_chunks` (same arguments) and, from the same read of the rows, every chunk's score
    when the scores are not all 0 or 1 (else None: the sums say everything): document after document
    in the table's order, each document's chunks in the order of the rows, rows without a usable score
    left out, multiplied by the table's :attr:`~DocTable.scale` like its sums. What a simulated take of
    a continuous metric labels (:func:`perdoc.design_sim.simulate_design`). Data read where they live
    (an Ibis table, Spark) give None."""
    return _load_chunks(source, doc, score, scores=True, **options)


def _load_chunks(source, doc: str, score: str, *, fmt: str | None = None,
                 attrs: dict[str, str] | None = None, metric: str | None = None,
                 allow_similar_ids: bool = False, engine: str | None = None,
                 backend: dict | None = None, scores: bool = False) -> tuple[DocTable, np.ndarray | None]:
    """:func:`load_chunks`, and with ``scores`` the chunk scores of :func:`load_chunks_and_scores`."""
    attrs = dict(attrs or {})
    metric = _check_metric(metric)
    _check_names(doc=doc, score=score, **{f"attrs[{k!r}]": v for k, v in attrs.items()})
    source, fmt, origin = _engine_source(source, fmt, engine, backend)
    source, fmt, adapted = _adapt(source, fmt, [doc, score, *attrs.values()], origin)
    remote = _remote_table(source)
    if remote is not None:  # an Ibis table or Spark DataFrame: aggregated where it lives
        from .engines import aggregate_chunks
        table = aggregate_chunks(remote, doc=doc, score=score, attrs=attrs, metric=metric,
                                 allow_similar_ids=allow_similar_ids, label=_origin_label(origin))
        return _adapted_table(table, adapted), None
    with _open_source(source, fmt) as src:
        src.require(doc, score, *attrs.values())
        # a CSV score column is first parsed by the reader as numbers; a field it cannot parse sends
        # the read back to the text route, which counts and shows such fields
        src.read_as_numbers(score)
        try:
            raw, x, text, exact, rng, res = _first_pass(src, doc, score, attrs)
        except _TypedReadFailed:
            src.read_as_text()
            raw, x, text, exact, rng, res = _first_pass(src, doc, score, attrs)
        src.typed_unchecked = False
        s_all, q_all = _plain(res["s"], float), _plain(res["q"], float)
        if exact or (np.all(np.isfinite(s_all)) and np.all(np.isfinite(q_all))):
            res["n_nan"] = res["n_inf"] = np.zeros(1)
        else:
            bad = src.fetch(f"""SELECT count(*) FILTER (WHERE isnan(x)) AS n_nan,
                                       count(*) FILTER (WHERE isinf(x)) AS n_inf
                                FROM (SELECT {x} AS x FROM {src.relation})""")
            res["n_nan"], res["n_inf"] = bad["n_nan"], bad["n_inf"]
        if exact:
            binary = bool(np.array_equal(q_all, s_all))
        else:
            # scores in [0, 1] are 0/1 exactly when x^2 = x for each, so only when q = s (then a
            # count confirms it, _only_01: q = s may hold by rounding); for 0/1 scores the sums are
            # whole numbers, exact. The range comes from the file's statistics, or the pass counted
            # the scores outside [0, 1]
            within = (rng[0] >= 0 and rng[1] <= 1 if rng is not None
                      else not np.any(_plain(res["out01"], float)))
            if "non01" in res:
                binary = not np.any(_plain(res["non01"], float))
            else:
                binary = within and bool(np.array_equal(q_all, s_all)) and _only_01(src, x)

        counts, docs, rows = _chunk_rows(res, doc, score, src.label)
        # kind of metric and size of the scores: a 0/1 or integer column needs nothing more; other
        # scores were summed compensated in the same pass, which also gave their range; only scores
        # whose squares leave the double range are summed again (rescaled)
        scale, lo, hi = 1.0, (0.0 if binary else None), (1.0 if binary else None)
        if not exact and not binary:
            if rng is not None:
                lo, hi = rng
                if _scale_for(max(-lo, hi)) != 1.0:
                    scale, lo, hi = _compensated_sums(src, res, doc, x, scale=_scale_for(max(-lo, hi)))
            elif _ordinary_size(counts, s_all, q_all):
                # (of the range only the side of [0, 1] is known, all the kind of metric asks)
                lo, hi = (0.0, 1.0) if within else (-math.inf, math.inf)
            else:   # (the largest |score| may be beyond 2^+-200: its range, and the sums rescaled)
                scale, lo, hi = _compensated_sums(src, res, doc, x)
        table = _chunk_table(res, counts=counts, docs=docs, rows=rows, doc=doc, score=score, attrs=attrs,
                             metric=metric, allow_similar_ids=allow_similar_ids, label=src.label,
                             info=src.info(rows), binary=binary, exact=exact, lo=lo, hi=hi, scale=scale,
                             violation=lambda: _metric_violation(src, x, score, metric),
                             integer_ids=src.is_integer_column(doc) or bool(res.pop("integer_ids", False)))
        chunk_scores = _chunk_scores(src, table, doc, x) if scores and not binary else None
    return _adapted_table(table, adapted), chunk_scores


def load_cross_sums(source, doc: str, a: str, b: str, table: DocTable, **options) -> np.ndarray | None:
    """Per document of ``table`` (:func:`load_chunks` of the same ``source``), the sum over its rows
    of ``a`` times ``b`` (rows where both are finite numbers), in the table's order: what the
    judge-assisted variance needs beside the two columns' own sums. None for data read where they
    live (an Ibis table, Spark) or a table whose sums are rescaled; ``options`` are
    :func:`load_chunks`'s (``fmt``, ``engine``, ``backend`` are used, the others ignored)."""
    sums = load_cross_sums_many(source, doc, ((a, b),), table, **options)
    return None if sums is None else sums[(a, b)]


def load_cross_sums_many(source, doc: str, pairs, table: DocTable, *, fmt: str | None = None,
                         engine: str | None = None, backend: dict | None = None, **_options) -> dict | None:
    """:func:`load_cross_sums` of every ``(a, b)`` of ``pairs`` in one pass over the rows:
    ``{(a, b): per-document sums}``, or None where that function gives None."""
    pairs = [tuple(p) for p in pairs]
    if table.scale != 1.0:
        return None
    names = list(dict.fromkeys([doc] + [c for p in pairs for c in p]))
    source, fmt, origin = _engine_source(source, fmt, engine, backend)
    source, fmt, _ = _adapt(source, fmt, names, origin)
    if _remote_table(source) is not None:
        return None
    with _open_source(source, fmt) as src:
        src.require(*names)
        cols = {c: src.number(c)[1] for c in names[1:]}
        alias = {c: f"x{i}" for i, c in enumerate(names[1:])}
        sums = ", ".join(f"sum(CASE WHEN isfinite({alias[a]}) AND isfinite({alias[b]}) THEN {alias[a]} * {alias[b]} "
                         f"END) AS p{i}" for i, (a, b) in enumerate(pairs))
        res = src.fetch(f"""SELECT d, {sums} FROM (
                                SELECT {_doc_expr_of(src, doc, src.ref(doc))} AS d,
                                       {", ".join(f"{cols[c]} AS {alias[c]}" for c in names[1:])}
                                FROM {src.relation})
                            GROUP BY d""")
    where = {d: i for i, d in enumerate(_plain(res["d"], object).tolist())}
    docs = np.asarray(table.doc).astype(str).tolist()
    out = {}
    for i, pair in enumerate(pairs):
        col = _plain(res[f"p{i}"], float)
        col = np.where(np.isnan(col), 0.0, col)      # a document with no such row sums to 0
        out[pair] = np.array([col[where[d]] if d in where else 0.0 for d in docs])
    return out


def _chunk_scores(src: _Source, table: DocTable, doc: str, x: str) -> np.ndarray:
    """Every row's score ``x`` (SQL of :meth:`_Source.number`) in ``table``'s order of documents, the rows
    of a document in their order in the data; rows of no document of ``table`` or without a finite
    score left out (the sums then disagree, and a simulation refuses them)."""
    src.con.execute("SET preserve_insertion_order = true")   # (the rows' own order within a document)
    res = src.fetch(f"SELECT {_doc_expr_of(src, doc, src.ref(doc))} AS d, {x} AS x FROM {src.relation}")
    where = {d: i for i, d in enumerate(np.asarray(table.doc).astype(str).tolist())}
    ids = _plain(res["d"], object)
    values = _plain(res["x"], float)
    code = np.fromiter((where.get(d, -1) for d in ids.tolist()), dtype=np.int64, count=ids.size)
    keep = (code >= 0) & np.isfinite(values)
    order = np.argsort(code[keep], kind="stable")
    return values[keep][order] * table.scale


def _first_pass(src: _Source, doc: str, score: str, attrs: dict[str, str]):
    """:func:`load_chunks`'s pass over the rows: ``(raw, x, text, exact, rng, res)``, the SQL of the
    score (:meth:`_Source.number`), whether it is stored as integers, its range from the file's
    statistics (None when they do not give it, or for integers) and the grouped sums
    (:func:`_grouped_chunk_sums`)."""
    raw, x, text = src.number(score)
    # 0/1 and integer scores sum exactly (in any order) as doubles below 2^53, so a plain sum is
    # both fast and deterministic; other scores are summed with DuckDB's compensated fsum in the
    # same pass, whose result depends far less on how threads split the rows
    exact = src.is_integer(score)
    # the range of other scores, when the file's statistics give it (a Parquet footer), is not
    # aggregated again per document; nor is the 0/1 test: integers are 0/1 exactly when
    # sum x^2 == sum x (x (x - 1) >= 0 for every integer, = 0 only at 0 and 1), and other scores can
    # be 0/1 only when that range lies in [0, 1] (then a count confirms it, see _only_01)
    rng = None if exact else src.footer_range(score)
    # booleans, and integers whose footer shows them all in [0, 1], are 0/1 before any row is
    # read: then x^2 = x, and the pass sums x only (q is s)
    known01 = src.types[score].upper() == "BOOLEAN" or (exact and src.within_unit_interval(score))
    looked = _looked_at(src, rng)
    if not exact and not known01 and looked and _looks_01(src, score, x):
        # scores of unknown kind (text files, DataFrames), or stored as floats whose statistics show
        # exactly 0 and 1 as the smallest and largest (a Parquet footer), whose first rows are all 0
        # or 1: one pass sums them as 0/1 scores (count and plain sum, exact, in any order) instead
        # of computing every aggregate a graded score needs, and the rows that are not 0 or 1 are
        # counted: per document in the same pass for a text file or a DataFrame (a 10^7-row CSV:
        # 0.69 s -> 0.55 s), over the score column alone after it for a columnar file, which reads
        # that column (or its dictionary) and nothing else (a 10^7-row Parquet file of 0.0/1.0
        # floats: 0.25 s of compensated sums -> 0.13 s). When some row is not 0 or 1 after all, the
        # full pass follows
        columnar = rng is not None
        res = _grouped_chunk_sums(src, doc, score, raw, x, text, attrs=attrs, known01=True,
                                  check01=not columnar)
        if _only_01(src, x) if columnar else not np.any(_plain(res.pop("non01"), float)):
            return raw, x, text, True, None, res     # (0/1 scores sum exactly, as integers do)
    # scores of unknown range: the pass counts those outside [0, 1] (the kind of metric), and for a
    # source whose first rows were not looked at, those that are not 0 or 1 too (one pass, no _only_01)
    outside01 = not exact and rng is None
    res = _grouped_chunk_sums(src, doc, score, raw, x, text, attrs=attrs, compensated=not exact,
                              outside01=outside01, known01=known01, check01=outside01 and not looked)
    return raw, x, text, exact, rng, res


#: The rows :func:`_looks_01` reads of a DataFrame, the bytes it reads of a CSV/TSV file, and the
#: smallest file worth the look.
_LOOK_ROWS, _LOOK_BYTES, _LOOK_MIN_BYTES = 65536, 256 << 10, 4 << 20


def _looked_at(src: _Source, rng: tuple[float, float] | None = None) -> bool:
    """Whether :func:`_looks_01` reads the source's first rows: a DataFrame, a CSV/TSV file of 4 MiB
    or more, or a file of 4 MiB or more whose statistics give the scores' range ``rng`` as exactly
    [0, 1] (scores stored as floats; any other range cannot hold 0/1 scores, or rules out one of the
    two, and is not worth the look)."""
    if src.fmt == "dataframe":
        return True
    if (src.nbytes or 0) < _LOOK_MIN_BYTES:
        return False
    return src.csv_read is not None or rng == (0.0, 1.0)


def _looks_01(src: _Source, score: str, x: str) -> bool:
    """Whether the first rows' scores, where there are any, are all 0 or 1: a guess that chooses the
    pass, which then checks every row. A CSV/TSV file's first 256 KiB are read here (DuckDB's reader
    would hold tens of MiB of buffers for a few rows); a DataFrame's or a file's first rows are read
    by SQL (``x``). The caller asks only of the sources :func:`_looked_at` names."""
    if src.csv_read is None:
        res = src.fetch(f"SELECT count(x) AS m, count(*) FILTER (WHERE x <> 0 AND x <> 1) AS k "
                        f"FROM (SELECT {x} AS x FROM {src.relation} LIMIT {_LOOK_ROWS})")
        return int(_plain(res["m"], float)[0]) > 0 and int(_plain(res["k"], float)[0]) == 0
    fields = _head_fields(src, score)
    # the spellings of 0 and 1 the text route matches whole, and their decimal forms
    return bool(fields) and all(f in _COMMON_FIELDS or f in ("0.0", "1.0") for f in fields)


def _head_fields(src: _Source, name: str) -> list[str]:
    """The non-blank fields of column ``name`` in the first 256 KiB of a CSV/TSV file (stripped; the
    header and a last partial record left out), read once per source; [] for other sources."""
    if src.csv_read is None or src.disk is None:
        return []
    if src.head is None:
        try:
            with (gzip.open if src.gz else open)(src.disk, "rb") as fh:
                head = fh.read(_LOOK_BYTES)
        except (OSError, EOFError):
            head = b""
        text = head[:head.rfind(b"\n") + 1].decode("utf-8-sig", errors="replace")
        rows = csv.reader(text.splitlines(keepends=True), delimiter="," if src.fmt == "csv" else "\t",
                          quotechar='"', doublequote=True)
        try:
            next(rows, None)   # the header
            src.head = list(rows)
        except csv.Error:      # (a field past the csv module's limit, 128 KiB: no guess from the first rows)
            src.head = []
    column = src.columns.index(name)
    fields = (row[column].strip() for row in src.head if len(row) > column)
    return [f for f in fields if f]


def _a_number(field: str) -> bool:
    """Whether Python reads ``field`` as a number (a guess of whether DuckDB's reader will: it only
    chooses which route is tried first)."""
    try:
        float(field)
    except ValueError:
        return False
    return True


def _only_01(src: _Source, x: str) -> bool:
    """Whether every score ``x`` (SQL) that is not missing is 0 or 1: one count over the rows, asked
    only of scores that are not stored as integers and look 0/1 by their sums."""
    res = src.fetch(f"SELECT count(*) AS k FROM (SELECT {x} AS x FROM {src.relation}) WHERE x <> 0 AND x <> 1")
    return int(_plain(res["k"], float)[0]) == 0


def _grouped_chunk_sums(src: _Source, doc: str, score: str, raw: str, x: str, text: bool, *,
                        attrs: dict[str, str], compensated: bool = False, outside01: bool = False,
                        known01: bool = False, check01: bool = False) -> dict:
    """The one pass of :func:`load_chunks` over the rows (SQL ``raw`` and ``x`` of :meth:`_Source.number`),
    one row per document in the order of the ids' text: ``n``, ``s``, ``q``, the counts of missing and
    non-numeric scores with an example and each attribute's smallest and largest value and missing
    count. ``compensated``: the sums by DuckDB's compensated ``fsum`` (whose result depends far less on
    how threads split the rows than a plain sum's); ``outside01``: ``out01`` counts each document's
    scores outside [0, 1] (NaN and infinities among them: all that the kind of metric needs to know of
    the scores' range; the 0/1 test follows from it, see :func:`_load_chunks`). ``known01``: the
    scores are known to be 0 or
    1 (a boolean column, or integers whose Parquet statistics lie in [0, 1]), so ``q`` is ``s`` and is
    not summed. ``check01``: ``non01`` counts each document's scores that are not 0 or 1 (NaN and
    infinities among them), with ``known01`` to test that guess."""
    attr_sql = [
        f"min(CAST({src.ref(col)} AS VARCHAR)) AS a_min_{i}, max(CAST({src.ref(col)} AS VARCHAR)) AS a_max_{i}"
        f", count(*) FILTER (WHERE {src.ref(col)} IS NULL) AS a_null_{i}"
        for i, col in enumerate(attrs.values())]
    agg = "fsum" if compensated else "sum"
    # group on the raw id and turn ids into text once per document, not once per row. NaN and
    # infinite scores show in the sums, so they are counted (second pass) only when a sum is not
    # finite. A count known to be 0 (and the example that goes with it) is filled in below rather
    # than fetched. (A count of the scores outside [0, 1] costs about half what their smallest and
    # largest per document did: a 10^7-row CSV file's pass 0.87 -> 0.77 s, the bare GROUP BY 0.61)
    # (a score read as text turns blank fields into missing ones itself: the footer's count of nulls
    # does not cover those)
    no_nulls = not text and src.without_nulls(score)
    aggs = ["count(*) AS n", f"{agg}(x) AS s"] + ([] if known01 else [f"{agg}(x * x) AS q"])
    if outside01:
        aggs.append("count(*) FILTER (WHERE x < 0 OR x > 1) AS out01")
    if check01:
        aggs.append("count(*) FILTER (WHERE x <> 0 AND x <> 1) AS non01")
    missing = [] if no_nulls else ["count(*) - count(raw) AS n_null"]
    if text:
        missing += ["count(*) FILTER (WHERE raw IS NOT NULL AND x IS NULL) AS n_text",
                    "min(raw) FILTER (WHERE raw IS NOT NULL AND x IS NULL) AS ex_text"]
    # ids of up to 64 bits come back as numbers and are ordered as text and written out here
    # (_int_text_order): cheaper than DuckDB sorting strings and numpy converting them
    here = src.is_integer_column(doc) and src.types[doc].upper() in _INT64_TYPES
    # text ids of a CSV/TSV file whose first ones are integers as Python writes them ("7", not "07"
    # or "+7"): each group's id comes back as the integer it spells when it spells one exactly, and
    # those ids are ordered as text here like an integer column's, without DuckDB sorting strings or
    # fetching a Python string each (at 10^6 documents 60-80 MiB of them); a group whose id is
    # anything else sends the pass to the text route (_digit_ids_in_text_order)
    digits = not here and _digit_ids(src, doc)
    # other text ids, when the first ones seen (a Parquet file's row-group bounds, a CSV/TSV file's
    # first ids) are short ASCII text: each group's id comes back as its bytes in one or two pairs
    # of 64-bit words, ordered by DuckDB as integers (the text's order) instead of as strings, and
    # laid out here as bytes without a Python string each (_keyed_ids_in_text_order)
    keyed = 0 if here or digits else _id_words(src, doc)
    # other ids are ordered by DuckDB, but for a Parquet file sorted by them: its groups come out in
    # a few ascending runs, which numpy merges faster than DuckDB sorts them (_text_ids_in_order)
    in_runs = not here and not digits and not keyed and src.sorted_by(doc)

    def grouped_sums(aggs: list[str], with_raw: bool) -> dict:
        nonlocal digits, keyed, in_runs
        grouped = f"""
                SELECT g, {", ".join(aggs + attr_sql)}
                FROM (SELECT {src.ref(doc)} AS g, {f"{raw} AS raw, " if with_raw else ""}{x} AS x, *
                      FROM {src.relation})
                GROUP BY g"""
        if here:
            res = src.fetch(grouped)
        elif digits:    # (odd: the id is not an integer's own text)
            odd = "g IS NULL OR CAST(TRY_CAST(g AS BIGINT) AS VARCHAR) IS DISTINCT FROM g"
            res = src.fetch(f"SELECT TRY_CAST(g AS BIGINT) AS g, {odd} AS odd, * EXCLUDE (g) FROM ({grouped})")
        elif keyed:
            res = src.fetch(_keyed_sql(grouped, keyed))
        else:
            res = src.fetch(f"SELECT {_doc_expr_of(src, doc, 'g')} AS doc, * EXCLUDE (g) FROM ({grouped})"
                            + ("" if in_runs else " ORDER BY doc NULLS LAST"))
        _allocator.reuse_freed_memory()   # (the command only: the per-document arrays reuse freed pages)
        if here:
            return _ids_in_text_order(res)
        if digits or keyed:
            out = _digit_ids_in_text_order(res) if digits else _keyed_ids_in_text_order(res, keyed)
            if out is None:
                # the first ids' guess was wrong (or some id is missing): the text route reads them
                digits, keyed, in_runs = False, 0, src.sorted_by(doc)
                return grouped_sums(aggs, with_raw)
            return out
        if in_runs:
            return _text_ids_in_order(res)
        ids = _take_ascii_ids(res)
        if ids is not None:
            res["doc"] = ids
        return res

    if text:
        # scores read as text: the rows whose score is not a number (missing, blank or text: x is
        # NULL) are first counted together, and counted apart with an example only when some
        # document has one (the three aggregates cost a tenth of a pass over a CSV file of booleans)
        res = grouped_sums(aggs + ["count(*) - count(x) AS n_bad"], with_raw=False)
        if np.any(_plain(res.pop("n_bad"), float)):
            res = grouped_sums(aggs + missing, with_raw=True)
    else:
        res = grouped_sums(aggs + missing, with_raw=bool(missing))
    for key, value in (("n_null", 0), ("n_text", 0), ("ex_text", None)):
        if key not in res:
            res[key] = np.array([value], dtype=object if value is None else np.int64)
    if known01:
        res["q"] = res["s"]
    return res


def _ordinary_size(n: np.ndarray, s: np.ndarray, q: np.ndarray) -> bool:
    """Whether the sums show the largest |score| M within [2^-199, 2^199], where scores keep scale 1
    (:func:`_scale_for`): M^2 is at most the largest sum of squares q and at least each document's
    q / n (with a margin of a factor 4 for rounding and underflow)."""
    if not (q.size and np.all(np.isfinite(q)) and np.all(np.isfinite(s))):
        return False
    top = float(np.max(q))
    return top <= 2.0 ** 398 and float(np.max(q / np.maximum(n, 1))) >= 2.0 ** -398


def _compensated_sums(src: _Source, res: dict, doc: str, x: str, scale: float | None = None
                      ) -> tuple[float, float, float]:
    """Sum the scores ``x`` again per document with DuckDB's compensated ``fsum``, multiplied by the
    power of two :func:`_scale_for` picks from their range, into ``res``'s ``s`` and ``q``:
    ``(scale, smallest score, largest score)``."""
    again_sql = f"""SELECT fsum(x) AS s, fsum(x * x) AS q, min(x) AS lo, max(x) AS hi FROM (
                                SELECT {src.ref(doc)} AS g, {x} * ? AS x FROM {src.relation})
                            GROUP BY g ORDER BY {_doc_expr_of(src, doc, "g")} NULLS LAST"""
    again = src.fetch(again_sql, [1.0 if scale is None else scale])
    lo = float(np.min(_plain(again["lo"], float)))
    hi = float(np.max(_plain(again["hi"], float)))
    if scale is not None:        # (its range came rescaled)
        lo, hi = lo / scale, hi / scale
    else:
        scale = _scale_for(max(-lo, hi))
        if scale != 1.0:
            again = src.fetch(again_sql, [scale])
    res["s"], res["q"] = again["s"], again["q"]
    return scale, lo, hi


def load_docs(source, doc: str, n: str, s: str, q: str | None = None, *, fmt: str | None = None,
              metric: str | None = None, allow_similar_ids: bool = False, engine: str | None = None,
              backend: dict | None = None) -> DocTable:
    """Read an already aggregated per-document table (one row per document).

    ``n`` names the count column (whole numbers from 1 to 2**53, their total at most 2**53 too),
    ``s`` the score-sum column, ``q`` (optional) the sum-of-squared-scores column. This is the
    route for logs that live in Spark or a warehouse: run :data:`GROUP_BY_SQL` there and load its
    output here.

    ``metric`` (``"binary"``, ``"proportion"`` or ``"score"``) is checked as far as the sums allow:
    a proportion needs ``0 <= s <= n`` (and ``0 <= q <= s``), a binary metric a whole ``s`` in
    [0, n] (and ``q == s``). ``allow_similar_ids`` and ``fmt`` are as in :func:`load_chunks`.
    Sums whose scores' squares leave the double range are stored rescaled by a power of two
    (:attr:`DocTable.scale`): ``s * scale`` and ``q * scale**2``.
    """
    metric = _check_metric(metric)
    names = {"doc": doc, "n": n, "s": s}
    if q is not None:
        names["q"] = q
    _check_names(**names)
    source, fmt, origin = _engine_source(source, fmt, engine, backend)
    source, fmt, adapted = _adapt(source, fmt, list(names.values()), origin)
    remote = _remote_table(source)
    if remote is not None:  # already one row per document: fetch it as it is
        from .engines import fetch_arrow
        source = fetch_arrow(remote)
    with _open_source(source, fmt) as src:
        src.require(*names.values())
        docs, values = _doc_sums(src, names)
        info = src.info(int(docs.size))
        label = src.label
    nv, sv, qv = values["n"], values["s"], values.get("q")
    scale = 1.0
    # the metric and the scale are judged only on usable sums; anything else is refused below with
    # the rule it breaks
    if (np.all(np.isfinite(nv)) and np.all(nv > 0) and np.all(np.isfinite(sv))
            and (qv is None or np.all(np.isfinite(qv)))):
        kind, reason = _docs_metric(nv, sv, qv, names, label, metric)
        info.update(_metric_info(metric, kind, reason))
        if metric is not None:
            info["binary"] = metric == "binary"
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            size = float(np.max(np.abs(sv) / nv))
            if qv is not None:
                size = max(size, float(np.max(np.sqrt(np.maximum(qv, 0.0) / nv))))
            scale = _scale_for(size)
            if scale != 1.0:
                sv = sv * scale
                qv = None if qv is None else qv * scale * scale
        info.update(_similar_ids(docs, doc, label, allow_similar_ids, distinct=False))
    table = _build(src_label=label, mapping=names, n=nv, s=sv, q=qv, doc=docs, source=info, scale=scale,
                   assume_binary=metric in (None, "binary"))
    return _adapted_table(table, adapted)


def _doc_sums(src: _Source, names: dict[str, str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The rows of a per-document table in the order of their ids' text: ``(ids, {role: values})`` for
    the roles ``n``, ``s`` and ``q`` that ``names`` maps to columns; refuses no rows, a missing or
    non-numeric value, or a count that is not a whole number."""
    select = [f"{_doc_expr(src.ref(names['doc']))} AS d"]
    text_cols = {}
    for role in ("n", "s", "q"):
        if role not in names:
            continue
        raw, x, text = src.number(names[role])
        text_cols[role] = text
        select.append(f"{x} AS x_{role}")
        select.append(f"{raw} IS NULL AS null_{role}")
        if text:
            select.append(f"CASE WHEN {raw} IS NOT NULL AND {x} IS NULL THEN {raw} END AS bad_{role}")
    res = src.fetch(f"SELECT {', '.join(select)} FROM {src.relation} ORDER BY d NULLS LAST")
    docs = _plain(res["d"], object)
    if int(docs.size) == 0:
        raise InputError(f"{src.label} has no data rows")
    values = {}
    for role in ("n", "s", "q"):
        if role not in names:
            continue
        col = names[role]
        nulls = int(_plain(res[f"null_{role}"], bool).sum())
        if nulls:
            raise InputError(f"column '{col}' in {src.label}: {nulls} document(s) have a missing value; "
                             "every document needs a number here")
        if text_cols[role]:
            bad = [v for v in _plain(res[f"bad_{role}"], object) if v is not None]
            if bad:
                raise InputError(f"column '{col}' in {src.label}: {len(bad)} document(s) have a non-numeric "
                                 f"value (e.g. {_short(bad[0])!r}); values must be numbers")
        values[role] = _plain(res[f"x_{role}"], float)
    nv = values["n"]
    frac = np.isfinite(nv) & (nv != np.round(nv))
    if frac.any():
        raise InputError(f"column '{names['n']}' in {src.label}: {int(frac.sum())} document(s) have a non-integer "
                         f"count (e.g. {nv[frac][0]:g}); n must be the whole number of chunks or queries")
    return docs, values


def load_pairs(source, doc: str, a: str, b: str, *, unpaired: bool = False, fmt: str | None = None,
               metric: str | None = None, allow_similar_ids: bool = False, engine: str | None = None,
               backend: dict | None = None):
    """Aggregate rows scored by two systems (columns ``a`` and ``b``) to a per-document pair table.

    Paired (the default): every row must carry a score for both systems; otherwise this refuses
    with a message counting the unmatched rows. ``unpaired=True`` accepts rows scored by only one
    system (each system then has its own n_d) and counts rows scored by neither as excluded.
    ``fmt``, ``metric`` (checked on both columns) and ``allow_similar_ids`` are as in
    :func:`load_chunks`; scores whose squares leave the double range are summed multiplied by one
    power of two for both systems (``PairTable.scale``). Returns a :class:`perdoc.compare.PairTable`.
    """
    metric = _check_metric(metric)
    _check_names(doc=doc, a=a, b=b)
    source, fmt, origin = _engine_source(source, fmt, engine, backend)
    source, fmt, adapted = _adapt(source, fmt, [doc, a, b], origin)
    remote = _remote_table(source)
    if remote is not None:  # an Ibis table or Spark DataFrame: aggregated where it lives
        from .engines import aggregate_pairs
        pairs = aggregate_pairs(remote, doc=doc, a=a, b=b, unpaired=unpaired, metric=metric,
                                allow_similar_ids=allow_similar_ids, label=_origin_label(origin))
        return _adapted_table(pairs, adapted)
    with _open_source(source, fmt) as src:
        src.require(doc, a, b)
        d_expr = _doc_expr(src.ref(doc))
        raw_a, xa, text_a = src.number(a)
        raw_b, xb, text_b = src.number(b)
        # scores are multiplied by a power of two (1 unless they leave the double range, then summed again)
        parts = [f"{d_expr} AS d", f"{raw_a} AS ra", f"{xa} * $scale AS xa", f"{raw_b} AS rb",
                 f"{xb} * $scale AS xb"]
        checks = []
        for tag, text in (("a", text_a), ("b", text_b)):
            checks += [
                f"count(*) FILTER (WHERE r{tag} IS NOT NULL AND x{tag} IS NULL) AS text_{tag}" if text
                else f"0 AS text_{tag}",
                f"min(r{tag}) FILTER (WHERE r{tag} IS NOT NULL AND x{tag} IS NULL) AS ex_{tag}" if text
                else f"NULL AS ex_{tag}",
                f"count(*) FILTER (WHERE isnan(x{tag})) AS nan_{tag}",
                f"count(*) FILTER (WHERE isinf(x{tag})) AS inf_{tag}",
                f"min(x{tag}) AS lo_{tag}", f"max(x{tag}) AS hi_{tag}",
                f"sum(abs(x{tag} * (x{tag} - 1))) AS dev01_{tag}",
            ]
        sql = f"""
            SELECT d AS doc,
                   count(*) AS rows,
                   count(*) FILTER (WHERE ra IS NOT NULL AND rb IS NOT NULL) AS n_both,
                   count(*) FILTER (WHERE ra IS NOT NULL) AS n_a,
                   count(*) FILTER (WHERE rb IS NOT NULL) AS n_b,
                   fsum(xa) AS s_a, fsum(xa * xa) AS q_a,
                   fsum(xb) AS s_b, fsum(xb * xb) AS q_b,
                   fsum((xa - xb) * (xa - xb)) AS q_d,
                   {", ".join(checks)}
            FROM (SELECT {", ".join(parts)} FROM {src.relation})
            GROUP BY d ORDER BY d NULLS LAST"""
        res = src.fetch(sql, {"scale": 1.0})
        pairs = _pairs_table(res, label=src.label, info_fn=src.info,
                             refetch=lambda scale: src.fetch(sql, {"scale": scale}),
                             violation=lambda tag, col: _metric_violation(src, xa if tag == "a" else xb, col, metric),
                             doc=doc, a=a, b=b, unpaired=unpaired, metric=metric,
                             allow_similar_ids=allow_similar_ids)
    return _adapted_table(pairs, adapted)


# ====================================================================== metric, scale, ids
def _check_metric(metric):
    if metric is None:
        return None
    if not isinstance(metric, str) or metric.lower() not in METRICS:
        raise ParameterError(f"metric={metric!r} is not a known kind of metric (--metric on the command line, "
                             "data.metric in a params file); use binary, proportion or score")
    return metric.lower()


def _metric_violation(src, x: str, col: str, metric: str):
    """Error path only: count the rows that break the declared metric, with an example."""
    cond = "x <> 0 AND x <> 1" if metric == "binary" else "(x < 0 OR x > 1)"
    r = src.fetch(f"""SELECT count(*) FILTER (WHERE {cond}) AS k,
                             min(x) FILTER (WHERE {cond}) AS lo, max(x) FILTER (WHERE {cond}) AS hi
                      FROM (SELECT {x} AS x FROM {src.relation})""")
    k = int(_plain(r["k"], float)[0])
    lo, hi = float(_plain(r["lo"], float)[0]), float(_plain(r["hi"], float)[0])
    _violation_error(k, lo, hi, col, src.label, metric)


def _docs_metric(n, s, q, names: dict, label: str, metric) -> tuple[str, str]:
    """(kind, reason) of a per-document table, from what n, s and q allow; a declared metric is
    checked as far as they tell (raises naming the user's column)."""
    in_range = (s >= 0) & (s <= n)
    whole = s == np.round(s)
    q_is_s = np.ones_like(s, dtype=bool) if q is None else q == s
    q_unit = np.ones_like(s, dtype=bool) if q is None else (q >= 0) & (q <= s + 1e-9 * np.abs(s))
    binary = bool(np.all(in_range & whole & q_is_s))
    unit = bool(np.all(in_range & q_unit))
    if metric == "binary" and not binary:
        _refuse_docs_sums(n, s, q, in_range & whole, q_is_s, names, label, metric)
    if metric == "proportion" and not unit:
        _refuse_docs_sums(n, s, q, in_range, q_unit, names, label, metric)
    if binary:
        return "binary", (Message("metric_reason.docs_binary_no_q", "every s is a whole number in [0, n] (q not "
                                  "given), as 0/1 scores give") if q is None else
                          Message("metric_reason.docs_binary", "every document's sums fit 0/1 scores (whole s in "
                                  "[0, n], q = s)"))
    if unit:
        return "proportion", (Message("metric_reason.docs_proportion_no_q", "every s lies in [0, n] (q not given) "
                                      "but not all are whole numbers") if q is None else
                              Message("metric_reason.docs_proportion", "every document's sums fit scores in [0, 1] "
                                      "(0 <= q <= s <= n) but not 0/1 scores"))
    return "score", Message("metric_reason.docs_score", "some document's sums fit no scores in [0, 1]")


#: How :func:`_refuse_docs_sums` words a declared metric's rules: (what a sum ``s`` that breaks them is,
#: what the metric needs of it; the same for the sum of squares ``q``).
_DOCS_RULES = {
    "binary": ("that 0/1 scores cannot give", "needs a whole number between 0 and n",
               "other than the sum", "(0/1 scores) gives q = s"),
    "proportion": ("outside [0, n]", "needs every score in [0, 1]",
                   "outside [0, s]", "(scores in [0, 1]) gives 0 <= q <= s"),
}


def _refuse_docs_sums(n, s, q, s_ok, q_ok, names: dict, label: str, metric: str):
    """Raise, naming the user's column: documents whose ``s`` breaks the declared ``metric`` (where not
    ``s_ok``), else those whose ``q`` does (where not ``q_ok``), with their count and an example."""
    s_what, s_need, q_what, q_need = _DOCS_RULES[metric]
    bad = ~s_ok
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"column '{names['s']}' in {label}: {int(bad.sum())} document(s) have a sum {s_what} "
                         f"(e.g. {s[i]:.10g} with n = {n[i]:g}); the declared metric {metric} {s_need}")
    bad = ~q_ok
    i = int(np.flatnonzero(bad)[0])
    raise InputError(f"column '{names.get('q')}' in {label}: {int(bad.sum())} document(s) have a sum of squares "
                     f"{q_what} (e.g. {q[i]:.10g} with s = {s[i]:.10g}); the declared metric {metric} {q_need}")


# ====================================================================== sources
#: Score fields read as text that are matched whole before the general parse (:meth:`_Source.number`),
#: with the number the general parse gives each.
_COMMON_FIELDS = {"true": "1.0", "false": "0.0", "True": "1.0", "False": "0.0", "TRUE": "1.0", "FALSE": "0.0",
                  "1": "1.0", "0": "0.0"}


class _TypedReadFailed(Exception):
    """A CSV/TSV column read as numbers (:meth:`_Source.read_as_numbers`) held a field that is not one."""


def _csv_relation(lit: str, columns: int, delim: str, comp: str, typed: set[int]) -> str:
    """DuckDB's reader of a CSV/TSV file with ``columns`` columns named c0, c1, ...: text, except the
    ``typed`` ones (DOUBLE); the header is read by perdoc itself."""
    inner = ", ".join(f"'c{i}': '{'DOUBLE' if i in typed else 'VARCHAR'}'" for i in range(columns))
    return (f"read_csv({lit}, columns={{{inner}}}, auto_detect=false, header=true, "
            f"delim=E'{delim}', quote='\"', escape='\"', strict_mode=true, null_padding=false, "
            f"compression='{comp}')")


@dataclass
class _Source:
    con: duckdb.DuckDBPyConnection
    label: str               # how messages name the data: the path, "standard input" or "the DataFrame"
    path: str | None         # the path the user gave ("-" for standard input)
    fmt: str
    relation: str            # SQL FROM clause
    columns: list[str]       # user-visible column names, in order
    types: dict[str, str]    # user column name -> DuckDB type
    refs: dict[str, str] = field(default_factory=dict)  # user column name -> SQL expression
    nbytes: int | None = None
    json_read: tuple | None = None  # (sql path literal, json format, compression) when built lazily
    parquet_lit: str | None = None  # sql path literal of a Parquet file (its footer has column statistics)
    disk: str | None = None  # the file actually read (a copy in the temporary folder for a stream)
    gz: bool = False         # gzip-compressed text
    stats: dict = field(default_factory=dict, repr=False)  # column -> its Parquet footer statistics
    bounds: dict = field(default_factory=dict, repr=False)  # column -> its row groups' bounds (_bounds)
    head: list | None = field(default=None, repr=False)   # a CSV/TSV file's first records (_head_fields)
    csv_read: tuple | None = None   # (sql path literal, delimiter, compression) of a CSV/TSV file
    typed: tuple = ()               # columns of a CSV/TSV read as numbers (DOUBLE), not as text
    typed_unchecked: bool = False   # a typed column has not yet been read through: a failure falls back

    def require(self, *names: str) -> None:
        for name in names:
            if name not in self.types:
                raise ColumnError(_not_found(name, self.columns, self.label))
        if self.json_read is not None:
            lit, jfmt, comp = self.json_read
            cols = ", ".join(f"{_sql_str(nm)}: 'VARCHAR'" for nm in dict.fromkeys(names))
            self.relation = f"read_json({lit}, format='{jfmt}', compression='{comp}', columns={{{cols}}})"

    def ref(self, name: str) -> str:
        return self.refs.get(name) or _ident(name)

    def read_as_numbers(self, name: str) -> bool:
        """Read the CSV/TSV column ``name`` as numbers (DOUBLE) rather than as text parsed in SQL:
        parsing in the reader is the cheaper of the two. Every field the reader parses as a number is
        the number the text route gives (blank is missing in both); a field it cannot parse ('true',
        'NA', ...) fails the read (at once when the column is text, see :meth:`_Source.fetch`), and
        :meth:`read_as_text` then restores the text route, which counts and shows such fields.
        Whether the column is now read as numbers."""
        if self.csv_read is None or name not in self.refs or name in self.typed:
            return False
        if any(not _a_number(f) for f in _head_fields(self, name)):
            return False   # ('true' near the top: a failed read costs 25-80 ms; the text route reads it)
        lit, delim, comp = self.csv_read
        self.typed = self.typed + (name,)
        self.types[name] = "DOUBLE"
        self.relation = _csv_relation(lit, len(self.columns), delim, comp,
                                      {int(self.refs[c][1:]) for c in self.typed})
        self.typed_unchecked = True
        return True

    def read_as_text(self) -> None:
        """Undo :meth:`read_as_numbers`: every column read as text again."""
        lit, delim, comp = self.csv_read
        for name in self.typed:
            self.types[name] = "VARCHAR"
        self.typed, self.typed_unchecked = (), False
        self.relation = _csv_relation(lit, len(self.columns), delim, comp, set())

    def number(self, name: str) -> tuple[str, str, bool]:
        """SQL for (raw value, value as DOUBLE, whether raw is text that may fail to parse)."""
        col = self.ref(name)
        typ = self.types[name].upper()
        if typ == "BOOLEAN" or typ.startswith(_NUMERIC_TYPES) or typ.strip('"') == "NULL":
            # (a column with no value at all has DuckDB's type NULL: its rows are missing scores,
            # counted and refused as any missing score is, not a column of the wrong type)
            return col, f"CAST({col} AS DOUBLE)", False
        if typ in ("VARCHAR", "JSON") or typ.startswith("VARCHAR"):
            text = f"CAST({col} AS VARCHAR)"
            trimmed = f"NULLIF(trim({text}), '')"
            parsed = (f"COALESCE(TRY_CAST({trimmed} AS DOUBLE), "
                      f"CASE lower({trimmed}) WHEN 'true' THEN 1.0 WHEN 'false' THEN 0.0 END)")
            # the commonest fields (booleans and 0/1 as writers spell them) are matched whole first:
            # the same raw value and number the general expression gives them, without trimming and
            # parsing every row
            raw = f"CASE {text} {' '.join(f'WHEN {k!r} THEN {k!r}' for k in _COMMON_FIELDS)} ELSE {trimmed} END"
            x = f"CASE {text} {' '.join(f'WHEN {k!r} THEN {v}' for k, v in _COMMON_FIELDS.items())} ELSE {parsed} END"
            return raw, x, True
        raise ColumnError(f"column '{name}' in {self.label} has type {self.types[name]}; "
                          "it must hold numbers or booleans")

    def is_integer_column(self, name: str) -> bool:
        """Whether the column is stored as integers (not as text): its values as text are distinct
        exactly when the integers are, and never blank."""
        return name not in self.refs and self.types[name].upper() in _INTEGER_TYPES

    def is_integer(self, name: str) -> bool:
        """Whether the column's type holds integers or booleans only (exact sums)."""
        typ = self.types[name].upper()
        return typ == "BOOLEAN" or typ.startswith(("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
                                                      "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"))

    def within_unit_interval(self, name: str) -> bool:
        """Whether the file's own statistics (a Parquet footer) show every value of ``name`` in
        [0, 1]; reading them costs milliseconds and no pass over the data."""
        rng = self.footer_range(name)
        return rng is not None and rng[0] >= 0 and rng[1] <= 1

    def footer_range(self, name: str) -> tuple[float, float] | None:
        """The smallest and largest value of ``name`` from the file's own statistics (a Parquet footer
        with a numeric minimum and maximum in every row group), or None; None too for a column that
        is not stored as numbers (a text column's statistics compare letters: "05" lies between
        "0" and "1")."""
        if not self.types.get(name, "").upper().startswith(_NUMERIC_TYPES):
            return None
        row = self._footer(name)
        if row is None:
            return None
        groups, _, _, lo, hi, with_min, with_max = row
        if not (groups and with_min == groups and with_max == groups):
            return None
        return float(lo), float(hi)

    def without_nulls(self, name: str) -> bool:
        """Whether the file's own statistics (a Parquet footer) show no missing value in ``name``:
        then the count of missing scores is known to be 0 without an aggregate over every row."""
        if name in self.refs:
            return False
        row = self._footer(name)
        if row is None:
            return False
        groups, with_stat, nulls = row[:3]
        return bool(groups and with_stat == groups and nulls == 0)

    def sorted_by(self, name: str) -> bool:
        """Whether the file's own statistics (a Parquet footer) show its rows sorted by ``name``:
        each row group's smallest value no smaller than the previous group's largest (compared as
        text; a guess that only chooses where the rows are put in order)."""
        bounds = self._bounds(name)
        return (len(bounds) > 1 and all(lo is not None and hi is not None for lo, hi in bounds)
                and all(a[1] <= b[0] for a, b in zip(bounds, bounds[1:])))

    def first_ids(self, name: str) -> list[str]:
        """Values of ``name`` seen without a pass over the rows: a Parquet file's row-group bounds, a
        CSV/TSV file's first fields (:func:`_head_fields`); [] for other sources."""
        if self.csv_read is not None:
            return _head_fields(self, name)
        return [v for pair in self._bounds(name) for v in pair if isinstance(v, str)]

    def _bounds(self, name: str) -> list:
        """Each row group's (smallest, largest) value of ``name`` in a Parquet footer, as text, read
        once; [] without a Parquet file or when DuckDB cannot read them."""
        if self.parquet_lit is None:
            return []
        if name not in self.bounds:
            try:
                self.bounds[name] = self.con.execute(
                    f"SELECT stats_min_value, stats_max_value FROM parquet_metadata({self.parquet_lit}) "
                    "WHERE path_in_schema = ? ORDER BY file_name, row_group_id", [name]).fetchall()
            except duckdb.Error:
                self.bounds[name] = []
        return self.bounds[name]

    def _footer(self, name: str):
        """The Parquet footer's statistics of ``name`` over its row groups, read once: (row groups,
        groups with a null count, nulls, smallest min, largest max, groups with a numeric min, groups
        with a numeric max); None without a Parquet file or when DuckDB cannot read them."""
        if self.parquet_lit is None:
            return None
        if name not in self.stats:
            try:
                self.stats[name] = self.con.execute(
                    f"SELECT count(*), count(stats_null_count), sum(stats_null_count), "
                    f"min(TRY_CAST(stats_min_value AS DOUBLE)), max(TRY_CAST(stats_max_value AS DOUBLE)), "
                    f"count(TRY_CAST(stats_min_value AS DOUBLE)), count(TRY_CAST(stats_max_value AS DOUBLE)) "
                    f"FROM parquet_metadata({self.parquet_lit}) WHERE path_in_schema = ?", [name]).fetchone()
            except duckdb.Error:
                self.stats[name] = None
        return self.stats[name]

    def fetch(self, sql: str, params=None) -> dict:
        try:
            return self.con.execute(sql, params).fetchnumpy() if params else self.con.execute(sql).fetchnumpy()
        except duckdb.Error as e:
            if self.typed_unchecked:   # (a field of a column read as numbers did not parse)
                raise _TypedReadFailed() from None
            raise _translate(e, self) from None

    def info(self, rows: int) -> dict:
        return {"path": self.path, "format": self.fmt, "rows": rows, "bytes": self.nbytes}


def _engine_source(source, fmt, engine, backend):
    """(source, fmt, where it came from or None): with ``backend`` ({url, table}) the Ibis table
    there; with ``engine="spark"`` the file read by Spark; else ``source`` as it is."""
    if backend is None and engine in (None, "duckdb"):
        return source, fmt, None
    from .engines import open_source
    read = open_source(source, engine=engine, backend=backend, fmt=fmt)
    if backend is not None:   # the URL without its secrets (perdoc.redact): it is shown and written
        from ..redact import redact_url
        return read, None, {"path": None, "format": "table", "table": backend.get("table"),
                            "url": redact_url(backend.get("url"))}
    kind = _format_of(os.fspath(source), fmt)[0]
    return read, None, {"path": os.fspath(source), "format": kind, "bytes": os.path.getsize(source)}


def _origin_label(origin: dict | None) -> str | None:
    """How messages name data read by another engine: its file, or its table at the backend."""
    if not origin:
        return None
    if origin.get("path"):
        return origin["path"]
    if not origin.get("table"):
        return None
    return f"table {origin['table']!r} at {origin['url']}" if origin.get("url") else \
        f"table {origin['table']!r} at the backend"


def _adapt(source, fmt, fields: list[str], origin: dict | None = None):
    """(source, fmt, (exclusions, notes, origin) or None): a file whose format is an adapter's of
    :mod:`perdoc.adapters` (an evaluation framework's output) -- ``fmt`` names one, or no ``fmt`` and
    the extension selects one (:func:`perdoc.reading.formats.adapter_for`: ``.eval`` is inspect's) --
    is read through it into a DataFrame, which is then loaded like any other. ``origin`` (from
    :func:`_engine_source`) is recorded in the table's ``source``."""
    from .formats import adapter_for
    kind = adapter_for(source, fmt)
    if kind is None:
        return _only_fields(source, fields), fmt, (None if origin is None else ((), [], origin))
    from . import adapters
    df, exclusions, notes = adapters.read(source, kind, fields=list(fields))
    label = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
    return df, None, (tuple(exclusions or ()), list(notes or ()), {"path": label, "format": kind})


def _only_fields(source, fields: list[str]):
    """A pandas DataFrame cut to the columns ``fields`` the loader reads (DuckDB cannot read some
    column types, a period or a sparse column, and would refuse the whole frame for one it never
    needed); the frame as it is when one of them is missing or a column name repeats (then refused
    with its whole header)."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(source, pd.DataFrame) or isinstance(source.columns, pd.MultiIndex):
        return source
    cols = list(source.columns)
    if len(set(map(str, cols))) != len(cols) or not all(f in cols for f in fields):
        return source
    return source[list(dict.fromkeys(fields))]


def _adapted_table(table, adapted):
    """The table with what an adapter excluded and noted attached, and where the data came from
    (unchanged for a file or DataFrame read directly)."""
    if adapted is None:
        return table
    exclusions, notes, origin = adapted
    source = dict(table.source)
    source.update({k: v for k, v in origin.items() if v is not None or k not in source})
    if notes:
        source["notes"] = list(source.get("notes", [])) + notes
    return replace(table, source=source, exclusions=tuple(table.exclusions) + exclusions)


def _remote_table(source):
    """An Ibis table (a Spark DataFrame becomes one), or None for anything DuckDB reads itself."""
    if isinstance(source, (str, os.PathLike, bytes)):
        return None
    mod = type(source).__module__ or ""
    if mod.startswith("ibis.") or mod.startswith("pyspark."):
        from .engines import as_ibis
        return as_ibis(source)
    return None


#: What a DataFrame-like source is called in messages, by the module its type comes from.
_FRAME_LABELS = (("pandas.", "the DataFrame"), ("polars.", "the polars DataFrame"),
                 ("pyarrow.", "the Arrow table"), ("duckdb", "the DuckDB relation"))


def _frame_label(source) -> str | None:
    """How messages name a DataFrame-like ``source`` DuckDB can scan, or None for anything else."""
    mod = type(source).__module__ or ""
    for prefix, label in _FRAME_LABELS:
        if mod.startswith(prefix):
            return label
    if hasattr(source, "__arrow_c_stream__"):
        return "the Arrow stream"
    return None


@contextmanager
def _open_source(source, fmt):
    """Resolve ``source`` to a DuckDB relation on a fresh, memory-limited connection that reads
    local files only (no extension is installed or loaded, so no URL is ever fetched)."""
    with tempfile.TemporaryDirectory(prefix="perdoc-duckdb-") as tmp:
        con = duckdb.connect(config={"memory_limit": DUCKDB_MEMORY_LIMIT, "temp_directory": tmp,
                                     "preserve_insertion_order": False,
                                     "autoinstall_known_extensions": False,
                                     "autoload_known_extensions": False})
        try:
            con.execute("SET enable_progress_bar = false")
            pd = sys.modules.get("pandas")  # a DataFrame implies pandas is already imported
            if pd is not None and isinstance(source, pd.DataFrame):
                yield _dataframe_source(con, source)
            elif not isinstance(source, (str, os.PathLike, bytes)) and _frame_label(source) is not None:
                yield _arrow_source(con, source)
            else:
                yield _file_source(con, source, fmt, tmp)
        finally:
            con.close()


def _dataframe_source(con, df) -> _Source:
    import pandas as pd
    label = "the DataFrame"
    if len(df.columns) != len(set(map(str, df.columns))):
        dup = pd.Index(map(str, df.columns))
        raise ColumnError(f"{label} has duplicate column names: {', '.join(sorted(set(dup[dup.duplicated()])))}")
    df = df.rename(columns=str)
    try:
        con.register("perdoc_input", df)
        types = _describe(con, "perdoc_input", None)
    except (duckdb.Error, PerdocError):
        raise InputError(f"{label}: DuckDB cannot read its column {_unreadable_columns(df)}; convert it to numbers "
                         "or text, or leave it out") from None
    return _Source(con=con, label=label, path=None, fmt="dataframe", relation="perdoc_input",
                   columns=list(df.columns), types=types, nbytes=None)


def _unreadable_columns(df) -> str:
    """The columns of ``df`` DuckDB refuses one by one, with their types (for a one-line message)."""
    bad = []
    for col in df.columns:
        con = duckdb.connect()
        try:
            con.register("one", df[[col]])
            con.execute("DESCRIBE SELECT * FROM one").fetchall()
        except duckdb.Error:
            bad.append(f"{col!r} of type {df[col].dtype}")
        finally:
            con.close()
        if len(bad) == 3:
            break
    return ", ".join(bad) or "a column of an unsupported type"


def _arrow_source(con, source) -> _Source:
    """A polars DataFrame or LazyFrame, a pyarrow Table, RecordBatch, RecordBatchReader or Dataset,
    a DuckDB relation, or anything with ``__arrow_c_stream__``: scanned by DuckDB through Arrow, in
    memory. A one-pass stream (a RecordBatchReader, a relation of another connection) is first
    copied into a temporary DuckDB table (it spills to the temporary folder past the memory limit),
    since the aggregation may scan its input more than once."""
    label = _frame_label(source)
    mod = type(source).__module__ or ""
    obj, stream = source, False
    if mod.startswith("polars"):
        if type(source).__name__ == "LazyFrame":
            obj = source.collect()
        obj = obj.to_arrow()
    elif mod.startswith("duckdb"):
        obj, stream = source.to_arrow_reader(1 << 17) if hasattr(source, "to_arrow_reader") \
            else source.fetch_record_batch(1 << 17), True
    elif type(source).__name__ == "RecordBatchReader" or not mod.startswith("pyarrow"):
        stream = True
    names = [str(c) for c in obj.schema.names] if hasattr(obj, "schema") else None
    if names is not None and len(names) != len(set(names)):
        dups = sorted({c for c in names if names.count(c) > 1})
        raise ColumnError(f"{label} has duplicate column names: {', '.join(dups)}")
    try:
        if stream:
            con.register("perdoc_stream", obj)
            con.execute("CREATE TEMP TABLE perdoc_input AS SELECT * FROM perdoc_stream")
            con.unregister("perdoc_stream")
        else:
            con.register("perdoc_input", obj)
    except duckdb.Error as e:
        raise DataFileError(f"cannot read {label}: {_short(str(e).strip().splitlines()[0], 200)}") from None
    types = _describe(con, "perdoc_input", None)
    return _Source(con=con, label=label, path=None, fmt="dataframe", relation="perdoc_input",
                   columns=list(types), types=types, nbytes=None)


def _file_source(con, source, fmt, tmp: str) -> _Source:
    if not isinstance(source, (str, os.PathLike)):
        raise ParameterError(f"source must be a file path or a pandas DataFrame (or a polars, pyarrow, DuckDB, "
                             f"Ibis or Spark one), not {type(source).__name__}")
    path = os.fspath(source)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if path == "-":
        label = _STDIN
        kind, gz = _format_of(label, fmt, stream=True)
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise DataFileError("cannot read standard input: this process has none")
        disk, nbytes, gz = _spool(stream, tmp, label, kind)
    else:
        label = path
        if not os.path.exists(path):
            raise DataFileError(f"data file not found: {path}")
        if os.path.isdir(path):
            raise DataFileError(f"{path} is a directory, not a data file")
        try:
            mode = os.stat(path).st_mode
        except OSError as e:
            raise DataFileError(f"cannot read {path}: {e.strerror or e}") from None
        if stat.S_ISREG(mode):
            kind, gz = _format_of(path, fmt)
            disk, nbytes = path, os.path.getsize(path)
            if nbytes == 0:
                raise InputError(f"{path} is empty: it has no data rows")
            _check_magic(disk, label, kind, gz)
        else:  # a pipe (named, or /dev/fd/N from process substitution) or a device: a stream
            kind, gz = _format_of(path, fmt, stream=True)
            try:
                with open(path, "rb") as fh:
                    disk, nbytes, gz = _spool(fh, tmp, label, kind)
            except OSError as e:
                raise DataFileError(f"cannot read {path}: {e.strerror or e}") from None
    lit = _sql_str(_duckdb_path(disk, tmp))
    comp = "gzip" if gz else "none"
    common = dict(con=con, label=label, path=path, fmt=kind, nbytes=nbytes, disk=disk, gz=gz)
    if kind in ("csv", "tsv"):
        header = _csv_header(disk, kind, gz, label)
        if not header:
            raise InputError(f"{label} is empty: it has no data rows")
        delim = "," if kind == "csv" else "\\t"
        relation = _csv_relation(lit, len(header), delim, comp, set())
        dups = {h for h in header if header.count(h) > 1}
        refs = {h: f"c{i}" for i, h in enumerate(header) if h not in dups}
        types = {h: "VARCHAR" for h in refs}
        return _Source(relation=relation, columns=header, types=types, refs=refs, csv_read=(lit, delim, comp),
                       **common)
    if kind == "parquet":
        relation = f"read_parquet({lit})"
        src = _Source(relation=relation, columns=[], types={}, parquet_lit=lit, **common)
        src.types = _describe(con, relation, src)
        src.columns = list(src.types)
        return src
    # JSON Lines / JSON: sniff the keys, then read the wanted keys as text (parsed in SQL)
    jfmt = "newline_delimited" if kind == "jsonl" else "auto"
    src = _Source(relation="", columns=[], types={}, json_read=(lit, jfmt, comp), **common)
    sniffed = _describe(con, f"read_json({lit}, format='{jfmt}', compression='{comp}')", src)
    if list(sniffed.items()) == [("json", "JSON")]:
        raise DataFileError(f"cannot read {label} as {_FMT_NAMES[kind]}: its records are not all JSON objects "
                            "with named fields; JSON Lines needs one JSON object per line")
    src.columns = list(sniffed)
    src.types = {k: "VARCHAR" for k in sniffed}
    return src


def stream_limit() -> int:
    """The cap on a stream's bytes: PERDOC_STREAM_LIMIT (``500M``, ``8G``, bytes), else :data:`STREAM_LIMIT`."""
    text = os.environ.get("PERDOC_STREAM_LIMIT", "").strip()
    if not text:
        return STREAM_LIMIT
    m = re.fullmatch(r"([0-9]+)\s*([KMGT]?)(?:i?B)?", text, re.IGNORECASE)
    if m is None or int(m.group(1)) == 0:
        raise ParameterError(f"PERDOC_STREAM_LIMIT must be a number of bytes, e.g. 500M or 8G (got {text!r})")
    return int(m.group(1)) << (10 * " KMGT".index(m.group(2).upper() or " "))


def _spool(stream, tmp: str, label: str, kind: str) -> tuple[str, int, bool]:
    """Copy a stream into the temporary folder (deleted with it); gzip data is recognised by its
    first bytes. Returns (file, bytes, gzip)."""
    disk = os.path.join(tmp, f"stream-{uuid.uuid4().hex[:8]}")
    limit = stream_limit()
    try:
        with open(disk, "wb") as out:
            copied = 0
            while block := stream.read(1 << 20):
                copied += len(block)
                if copied > limit:
                    raise InputError(f"{label} is longer than {limit:,} bytes, the cap on a stream (it is copied "
                                     "to a temporary file first): give a file, or set PERDOC_STREAM_LIMIT")
                out.write(block)
    except OSError as e:
        raise DataFileError(f"cannot read {label}: {e.strerror or e}") from None
    nbytes = os.path.getsize(disk)
    if nbytes == 0:
        raise InputError(f"{label} is empty: it has no data rows")
    with open(disk, "rb") as fh:
        gz = fh.read(3) == _GZIP_MAGIC
    _check_magic(disk, label, kind, gz)
    return disk, nbytes, gz


def _duckdb_path(path: str, tmp: str) -> str:
    """The path to hand DuckDB: absolute, so never taken for a URL (``s3:/x`` is a folder ``s3:``),
    and without * ? [ ] { } (DuckDB expands them); else a plain-named link in the temporary folder."""
    full = os.path.abspath(path)
    if not re.search(r"[*?\[\]{}]", full) and "://" not in full and not re.match(r"[A-Za-z][\w+.-]+:", full):
        return full
    link = os.path.join(tmp, f"input-{uuid.uuid4().hex[:8]}")
    try:
        os.symlink(full, link)
    except OSError:
        raise DataFileError(f"cannot read {path}: rename it without * ? [ ] {{ }} or a leading 'name:' "
                            "in its path") from None
    return link


# ---------------------------------------------------------------------- what the bytes say
_GZIP_MAGIC = b"\x1f\x8b\x08"
_MAGIC = (  # (first bytes, what they are, what to do)
    (_GZIP_MAGIC, "gzip-compressed data", None),
    (b"PAR1", "Parquet data", "name it .parquet, or pass --format parquet (fmt='parquet' in Python, "
                              "data.format: parquet in a params file)"),
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx workbook is one)", "export the sheet as CSV"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Excel (.xls) or other OLE2 file", "export the sheet as CSV"),
    (b"\xfd7zXZ\x00", "xz-compressed data", "decompress it (or recompress it with gzip and name it .gz)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data", "decompress it (or recompress it with gzip and name it .gz)"),
)


def _magic(head: bytes, disk: str | None = None):
    """(what the first bytes show, what to do), or None for anything else (text, or unknown)."""
    for sig, what, todo in _MAGIC:
        if head.startswith(sig):
            if sig == b"PAR1":  # a Parquet file also ends in PAR1 (a CSV header may start with it)
                if disk is None or _tail(disk) != b"PAR1":
                    return None
            return what, todo
    if re.match(rb"BZh[1-9]1AY&SY", head):
        return "bzip2-compressed data", "decompress it (or recompress it with gzip and name it .gz)"
    if len(head) >= 4 and head[:2] in (b"\xff\xfe", b"\xfe\xff") and b"\x00" in head[2:4]:
        return "UTF-16 text", "save it as UTF-8"
    return None


def _tail(disk: str) -> bytes:
    try:
        with open(disk, "rb") as fh:
            fh.seek(-4, os.SEEK_END)
            return fh.read(4)
    except OSError:
        return b""


def _check_magic(disk: str, label: str, kind: str, gz: bool) -> None:
    """Refuse, saying what the file is, when its first bytes contradict the format it is read as."""
    try:
        with open(disk, "rb") as fh:
            head = fh.read(16)
    except OSError as e:
        raise DataFileError(f"cannot read {label}: {e.strerror or e}") from None
    name = _FMT_NAMES[kind]
    found = _magic(head, disk)
    if found is None:
        return
    what, todo = found
    if kind == "parquet":
        if what != "Parquet data":
            todo = "decompress it first" if what == "gzip-compressed data" else todo
            raise DataFileError(f"cannot read {label} as Parquet: it is {what}, not a Parquet file; {todo}")
        return
    if what == "gzip-compressed data":
        if gz:
            return
        base = os.path.basename(label)
        raise DataFileError(f"cannot read {label} as {name}: it is gzip-compressed data; name it {base}.gz "
                            "(a .gz file is read as gzip) or decompress it")
    raise DataFileError(f"cannot read {label} as {name}: it is {what}; {todo}")


def _csv_header(path: str, kind: str, gz: bool, label: str | None = None) -> list[str]:
    """The header record, read on its own (binary, so bad bytes further down do not matter here)."""
    label = label or path
    opener = gzip.open if gz else open
    name = _FMT_NAMES[kind]
    try:
        with opener(path, "rb") as fh:
            raw = fh.read(1 << 20)
    except (OSError, EOFError) as e:
        what = "not a valid gzip file" if isinstance(e, (gzip.BadGzipFile, EOFError)) else (e.strerror or str(e))
        raise DataFileError(f"cannot read {label} as {name}: {what}") from None
    if gz:
        found = _magic(raw[:16])
        if found is not None:
            raise DataFileError(f"cannot read {label} as {name}: its gzip content is {found[0]}; {found[1]}")
    raw = raw[:_record_end(raw)]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataFileError(f"cannot read {label} as {name}: line 1 (the header) is not UTF-8 text") from None
    if "\x00" in text:
        raise DataFileError(f"cannot read {label} as {name}: line 1 (the header) holds NUL bytes; is it UTF-16 "
                            "text? save it as UTF-8")
    head = text.strip()
    if head.startswith("{") and head.endswith("}") and '":' in head:
        raise DataFileError(f"cannot read {label} as {name}: line 1 is a JSON object, not a header; for JSON "
                            "Lines name it .jsonl, or pass --format jsonl (fmt='jsonl' in Python, "
                            "data.format: jsonl in a params file)")
    try:
        return next(csv.reader([text], delimiter="," if kind == "csv" else "\t", quotechar='"',
                               doublequote=True), [])
    except csv.Error as e:
        raise DataFileError(f"cannot read {label} as {name}: line 1 (the header): {e}") from None


def _record_end(buf: bytes) -> int:
    """Where the first record of ``buf`` ends: at its first line feed outside quotes (a CR before it
    is dropped), or, in a file without line feeds (old Mac text), at its first carriage return."""
    stops = b"\n" if b"\n" in buf else b"\r"
    inside = False
    for m in re.finditer(b'["' + stops + b"]", buf):
        if m.group() == b'"':
            inside = not inside
        elif not inside:
            end = m.start()
            return end - 1 if stops == b"\n" and end and buf[end - 1:end] == b"\r" else end
    return len(buf)


def _line_ending_problem(path: str, gz: bool):
    """Error path only: (line, its ending, line 1's ending) for the first line (1-based) whose
    ending differs from line 1's, outside quoted fields; None when every line ends alike."""
    opener = gzip.open if gz else open
    names = {b"\r\n": "CRLF (\\r\\n, Windows)", b"\n": "LF (\\n, Unix)", b"\r": "a lone CR (\\r, old Mac)"}
    first, line, inside = None, 1, False
    try:
        with opener(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                if chunk.endswith(b"\r"):  # keep a CR LF pair in one chunk
                    chunk += fh.read(1)
                for m in re.finditer(rb'"|\r\n?|\n', chunk):
                    tok = m.group()
                    if tok == b'"':
                        inside = not inside
                    elif not inside:
                        if first is None:
                            first = tok
                        elif tok != first:
                            return line, names[tok], names[first]
                        line += 1
    except (OSError, EOFError):
        return None
    return None


def _describe(con, relation: str, src: _Source | None) -> dict[str, str]:
    try:
        rows = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
    except duckdb.Error as e:
        raise _translate(e, src) from None
    return {r[0]: r[1] for r in rows}


# ====================================================================== helpers
def _check_names(**names) -> None:
    for role, name in names.items():
        if not isinstance(name, str) or not name:
            raise ParameterError(f"{role} must be a column name (a non-empty string), got {name!r}")
    seen = {}
    for role, name in names.items():
        if name in seen:
            raise ColumnError(f"{seen[name]} and {role} both name column '{name}'; "
                              "each must be a different column")
        seen[name] = role


def _doc_expr(col: str) -> str:
    return f"CASE WHEN trim(CAST({col} AS VARCHAR)) = '' THEN NULL ELSE CAST({col} AS VARCHAR) END"


def _doc_expr_of(src: _Source, doc: str, col: str) -> str:
    """:func:`_doc_expr` of ``col`` holding ``src``'s id column ``doc``: an integer column's text is
    never blank, so it needs no blank test."""
    return f"CAST({col} AS VARCHAR)" if src.is_integer_column(doc) else _doc_expr(col)


_POW10 = 10 ** np.arange(20, dtype=np.uint64)  # 1, 10, ..., 10**19


def _ids_in_text_order(res: dict) -> dict:
    """An aggregation grouped by an integer id ``g``, its rows put in the order of the ids' text (as
    ``ORDER BY CAST(g AS VARCHAR) NULLS LAST`` would), with ``doc`` the ids as text: a unicode array
    (an object array ending in None when some id is missing, which is refused next)."""
    g = res.pop("g")
    ma = sys.modules.get("numpy.ma")
    missing = ma.getmaskarray(g) if ma is not None and ma.isMaskedArray(g) else None
    if missing is not None and missing.any():
        order, text = _int_text_order(np.asarray(g.data)[~missing])
        order = np.concatenate([np.flatnonzero(~missing)[order], np.flatnonzero(missing)])
        text = np.array(text.tolist() + [None] * int(missing.sum()), dtype=object)
    else:
        order, text = _int_text_order(np.asarray(g.data if missing is not None else g), defer=True)
    del g
    # each column put in order in turn, its unordered form let go at once (at 10^6 documents the
    # columns were all held twice, next to the ids' text)
    out = {}
    for k in list(res):
        out[k] = res.pop(k)[order]
    out["doc"] = text
    return out


#: Integers as Python and DuckDB write them: the text a CSV id must have to be grouped as a number.
_DIGIT_ID = re.compile(r"-?(0|[1-9][0-9]{0,17})")


def _digit_ids(src: _Source, doc: str) -> bool:
    """Whether ``doc`` is a CSV/TSV column whose first ids (in the first 256 KiB) are all integers as
    their text writes them (a guess that chooses the form of the pass; every id is checked in it)."""
    if src.csv_read is None:
        return False
    fields = _head_fields(src, doc)
    return bool(fields) and all(_DIGIT_ID.fullmatch(f) for f in fields)


#: The most 16-byte words a text id is read in by :func:`_keyed_sql` (ids of up to 32 bytes).
_ID_WORDS_MAX = 2
#: The low 64 bits of a 128-bit word, in SQL.
_LOW64 = "18446744073709551615::UHUGEINT"


def _id_words(src: _Source, doc: str) -> int:
    """The 16-byte words (1 or 2) that hold each id of the text column ``doc``, judged from the ids
    seen before the pass (a Parquet file's row-group bounds, a CSV/TSV file's first ids in 256 KiB),
    when they are all ASCII without a NUL and at most 32 bytes long; else 0 (none seen, a number or
    other column type, other characters, longer ids). A guess that chooses the pass's form: every id
    is checked in it (:func:`_keyed_sql`)."""
    if src.types.get(doc, "").upper() != "VARCHAR":
        return 0
    seen = src.first_ids(doc)
    if not seen or not all(v.isascii() and "\x00" not in v for v in seen):
        return 0
    words = -(-max(len(v) for v in seen) // 16)
    return words if words <= _ID_WORDS_MAX else 0


def _keyed_sql(grouped: str, words: int) -> str:
    """The aggregation ``grouped`` (grouped by the text id ``g``) with each id as the bytes of its
    text in ``2 * words`` big-endian 64-bit integers ``k0, k1, ...`` (left-aligned, zero-padded: ids
    then order as their text does) and its length ``w``, in the ids' order. ``odd``: the id is
    missing, blank, longer than ``16 * words`` bytes or not ASCII (then its keys are missing)."""
    odd = f"g IS NULL OR strlen(g) > {16 * words} OR strlen(g) <> length(g) OR trim(g) = ''"
    parts, keys = [], []
    for i in range(words):
        part = "g" if words == 1 else f"substr(g, {16 * i + 1}, 16)"
        # a part's bytes as one 128-bit integer, shifted left past the zero bytes that pad it to 16
        parts.append(f"CASE WHEN odd THEN NULL WHEN strlen(g) > {16 * i} THEN "
                     f"(encode({part})::BIT)::UHUGEINT << CAST(8 * (16 - strlen({part})) AS UHUGEINT) "
                     f"ELSE 0::UHUGEINT END AS v{i}")
        keys += [f"(v{i} >> 64)::UBIGINT AS k{2 * i}", f"(v{i} & {_LOW64})::UBIGINT AS k{2 * i + 1}"]
    vs = ", ".join(f"v{i}" for i in range(words))
    return f"""SELECT {", ".join(keys)}, CAST(CASE WHEN odd THEN 0 ELSE strlen(g) END AS UTINYINT) AS w,
                      odd, * EXCLUDE (g, odd, {vs})
               FROM (SELECT *, {", ".join(parts)} FROM (SELECT *, {odd} AS odd FROM ({grouped})))
               ORDER BY {", ".join(f"k{i}" for i in range(2 * words))} NULLS LAST"""


def _keyed_ids_in_text_order(res: dict, words: int) -> dict | None:
    """An aggregation fetched by :func:`_keyed_sql`, in the ids' order, with its ids laid out from
    their keys as :class:`~perdoc.reading.table.AsciiIds`. None when some id is odd (missing, blank,
    long or not ASCII) or holds a NUL byte (which its keys cannot tell from padding): the text route
    reads those (the guess that chose this one was wrong, or the rows are refused)."""
    if _plain(res.pop("odd"), bool).any():
        return None
    length = np.asarray(res.pop("w"), dtype=np.int64)
    K = length.size
    words64 = np.empty((K, 2 * words), dtype=">u8")
    for i in range(2 * words):
        words64[:, i] = res.pop(f"k{i}")
    b = words64.view(np.uint8).reshape(K, 16 * words)
    del words64
    if np.count_nonzero(b) != int(length.sum()):   # (a NUL inside an id)
        return None
    if K == 0:
        res["doc"] = np.zeros(0, dtype=object)
        return res
    width = int(length.max())
    raw = np.ascontiguousarray(b[:, :width]).view(f"S{width}").reshape(K)
    del b
    res["doc"] = AsciiIds(raw, plain=not _folded(raw.view(np.uint8)))
    return res


def _digit_ids_in_text_order(res: dict) -> dict | None:
    """An aggregation of text ids fetched as the integers they spell (``g``), put in the order of the
    ids' text as :func:`_text_ids_in_order` would (ordered like an integer column's ids,
    :func:`_ids_in_text_order`). None when some id is ``odd`` (missing, blank, or not an integer's own
    text): the text route reads those (the guess that chose this one was wrong, or the rows are
    refused). (Their text fetched beside the integers would be a column missing on every other row,
    which comes back as a masked array: numpy.ma imported, and 15-25 ms at 10^6 documents.)"""
    if _plain(res.pop("odd"), bool).any():
        return None
    res["g"] = np.asarray(res["g"])
    out = _ids_in_text_order(res)
    out["integer_ids"] = True     # (digits: no two differ only in case, spaces or form)
    return out


def _text_ids_in_order(res: dict) -> dict:
    """An aggregation with text ids ``doc`` fetched in no particular order, its rows put in the ids'
    text order (as ``ORDER BY doc NULLS LAST`` would; numpy compares code points, as DuckDB compares
    UTF-8 bytes): ASCII ids as :class:`~perdoc.reading.table.AsciiIds`, others as a unicode array.
    With a missing id the rows are left as they are (that is refused next, wherever it lies)."""
    if not _text_doc_column(res) or res["doc"].size < 2:
        return res      # (a masked array: some id is missing)
    ids = _take_ascii_ids(res)
    key = ids.raw if ids is not None else res.pop("doc").astype(str)
    order = np.argsort(key, kind=_sort_kind(key))
    out = {}
    for k in list(res):
        if k != "doc":
            out[k] = res.pop(k)[order]
    key = key[order]
    out["doc"] = AsciiIds(key, ids.plain) if ids is not None else key
    return out


def _text_doc_column(res: dict) -> bool:
    """Whether an aggregation's ids ``doc`` came as a plain object array (text, none missing)."""
    return type(res["doc"]) is np.ndarray and res["doc"].dtype.kind == "O"


def _take_ascii_ids(res: dict) -> AsciiIds | None:
    """``res["doc"]`` as :class:`~perdoc.reading.table.AsciiIds` when its ids are ASCII text, taken
    out of ``res`` as soon as they qualify (their Python strings go before the bytes are laid out);
    else None, ``res`` untouched."""
    if not _text_doc_column(res):
        return None
    return _ascii_ids(res["doc"], release=lambda: res.pop("doc"))


def _sort_kind(key: np.ndarray) -> str:
    """numpy's merge sort (timsort) for distinct keys in few monotone runs (grouped from a file
    sorted by document: it follows the runs), else the quicksort."""
    return "stable" if _monotone_runs(key) <= key.size // 16 else "quicksort"


def _int_text_order(v: np.ndarray, *, defer: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(order, text) for distinct integers ``v`` (int8 ... uint64): the permutation that sorts them
    as their decimal text sorts (character by character, as DuckDB orders VARCHAR and numpy orders
    str), and that text in that order, as the unicode array ``v[order].astype(object).astype(str)``
    would be (the same characters and width), built with array arithmetic. ``defer``: the text as a
    :class:`~perdoc.reading.table.DeferredIds`, written when first read."""
    K = v.size
    if K == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype="U1")
    neg = v < 0
    a = v.astype(np.uint64)
    any_neg = bool(neg.any())
    if any_neg:
        np.negative(a, out=a, where=neg)  # |v| (modulo 2^64), also for the smallest int64
    D = max(1, int(np.searchsorted(_POW10, a.max(), side="right")))   # the most digits of an id
    nd = np.ones(K, dtype=np.uint8)   # each id's number of digits (0 has 1)
    for p in _POW10[1:D]:
        nd += a >= p
    W = max(D, int(np.max(nd, where=neg, initial=0)) + 1) if any_neg else D   # the longest text, "-" included
    if D > 17:  # no room for the packed key below (ids of 18 digits or more): sort the text
        text = v.astype(f"U{W}")
        order = np.argsort(text, kind="stable")
        return order, text[order]
    # text order = order of (the digits followed by zeros up to D digits, the number of digits):
    # a text that is a prefix of another sorts first. "-" sorts before every digit, so the ids >= 0
    # get a bit above the key's.
    key = a * _POW10[D - nd]
    del a
    key *= np.uint64(32)
    key += nd
    bits = (10**D * 32).bit_length()   # the key's bits: key < 10^D * 32
    high = np.uint64(1 << bits)
    if any_neg:
        np.add(key, high, out=key, where=~neg)
        bits += 1
    places = max(1, (K - 1).bit_length())
    # the aggregation of a file sorted by document gives the ids in a few long runs (one a hash
    # partition, a number of digits and a sign; negative ids descend as they grow): a merge sort
    # (numpy's timsort) follows those runs (6-8 ms for 10^6 ids in a few hundred, against 52-55 ms
    # for the quicksort, which shuffled ids need: the timsort took 61 there)
    kind = _sort_kind(key)
    if bits + places <= 64:
        # the key and its position packed in 64 bits: one (vectorised) sort of them is two to three
        # times faster than an argsort of the keys; the keys are distinct, so the order is the same
        key <<= np.uint64(places)
        key |= np.arange(K, dtype=np.uint64)
        key.sort(kind=kind)
        order = (key & np.uint64((1 << places) - 1)).view(np.intp)   # (positions < 2^63)
        key >>= np.uint64(places)
    else:
        order = np.argsort(key, kind=kind)
        key = key[order]
    if defer:
        from .table import DeferredIds
        return order, DeferredIds(K, functools.partial(_key_text, key, D, W, high if any_neg else None))
    return order, _key_text(key, D, W, high if any_neg else None)


def _monotone_runs(key: np.ndarray) -> int:
    """How many ascending or descending runs the distinct ``key`` falls into (1 when sorted)."""
    if key.size < 3:
        return 1
    down = key[1:] < key[:-1]
    return 1 + int(np.count_nonzero(down[1:] != down[:-1]))


def _key_text(key: np.ndarray, D: int, W: int, high) -> np.ndarray:
    """The ids' text from their sorted keys (:func:`_int_text_order`; ``key`` is consumed): ``D``
    digits at most, ``W`` characters at most, ``high`` the bit of the ids >= 0 when some are
    negative (else None)."""
    K = key.size
    any_neg = high is not None
    # the digits, their number and the sign come back from the sorted keys
    if any_neg:
        neg = key < high
        key &= ~high
    nd = (key & np.uint64(31)).astype(np.uint8)
    key >>= np.uint64(5)   # the digits, padded with zeros to D
    # in 32-bit parts of at most 9 digits: 32-bit division is three times faster than 64-bit
    if D <= 9:
        parts = [(key.astype(np.uint32), 0, D)]
    else:
        top = key // np.uint64(10**9)
        key -= top * np.uint64(10**9)
        parts = [(top.astype(np.uint32), 0, D - 9), (key.astype(np.uint32), D - 9, 9)]
    del key
    ten, zero = np.uint32(10), np.uint32(ord("0"))
    # each position's digit as its character, one place to the right after a "-"; the padding zeros
    # past an id's own digits stay NUL
    chars = np.zeros((K, W), dtype=np.uint32)
    pos = ~neg if any_neg else None
    for part, first, width in parts:
        for j in range(first + width - 1, first - 1, -1):
            rest = part // ten
            part -= rest * ten
            part += zero
            has = nd > j
            if any_neg:
                np.copyto(chars[:, j], part, where=has & pos)
                if j + 1 < W:   # (else no negative id has that many digits)
                    np.copyto(chars[:, j + 1], part, where=has & neg)
            else:
                np.copyto(chars[:, j], part, where=has)
            part = rest
    if any_neg:
        np.copyto(chars[:, 0], np.uint32(ord("-")), where=neg)
    return chars.view(np.dtype(f"U{W}")).reshape(K)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


# ---------------------------------------------------------------------- DuckDB errors -> one line
def _translate(err: Exception, src: _Source | None) -> PerdocError:
    text = str(err)
    first = text.strip().splitlines()[0] if text.strip() else type(err).__name__
    first = re.sub(r"^[A-Za-z ]*Error:\s*", "", first)
    label = src.label if src is not None else "the data"
    kind = _FMT_NAMES.get(src.fmt, src.fmt) if src is not None else "data"

    if isinstance(err, duckdb.OutOfMemoryException) or "Out of Memory" in text:
        return InputError(f"DuckDB ran out of memory reading {label} (memory_limit={DUCKDB_MEMORY_LIMIT}); "
                          f"raise perdoc.io.DUCKDB_MEMORY_LIMIT or free disk space for spilling: {_short(first, 160)}")
    m = re.search(r"CSV Error on Line: (\d+)", text)
    if m:
        line = m.group(1)
        cols = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text)
        if cols:
            exp, got = cols.groups()
            return DataFileError(f"{label}: line {line} has {got} field(s) but the header has {exp}; "
                                 "every row needs exactly one value per column")
        body = [ln.strip() for ln in text.split("Possible")[0].splitlines()[1:] if ln.strip()]
        detail = body[-1] if body and not body[-1].startswith("Original Line") else "malformed row"
        if "Invalid unicode" in text:
            detail = "not valid UTF-8 text"
        return DataFileError(f"cannot read {label} as {kind}: line {line}: {_short(detail.strip(), 160)}")
    if "state machine reached an invalid state" in text and src is not None and src.disk is not None:
        where = _line_ending_problem(src.disk, src.gz)
        if where is not None:
            line, ending, first_ending = where
            return DataFileError(f"cannot read {label} as {kind}: mixed line endings: line {line} ends in {ending} "
                                 f"but line 1 ends in {first_ending}; use one kind of line ending throughout "
                                 "(e.g. convert the file with dos2unix)")
        return DataFileError(f"cannot read {label} as {kind}: it breaks the CSV rules (RFC 4180) perdoc reads by; "
                             "check its quotes and line endings")
    if "Invalid unicode" in text:
        return DataFileError(f"cannot read {label} as {kind}: it is not valid UTF-8 text")
    if "No magic bytes" in text or "not a parquet file" in text.lower():
        return DataFileError(f"cannot read {label} as Parquet: the file is truncated or not a Parquet file "
                             "(no valid Parquet footer)")
    if "Malformed JSON" in text and src is not None and src.disk is not None:
        where = _first_bad_json_line(src.disk, src.gz)
        if where is not None:
            line, why = where
            return DataFileError(f"{label}: line {line} is not valid JSON ({why}); "
                                 "JSON Lines needs one JSON object per line")
        return DataFileError(f"cannot read {label} as {kind}: invalid JSON")
    if isinstance(err, duckdb.IOException):
        return DataFileError(f"cannot read {label}: {_short(first, 200)}")
    return DataFileError(f"cannot read {label} as {kind}: {_short(first, 200)}")


def _first_bad_json_line(path: str, gz: bool | None = None):
    """Error path only: the first line of a JSON Lines file that does not parse (1-based), or None."""
    def _no_constants(token):
        raise ValueError(f"{token} is not valid JSON")

    if gz is None:
        gz = path.lower().endswith(".gz")
    opener = gzip.open if gz else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", errors="strict") as fh:
            first_char = None
            for number, line in enumerate(fh, start=1):
                stripped = line.strip()
                if not stripped:
                    continue
                if first_char is None:
                    first_char = stripped[0]
                    if first_char == "[":   # a JSON array document, not JSON Lines
                        return None
                try:
                    json.loads(stripped, parse_constant=_no_constants)
                except ValueError as e:
                    reason = getattr(e, "msg", None) or str(e)
                    if getattr(e, "colno", None):
                        reason += f" at column {e.colno}"
                    return number, reason
    except (OSError, UnicodeDecodeError, EOFError):
        return None
    return None
