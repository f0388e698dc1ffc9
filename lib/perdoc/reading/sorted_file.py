"""Per-document sums of a large Parquet file whose rows are sorted by document, read row group by
row group without a hash aggregation.

Where a file's rows come grouped by document (an index exported document after document, a log
written in order), each document's chunks are one run of rows. Its count and sums are then sums over
contiguous runs: read a row group's two columns (the ids as a dictionary, so text ids are not turned
into strings row by row), find where the id changes, and add up each run in the order of the rows
(``numpy.add.reduceat``). A document that continues into the next row group is joined to its first
part, again in the order of the rows. Row groups are read by a few threads at once (each with its own
reader), their results put together in the file's order, so the sums do not depend on the threads:
the same file gives the same bits every time, without DuckDB's compensated ``fsum`` (a hash
aggregation's plain sum depends on how its threads split the rows). Measured on a sorted file of
10^8 rows (benchmarks/README.md): the runs' sums of float scores in about half the time of the
``fsum`` aggregation, of 0/1 scores in about 85 % of a plain ``GROUP BY``'s.

:func:`sorted_sums` vouches for what it returns: the two columns of plain types (integer or text ids;
boolean, integer or float scores), no missing value in them, no blank id (the loader's "missing id")
and no NUL in one, and every document in one run (after joining runs across row groups, the ids are
distinct): else None, and the caller aggregates with DuckDB as before. Whether a file is worth the try
is the caller's guess, from its footer (:meth:`perdoc.reading.io._Source.grouped_by`).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._rows import _byte_rows, _folded
from .table import AsciiIds

#: The fewest rows for which the loader tries the route: below it DuckDB's aggregation is about as
#: fast and the reader's import (30-40 ms) would not pay for itself.
MIN_ROWS = 1 << 25


def sorted_sums(path: str, doc: str, score: str, *, squares: bool, threads: int,
                int_bound: float | None = None) -> dict | None:
    """Per document of the Parquet file ``path``, whose rows come grouped by its column ``doc``:
    ``n`` (rows), ``s`` (the sum of ``score`` as doubles, booleans as 1/0) and, with ``squares``,
    ``q`` (the sum of their squares). Integer ids come as ``g`` in no particular order (the caller
    puts them in text order); text ids as ``doc`` in their text order, :class:`AsciiIds` when ASCII.
    ``threads`` row groups are read at once. ``int_bound``: for integer scores, the largest absolute
    value the file's statistics give (their sums as doubles are exact only below 2^53, checked
    here). None when the file does not qualify (see the module's text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        first = pq.ParquetFile(path)
        meta = first.metadata
        names = first.schema_arrow.names
        if names.count(doc) != 1 or names.count(score) != 1 or meta.num_rows == 0:
            return None
        id_type, x_type = first.schema_arrow.field(doc).type, first.schema_arrow.field(score).type
        text = pa.types.is_string(id_type) or pa.types.is_large_string(id_type)
        if not (text or pa.types.is_integer(id_type)):
            return None
        if pa.types.is_boolean(x_type) or pa.types.is_integer(x_type):
            if squares and not pa.types.is_boolean(x_type) and (
                    int_bound is None or meta.num_rows * max(1.0, float(int_bound)) ** 2 >= 2.0 ** 53):
                return None     # (0/1 scores, summed without squares, need no bound)
            exact = True
        elif pa.types.is_float32(x_type) or pa.types.is_float64(x_type):
            exact = False
        else:
            return None
    except (OSError, pa.ArrowException, ValueError):
        return None

    local, stop = threading.local(), threading.Event()

    def one(i: int):
        if stop.is_set():
            return None
        reader = getattr(local, "reader", None)
        if reader is None:   # (a ParquetFile must not read two row groups at once)
            reader = local.reader = pq.ParquetFile(path, read_dictionary=[doc] if text else None)
        part = _runs(reader.read_row_group(i, columns=[doc, score], use_threads=False),
                     text=text, exact=exact, squares=squares)
        if part is None:
            stop.set()
        return part

    groups = range(meta.num_row_groups)
    try:
        if threads > 1 and len(groups) > 1:
            with ThreadPoolExecutor(min(threads, len(groups)), thread_name_prefix="perdoc-read") as pool:
                parts = list(pool.map(one, groups))
        else:
            parts = [one(i) for i in groups]
    except (OSError, pa.ArrowException):
        return None
    if stop.is_set():
        return None
    key = np.concatenate([p[0] for p in parts])
    sums = [np.concatenate([p[1][k] for p in parts]) for k in range(len(parts[0][1]))]
    ascii_ = all(p[2] for p in parts)
    plain = not any(p[3] for p in parts)
    del parts
    if key.size > 1:
        later = key[1:] != key[:-1]
        if not bool(np.all(later)):     # a document's runs in two row groups (or pages): one row
            starts = np.flatnonzero(np.concatenate(([True], later)))
            sums = [np.add.reduceat(v, starts) for v in sums]
            key = key[starts]
        if bool(np.any(key[1:] < key[:-1])):
            # the rows come grouped by document, but not in the ids' order (integer ids that wrap
            # around, say): each document must still be one run
            order = np.argsort(key, kind="stable")    # (a merge sort: the runs are few)
            ordered = key[order]
            if bool(np.any(ordered[1:] == ordered[:-1])):
                return None      # (a document in two places: not grouped after all)
            if text:     # (integer ids are put in their text order by the caller)
                sums, key = [v[order] for v in sums], ordered
    out = {"n": sums[0], "s": sums[1].astype(np.float64)}
    if squares:
        out["q"] = sums[2].astype(np.float64)
    if not text:
        out["g"] = key
    elif ascii_:     # (UTF-8 bytes compare as the text's code points do)
        out["doc"] = AsciiIds(key, plain)
    else:
        out["doc"] = np.char.decode(key, "utf-8").astype(str)
    return out


def _runs(table, *, text: bool, exact: bool, squares: bool):
    """One row group's runs of equal ids: (their ids, [rows, sum, sum of squares], ASCII, folded),
    the ids as integers or as the ``S`` array of their UTF-8 bytes, with whether every id of the
    group's dictionaries is ASCII and whether one holds an upper-case letter or an ASCII space (the
    similar-ids check's :func:`~perdoc.reading._rows._folded`). None when a value is missing or an
    id blank or holding a NUL, or when the runs are so many (half the rows or more) that the rows
    are not grouped by document."""
    ids_col, x_col = table.column(0), table.column(1)
    if ids_col.null_count or x_col.null_count:
        return None
    starts, ids, at, ascii_, folded = [], [], 0, True, False
    for chunk in ids_col.chunks:
        if text and not hasattr(chunk, "indices"):
            return None     # (not read as a dictionary)
        key = chunk.indices.to_numpy() if text else chunk.to_numpy()
        if key.size == 0:
            continue
        begin = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
        if text:
            words = _utf8_rows(chunk.dictionary)
            if words is None:
                return None
            raw, is_ascii, is_folded = words
            ids.append(raw[key[begin]])
            ascii_, folded = ascii_ and is_ascii, folded or is_folded
        else:
            ids.append(key[begin])
        starts.append(begin + at)
        at += key.size
    if not starts:
        return None
    starts = np.concatenate(starts)
    if starts.size > 64 and 2 * starts.size >= at:
        return None
    x = x_col.to_numpy()
    n = np.diff(starts, append=at)
    ids = ids[0] if len(ids) == 1 else np.concatenate(ids)
    if exact and not squares:    # (0/1 scores: their sums as 64-bit integers, exact)
        return ids, [n, np.add.reduceat(x, starts, dtype=np.int64)], ascii_, folded
    x = x.astype(np.int64 if exact else np.float64)
    sums = [n, np.add.reduceat(x, starts)]
    if squares:
        x *= x
        sums.append(np.add.reduceat(x, starts))
    return ids, sums, ascii_, folded


def _utf8_rows(arr):
    """An Arrow string array's values as the ``S`` array of their UTF-8 bytes, with whether they are
    all ASCII and whether one holds an upper-case letter or an ASCII space; None when one is blank
    (empty or spaces only: the loader's missing id) or holds a NUL (which ``S`` arrays cannot keep)."""
    import pyarrow as pa
    wide = pa.types.is_large_string(arr.type)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64 if wide else np.int32)[
        arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
    data = arr.buffers()[2]
    b = (np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8))[offsets[0]:offsets[-1]]
    offsets -= offsets[0]
    lens = np.diff(offsets)
    if lens.size == 0 or int(lens.min()) == 0 or bool(np.any(b == 0)):
        return None
    spaced = np.flatnonzero(b[offsets[:-1]] == 32)
    if any(not bytes(b[offsets[i]:offsets[i + 1]]).strip(b" ") for i in spaced.tolist()):
        return None     # (an id of spaces only)
    is_ascii = int(b.max(initial=0)) < 128
    return _byte_rows(b, lens), is_ascii, is_ascii and _folded(b)
