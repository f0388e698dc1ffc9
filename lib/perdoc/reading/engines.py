"""The per-document aggregation where the data lives: one Ibis expression for every Ibis backend
(Spark, BigQuery, Snowflake, Trino, Postgres, ClickHouse, DuckDB, ...).

:func:`perdoc.io.load_chunks` and :func:`perdoc.io.load_pairs` send an Ibis table or a Spark
DataFrame here; only the K-row per-document table comes back (:func:`perdoc.io.load_docs` fetches
an already aggregated table as it is). The expression computes what the DuckDB path of :mod:`perdoc.io`
computes in its ``GROUP BY`` -- per document the count, the sum and the sum of squares of the
scores, plus the counts its checks need (missing ids, missing, non-numeric, NaN and infinite
scores, the 0/1 test, the smallest and largest score, one value per document for each attribute)
-- and hands them to the same checks, so either engine gives the same table and the same errors.
Integer and 0/1 scores sum exactly on both; other scores are summed a second time, as in the
DuckDB path (compensated there), here cut into high parts that sum exactly in any order and low
parts too small for their rounding to show: the sums then agree with DuckDB's to the last bit in
practice, and to rounding (1e-16 relative) always.

Files are read by Spark with ``engine="spark"`` (:func:`open_source`): a local session
(``local[2]``), the Spark Connect server named by ``SPARK_REMOTE``, or the session spark-submit
started. Any other Ibis backend is reached by connection URL and table name (``ibis.connect``).

Ibis and PySpark are optional: ``pip install 'perdoc[spark]'`` (PySpark and Ibis's pyspark
backend) or ``'perdoc[dataframes]'`` (polars and Ibis's DuckDB backend).
"""

from __future__ import annotations

import os
import uuid

import numpy as np

from ..errors import ColumnError, DataFileError, InputError, ParameterError, PerdocError

__all__ = ["ENGINES", "aggregate_chunks", "chunk_aggregation", "as_ibis", "fetch_arrow", "open_source",
           "spark_session", "SPARK_INSTALL", "duckdb_database", "resolve_backend_url"]

#: Engines for files (``--engine``, params ``data.engine``).
ENGINES = ("duckdb", "spark")
SPARK_INSTALL = ("pip install 'perdoc[spark]' (PySpark and Ibis) and a Java runtime "
                 "(apt-get install openjdk-17-jre-headless)")


def _ibis():
    try:
        import ibis
    except ImportError:
        raise ParameterError("reading an Ibis table, a Spark DataFrame or a warehouse needs Ibis: "
                             "pip install 'perdoc[dataframes]' (or 'perdoc[spark]' for Spark)") from None
    return ibis


# ====================================================================== sources
def as_ibis(source):
    """An Ibis table for ``source``: an Ibis table as it is, a Spark DataFrame (classic or Spark
    Connect) through Ibis's pyspark backend on the DataFrame's own session (as a temporary view)."""
    ibis = _ibis()
    mod = type(source).__module__ or ""
    if mod.startswith("pyspark."):
        try:
            con = ibis.pyspark.connect(source.sparkSession)
        except ImportError as e:  # the backend's extra is missing
            raise ParameterError(f"cannot aggregate the Spark DataFrame with Ibis: {e}; {SPARK_INSTALL}") from None
        except Exception as e:  # the session or the cluster refused: say what it said, in one line
            from ._rows import _short
            raise ParameterError("cannot aggregate the Spark DataFrame with Ibis: "
                                 f"{_short(_first_line(e), 200)}") from None
        name = f"perdoc_{uuid.uuid4().hex[:12]}"
        source.createOrReplaceTempView(name)
        return con.table(name)
    if isinstance(source, ibis.expr.types.Table):
        return source
    raise ParameterError(f"cannot read a {type(source).__name__} with Ibis; pass an Ibis table")


