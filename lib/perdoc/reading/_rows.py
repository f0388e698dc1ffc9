"""Turning aggregation results into per-document tables, shared by every engine.

The checks and messages that follow a GROUP BY (missing ids, bad scores, declared metrics, ids that
differ only in form, rescaling of extreme sums) live here so that the DuckDB path
(:mod:`perdoc.io`) and the Ibis/Spark path (:mod:`perdoc.engines`) give the same table and the
same one-line errors. :mod:`perdoc.io` re-exports every name.
"""

from __future__ import annotations

import csv
import difflib
import gzip
import json
import math
import os
import re
import shutil
import stat
import sys
import tempfile
import unicodedata
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
import duckdb
import numpy as np
from ..errors import ColumnError, DataFileError, InputError, ParameterError, PerdocError
from ..messages import Message
from .export import neutralise_csv_cell, write_table
from .table import _ASCII_SPACE, _SPACE_BYTES, AsciiIds, DeferredIds, DocTable
from . import formats as _formats

#: Beyond these magnitudes the sums are rescaled by a power of two (see DocTable.scale).
_SCALE_LO, _SCALE_HI = 2.0 ** -200, 2.0 ** 200


#: The plain table formats by extension and by name (from the one registry, :mod:`.formats`).
_EXTENSIONS = {e: f.name for f in _formats.FORMATS if not f.adapter for e in f.extensions}


_FMT_ALIASES = {n: f.name for f in _formats.FORMATS if not f.adapter for n in (f.name, *f.aliases, *f.spellings)}


#: How every "cannot tell the format" message ends: the parameter and every format perdoc reads.
_PASS_FORMAT = _formats.pass_format()


_STDIN = "standard input"


_SIMILAR_EXAMPLES = 3


def _chunk_rows(res: dict, doc: str, score: str, label: str):
    """(n per document, ids, rows) of an aggregation, after the checks every engine shares: some
    rows, every row with a document id, every score a finite number."""
    counts = _plain(res["n"], float)
    docs = res["doc"]
    if type(docs) is np.ndarray and docs.dtype.kind == "O":
        docs = _ascii_ids(docs) or docs
    # text already, or integer ids whose text is written when first read: no id missing
    text = isinstance(docs, DeferredIds) or (isinstance(docs, np.ndarray) and docs.dtype.kind == "U")
    if not text:
        docs = _plain(docs, object)
    rows = int(counts.sum())
    if rows == 0:
        raise InputError(f"{label} has no data rows")
    missing = None if text or not docs.size else (docs == None)  # noqa: E711 (elementwise)
    if missing is not None and missing.any():
        k = int(counts[missing].sum())
        raise InputError(f"column '{doc}' in {label}: {k} of {rows} row(s) have no document id; "
                         "every row needs a document id")
    _check_scores(res, score, label, null="n_null", text="n_text", example="ex_text", nan="n_nan",
                  inf="n_inf")
    return counts, docs, rows


def _chunk_table(res: dict, *, counts, docs, rows, doc, score, attrs, metric, allow_similar_ids, label, info,
                 binary, exact, lo, hi, scale, violation, integer_ids: bool = False) -> DocTable:
    """The per-document table from an aggregation (any engine): metric, attributes, similar ids.
    ``violation()`` raises the error for a score that breaks the declared metric. ``integer_ids``:
    the ids are the text of distinct integers (an integer id column), which never differ only in
    spaces, case or Unicode form, so the similar-id check is skipped."""
    kind, reason = _chunk_metric(binary, exact, lo, hi)
    if metric is not None and _violates(metric, kind):
        violation()
    info.update(_metric_info(metric, kind, reason))
    info["binary"] = binary if metric is None else metric == "binary"
    attr_values = {}
    for i, (name, col) in enumerate(attrs.items()):
        nulls = int(_plain(res[f"a_null_{i}"], float).sum())
        if nulls:
            raise InputError(f"column '{col}' in {label}: {nulls} row(s) have no value; "
                             "every row needs one")
        lo_a, hi_a = _plain(res[f"a_min_{i}"], object), _plain(res[f"a_max_{i}"], object)
        differ = lo_a != hi_a
        if differ.any():
            docs = docs.build() if isinstance(docs, DeferredIds) else docs
            raise InputError(f"column '{col}' in {label}: {int(differ.sum())} document(s) have more than one "
                             f"value (e.g. document {_short(docs[differ][0])!r}: {_short(lo_a[differ][0])!r} and "
                             f"{_short(hi_a[differ][0])!r}); it must describe the document, one value each")
        attr_values[name] = lo_a
    if not integer_ids:
        info.update(_similar_ids(docs, doc, label, allow_similar_ids))
    table = _build(src_label=label, mapping={"doc": doc, "s": score, "q": score},
                   n=counts, s=_plain(res["s"], float), q=_plain(res["q"], float), doc=docs, source=info,
                   scale=scale)
    if attr_values:
        table = replace(table, attrs=attr_values)
    return table


