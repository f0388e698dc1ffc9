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

:func:`write_table` writes the per-document table for audit (``.csv`` or ``.parquet``), atomically.

Bad input raises :class:`~perdoc.errors.DataFileError`, :class:`~perdoc.errors.ColumnError` or
:class:`~perdoc.errors.InputError` with a one-line message naming the file, the column and the rule.
"""

from __future__ import annotations

import csv
import difflib
import gzip
import json
import os
import re
import tempfile
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import sys

import duckdb
import numpy as np

from .errors import ColumnError, DataFileError, InputError, ParameterError, PerdocError
from .table import DocTable

__all__ = ["load_chunks", "load_docs", "load_pairs", "write_table", "GROUP_BY_SQL", "DUCKDB_MEMORY_LIMIT"]

#: The one aggregation to run where the logs live (Spark SQL, BigQuery, Snowflake, DuckDB, ...).
#: Feed its output to :func:`load_docs` with ``doc="doc_id", n="n", s="s", q="q"``.
GROUP_BY_SQL = "SELECT doc_id, COUNT(*) AS n, SUM(score) AS s, SUM(score*score) AS q FROM results GROUP BY doc_id"

#: Memory DuckDB may use before it spills the GROUP BY to its temporary folder.
DUCKDB_MEMORY_LIMIT = "1GB"

_EXTENSIONS = {
    ".csv": "csv", ".tsv": "tsv",
    ".parquet": "parquet", ".pq": "parquet",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
}
_FMT_ALIASES = {"csv": "csv", "tsv": "tsv", "parquet": "parquet", "pq": "parquet",
                "jsonl": "jsonl", "ndjson": "jsonl", "json": "json"}
_FMT_NAMES = {"csv": "CSV", "tsv": "TSV", "parquet": "Parquet", "jsonl": "JSON Lines",
              "json": "JSON", "dataframe": "DataFrame"}
_NUMERIC_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                  "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "REAL", "DOUBLE", "DECIMAL")


# ====================================================================== public API
def load_chunks(source, doc: str, score: str, *, fmt: str | None = None,
                attrs: dict[str, str] | None = None) -> DocTable:
    """Aggregate one-row-per-chunk results to the per-document table.

    ``source`` is a path to a CSV/TSV (optionally ``.gz``), Parquet or JSON Lines file -- the
    format comes from the extension unless ``fmt`` is given -- or a pandas DataFrame. ``doc`` names
    the document-id column (ids are compared as text), ``score`` the score column (numbers, or
    booleans counted as 1/0). Per document: ``n = count(*)``, ``s = sum(score)``,
    ``q = sum(score*score)``, sorted by document id.

    ``attrs`` maps names to columns that describe the document rather than the chunk (a stratum, the
    number of chunks in the document's population); each must hold one value per document.
    """
    attrs = dict(attrs or {})
    _check_names(doc=doc, score=score, **{f"attrs[{k!r}]": v for k, v in attrs.items()})
    with _open_source(source, fmt) as src:
        src.require(doc, score, *attrs.values())
        attr_sql = "".join(
            f", min(CAST({src.ref(col)} AS VARCHAR)) AS a_min_{i}, max(CAST({src.ref(col)} AS VARCHAR)) AS a_max_{i}"
            f", count(*) FILTER (WHERE {src.ref(col)} IS NULL) AS a_null_{i}"
            for i, col in enumerate(attrs.values()))
        raw, x, text = src.number(score)
        # 0/1 and integer scores sum exactly (in any order) as doubles below 2^53, so a plain sum is
        # both fast and deterministic; other scores are summed again with DuckDB's compensated fsum
        # (below), whose result depends far less on how threads split the rows
        exact = src.is_integer(score)
        # scores known to lie in [0, 1] (Parquet statistics) need no extra aggregate to tell a 0/1
        # metric: x^2 <= x there, with equality only at 0 and 1, so sum x^2 == sum x decides
        unit = exact or src.within_unit_interval(score)
        agg = "sum"
        # group on the raw id and turn ids into text once per document, not once per row. NaN and
        # infinite scores show in the sums, so they are counted (second pass) only when a sum is not
        # finite. dev01 = sum |x (x - 1)| is 0 exactly when every score is 0 or 1 (a sum of
        # non-negative terms, so its value does not depend on the order of summation)
        sql = f"""
            SELECT {_doc_expr("g")} AS doc, * EXCLUDE (g)
            FROM (
                SELECT g,
                       count(*) AS n,
                       {agg}(x) AS s,
                       {agg}(x * x) AS q,
                       count(*) - count(raw) AS n_null,
                       {"count(*) FILTER (WHERE raw IS NOT NULL AND x IS NULL)" if text else "0"} AS n_text,
                       {"min(raw) FILTER (WHERE raw IS NOT NULL AND x IS NULL)" if text else "NULL"} AS ex_text,
                       {"0" if unit else "sum(abs(x * (x - 1)))"} AS dev01
                       {attr_sql}
                FROM (SELECT {src.ref(doc)} AS g, {raw} AS raw, {x} AS x, * FROM {src.relation})
                GROUP BY g)
            ORDER BY doc NULLS LAST"""
        res = src.fetch(sql)
        s_all, q_all = _plain(res["s"], float), _plain(res["q"], float)
        if exact or (np.all(np.isfinite(s_all)) and np.all(np.isfinite(q_all))):
            res["n_nan"] = res["n_inf"] = np.zeros(1)
        else:
            bad = src.fetch(f"""SELECT count(*) FILTER (WHERE isnan(x)) AS n_nan,
                                       count(*) FILTER (WHERE isinf(x)) AS n_inf
                                FROM (SELECT {x} AS x FROM {src.relation})""")
            res["n_nan"], res["n_inf"] = bad["n_nan"], bad["n_inf"]
        binary = (bool(np.array_equal(q_all, s_all)) if unit
                  else bool(np.all(_plain(res["dev01"], float) == 0)))
        if not exact and not binary and np.all(np.isfinite(s_all)):
            again = src.fetch(f"""SELECT fsum(x) AS s, fsum(x * x) AS q FROM (
                                      SELECT {src.ref(doc)} AS g, {x} AS x FROM {src.relation})
                                  GROUP BY g ORDER BY {_doc_expr("g")} NULLS LAST""")
            res["s"], res["q"] = again["s"], again["q"]
            s_all, q_all = _plain(res["s"], float), _plain(res["q"], float)

        counts = _plain(res["n"], float)
        docs = _plain(res["doc"], object)
        rows = int(counts.sum())
        if rows == 0:
            raise InputError(f"{src.label} has no data rows")
        if docs.size and docs[-1] is None:  # sorted NULLS LAST: only the last can be missing
            k = int(counts[-1])
            raise InputError(f"column '{doc}' in {src.label}: {k} of {rows} row(s) have no document id; "
                             "every row needs a document id")
        _check_scores(res, score, src.label, null="n_null", text="n_text", example="ex_text", nan="n_nan",
                      inf="n_inf")
        info = src.info(rows)
        info["binary"] = binary
        attr_values = {}
        for i, (name, col) in enumerate(attrs.items()):
            nulls = int(_plain(res[f"a_null_{i}"], float).sum())
            if nulls:
                raise InputError(f"column '{col}' in {src.label}: {nulls} row(s) have no value; "
                                 "every row needs one")
            lo, hi = _plain(res[f"a_min_{i}"], object), _plain(res[f"a_max_{i}"], object)
            differ = lo != hi
            if differ.any():
                raise InputError(f"column '{col}' in {src.label}: {int(differ.sum())} document(s) have more than one "
                                 f"value (e.g. document {_short(docs[differ][0])!r}: {_short(lo[differ][0])!r} and "
                                 f"{_short(hi[differ][0])!r}); it must describe the document, one value each")
            attr_values[name] = lo
    table = _build(src_label=src.label, mapping={"doc": doc},
                   n=counts, s=_plain(res["s"], float), q=_plain(res["q"], float), doc=docs, source=info)
    if attr_values:
        from dataclasses import replace
        table = replace(table, attrs=attr_values)
    return table


def load_docs(source, doc: str, n: str, s: str, q: str | None = None, *, fmt: str | None = None) -> DocTable:
    """Read an already aggregated per-document table (one row per document).

    ``n`` names the count column (positive integers), ``s`` the score-sum column, ``q`` (optional)
    the sum-of-squared-scores column. This is the route for logs that live in Spark or a warehouse:
    run :data:`GROUP_BY_SQL` there and load its output here.
    """
    names = {"doc": doc, "n": n, "s": s}
    if q is not None:
        names["q"] = q
    _check_names(**names)
    with _open_source(source, fmt) as src:
        src.require(*names.values())
        select = [f"{_doc_expr(src.ref(doc))} AS d"]
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
        rows = int(docs.size)
        if rows == 0:
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
            raise InputError(f"column '{n}' in {src.label}: {int(frac.sum())} document(s) have a non-integer count "
                             f"(e.g. {nv[frac][0]:g}); n must be the whole number of chunks or queries")
        info = src.info(rows)
    return _build(src_label=src.label, mapping=names, n=values["n"], s=values["s"], q=values.get("q"),
                  doc=docs, source=info)


def write_table(table: DocTable, path) -> None:
    """Write ``doc, n, s, q (if any), rate`` to ``.csv`` or ``.parquet`` (by extension), atomically.

    The table goes to a temporary file in the same folder which then replaces ``path``, so a failed
    write never leaves a half-written file behind.
    """
    path = Path(os.fspath(path))
    ext = path.suffix.lower()
    if ext not in (".csv", ".parquet", ".pq"):
        raise DataFileError(f"cannot write {path}: unknown extension {ext or '(none)'!r}; use .csv or .parquet")
    folder = path.parent
    if not folder.is_dir():
        raise DataFileError(f"cannot write {path}: folder not found: {folder}")
    if path.is_dir():
        raise DataFileError(f"cannot write {path}: it is a directory")
    frame = table.to_frame()
    n = frame["n"].to_numpy()
    if np.all(n == np.round(n)):
        frame["n"] = n.astype(np.int64)
    tmp = folder / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        if ext == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    except OSError as e:
        raise DataFileError(f"cannot write {path}: {e.strerror or e}") from None
    finally:
        if tmp.exists():
            tmp.unlink()


# ====================================================================== sources
@dataclass
class _Source:
    con: duckdb.DuckDBPyConnection
    label: str               # how messages name the data: the path, or "the DataFrame"
    path: str | None
    fmt: str
    relation: str            # SQL FROM clause
    columns: list[str]       # user-visible column names, in order
    types: dict[str, str]    # user column name -> DuckDB type
    refs: dict[str, str] = field(default_factory=dict)  # user column name -> SQL expression
    nbytes: int | None = None
    json_read: tuple | None = None  # (sql path literal, json format) when the relation is built lazily
    parquet_lit: str | None = None  # sql path literal of a Parquet file (its footer has column statistics)

    def require(self, *names: str) -> None:
        for name in names:
            if name not in self.types:
                raise ColumnError(_not_found(name, self.columns, self.label))
        if self.json_read is not None:
            lit, jfmt = self.json_read
            cols = ", ".join(f"{_sql_str(nm)}: 'VARCHAR'" for nm in dict.fromkeys(names))
            self.relation = f"read_json({lit}, format='{jfmt}', columns={{{cols}}})"

    def ref(self, name: str) -> str:
        return self.refs.get(name) or _ident(name)

    def number(self, name: str) -> tuple[str, str, bool]:
        """SQL for (raw value, value as DOUBLE, whether raw is text that may fail to parse)."""
        col = self.ref(name)
        typ = self.types[name].upper()
        if typ == "BOOLEAN" or typ.startswith(_NUMERIC_TYPES):
            return col, f"CAST({col} AS DOUBLE)", False
        if typ in ("VARCHAR", "JSON") or typ.startswith("VARCHAR"):
            raw = f"NULLIF(trim(CAST({col} AS VARCHAR)), '')"
            x = (f"COALESCE(TRY_CAST({raw} AS DOUBLE), "
                 f"CASE lower({raw}) WHEN 'true' THEN 1.0 WHEN 'false' THEN 0.0 END)")
            return raw, x, True
        raise ColumnError(f"column '{name}' in {self.label} has type {self.types[name]}; "
                          "it must hold numbers or booleans")

    def is_integer(self, name: str) -> bool:
        """Whether the column's type holds integers or booleans only (exact sums)."""
        typ = self.types[name].upper()
        return typ == "BOOLEAN" or typ.startswith(("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
                                                      "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"))

    def within_unit_interval(self, name: str) -> bool:
        """Whether the file's own statistics (a Parquet footer) show every value of ``name`` in
        [0, 1]; reading them costs milliseconds and no pass over the data."""
        if self.parquet_lit is None:
            return False
        try:
            row = self.con.execute(
                f"SELECT min(TRY_CAST(stats_min_value AS DOUBLE)), max(TRY_CAST(stats_max_value AS DOUBLE)), "
                f"count(*), count(TRY_CAST(stats_min_value AS DOUBLE)), count(TRY_CAST(stats_max_value AS DOUBLE)) "
                f"FROM parquet_metadata({self.parquet_lit}) WHERE path_in_schema = ?", [name]).fetchone()
        except duckdb.Error:
            return False
        lo, hi, groups, with_min, with_max = row
        return bool(groups and with_min == groups and with_max == groups and lo >= 0 and hi <= 1)

    def fetch(self, sql: str) -> dict:
        try:
            return self.con.execute(sql).fetchnumpy()
        except duckdb.Error as e:
            raise _translate(e, self) from None

    def info(self, rows: int) -> dict:
        return {"path": self.path, "format": self.fmt, "rows": rows, "bytes": self.nbytes}


@contextmanager
def _open_source(source, fmt):
    """Resolve ``source`` to a DuckDB relation on a fresh, memory-limited connection."""
    with tempfile.TemporaryDirectory(prefix="perdoc-duckdb-") as tmp:
        con = duckdb.connect(config={"memory_limit": DUCKDB_MEMORY_LIMIT, "temp_directory": tmp,
                                     "preserve_insertion_order": False})
        try:
            con.execute("SET enable_progress_bar = false")
            pd = sys.modules.get("pandas")  # a DataFrame implies pandas is already imported
            if pd is not None and isinstance(source, pd.DataFrame):
                yield _dataframe_source(con, source)
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
    con.register("perdoc_input", df)
    types = _describe(con, "perdoc_input", None)
    return _Source(con=con, label=label, path=None, fmt="dataframe", relation="perdoc_input",
                   columns=list(df.columns), types=types, nbytes=None)


def _file_source(con, source, fmt, tmp: str) -> _Source:
    if not isinstance(source, (str, os.PathLike)):
        raise ParameterError(f"source must be a file path or a pandas DataFrame, not {type(source).__name__}")
    path = os.fspath(source)
    if not os.path.exists(path):
        raise DataFileError(f"data file not found: {path}")
    if os.path.isdir(path):
        raise DataFileError(f"{path} is a directory, not a data file")
    kind, gz = _format_of(path, fmt)
    nbytes = os.path.getsize(path)
    lit = _sql_str(_unglobbed(path, tmp))
    if nbytes == 0:
        raise InputError(f"{path} is empty: it has no data rows")
    if kind in ("csv", "tsv"):
        header = _csv_header(path, kind, gz)
        if not header:
            raise InputError(f"{path} is empty: it has no data rows")
        delim = "," if kind == "csv" else "\\t"
        inner = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(header)))
        relation = (f"read_csv({lit}, columns={{{inner}}}, auto_detect=false, header=true, "
                    f"delim=E'{delim}', quote='\"', escape='\"', strict_mode=true, null_padding=false)")
        dups = {h for h in header if header.count(h) > 1}
        refs = {h: f"c{i}" for i, h in enumerate(header) if h not in dups}
        types = {h: "VARCHAR" for h in refs}
        return _Source(con=con, label=path, path=path, fmt=kind, relation=relation, columns=header,
                       types=types, refs=refs, nbytes=nbytes)
    if kind == "parquet":
        relation = f"read_parquet({lit})"
        src = _Source(con=con, label=path, path=path, fmt=kind, relation=relation, columns=[], types={},
                      nbytes=nbytes, parquet_lit=lit)
        src.types = _describe(con, relation, src)
        src.columns = list(src.types)
        return src
    # JSON Lines / JSON: sniff the keys, then read the wanted keys as text (parsed in SQL)
    jfmt = "newline_delimited" if kind == "jsonl" else "auto"
    src = _Source(con=con, label=path, path=path, fmt=kind, relation="", columns=[], types={},
                  nbytes=nbytes, json_read=(lit, jfmt))
    sniffed = _describe(con, f"read_json({lit}, format='{jfmt}')", src)
    if list(sniffed.items()) == [("json", "JSON")]:
        raise DataFileError(f"cannot read {path} as {_FMT_NAMES[kind]}: its records are not all JSON objects "
                            "with named fields; JSON Lines needs one JSON object per line")
    src.columns = list(sniffed)
    src.types = {k: "VARCHAR" for k in sniffed}
    return src