def fetch_arrow(t, columns: list[str] | None = None):
    """The Ibis table (or just ``columns`` of it) as a pyarrow Table."""
    if columns is not None:
        _require(t, columns)
        t = t.select(*columns)
    return t.to_pyarrow()


def _label(t) -> str:
    try:
        return f"the {t.get_backend().name} table"
    except Exception:
        return "the Ibis table"


def _require(t, names, label: str | None = None) -> None:
    from ._rows import _not_found
    cols = list(t.columns)
    for name in names:
        if name not in cols:
            raise ColumnError(_not_found(name, cols, label or _label(t)))


# ====================================================================== the aggregation, once
def _score_exprs(t, name: str, label: str):
    """(raw value, value as float64, whether raw is text that may not parse, whether sums are exact)."""
    ibis = _ibis()
    col = t[name]
    typ = col.type()
    if typ.is_boolean() or typ.is_integer():
        return col, col.cast("float64"), False, True
    if typ.is_floating() or typ.is_decimal():
        return col, col.cast("float64"), False, False
    if typ.is_string():
        trimmed = col.strip()
        raw = ibis.cases((trimmed == "", ibis.null("string")), else_=trimmed)
        low = raw.lower()
        word = ibis.cases((low == "true", ibis.literal(1.0)), (low == "false", ibis.literal(0.0)),
                          else_=ibis.null("float64"))
        return raw, raw.try_cast("float64").coalesce(word), True, False
    raise ColumnError(f"column '{name}' in {label} has type {typ}; it must hold numbers or booleans")


def _doc_expr(t, name: str):
    ibis = _ibis()
    g = t[name].cast("string")
    return ibis.cases((g.strip() == "", ibis.null("string")), else_=g)


def _split_sum(v, unit: float):
    """(sum of the high parts, sum of the low parts) of ``v``, whose values lie in [-unit, unit]
    (``unit`` a power of two): each value is cut at ``unit * 2**-26``, so the high parts, multiples
    of that, sum exactly (up to 2**27 rows per document) whatever the backend's order of summation,
    and the low parts are too small for their rounding to show in the total."""
    step = unit * 2.0 ** -26
    hi = (v * (1.0 / step)).floor().cast("float64") * step
    return hi.sum(), (v - hi).sum()


def chunk_sums(t, doc: str, score: str, *, scale: float, unit: float, label: str | None = None):
    """Per document the sum and sum of squares of the scores times ``scale`` (a power of two), each
    as an exact high part plus a small low part (:func:`_split_sum`); ``unit`` bounds |score * scale|."""
    raw, x, _text, _exact = _score_exprs(t, score, label or _label(t))
    p = t.select(g=_doc_expr(t, doc), x=x * scale if scale != 1.0 else x)
    s_hi, s_lo = _split_sum(p.x, unit)
    q_hi, q_lo = _split_sum(p.x * p.x, unit * unit)
    return p.group_by("g").aggregate(s_hi=s_hi, s_lo=s_lo, q_hi=q_hi, q_lo=q_lo).rename(doc="g")