def _pairs_table(res: dict, *, label: str, info_fn, refetch, violation, doc: str, a: str, b: str,
                 unpaired: bool, metric, allow_similar_ids: bool):
    """The pair table from a paired aggregation (any engine): checks, metric, scale, similar ids.
    ``refetch(scale)`` aggregates again with the scores times ``scale``; ``violation(tag, col)``
    raises the error for a score of system ``tag`` ("a" or "b") that breaks the declared metric."""
    rows_per_doc = _plain(res["rows"], float)
    docs = _plain(res["doc"], object)
    rows = int(rows_per_doc.sum())
    if rows == 0:
        raise InputError(f"{label} has no data rows")
    missing_doc = np.array([v is None for v in docs])
    if missing_doc.any():
        k = int(rows_per_doc[missing_doc].sum())
        raise InputError(f"column '{doc}' in {label}: {k} of {rows} row(s) have no document id; "
                         "every row needs a document id")
    for tag, col in (("a", a), ("b", b)):
        _check_scores(res, col, label, text=f"text_{tag}", example=f"ex_{tag}", nan=f"nan_{tag}",
                      inf=f"inf_{tag}")
    n_a = _plain(res["n_a"], float)
    n_b = _plain(res["n_b"], float)
    only_a, only_b, neither, exclusions = _unmatched_rows(res, rows_per_doc, n_a, n_b, label=label, a=a, b=b,
                                                          unpaired=unpaired)
    kinds, sizes = {}, []
    for tag, col, n_x in (("a", a, n_a), ("b", b, n_b)):
        has = n_x > 0
        if not has.any():
            kinds[col] = ("score", "no scores")
            continue
        lo = float(np.min(_plain(res[f"lo_{tag}"], float)[has]))
        hi = float(np.max(_plain(res[f"hi_{tag}"], float)[has]))
        binary = bool(np.all(_plain(res[f"dev01_{tag}"], float)[has] == 0))
        kinds[col] = _chunk_metric(binary, False, lo, hi)
        if metric is not None and _violates(metric, kinds[col][0]):
            violation(tag, col)
        sizes.append(max(-lo, hi))
    # one power of two for both systems (q_d mixes them), from the larger of their largest scores
    scale = _scale_for(max(sizes, default=0.0))
    if scale != 1.0:
        res = refetch(scale)
    _check_pair_sums(res, n_a, n_b, label=label, a=a, b=b, unpaired=unpaired)
    order = {"binary": 0, "proportion": 1, "score": 2}
    kind = max((k for k, _ in kinds.values()), key=order.get)
    (ka, ra), (kb, rb) = kinds[a], kinds[b]
    reason = ra if (ka, ra) == (kb, rb) else Message("metric_reason.two_systems", "'{a}': {reason_a}; '{b}': "
                                                     "{reason_b}", a=a, b=b, reason_a=ra, reason_b=rb)
    info = info_fn(rows)
    info.update({"rows_only_a": only_a, "rows_only_b": only_b, "rows_neither": neither})
    info.update(_metric_info(metric, kind, reason))
    if metric is not None:
        info["binary"] = metric == "binary"
    info.update(_similar_ids(docs, doc, label, allow_similar_ids))
    pairs = _build_pairs(res, docs, n_a, n_b, doc=doc, a=a, b=b, unpaired=unpaired, info=info,
                         exclusions=exclusions, label=label)
    return pairs if scale == 1.0 else replace(pairs, scale=scale)


def _unmatched_rows(res: dict, rows_per_doc, n_a, n_b, *, label: str, a: str, b: str, unpaired: bool):
    """``(only_a, only_b, neither, exclusions)``: the rows scored by one system only and by neither;
    paired, any such row is refused; unpaired, rows scored by neither are excluded."""
    from .table import Exclusion
    n_both = _plain(res["n_both"], float)
    only_a = int((n_a - n_both).sum())
    only_b = int((n_b - n_both).sum())
    neither = int((rows_per_doc - n_a - n_b + n_both).sum())
    exclusions = ()
    if not unpaired:
        if only_a or only_b or neither:
            raise InputError(
                f"{label}: the systems' rows do not match: {only_a} row(s) have a score for '{a}' but "
                f"not for '{b}', {only_b} for '{b}' but not for '{a}', {neither} for neither; a paired "
                "comparison needs both scores on every row (use the unpaired comparison to compare "
                "them anyway, by the delta method)")
    elif neither:
        exclusions = (Exclusion(neither, f"no score for either system ('{a}' and '{b}' both missing)"),)
    return only_a, only_b, neither, exclusions