def _unglobbed(path: str, tmp: str) -> str:
    """DuckDB expands * ? [ ] in file names; give it a plain-named link to such a file instead."""
    if not re.search(r"[*?\[\]{}]", path):
        return path
    name = os.path.basename(path).lower()
    link = os.path.join(tmp, "input" + (".gz" if name.endswith(".gz") else ""))
    try:
        os.symlink(os.path.abspath(path), link)
    except OSError:
        raise DataFileError(f"cannot read {path}: rename it without * ? [ ] {{ }} in its name") from None
    return link


def _format_of(path: str, fmt: str | None) -> tuple[str, bool]:
    name = os.path.basename(path).lower()
    gz = name.endswith(".gz")
    if fmt is not None:
        kind = _FMT_ALIASES.get(str(fmt).lower().lstrip("."))
        if kind is None:
            raise ParameterError(f"fmt={fmt!r} is not a known format; use one of csv, tsv, parquet, jsonl, json")
        if gz and kind == "parquet":
            raise DataFileError(f"{path}: a gzip-compressed Parquet file cannot be read; decompress it first")
        return kind, gz
    stem = name[:-3] if gz else name
    ext = os.path.splitext(stem)[1]
    kind = _EXTENSIONS.get(ext)
    if kind is None or (gz and kind == "parquet"):
        shown = ext + (".gz" if gz else "") if ext else "(none)"
        raise DataFileError(f"cannot tell the format of {path} from its extension {shown!r}: use .csv, .tsv, "
                            ".parquet, .pq, .jsonl, .ndjson or .json (text formats may end in .gz), or pass fmt=")
    return kind, gz