def chunk_aggregation(t, doc: str, score: str, attrs: dict[str, str] | None = None, *, scale: float = 1.0,
                      label: str | None = None):
    """The Ibis expression of the per-document aggregation: one row per document (``doc``, as
    text; empty ids are null) with ``n``, ``s``, ``q`` (of the scores times ``scale``), the counts
    of missing (``n_null``), non-numeric (``n_text``, example ``ex_text``), NaN and infinite scores,
    ``dev01`` (0 exactly when every score is 0 or 1), ``lo``/``hi`` and, per attribute ``i``,
    ``a_min_i``/``a_max_i``/``a_null_i``. Returns (expression, text scores, exact sums)."""
    label = label or _label(t)
    attrs = dict(attrs or {})
    _require(t, [doc, score, *attrs.values()], label)
    raw, x, text, exact = _score_exprs(t, score, label)
    cols = {"g": _doc_expr(t, doc), "raw": raw, "x": x * scale if scale != 1.0 else x}
    for i, col in enumerate(attrs.values()):
        cols[f"a_{i}"] = t[col].cast("string")
    p = t.select(**cols)
    metrics = {
        "n": p.count(),
        "s": p.x.sum(),
        "q": (p.x * p.x).sum(),
        "n_null": p.count() - p.raw.count(),
        "n_text": p.raw.count(where=p.x.isnull()) if text else _zero(),
        "n_nan": p.x.count(where=p.x.isnan()),
        "n_inf": p.x.count(where=p.x.isinf()),
        "dev01": (p.x * (p.x - 1)).abs().sum(),
        "lo": p.x.min(),
        "hi": p.x.max(),
    }
    if text:
        metrics["ex_text"] = p.raw.min(where=p.x.isnull())
    for i in range(len(attrs)):
        a = p[f"a_{i}"]
        metrics.update({f"a_min_{i}": a.min(), f"a_max_{i}": a.max(), f"a_null_{i}": p.count() - a.count()})
    return p.group_by("g").aggregate(**metrics).rename(doc="g"), text, exact


def _zero():
    return _ibis().literal(0, "int64")


def _fetch_sorted(expr) -> dict:
    """The aggregation's rows as numpy columns, sorted by document id (code point order, as DuckDB
    sorts text; the missing id last)."""
    tbl = expr.to_pyarrow()
    res = {name: tbl.column(name).to_numpy(zero_copy_only=False) for name in tbl.column_names}
    docs = res["doc"]
    order = sorted(range(len(docs)), key=lambda i: (docs[i] is None, docs[i] or ""))
    out = {}
    for k, v in res.items():
        v = np.asarray(v)[order] if len(order) else np.asarray(v)
        out[k] = v
    return out


def aggregate_chunks(t, *, doc: str, score: str, attrs: dict[str, str] | None = None, metric: str | None = None,
                     allow_similar_ids: bool = False, label: str | None = None):
    """:func:`perdoc.io.load_chunks` for an Ibis table: the aggregation runs in the table's backend,
    the K-row result goes through the same checks as the DuckDB path."""
    from . import _rows as io
    attrs = dict(attrs or {})
    label = label or _label(t)
    expr, text, exact = chunk_aggregation(t, doc, score, attrs, label=label)
    try:
        res = _fetch_sorted(expr)
    except (ColumnError, ParameterError, InputError):
        raise
    except Exception as e:
        raise DataFileError(f"cannot aggregate {label}: {io._short(_first_line(e), 200)}") from None
    for key in ("n", "n_null", "n_text", "n_nan", "n_inf"):
        if key in res:
            res[key] = np.asarray(res[key], dtype=float)
    counts, docs, rows = io._chunk_rows(res, doc, score, label)
    dev01 = np.asarray(res["dev01"], dtype=float)
    binary = bool(np.all(dev01 == 0))
    scale, lo, hi = 1.0, (0.0 if binary else None), (1.0 if binary else None)
    if not binary and not exact:
        lo = float(np.min(np.asarray(res["lo"], dtype=float)))
        hi = float(np.max(np.asarray(res["hi"], dtype=float)))
        scale = io._scale_for(max(-lo, hi))
        # summed again, like the DuckDB path (compensated there): exact high parts plus small low
        # parts, so the sums hardly depend on how the backend orders the rows
        size = max(-lo, hi) * scale
        unit = 2.0 ** max(min(int(np.ceil(np.log2(size))) if size > 0 else 0, 511), -511)
        again = _fetch_sorted(chunk_sums(t, doc, score, scale=scale, unit=unit, label=label))
        if not np.array_equal(again["doc"].astype(object), res["doc"].astype(object)):
            raise InputError(f"{label}: the documents changed between two reads; read it from a stable copy")
        with np.errstate(invalid="ignore", over="ignore"):
            res["s"] = np.asarray(again["s_hi"], dtype=float) + np.asarray(again["s_lo"], dtype=float)
            res["q"] = np.asarray(again["q_hi"], dtype=float) + np.asarray(again["q_lo"], dtype=float)

    def violation():
        p = t.select(x=_score_exprs(t, score, label)[1])
        bad = (p.x != 0) & (p.x != 1) if metric == "binary" else (p.x < 0) | (p.x > 1)
        f = p.filter(bad)
        r = f.aggregate(k=f.count(), lo=f.x.min(), hi=f.x.max()).to_pyarrow().to_pylist()[0]
        io._violation_error(int(r["k"]), float(r["lo"]), float(r["hi"]), score, label, metric)

    info = {"path": None, "format": "dataframe", "rows": rows, "bytes": None, "engine": _engine_name(t)}
    return io._chunk_table(res, counts=counts, docs=docs, rows=rows, doc=doc, score=score, attrs=attrs,
                           metric=metric, allow_similar_ids=allow_similar_ids, label=label, info=info,
                           binary=binary, exact=exact, lo=lo, hi=hi, scale=scale, violation=violation)