def _check_pair_sums(res: dict, n_a, n_b, *, label: str, a: str, b: str, unpaired: bool) -> None:
    """Refuse sums of scores or of their squares that leave the double range (documents with scores)."""
    sums = ["s_a", "q_a", "s_b", "q_b"] + ([] if unpaired else ["q_d"])
    for key in sums:
        n_x = n_b if key.endswith("_b") else n_a
        v = _plain(res[key], float)[n_x > 0]
        if not np.all(np.isfinite(v)):
            col = b if key.endswith("_b") else a
            what = f"columns '{a}' and '{b}'" if key == "q_d" else f"column '{col}'"
            raise InputError(f"{what} in {label}: sums of scores or of their squares leave the double "
                             "range; multiply the scores by a constant that brings them near 1")


def _build_pairs(res: dict, docs, n_a, n_b, *, doc: str, a: str, b: str, unpaired: bool, info: dict,
                 exclusions, label: str):
    """The :class:`~perdoc.pairs.PairTable` of the documents with a score of either system; a
    table's error names the user's columns."""
    from .pairs import PairTable
    s_a = _plain(res["s_a"], float)
    s_b = _plain(res["s_b"], float)
    q_a = _plain(res["q_a"], float)
    q_b = _plain(res["q_b"], float)
    # documents whose rows all lack both scores carry nothing: drop them, counted above
    keep = (n_a > 0) | (n_b > 0)
    try:
        return PairTable.build(doc=docs[keep], n_a=n_a[keep], s_a=np.nan_to_num(s_a[keep]),
                               q_a=np.nan_to_num(q_a[keep]), n_b=n_b[keep], s_b=np.nan_to_num(s_b[keep]),
                               q_b=np.nan_to_num(q_b[keep]),
                               q_d=None if unpaired else _plain(res["q_d"], float)[keep],
                               names=(a, b), paired=not unpaired, source=info, exclusions=exclusions,
                               label=label)
    except PerdocError as e:
        msg = str(e)
        m = _COLUMN_RE.match(msg)
        if m is None:
            raise
        role = m.group(1)
        what = f"column '{doc}'" if role == "doc" else f"columns '{a}' and '{b}'"
        raise type(e)(f"{what} in {label}: {msg[m.end():]}") from None


_REASONS = {
    "binary": Message("metric_reason.binary", "every score is 0 or 1"),
    "proportion": Message("metric_reason.proportion", "scores lie in [0, 1] but are not all 0/1"),
    "score": Message("metric_reason.score", "some score lies outside [0, 1]"),
}


_DECLARED = {
    "binary": Message("metric_reason.declared_binary", "declared binary: every score is checked to be 0 or 1"),
    "proportion": Message("metric_reason.declared_proportion", "declared proportion: every score is checked to lie "
                          "in [0, 1]"),
    "score": Message("metric_reason.declared_score", "declared score: any finite number is accepted"),
}


def _chunk_metric(binary: bool, exact: bool, lo, hi) -> tuple[str, str]:
    """(kind, reason) from what the aggregation saw: 0/1, else the range of the scores."""
    if binary:
        return "binary", _REASONS["binary"]
    if exact or lo < 0 or hi > 1:  # an integer other than 0 and 1 lies outside [0, 1]
        return "score", _REASONS["score"]
    return "proportion", _REASONS["proportion"]


def _violates(metric: str, kind: str) -> bool:
    return (metric == "binary" and kind != "binary") or (metric == "proportion" and kind == "score")


def _metric_info(metric, kind, reason) -> dict:
    if metric is not None:
        return {"metric": metric, "metric_declared": True, "metric_reason": _DECLARED[metric]}
    return {"metric": kind, "metric_declared": False, "metric_reason": reason}


