"""Writing the per-document table (``.csv`` or ``.parquet``), atomically, safe to open in a spreadsheet.

This module imports neither the loaders nor DuckDB, so :class:`~perdoc.table.DocTable` and
:mod:`perdoc.io` can both use it.
"""

from __future__ import annotations

import csv
import os
import re
import uuid
from pathlib import Path

import numpy as np

from ..errors import DataFileError, ParameterError

__all__ = ["write_table", "neutralise_csv_cell"]

# A spreadsheet treats a cell that begins with one of these as a formula (OWASP "CSV Injection"):
# = + - @, tab and carriage return, and their full-width forms, which some spreadsheets accept too.
_FORMULA_LEAD = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")
# ... except a plain number such as -3 or +2.5e-4, which no spreadsheet runs
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def neutralise_csv_cell(value):
    """A text cell made safe for spreadsheets, as OWASP recommends for CSV exports.

    A string that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (or a full-width
    ``＝ ＋ － ＠``) gets a leading single quote ``'``, so a spreadsheet shows it as text instead of
    running it as a formula (``=HYPERLINK(...)``, ``+cmd|...``, ``@SUM(1)``). A plain number such as
    ``-3`` or ``+2.5`` is left alone. Anything else (other strings, numbers, None) is returned as is.
    """
    if isinstance(value, str) and value and value[0] in _FORMULA_LEAD and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_table(table, path, *, doc_name: str = "doc") -> None:
    """Write ``doc, n, s, q (if any), rate`` and the document attributes to ``.csv`` or ``.parquet``
    (by extension), atomically.

    ``doc_name`` names the document-id column (default ``doc``); pass the name the data used
    (``--doc`` on the command line) so the file loads back with the same column names.

    Values are the true sums, whatever :attr:`DocTable.scale` the table carries; for scores near the
    top of the double range the true ``q`` may overflow to ``inf``, and is written so.

    CSV only: every text cell (the document id, text attributes such as the stratum, and the header)
    that a spreadsheet would run as a formula gets a leading ``'`` (see :func:`neutralise_csv_cell`),
    so such ids do not read back verbatim from CSV. Numeric columns are written untouched, and Parquet
    keeps every id exactly.

    The table goes to a temporary file in the same folder which then replaces ``path``, so a failed
    write never leaves a half-written file behind.
    """
    path = Path(os.fspath(path))
    ext = path.suffix.lower()
    if ext not in (".csv", ".parquet", ".pq"):
        raise DataFileError(f"cannot write {path}: unknown extension {ext or '(none)'!r}; use .csv or .parquet")
    if not isinstance(doc_name, str) or not doc_name:
        raise ParameterError(f"doc_name must be a column name (a non-empty string), got {doc_name!r}")
    folder = path.parent
    if not folder.is_dir():
        raise DataFileError(f"cannot write {path}: folder not found: {folder}")
    if path.is_dir():
        raise DataFileError(f"cannot write {path}: it is a directory")
    frame = table.to_frame()
    if doc_name != "doc":
        if doc_name in frame.columns:
            raise DataFileError(f"cannot write {path}: the document column name {doc_name!r} is also the name of "
                                f"another column of the table ({', '.join(map(str, frame.columns))})")
        frame = frame.rename(columns={"doc": doc_name})
    n = frame["n"].to_numpy()
    if np.all(n == np.round(n)):
        frame["n"] = n.astype(np.int64)
    quoting = csv.QUOTE_MINIMAL
    if ext == ".csv":
        stray_cr = False
        for col in frame.columns:
            if frame[col].dtype.kind in "OUS" or str(frame[col].dtype) in ("string", "category"):
                cells = [neutralise_csv_cell(v) for v in frame[col].astype(object)]
                stray_cr = stray_cr or any(isinstance(v, str) and "\r" in v for v in cells)
                frame[col] = cells
        frame.columns = [neutralise_csv_cell(str(c)) for c in frame.columns]
        # the csv writer quotes a field with a line feed but not one with a lone carriage return,
        # which readers then take for a line break: quote every text field of such a table
        if stray_cr or any("\r" in c for c in frame.columns):
            quoting = csv.QUOTE_NONNUMERIC
    tmp = folder / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        if ext == ".csv":
            frame.to_csv(tmp, index=False, quoting=quoting)
        else:
            frame.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    except OSError as e:
        raise DataFileError(f"cannot write {path}: {e.strerror or e}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