def _engine_name(t) -> str:
    try:
        return t.get_backend().name
    except Exception:
        return "ibis"


# ====================================================================== engines for files
def spark_session():
    """The Spark session to read files with: spark-submit's (an active session), the Spark Connect
    server named by ``SPARK_REMOTE``, or a local one (``local[2]``, no web UI)."""
    if os.environ.get("SPARK_REMOTE"):
        # gRPC's own log lines (a failed TLS handshake, each retry) would break perdoc's one-line
        # messages; errors only, unless the user asks for more (read when gRPC starts)
        os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise ParameterError(f"--engine spark needs PySpark: {SPARK_INSTALL}") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if os.environ.get("SPARK_REMOTE"):
        return _remote_session(SparkSession, os.environ["SPARK_REMOTE"])
    return _quiet(SparkSession.builder.master("local[2]").appName("perdoc")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.ansi.enabled", "false")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.driver.memory", "2g")
            .getOrCreate())


#: Seconds to wait for a Spark Connect server (SPARK_REMOTE): for its port to accept a connection, then
#: for the session to answer (``PERDOC_SPARK_CONNECT_TIMEOUT`` sets the second, for a cluster slow to start).
CONNECT_TIMEOUT, SESSION_TIMEOUT = 10.0, 120.0
SPARK_CONNECT_PORT = 15002


def _connect_address(url: str) -> tuple[str, int] | None:
    """(host, port) of a ``sc://host:port/...`` URL (port 15002 when not given), None for anything else."""
    from urllib.parse import urlsplit
    if not url.lower().startswith("sc://"):
        return None
    netloc = url[5:].split("/", 1)[0].split(";", 1)[0].rsplit("@", 1)[-1]
    try:
        parts = urlsplit(f"//{netloc}")
        return parts.hostname or "localhost", parts.port or SPARK_CONNECT_PORT
    except ValueError:
        return None


def _session_timeout() -> float:
    text = os.environ.get("PERDOC_SPARK_CONNECT_TIMEOUT")
    if not text:
        return SESSION_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ParameterError(f"PERDOC_SPARK_CONNECT_TIMEOUT must be a positive number of seconds (got {text!r})")
    return value