def _violation_error(k: int, lo: float, hi: float, col: str, label: str, metric: str):
    """Raise: ``k`` rows of ``col`` break the declared metric (``lo``/``hi``: the smallest/largest of them)."""
    example = hi if hi > 1 else lo
    rule = ("a score other than 0 or 1" if metric == "binary" else "a score outside [0, 1]")
    need = ("only 0 and 1 (or true/false)" if metric == "binary" else "only scores in [0, 1]")
    raise InputError(f"column '{col}' in {label}: {k} row(s) have {rule} (e.g. {example:.10g}); "
                     f"the declared metric {metric} allows {need}")


def _scale_for(size) -> float:
    """1 for scores of ordinary size; else the power of two that brings the largest |score| near 1."""
    if not (np.isfinite(size) and (size > _SCALE_HI or 0 < size < _SCALE_LO)):
        return 1.0
    exponent = math.frexp(size)[1]          # size = f * 2**exponent, 0.5 <= f < 1
    return math.ldexp(1.0, min(max(-exponent, -1022), 1023))




def _id_key(value: str) -> str:
    if value.isascii():
        return value.strip().lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", value.strip()).casefold())


def _ascii_ids(docs: np.ndarray, release=None) -> AsciiIds | None:
    """The text ids of a one-dimensional object array as :class:`AsciiIds` when every one is ASCII
    text without a NUL (else None: a missing id, a number, other characters). Their bytes are
    laid out at C speed from the ids joined by NULs, not converted one Python string at a time.
    ``release()``, once the ids are known to qualify, lets the caller drop its hold on ``docs``, so
    that the Python strings go before the bytes are laid out (at 10^6 ids, 75 MiB)."""
    values = docs.tolist()
    try:
        joined = "\x00".join(values)
    except TypeError:   # (some id is not text)
        return None
    K = len(values)
    if K == 0 or not joined.isascii() or joined.count("\x00") != K - 1:   # (other characters, a NUL)
        return None
    del values, docs
    if release is not None:
        release()
    b = np.frombuffer(joined.encode("ascii"), np.uint8)
    del joined
    seps = np.flatnonzero(b == 0)
    lens = np.diff(seps, prepend=-1, append=b.size) - 1
    width = int(lens.max())
    if width == 0:
        return None
    if int(lens.min()) == width:     # (ids of one length: row d starts at byte d * (width + 1))
        rows = np.lib.stride_tricks.as_strided(b, shape=(K, width), strides=(width + 1, 1), writeable=False)
        raw = np.ascontiguousarray(rows).view(f"S{width}").reshape(K)
    else:
        raw = np.zeros(K, dtype=f"S{width}")
        raw.view(np.uint8).reshape(K, width)[np.arange(width) < lens[:, None]] = b[b != 0]
    return AsciiIds(raw, plain=not _folded(b))


def _folded(b: np.ndarray) -> bool:
    """Whether ASCII bytes ``b`` hold an upper-case letter or a space (what the similar-ids key
    changes), a megabyte at a time (uint8 arithmetic wraps: ``b - 65 < 26`` is A to Z)."""
    for start in range(0, b.size, 1 << 20):
        block = b[start:start + (1 << 20)]
        if np.any((block - 65) < 26):
            return True
        low = (block - 1) < 32         # (bytes 1 to 32; the NUL separators are 0)
        if low.any() and _SPACE_BYTES[block[low]].any():
            return True
    return False


def _similar_ids(docs, col: str, label: str, allow: bool, *, distinct: bool = True) -> dict:
    """Distinct ids that collide once surrounding spaces, Unicode form and letter case are set aside.
    O(K) over the K ids after aggregation (``distinct``: no id repeats); refuses unless ``allow``."""
    if isinstance(docs, AsciiIds):
        if docs.plain and distinct:   # (each id is its own key)
            return {}
        docs = docs.build()
    ids = [v for v in np.asarray(docs, dtype=object).tolist() if v is not None]
    count = len(ids) if distinct else len(set(ids))
    joined = "\x00".join(ids)
    if joined.isascii() and joined.count("\x00") == len(ids) - 1:
        if any(c in joined for c in _ASCII_SPACE):
            keys = list(map(str.lower, map(str.strip, ids)))
        else:  # the common case, at C speed: ASCII ids without spaces
            lowered = joined.lower()
            if lowered == joined and count == len(ids):  # keys are the ids, which are distinct
                return {}
            keys = lowered.split("\x00")
    else:
        keys = list(map(_id_key, ids))
    if len(set(keys)) == count:
        return {}
    members: dict[str, list] = {}
    for v, k in zip(ids, keys):
        members.setdefault(k, []).append(v)
    # members and groups in sorted order, so the examples do not depend on the order of the rows
    groups = sorted(sorted(set(g)) for g in members.values() if len(set(g)) > 1)
    if not groups:
        return {}
    examples = [[str(v) for v in g[:3]] for g in groups[:_SIMILAR_EXAMPLES]]
    if not allow:
        shown = "; ".join(" / ".join(repr(_short(v, 24)) for v in g) for g in examples)
        raise InputError(f"column '{col}' in {label}: {len(groups)} group(s) of document ids differ only in surrounding "
                         f"spaces, letter case or Unicode form ({shown}); fix the ids, or pass --allow-similar-ids "
                         "(allow_similar_ids=True in Python, data.allow_similar_ids: true in a params file) to keep "
                         "them as different documents")
    return {"similar_ids": {"groups": len(groups), "examples": examples}}