def _csv_header(path: str, kind: str, gz: bool) -> list[str]:
    """The header record, read on its own (binary, so bad bytes further down do not matter here)."""
    opener = gzip.open if gz else open
    name = _FMT_NAMES[kind]
    try:
        with opener(path, "rb") as fh:
            raw = fh.readline(1 << 20)
            while raw.count(b'"') % 2 and len(raw) < (1 << 20):  # a quoted header field spanning lines
                more = fh.readline(1 << 20)
                if not more:
                    break
                raw += more
    except (OSError, EOFError) as e:
        what = "not a valid gzip file" if isinstance(e, (gzip.BadGzipFile, EOFError)) else (e.strerror or str(e))
        raise DataFileError(f"cannot read {path} as {name}: {what}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataFileError(f"cannot read {path} as {name}: line 1 (the header) is not UTF-8 text") from None
    try:
        return next(csv.reader([text], delimiter="," if kind == "csv" else "\t", quotechar='"',
                               doublequote=True), [])
    except csv.Error as e:
        raise DataFileError(f"cannot read {path} as {name}: line 1 (the header): {e}") from None


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


def _not_found(name: str, columns: list[str], label: str) -> str:
    if name in columns:  # present but ambiguous (a CSV header that repeats it)
        return f"column '{name}' appears more than once in the header of {label}; column names must be unique"
    lowered = {c.lower(): c for c in columns}
    guess = [lowered[name.lower()]] if name.lower() in lowered else difflib.get_close_matches(name, columns, n=1)
    shown = ", ".join(columns[:25]) + (f", ... ({len(columns) - 25} more)" if len(columns) > 25 else "")
    hint = f"; did you mean '{guess[0]}'?" if guess else ""
    return f"column '{name}' not found in {label}{hint} (columns: {shown or 'none'})"


def _check_scores(res: dict, col: str, label: str, *, null: str | None = None, text: str, example: str,
                  nan: str, inf: str) -> None:
    """Raise one line counting the bad scores of ``col`` (fetched counts under the given keys)."""
    problems = []
    for key, what in ((null, "a missing score"), (text, "a non-numeric score"), (nan, "a NaN score"),
                      (inf, "an infinite score")):
        k = 0 if key is None else int(_plain(res[key], float).sum())
        if k:
            msg = f"{k} row(s) have {what}"
            if key == text:
                examples = [e for e in _plain(res[example], object) if e is not None]
                if examples:
                    msg += f" (e.g. {_short(examples[0])!r})"
            problems.append(msg)
    if problems:
        raise InputError(f"column '{col}' in {label}: " + ", ".join(problems)
                         + "; every score must be a finite number or a boolean (true = 1)")


def _doc_expr(col: str) -> str:
    return f"CASE WHEN trim(CAST({col} AS VARCHAR)) = '' THEN NULL ELSE CAST({col} AS VARCHAR) END"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _short(value, limit: int = 40) -> str:
    value = str(value)
    return value if len(value) <= limit else value[: limit - 3] + "..."


def _plain(arr, dtype):
    """A fetchnumpy column as a plain array (masked entries -> None / NaN / False)."""
    if np.ma.isMaskedArray(arr):
        mask = np.ma.getmaskarray(arr)
        data = np.asarray(arr.data, dtype=dtype if dtype is not bool else bool).copy()
        if dtype is object:
            data[mask] = None
        elif dtype is bool:
            data[mask] = False
        else:
            data[mask] = np.nan
        return data
    return np.asarray(arr, dtype=dtype)


_COLUMN_RE = re.compile(r"^column (doc|n|s|q)\b:?\s*")


def _build(*, src_label: str, mapping: dict, n, s, q, doc, source: dict) -> DocTable:
    """``DocTable.from_arrays`` with its messages reworded to the user's column and file names."""
    try:
        return DocTable.from_arrays(n, s, q, doc, source=source)
    except PerdocError as e:
        msg = str(e)
        m = _COLUMN_RE.match(msg)
        if m and m.group(1) in mapping:
            msg = f"column '{mapping[m.group(1)]}' in {src_label}: " + msg[m.end():]
        else:
            msg = f"{src_label}: {msg}"
        raise type(e)(msg) from None


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
    if "Invalid unicode" in text:
        return DataFileError(f"cannot read {label} as {kind}: it is not valid UTF-8 text")
    if "No magic bytes" in text or "not a parquet file" in text.lower():
        return DataFileError(f"cannot read {label} as Parquet: the file is truncated or not a Parquet file "
                             "(no valid Parquet footer)")
    if "Malformed JSON" in text and src is not None and src.path is not None:
        where = _first_bad_json_line(src.path)
        if where is not None:
            line, why = where
            return DataFileError(f"{label}: line {line} is not valid JSON ({why}); "
                                 "JSON Lines needs one JSON object per line")
        return DataFileError(f"cannot read {label} as {kind}: invalid JSON")
    if isinstance(err, duckdb.IOException):
        return DataFileError(f"cannot read {label}: {_short(first, 200)}")
    return DataFileError(f"cannot read {label} as {kind}: {_short(first, 200)}")


def _first_bad_json_line(path: str):
    """Error path only: the first line of a JSON Lines file that does not parse (1-based), or None."""
    def _no_constants(token):
        raise ValueError(f"{token} is not valid JSON")

    opener = gzip.open if path.lower().endswith(".gz") else open
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


# ====================================================================== two systems
def load_pairs(source, doc: str, a: str, b: str, *, unpaired: bool = False, fmt: str | None = None):
    """Aggregate rows scored by two systems (columns ``a`` and ``b``) to a per-document pair table.

    Paired (the default): every row must carry a score for both systems; otherwise this refuses
    with a message counting the unmatched rows. ``unpaired=True`` accepts rows scored by only one
    system (each system then has its own n_d) and counts rows scored by neither as excluded.
    Returns a :class:`perdoc.compare.PairTable`.
    """
    from .compare import PairTable
    from .table import Exclusion
    _check_names(doc=doc, a=a, b=b)
    with _open_source(source, fmt) as src:
        src.require(doc, a, b)
        d_expr = _doc_expr(src.ref(doc))
        raw_a, xa, text_a = src.number(a)
        raw_b, xb, text_b = src.number(b)
        parts = [f"{d_expr} AS d", f"{raw_a} AS ra", f"{xa} AS xa", f"{raw_b} AS rb", f"{xb} AS xb"]
        checks = []
        for tag, text in (("a", text_a), ("b", text_b)):
            checks += [
                f"count(*) FILTER (WHERE r{tag} IS NOT NULL AND x{tag} IS NULL) AS text_{tag}" if text
                else f"0 AS text_{tag}",
                f"min(r{tag}) FILTER (WHERE r{tag} IS NOT NULL AND x{tag} IS NULL) AS ex_{tag}" if text
                else f"NULL AS ex_{tag}",
                f"count(*) FILTER (WHERE isnan(x{tag})) AS nan_{tag}",
                f"count(*) FILTER (WHERE isinf(x{tag})) AS inf_{tag}",
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
        res = src.fetch(sql)
        rows_per_doc = _plain(res["rows"], float)
        docs = _plain(res["doc"], object)
        rows = int(rows_per_doc.sum())
        if rows == 0:
            raise InputError(f"{src.label} has no data rows")
        missing_doc = np.array([v is None for v in docs])
        if missing_doc.any():
            k = int(rows_per_doc[missing_doc].sum())
            raise InputError(f"column '{doc}' in {src.label}: {k} of {rows} row(s) have no document id; "
                             "every row needs a document id")
        for tag, col in (("a", a), ("b", b)):
            _check_scores(res, col, src.label, text=f"text_{tag}", example=f"ex_{tag}", nan=f"nan_{tag}",
                          inf=f"inf_{tag}")
        n_both = _plain(res["n_both"], float)
        n_a = _plain(res["n_a"], float)
        n_b = _plain(res["n_b"], float)
        only_a = int((n_a - n_both).sum())
        only_b = int((n_b - n_both).sum())
        neither = int((rows_per_doc - n_a - n_b + n_both).sum())
        exclusions = ()
        if not unpaired:
            if only_a or only_b or neither:
                raise InputError(
                    f"{src.label}: the systems' rows do not match: {only_a} row(s) have a score for '{a}' but "
                    f"not for '{b}', {only_b} for '{b}' but not for '{a}', {neither} for neither; a paired "
                    "comparison needs both scores on every row (use the unpaired comparison to compare "
                    "them anyway, by the delta method)")
        elif neither:
            exclusions = (Exclusion(neither, f"no score for either system ('{a}' and '{b}' both missing)"),)
        info = src.info(rows)
        info.update({"rows_only_a": only_a, "rows_only_b": only_b, "rows_neither": neither})
    s_a = _plain(res["s_a"], float)
    s_b = _plain(res["s_b"], float)
    q_a = _plain(res["q_a"], float)
    q_b = _plain(res["q_b"], float)
    # documents whose rows all lack both scores carry nothing: drop them, counted above
    keep = (n_a > 0) | (n_b > 0)
    return PairTable.build(doc=docs[keep], n_a=n_a[keep], s_a=np.nan_to_num(s_a[keep]), q_a=np.nan_to_num(q_a[keep]),
                           n_b=n_b[keep], s_b=np.nan_to_num(s_b[keep]), q_b=np.nan_to_num(q_b[keep]),
                           q_d=None if unpaired else _plain(res["q_d"], float)[keep],
                           names=(a, b), paired=not unpaired, source=info, exclusions=exclusions,
                           label=src.label)