def _remote_session(SparkSession, url: str):
    """A Spark Connect session at ``url``, within deadlines: the server's port must accept a TCP
    connection within :data:`CONNECT_TIMEOUT` seconds, and the session must answer one request (its
    version) within :data:`SESSION_TIMEOUT`; else one line naming the URL without its secrets (the
    client would otherwise retry for many minutes without a word)."""
    import socket
    import threading

    from ..redact import redact_url, remember
    remember(url)
    shown = f"SPARK_REMOTE={redact_url(url)}"
    where = _connect_address(url)
    if where is not None:
        try:
            socket.create_connection(where, timeout=CONNECT_TIMEOUT).close()
        except socket.timeout:
            raise DataFileError(f"cannot reach the Spark Connect server {shown}: no answer from {where[0]} port "
                                f"{where[1]} within {CONNECT_TIMEOUT:g} s") from None
        except OSError as e:
            raise DataFileError(f"cannot reach the Spark Connect server {shown}: {e.strerror or e} "
                                f"({where[0]} port {where[1]})") from None
    timeout = _session_timeout()
    box = {}

    def start():
        try:
            session = SparkSession.builder.remote(url).getOrCreate()
            box["version"] = session.version   # one round trip: the server speaks Spark Connect
            box["session"] = session
        except BaseException as e:  # noqa: BLE001 -- reported below, in one line
            box["error"] = e

    worker = threading.Thread(target=start, name="perdoc-spark-connect", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():   # left behind: a daemon thread does not keep the process alive
        raise DataFileError(f"the Spark Connect server {shown} did not answer within {timeout:g} s (is a Spark "
                            "Connect server listening there? PERDOC_SPARK_CONNECT_TIMEOUT sets the deadline)")
    if "error" in box:
        raise DataFileError(f"cannot start a Spark Connect session at {shown}: {_first_line(box['error'])[:200]}")
    return box["session"]


def _quiet(session):
    """A local session logs errors only (its start-up lines come before this can say so)."""
    try:
        session.sparkContext.setLogLevel("ERROR")
    except Exception:  # Spark Connect has no SparkContext
        pass
    return session


def spark_read(path: str, fmt: str | None = None, session=None):
    """A Spark DataFrame of the file: CSV/TSV (every column as text, parsed by the aggregation as
    the DuckDB path parses it), Parquet, JSON Lines or JSON (one document, ``multiLine``)."""
    from ._rows import _format_of
    if not isinstance(path, (str, os.PathLike)):
        raise ParameterError(f"engine='spark' reads a file; pass a {type(path).__name__} to the loader as it is "
                             "(a Spark DataFrame is aggregated by Spark without engine=)")
    path = os.fspath(path)
    if path == "-" or not os.path.isfile(path):
        if path == "-" or os.path.exists(path):
            raise DataFileError(f"--engine spark reads regular files only, not {path!r}; use --engine duckdb "
                                "for standard input and pipes")
        raise DataFileError(f"data file not found: {path}")
    kind, _gz = _format_of(path, fmt, reader="by engine='spark' (--engine spark)")
    spark = session or spark_session()
    full = os.path.abspath(path)
    if kind in ("csv", "tsv"):
        return (spark.read.option("header", "true").option("inferSchema", "false")
                .option("sep", "," if kind == "csv" else "\t").option("quote", '"').option("escape", '"')
                .option("mode", "FAILFAST").csv(full))
    if kind == "parquet":
        return spark.read.parquet(full)
    return spark.read.option("multiLine", "true" if kind == "json" else "false").json(full)


def open_source(path, *, engine: str | None = None, backend: dict | None = None, fmt: str | None = None):
    """What the loaders of :mod:`perdoc.io` read for a command or a params file: the file itself
    (engine ``duckdb``, the default), a Spark DataFrame of it (engine ``spark``), or the table
    ``backend["table"]`` of the Ibis backend at ``backend["url"]`` (``ibis.connect``)."""
    if backend:
        url, name = backend.get("url"), backend.get("table")
        if not url or not name:
            raise ParameterError("a backend needs both a connection URL and a table name "
                                 "(--backend URL --table NAME, data.backend: {url, table})")
        from ..redact import redact_url, remember
        remember(url)   # its secrets are masked in every message from here on
        shown = redact_url(url)
        ibis = _ibis()
        kind = _file_database(url)
        try:
            con = _open_file_database(ibis, url, kind, shown) if kind else ibis.connect(url)
        except PerdocError:
            raise
        except Exception as e:
            raise DataFileError(f"cannot connect to the backend {shown}: {_first_line(e)[:200]}") from None
        try:
            return con.table(name)
        except Exception as e:
            tables = _tables(con)
            if tables is not None and name not in tables:
                from ._rows import _short
                listed = ", ".join(repr(_short(t, 40)) for t in tables[:10]) + (" ..." if len(tables) > 10 else "")
                raise DataFileError(f"no table {name!r} at {shown} (its tables: {listed or 'none'})") from None
            raise DataFileError(f"cannot open table {name!r} at {shown}: {_first_line(e)[:200]}") from None
    engine = (engine or "duckdb").lower()
    if engine not in ENGINES:
        raise ParameterError(f"engine={engine!r} is not a known engine; use one of {', '.join(ENGINES)}")
    if engine == "duckdb":
        return path
    return spark_read(path, fmt)


def _tables(con) -> list[str] | None:
    """The names of the tables at an Ibis backend (None when it cannot say)."""
    try:
        return [str(t) for t in con.list_tables()]
    except Exception:
        pass
    try:   # e.g. Ibis 12 on DuckDB 2, whose list_tables calls a method DuckDB 2 dropped
        cur = con.raw_sql("SELECT table_name FROM information_schema.tables ORDER BY table_name")
        return [str(r[0]) for r in cur.fetchall()]
    except Exception:
        return None


# ====================================================================== database files
#: Suffixes ibis.connect opens as a database file when a URL has no scheme (or ``file://``).
_DUCKDB_SUFFIXES, _SQLITE_SUFFIXES = (".duckdb", ".ddb"), (".sqlite", ".sqlite3", ".db")


def _scheme(url: str) -> str:
    import re
    m = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*)://", str(url))
    return m.group(1).lower() if m else ""