def _similar_hint(missing, known, where: str) -> str:
    """``"; 'D1' matches 'd1' of {where} only once ..."`` for the first of the ``missing`` ids that equals
    an id of ``known`` after setting aside surrounding spaces, letter case and Unicode form (the rule of
    :func:`_similar_ids`), else ``""``. O(len(known) + len(missing))."""
    if not len(missing):
        return ""
    keys = {}
    for v in np.asarray(known, dtype=object).tolist():
        if v is not None:
            keys.setdefault(_id_key(str(v)), str(v))
    for v in missing:
        match = keys.get(_id_key(str(v)))
        if match is not None and match != str(v):
            return (f"; {_short(v, 24)!r} matches {_short(match, 24)!r} of {where} only once surrounding spaces, "
                    "letter case and Unicode form are set aside: write the ids the same way in both")
    return ""


def _format_of(path: str, fmt: str | None, *, stream: bool = False,
               reader: str = "here (a plain table is needed)") -> tuple[str, bool]:
    """``(plain format, gzip-compressed)`` of the file ``path``: the one ``fmt`` names, else the one
    its extension selects (:func:`perdoc.reading.formats.from_file_name`, the one place a format is
    told from a file name). A format read by an evaluation-framework adapter (``fmt="inspect"``, a
    ``.eval`` file) is refused here, naming ``reader`` (where it cannot be read: ``"by engine='spark'"``):
    the loaders hand it to the adapter before they get here. Every refusal is one line naming the
    parameter and every format perdoc reads."""
    f, gz, ext = _formats.from_file_name(path)
    if fmt is not None:
        f = _formats.by_name(fmt)
        if f is None:
            raise ParameterError(f"fmt={fmt!r} is not a known format (--format on the command line, data.format "
                                 f"in a params file); use one of {_formats.listing()}")
    elif stream and (path == _STDIN or f is None):
        what = "standard input has no file name" if path == _STDIN else "it is a pipe whose name has no extension"
        raise DataFileError(f"cannot tell the format of {path}: {what} to tell it from; {_formats.pass_format()}")
    elif f is None or (gz and not f.gzip):
        shown = ext + (".gz" if gz else "") if ext else "(none)"
        raise DataFileError(f"cannot tell the format of {path} from its extension {shown!r}: "
                            f"{_formats.pass_format()}")
    if f.adapter:
        raise ParameterError(f"{path} is {f.what} (format {f.name}), read only through its adapter, not {reader}; "
                             f"use one of {_formats.plain_listing()}")
    if gz and not f.gzip and not stream:
        raise DataFileError(f"{path}: a gzip-compressed {f.what} file cannot be read; decompress it first")
    return f.name, gz


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


def _short(value, limit: int = 40) -> str:
    value = str(value)
    return value if len(value) <= limit else value[: limit - 3] + "..."


def _plain(arr, dtype):
    """A fetchnumpy column as a plain array (masked entries -> None / NaN / False)."""
    ma = sys.modules.get("numpy.ma")  # not imported yet: no masked array exists (np.ma would import it)
    if ma is not None and ma.isMaskedArray(arr):
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


def _build(*, src_label: str, mapping: dict, n, s, q, doc, source: dict, scale: float = 1.0,
           assume_binary: bool = True) -> DocTable:
    """``DocTable.from_arrays`` with its messages reworded to the user's column and file names."""
    try:
        return DocTable.from_arrays(n, s, q, doc, source=source, scale=scale, assume_binary=assume_binary)
    except PerdocError as e:
        msg = str(e)
        m = _COLUMN_RE.match(msg)
        if m and m.group(1) in mapping:
            msg = f"column '{mapping[m.group(1)]}' in {src_label}: " + msg[m.end():]
        else:
            msg = f"{src_label}: {msg}"
        raise type(e)(msg) from None