def _file_database(url) -> str | None:
    """``"duckdb"`` or ``"sqlite"`` when ``url`` names a local database file (``duckdb://``,
    ``sqlite://``, or a path / ``file://`` URL ending in a database suffix), else None."""
    scheme = _scheme(url)
    if scheme in ("duckdb", "sqlite"):
        return scheme
    if scheme in ("", "file"):
        path = str(url).split("?", 1)[0].lower()
        if path.endswith(_DUCKDB_SUFFIXES):
            return "duckdb"
        if path.endswith(_SQLITE_SUFFIXES):
            return "sqlite"
    return None


def duckdb_database(url) -> str | None:
    """The database file a ``duckdb://`` (or ``sqlite://``) URL names, as written: ``duckdb:///abs/x.duckdb``
    is absolute, ``duckdb://x.duckdb`` and ``duckdb://dir/x.duckdb`` relative (to the working directory,
    or to the params file's folder once :func:`resolve_backend_url` has run). User info is dropped (a
    database file has no login), as are the query and fragment. None for an in-memory database."""
    from ..redact import _split
    url = str(url)
    head, _userinfo, rest = _split(url)
    if head is None:    # a plain path
        rest = url
    rest = rest.split("?", 1)[0].split("#", 1)[0]
    if rest in ("", ":memory:", "/:memory:"):
        return None
    return rest


def resolve_backend_url(url, base) -> str:
    """``url`` with a relative database file of a ``duckdb://`` or ``sqlite://`` URL (or a plain path)
    made absolute against ``base`` (the params file's folder); any other URL as it is."""
    from pathlib import Path
    if base is None or not isinstance(url, str) or _file_database(url) is None:
        return url
    path = duckdb_database(url)
    if path is None or path.startswith(("md:", "motherduck:")) or Path(path).is_absolute():
        return url
    full = str((Path(base) / path).resolve())
    scheme = _scheme(url) or "file"
    query = url.split("?", 1)[1] if "?" in url else ""
    return f"{scheme}://{full}" + (f"?{query}" if query else "")


def _open_file_database(ibis, url: str, kind: str, shown: str):
    """An Ibis connection to the local database file of ``url``, opened read-only; a missing file is
    refused in one line (DuckDB and SQLite would create an empty one), as is an in-memory database
    (it holds no tables). A URL's query gives DuckDB settings, except ``read_only`` (always on),
    ``extensions`` (perdoc never installs or loads one) and credentials (a database file has none)."""
    from urllib.parse import parse_qsl

    from ..redact import _secret_name
    path = duckdb_database(url)
    if path is None or path.startswith(("md:", "motherduck:")):
        raise ParameterError(f"the backend {shown} names no database file: an in-memory or remote DuckDB holds "
                             "no table perdoc can read; name a file (duckdb:///path/to/results.duckdb)")
    full = os.path.abspath(path)
    if not os.path.isfile(full):
        what = "a folder, not a database file" if os.path.isdir(full) else "no such database file"
        raise DataFileError(f"cannot open the backend {shown}: {what}: {full} (perdoc opens an existing "
                            "database read-only and never creates one)")
    if kind == "sqlite":
        import sqlite3
        from urllib.parse import quote
        con = sqlite3.connect(f"file:{quote(full)}?mode=ro", uri=True)
        return ibis.sqlite.from_connection(con)
    query = url.split("?", 1)[1].split("#", 1)[0] if "?" in url else ""
    config = {k: v for k, v in parse_qsl(query)
              if k.lower() not in ("read_only", "extensions") and not _secret_name(k)}
    return ibis.duckdb.connect(full, read_only=True, **config)


# ====================================================================== two systems
def pair_aggregation(t, doc: str, a: str, b: str, *, scale: float = 1.0, unit: float | None = None,
                     label: str | None = None):
    """The Ibis expression of :func:`perdoc.io.load_pairs`' aggregation: per document the rows,
    the rows scored by both / by ``a`` / by ``b``, each system's checks (non-numeric, NaN and
    infinite scores, smallest and largest, ``dev01``) and sums ``s_a``, ``q_a``, ``s_b``, ``q_b``,
    ``q_d`` (of the scores times ``scale``). With ``unit`` (a power of two bounding |score * scale|)
    only the sums, each as exact high parts plus small low parts (``*_hi``, ``*_lo``).
    Returns (expression, whether both columns hold integers or booleans)."""
    label = label or _label(t)
    _require(t, [doc, a, b], label)
    raw_a, xa, text_a, exact_a = _score_exprs(t, a, label)
    raw_b, xb, text_b, exact_b = _score_exprs(t, b, label)
    if scale != 1.0:
        xa, xb = xa * scale, xb * scale
    p = t.select(g=_doc_expr(t, doc), ra=raw_a, xa=xa, rb=raw_b, xb=xb)
    d = p.xa - p.xb
    if unit is not None:
        metrics = {}
        for key, v, u in (("s_a", p.xa, unit), ("q_a", p.xa * p.xa, unit * unit), ("s_b", p.xb, unit),
                          ("q_b", p.xb * p.xb, unit * unit), ("q_d", d * d, 4 * unit * unit)):
            metrics[f"{key}_hi"], metrics[f"{key}_lo"] = _split_sum(v, u)
        return p.group_by("g").aggregate(**metrics).rename(doc="g"), exact_a and exact_b
    metrics = {
        "rows": p.count(),
        "n_both": p.count(where=p.ra.notnull() & p.rb.notnull()),
        "n_a": p.ra.count(),
        "n_b": p.rb.count(),
        "s_a": p.xa.sum(), "q_a": (p.xa * p.xa).sum(), "s_b": p.xb.sum(), "q_b": (p.xb * p.xb).sum(),
        "q_d": (d * d).sum(),
    }
    for tag, raw, x, text in (("a", p.ra, p.xa, text_a), ("b", p.rb, p.xb, text_b)):
        metrics[f"text_{tag}"] = raw.count(where=x.isnull()) if text else _zero()
        if text:
            metrics[f"ex_{tag}"] = raw.min(where=x.isnull())
        metrics.update({f"nan_{tag}": x.count(where=x.isnan()), f"inf_{tag}": x.count(where=x.isinf()),
                        f"lo_{tag}": x.min(), f"hi_{tag}": x.max(), f"dev01_{tag}": (x * (x - 1)).abs().sum()})
    return p.group_by("g").aggregate(**metrics).rename(doc="g"), exact_a and exact_b


def aggregate_pairs(t, *, doc: str, a: str, b: str, unpaired: bool = False, metric: str | None = None,
                    allow_similar_ids: bool = False, label: str | None = None):
    """:func:`perdoc.io.load_pairs` for an Ibis table: aggregated in the table's backend (the K-row
    result comes back), then the same checks as the DuckDB path."""
    from . import _rows as io
    label = label or _label(t)
    expr, exact = pair_aggregation(t, doc, a, b, label=label)
    res = _fetch(expr, label)
    for key in ("rows", "n_both", "n_a", "n_b", "text_a", "text_b", "nan_a", "nan_b", "inf_a", "inf_b"):
        res[key] = np.asarray(res[key], dtype=float)
    for tag in ("a", "b"):
        res.setdefault(f"ex_{tag}", np.full(len(res["doc"]), None, dtype=object))
    with np.errstate(invalid="ignore"):
        size = max((float(np.nanmax(np.abs(np.asarray(res[k], dtype=float)))) if np.any(np.isfinite(
            np.asarray(res[k], dtype=float))) else 0.0) for k in ("lo_a", "hi_a", "lo_b", "hi_b"))

    def sums(scale: float) -> dict:
        """The sums again, as exact high parts plus low parts (as the DuckDB path sums compensated)."""
        out = dict(res)
        # integers sum exactly as they are; sums that leave the double range (or its squares) are
        # refetched at the scale that brings them back, or refused, by the checks
        if (exact and scale == 1.0) or not (2.0 ** -500 < size * scale < 2.0 ** 500):
            return out
        unit = 2.0 ** int(np.ceil(np.log2(size * scale)))
        again = _fetch(pair_aggregation(t, doc, a, b, scale=scale, unit=unit, label=label)[0], label)
        if not np.array_equal(again["doc"].astype(object), res["doc"].astype(object)):
            raise InputError(f"{label}: the documents changed between two reads; read it from a stable copy")
        with np.errstate(invalid="ignore", over="ignore"):
            for key in ("s_a", "q_a", "s_b", "q_b", "q_d"):
                out[key] = np.asarray(again[f"{key}_hi"], dtype=float) + np.asarray(again[f"{key}_lo"], dtype=float)
        return out

    def violation(tag: str, col: str):
        p = t.select(x=_score_exprs(t, col, label)[1])
        bad = (p.x != 0) & (p.x != 1) if metric == "binary" else (p.x < 0) | (p.x > 1)
        f = p.filter(bad)
        r = f.aggregate(k=f.count(), lo=f.x.min(), hi=f.x.max()).to_pyarrow().to_pylist()[0]
        io._violation_error(int(r["k"]), float(r["lo"]), float(r["hi"]), col, label, metric)

    def info(rows: int) -> dict:
        return {"path": None, "format": "dataframe", "rows": rows, "bytes": None, "engine": _engine_name(t)}

    # the checks read the first pass; the sums kept are the exact ones of the second
    return io._pairs_table(sums(1.0), label=label, info_fn=info, refetch=sums, violation=violation, doc=doc, a=a, b=b,
                           unpaired=unpaired, metric=metric, allow_similar_ids=allow_similar_ids)


def _fetch(expr, label: str) -> dict:
    from . import _rows as io
    try:
        return _fetch_sorted(expr)
    except (ColumnError, ParameterError, InputError):
        raise
    except Exception as e:
        raise DataFileError(f"cannot aggregate {label}: {io._short(_first_line(e), 200)}") from None


def _first_line(err) -> str:
    """The first line of an exception's message (its type when it has none), without secrets: a
    driver's message may quote the connection URL (perdoc.redact), and it is masked before it is cut."""
    from ..redact import redact_text
    text = redact_text(str(err)).strip()
    return text.splitlines()[0] if text else type(err).__name__
