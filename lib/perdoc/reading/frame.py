"""The sampling frame: the size of every document in the population.

Scoring is what costs; chunking the whole corpus is cheap, so the number of chunks of every
population document (sampled or not) is usually known. With it, the micro mean can be estimated by
prediction from the sample to the unsampled documents of known size (the frame-aware methods
``micro.frame_ratio``, ``micro.frame_loglinear``, ``micro.frame_rank`` and their logit-scale
``micro.logit_frame_*``, :func:`perdoc.methods.frame_prediction`).

A frame is read from a CSV, TSV, JSON Lines or Parquet file with one row per population document:
the document id column (named as the data's, ``--doc``) and a column ``n`` with its number of
chunks (or queries); or it is taken from a census (:meth:`Frame.from_table`: a per-chunk census
counted per document). :meth:`Frame.check` refuses, with one line, a sample that does not fit it:
sampled documents missing from the frame, or a sampled document whose size differs from the frame's.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .table import _SPACE_BYTES, MAX_COUNT, DocTable

__all__ = ["Frame", "FrameTotals", "read_frame", "read_frame_hashed", "FRAME_SIZE_COLUMN"]

#: The size column of a frame file.
FRAME_SIZE_COLUMN = "n"


class FrameTotals:
    """What the frame-aware methods need from the sizes ``n`` of every population document: ``M``
    documents, ``N = sum n``, ``N2 = sum n^2`` and, per size trend, ``NZ[trend] = sum n z``: for
    ``log``, ``z = log(n / ref)`` with ``ref`` the smallest size (so ``z = 0`` exactly when every size
    is equal, ``flat``); for ``rank``, ``z`` = the share of frame documents whose size is at most ``n``
    (the frame's size distribution function, in (0, 1]). Sums by :func:`math.fsum` (correctly rounded)."""

    __slots__ = ("M", "N", "N2", "NZ", "ref", "flat", "sorted")

    def __init__(self, sizes):
        import math
        n = np.asarray(sizes, dtype=float).reshape(-1)
        self.M = int(n.size)
        self.ref = float(n.min())
        self.flat = bool(np.all(n == n[0]))
        self.N = math.fsum(n.tolist())
        self.N2 = math.fsum((n * n).tolist())
        self.sorted = np.sort(n)
        self.NZ = {trend: math.fsum((n * self.z(n, trend)).tolist()) for trend in ("log", "rank")}

    def z(self, n, trend: str):
        """The trend variable of sizes ``n`` (any shape)."""
        n = np.asarray(n, dtype=float)
        if trend == "log":
            return np.log(n / self.ref)
        return np.searchsorted(self.sorted, n, side="right") / float(self.M)


@dataclass(frozen=True)
class Frame:
    """Document ids and sizes of every population document (ids unique, sizes whole and positive)."""

    doc: np.ndarray
    n: np.ndarray
    label: str = "the frame"

    @classmethod
    def from_arrays(cls, doc, n, *, label: str = "the frame", allow_similar_ids: bool = False,
                    column: str = "doc") -> "Frame":
        """A frame from ids and sizes, checked: at least two documents, unique non-missing ids, sizes
        whole numbers from 1 to 2^53 (their total too). Ids that differ only in surrounding spaces,
        letter case or Unicode form are refused, as in the data, unless ``allow_similar_ids``
        (``column``: the id column named in that message)."""
        doc, absent = _ids_as_text(doc)
        try:
            n = np.asarray(n, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise InputError(f"column '{FRAME_SIZE_COLUMN}' of {label} must hold numbers (chunks per "
                             "document)") from None
        if doc.shape != n.shape:
            raise InputError(f"{label}: one id per size is needed (got {doc.size} ids and {n.size} sizes)")
        if n.size < 2:
            raise InputError(f"{label} must list at least 2 documents (got {n.size})")
        missing = 0 if absent is None else int(absent.sum())
        if missing:
            raise InputError(f"{label}: {missing} row(s) have no document id; every population document needs one")
        _check_sizes(doc, n, label)
        _check_ids(doc, label, column, allow_similar_ids)
        return cls(doc=doc, n=n, label=label)

    @classmethod
    def from_table(cls, table: DocTable, *, label: str = "the census") -> "Frame":
        """The frame of a census table: its documents and their numbers of chunks (their ids were
        checked, or knowingly kept, when the census was loaded)."""
        return cls.from_arrays(table.doc, table.n, label=label, allow_similar_ids=True)

    @property
    def M(self) -> int:
        """Documents in the population."""
        return int(self.n.size)

    @property
    def N(self) -> float:
        """Chunks in the population (:attr:`FrameTotals.N <perdoc.methods.FrameTotals>`, the correctly
        rounded sum, without the rest of the totals)."""
        return _exact_sum(self.n)

    @property
    def totals(self) -> FrameTotals:
        return FrameTotals(self.n)

    def tail(self, sampled_sizes) -> dict:
        """How much of the population a simple random sample of these documents cannot see (see
        :func:`unseen_tail`)."""
        return unseen_tail(self.n, sampled_sizes)

    def check(self, table: DocTable) -> None:
        """One-line InputError when ``table``'s documents do not fit the frame: a sampled document
        missing from it, or a size that differs from the frame's."""
        pos = {d: i for i, d in enumerate(self.doc.astype(str).tolist())}
        sample = [str(x) for x in np.asarray(table.doc, dtype=object).tolist()]
        missing = [d for d in sample if d not in pos]
        if missing:
            from ._rows import _similar_hint
            hint = _similar_hint(missing, self.doc, self.label)
            raise InputError(f"{len(missing)} sampled document(s) are missing from {self.label} (e.g. "
                             f"{missing[0]!r}); the frame must list every population document{hint}")
        fn = self.n[[pos[d] for d in sample]]
        differ = np.flatnonzero(fn != np.asarray(table.n, dtype=float))
        if differ.size:
            i = int(differ[0])
            raise InputError(f"{differ.size} sampled document(s) have a size that differs from {self.label} (e.g. "
                             f"{sample[i]!r}: {float(table.n[i]):g} chunks in the data, {fn[i]:g} in the frame); "
                             "the frame's column 'n' must count the same chunks as the data")


#: Expected share of the population's chunks in documents longer than every document of a simple
#: random sample of K above which a report warns that no interval from such a sample can be trusted
#: (calibrated on the coverage panel, checked on held-out censuses: benchmarks/README.md).
TAIL_WARN = 0.15


def expected_tail_share(sizes, K: int) -> float:
    """The expected share of the population's chunks that lie in documents longer than every one of
    a simple random sample of K documents: ``sum_i n_i P(all K drawn are shorter than i) / N`` with
    ``P = C(L_i, K) / C(M, K)``, ``L_i`` the documents shorter than i. It depends on the frame and K
    only, so it can be told before anything is labelled."""
    from math import lgamma
    n = np.sort(np.asarray(sizes, dtype=float))
    M = n.size
    if K >= M:
        return 0.0
    shorter = np.searchsorted(n, n, side="left").astype(float)     # documents strictly shorter
    ok = shorter >= K
    lgM = lgamma(M + 1) - lgamma(K + 1) - lgamma(M - K + 1)
    from scipy.special import gammaln
    logp = np.where(ok, gammaln(shorter + 1) - gammaln(K + 1) - gammaln(np.maximum(shorter - K, 0) + 1) - lgM,
                    -np.inf)
    return float(np.sum(n * np.exp(logp)) / n.sum())


def unseen_tail(sizes, sampled_sizes) -> dict:
    """``sample``: the share of the population's chunks in documents longer than the longest sampled
    one (and how many such documents); ``expected``: :func:`expected_tail_share` for a sample of that
    many documents; ``warn``: either exceeds :data:`TAIL_WARN`."""
    n = np.asarray(sizes, dtype=float)
    longest = float(np.max(sampled_sizes))
    beyond = n > longest
    share = float(n[beyond].sum() / n.sum())
    expected = expected_tail_share(n, int(np.size(sampled_sizes)))
    return {"sample": share, "documents_beyond": int(beyond.sum()), "longest_sampled": longest,
            "expected": expected, "threshold": TAIL_WARN, "warn": bool(max(share, expected) > TAIL_WARN)}


def tail_warning(tail: dict, K: int) -> str:
    """The frame's warning in one English sentence (the CLI prints it; the report has it in its
    language)."""
    return (f"a simple random sample of {K} documents typically misses the longest documents: "
            f"{tail['expected']:.0%} of the population's chunks are expected in documents longer than every sampled "
            f"one ({tail['sample']:.0%} in this sample: {tail['documents_beyond']:,} documents longer than its longest, "
            f"{tail['longest_sampled']:,.0f} chunks); if they score differently no interval from this sample can show it. "
            "Draw the documents with probability proportional to size: perdoc sample --design pps")


def read_frame(path, doc: str, *, fmt: str | None = None, n_col: str = FRAME_SIZE_COLUMN,
               allow_similar_ids: bool = False) -> Frame:
    """A frame file: one row per population document, the ``doc`` column and a column ``n`` (its
    chunks; ``n_col`` names another). CSV, TSV, JSON Lines or Parquet (gzip-compressed text too),
    read as the data are. Ids that differ only in surrounding spaces, letter case or Unicode form are
    refused unless ``allow_similar_ids`` (the data's rule, :func:`perdoc.io.load_chunks`)."""
    return _read_frame(path, doc, fmt=fmt, n_col=n_col, allow_similar_ids=allow_similar_ids, digest=False)[0]


def read_frame_hashed(path, doc: str, *, fmt: str | None = None, n_col: str = FRAME_SIZE_COLUMN,
                      allow_similar_ids: bool = False) -> tuple[Frame, dict | None]:
    """:func:`read_frame`, and ``{"bytes": ..., "sha256": ...}`` of the file from the same read of its
    bytes when the frame was read from them (a plain CSV or TSV file: :func:`_read_plain_text`); None
    when it was read otherwise, and the caller hashes the file itself."""
    return _read_frame(path, doc, fmt=fmt, n_col=n_col, allow_similar_ids=allow_similar_ids, digest=True)


def _read_frame(path, doc: str, *, fmt, n_col: str, allow_similar_ids: bool, digest: bool):
    plain = _read_plain_text(path, doc, n_col, fmt, allow_similar_ids, digest)
    if plain is not None:
        return plain
    from ._rows import _plain
    from .io import _doc_expr, _open_source
    with _open_source(path, fmt) as src:
        label = f"the frame {src.label}"
        src.require(doc, n_col)
        raw, x, text = src.number(n_col)
        extra = f", CASE WHEN {raw} IS NOT NULL AND {x} IS NULL THEN {raw} END AS bad" if text else ""
        # the rows in the file's order: the draw depends on the frame's order, and the same frame, design
        # and seed must give the same manifest (a parallel scan may otherwise return them in any order)
        src.con.execute("SET preserve_insertion_order = true")
        res = src.fetch(f"SELECT {_doc_expr(src.ref(doc))} AS d, {x} AS x, {raw} IS NULL AS nul{extra} "
                        f"FROM {src.relation}")
    ids = _plain(res["d"], object)
    if ids.size == 0:
        raise InputError(f"{label} has no data rows")
    nulls = int(_plain(res["nul"], bool).sum())
    if nulls:
        raise InputError(f"column '{n_col}' of {label}: {nulls} document(s) have no size; every "
                         "population document needs its number of chunks")
    if text:
        bad = _plain(res["bad"], object)
        at = np.flatnonzero(np.not_equal(bad, None))
        if at.size:
            raise InputError(f"column '{n_col}' of {label}: {at.size} value(s) are not numbers "
                             f"(e.g. {str(bad[at[0]])[:40]!r})")
    frame = Frame.from_arrays(ids, _plain(res["x"], float), label=label, allow_similar_ids=allow_similar_ids,
                              column=doc)
    return frame, None


# ------------------------------------------------------------------------------------ the checks
def _exact_sum(n) -> float:
    """``math.fsum`` of the sizes (correctly rounded), by NumPy when its sum is exact anyway: whole
    numbers whose absolute values add up to less than 2^53 (every partial sum is then a whole number
    below 2^53, which a double holds exactly, whatever the order of the additions)."""
    n = np.asarray(n, dtype=float).reshape(-1)
    with np.errstate(invalid="ignore", over="ignore"):
        whole = bool(np.all(n == np.round(n)))
        total = float(np.abs(n).sum())
    if whole and total < 2.0 ** 53:
        return float(n.sum())
    return math.fsum(n.tolist())


def _ids_as_text(doc):
    """The ids as an object array of ``str`` (None where missing) and where they are missing (None:
    nowhere), as ``np.where(absent, None, doc.astype(str))`` gives them: ids that are already ``str``
    without a NUL character (which a NumPy text array drops at the end of a string) are kept as they
    are, without that round trip."""
    doc = np.asarray(doc, dtype=object).reshape(-1)
    values = doc.tolist()
    if set(map(type, values)) <= {str} and "\x00" not in "".join(values):
        return doc.copy(), None
    absent = np.equal(doc, None)
    return np.where(absent, None, doc.astype(str)).astype(object), absent


def _check_sizes(doc, n, label: str) -> None:
    bad = ~np.isfinite(n) | (n < 1) | (n != np.round(n)) | (n > MAX_COUNT)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"column '{FRAME_SIZE_COLUMN}' of {label}: document {doc[i]!r} has size {n[i]:g}; "
                         "sizes must be whole numbers of chunks from 1 to 2^53")
    if float(n.sum()) > MAX_COUNT:
        raise InputError(f"column '{FRAME_SIZE_COLUMN}' of {label}: the total number of chunks exceeds 2^53")


def _check_ids(doc, label: str, column: str, allow_similar_ids: bool) -> None:
    """Refuse ids that repeat and, unless ``allow_similar_ids``, ids that differ only in surrounding
    spaces, letter case or Unicode form (:func:`perdoc._rows._similar_ids`). ``doc``: an object array
    of ``str``. The common case (every id distinct, even once lower-cased) is told by
    :func:`_ids_clear` over the ids' bytes; the exact checks, which word the refusals, run otherwise."""
    values = doc.tolist()
    joined = "\x00".join(values)
    clear = fold = False
    if joined.count("\x00") == len(values) - 1:   # no id holds a NUL: the separators are where they seem
        ascii_ = joined.isascii()
        b = np.frombuffer(joined.encode("ascii") if ascii_ else joined.encode("utf-8", "surrogatepass"), np.uint8)
        seps = np.flatnonzero(b == 0)
        starts = np.concatenate(([0], seps + 1))
        ends = np.concatenate((seps, [b.size]))
        # ASCII ids without surrounding spaces: their similar-id key is the id lower-cased
        fold = not allow_similar_ids and ascii_ and not _edge_space(b, starts, ends)
        clear = _ids_clear(b, starts, ends, fold_case=fold)
    _check_ids_exactly(doc, label, column, allow_similar_ids, repeats=not clear, similar=not (clear and fold))


def _check_ids_exactly(doc, label: str, column: str, allow_similar_ids: bool, *, repeats: bool = True,
                       similar: bool = True) -> None:
    """The refusals of repeated ids (``repeats``) and of similar ids (``similar``, unless allowed),
    worded from the ids themselves."""
    if repeats:
        ids, counts = np.unique(doc.astype(str), return_counts=True)
        if ids.size != doc.size:
            dup = ids[counts > 1]
            raise InputError(f"{label}: {dup.size} document id(s) appear more than once (e.g. {str(dup[0])!r}); "
                             "a frame lists each population document once")
    if similar and not allow_similar_ids:
        from ._rows import _similar_ids
        _similar_ids(doc, column, label, allow_similar_ids)


_FNV_OFFSET, _FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)
#: The low 0..8 bytes of a 64-bit word.
_BYTE_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(9)], dtype=np.uint64)
_HIGH = np.uint64(0x8080808080808080)
_TO_A = np.uint64(0x3F3F3F3F3F3F3F3F)     # 0x80 - ord("A") in every byte
_PAST_Z = np.uint64(0x2525252525252525)   # 0x80 - ord("Z") - 1 in every byte


def _words(buf):
    """The eight bytes from every position of ``buf`` but its last 7, each as one little-endian
    64-bit number (a view, no copy)."""
    return np.ndarray(shape=(buf.size - 7,), dtype="<u8", buffer=buf, strides=(1,))


def _edge_space(b, starts, ends) -> bool:
    """Whether some non-empty id ``b[starts[i]:ends[i]]`` starts or ends with an ASCII space."""
    full = ends > starts
    s, e = (starts, ends) if full.all() else (starts[full], ends[full])
    return bool(_SPACE_BYTES[b[s]].any() or _SPACE_BYTES[b[e - 1]].any())


def _ids_clear(b, starts, ends, *, fold_case: bool, words=None, base: int = 0) -> bool:
    """True when the ids ``b[starts[i]:ends[i]]`` (bytes without NUL) are surely all different, and
    with ``fold_case`` (ASCII ids) still all different once lower-cased; False when they may not be
    (the exact checks decide). One 64-bit hash per id, its bytes taken eight at a time: different
    hashes prove different ids; equal hashes (a repeat, or rarely a coincidence) prove nothing.
    ``words``: :func:`_words` of a buffer holding ``b`` from position ``base`` on (else made here)."""
    N = starts.size
    if N < 2:
        return True
    size = b.size
    if words is None:
        padded = np.zeros(size + 8, dtype=np.uint8)
        padded[:size] = b
        words, base = _words(padded), 0
    at = starts + base                               # a new array: moved along the ids
    left = (ends - starts).astype(np.int64)          # bytes of the id from ``at`` on
    rounds = (int(left.max()) + 7) // 8
    h = np.full(N, _FNV_OFFSET, dtype=np.uint64)
    t = np.empty(N, dtype=np.uint64)
    u = np.empty(N, dtype=np.uint64)
    for r in range(rounds):
        if r:
            at += 8
            left -= 8
            np.minimum(at, base + size, out=at)
        w = words[at]
        if r == rounds - 1 or int(left.min()) < 8:  # keep only the id's own bytes
            w &= _BYTE_MASKS[np.clip(left, 0, 8)]
        if fold_case:                                # A-Z to a-z in every byte (ASCII: no carries)
            np.add(w, _TO_A, out=t)
            np.add(w, _PAST_Z, out=u)
            np.invert(u, out=u)
            t &= u
            t &= _HIGH
            t >>= np.uint64(2)
            w |= t
        h ^= w
        h *= _FNV_PRIME
        np.right_shift(h, np.uint64(29), out=t)
        h ^= t
    h.sort()
    return not bool(np.any(h[1:] == h[:-1]))


# ------------------------------------------------------------------------------------ plain text
#: The largest file :func:`_read_plain_text` reads (beyond it, DuckDB's reader).
_PLAIN_MAX_BYTES = 1 << 30
#: The longest line it reads (DuckDB's reader refuses lines beyond 2 MiB).
_PLAIN_MAX_LINE = 1 << 20
_DELIMITERS = {"csv": ",", "tsv": "\t"}


def _plain_kind(path: str, fmt) -> str | None:
    """csv or tsv for an uncompressed CSV or TSV file (by ``fmt``, else by the extension), else None."""
    name = os.path.basename(path).lower()
    if name.endswith(".gz"):
        return None
    if fmt is not None:
        kind = str(fmt).lower().lstrip(".")
        return kind if kind in _DELIMITERS else None
    return {".csv": "csv", ".tsv": "tsv"}.get(os.path.splitext(name)[1])


def _read_plain_text(path, doc: str, n_col: str, fmt, allow_similar_ids: bool, digest: bool):
    """``(Frame, digest)`` of a plain CSV or TSV frame file, read with NumPy in one pass over its bytes
    (hashed too with ``digest``: ``{"bytes", "sha256"}``), or None when the file is not plain, for
    DuckDB's reader to read it (and to say what is wrong with it, if anything).

    Plain: a regular file of ASCII text without quotes, carriage returns or NUL bytes; a header that
    names ``doc`` and ``n_col`` once each; every line with one value per column; every id neither
    empty nor starting or ending with a space; every size 1 to 15 decimal digits; at least 2 rows.
    Such a file gives the ids and sizes DuckDB's reader gives, and the checks are those of
    :meth:`Frame.from_arrays`, so the frame, and every refusal, are the same."""
    if not isinstance(path, (str, os.PathLike)):
        return None
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if p == "-" or doc == n_col:
        return None
    kind = _plain_kind(p, fmt)
    if kind is None:
        return None
    import stat
    try:
        st = os.stat(p)
        if not stat.S_ISREG(st.st_mode) or not 0 < st.st_size <= _PLAIN_MAX_BYTES:
            return None
        with open(p, "rb") as fh:
            data = fh.read(_PLAIN_MAX_BYTES + 1)
    except OSError:
        return None
    if (not 0 < len(data) <= _PLAIN_MAX_BYTES or not data.isascii() or b"\x00" in data or b'"' in data
            or b"\r" in data or data.startswith((b"PAR1", b"PK\x03\x04", b"BZh"))):
        return None
    end = data.find(b"\n")
    if end <= 0:
        return None
    delim = _DELIMITERS[kind]
    header = data[:end].decode("ascii").split(delim)
    if header.count(doc) != 1 or header.count(n_col) != 1 or end + 1 == len(data):
        return None
    hasher = thread = None
    if digest:   # hashed on another thread while the text is parsed (hashlib lets go of the GIL)
        import hashlib
        import threading
        hasher = hashlib.sha256()
        thread = threading.Thread(target=hasher.update, args=(data,), daemon=True)
        thread.start()
    try:
        frame = _parse_plain(data, end + 1, header, delim, doc, n_col, f"the frame {p}", allow_similar_ids)
    finally:
        if thread is not None:
            thread.join()
    if frame is None:
        return None
    return frame, (None if hasher is None else {"bytes": len(data), "sha256": hasher.hexdigest()})


def _parse_plain(data: bytes, start: int, header: list, delim: str, doc: str, n_col: str, label: str,
                 allow_similar_ids: bool):
    """The :class:`Frame` of the plain text ``data[start:]`` (the lines after the header), checked,
    or None when it is not plain after all (see :func:`_read_plain_text`)."""
    size = len(data) - start
    last = data.endswith(b"\n")
    if not last:                         # a last line without its line feed: one is added
        size += 1
    # the lines, with 8 zero bytes on either side (for the 8-byte reads of _words)
    buf = np.zeros(size + 16, dtype=np.uint8)
    buf[8:8 + len(data) - start] = np.frombuffer(data, dtype=np.uint8, offset=start)
    if not last:
        buf[8 + size - 1] = 10
    b = buf[8:8 + size]
    words = _words(buf)
    ncols = len(header)
    sep = b == 10
    sep |= b == ord(delim)
    cuts = np.flatnonzero(sep)           # where every value ends: a delimiter, or the line feed after the last
    del sep
    N = cuts.size // ncols
    if N < 2 or cuts.size != N * ncols:
        return None
    cuts = cuts.reshape(N, ncols)
    # one value per column on every line: each row of cuts is ncols - 1 delimiters, then a line feed
    if np.any(b[cuts[:, -1]] != 10) or np.any(b[cuts[:, :-1]] != ord(delim)):
        return None
    line_end = cuts[:, -1]
    if int(line_end[0]) > _PLAIN_MAX_LINE or int(np.diff(line_end).max(initial=0)) > _PLAIN_MAX_LINE + 1:
        return None

    def field(i):
        if i == 0:
            begin = np.empty(N, dtype=np.int64)
            begin[0] = 0
            begin[1:] = line_end[:-1] + 1
            return begin, cuts[:, 0]
        return cuts[:, i - 1] + 1, cuts[:, i]

    id_start, id_end = field(header.index(doc))
    if np.any(id_end <= id_start) or _edge_space(b, id_start, id_end):
        return None       # a missing id, or one DuckDB's trim may blank: its reader decides
    n_start, n_end = field(header.index(n_col))
    value = _plain_sizes(b, words, n_start, n_end)
    if value is None:
        return None
    n = value.astype(float)
    # the ids as text: their bytes, each followed by the byte that ends it, cut at those bytes
    marks = np.zeros(size + 1, dtype=np.int8)
    marks[id_start] = 1
    marks[id_end] = -1
    inside = np.cumsum(marks[:-1], dtype=np.int8).view(bool)
    del marks
    inside[id_end] = True
    text = b[inside].tobytes().decode("ascii")
    del inside
    if delim != "\n":
        text = text.replace(delim, "\n")
    ids = np.fromiter(text.split("\n", N), dtype=object, count=N)   # (the last part is empty)
    _check_sizes(ids, n, label)
    if not _ids_clear(b, id_start, id_end, fold_case=not allow_similar_ids, words=words, base=8):
        _check_ids_exactly(ids, label, doc, allow_similar_ids)
    return Frame(doc=ids, n=n, label=label)


_ZEROS = np.uint64(0x3030303030303030)      # "0" in every byte
_PAST_9 = np.uint64(0x7676767676767676)     # 0x80 - 10 in every byte


def _plain_sizes(b, words, start, end):
    """The sizes ``b[start[i]:end[i]]``, each 1 to 15 decimal digits, as int64; None when one is not.
    Up to 8 digits they are read eight bytes at a time (the digits of a 64-bit word combined in
    three steps); longer ones digit by digit."""
    length = end - start
    if int(length.min()) < 1 or int(length.max()) > 15:
        return None
    if int(length.max()) <= 8:
        w = words[end]                   # the 8 bytes before ``end`` (``words`` starts 8 bytes early)
        low = _BYTE_MASKS[8 - length]    # the bytes before the value: read as "0"
        w = (w & ~low) | (_ZEROS & low)
        d = w - _ZEROS
        if np.any(((d + _PAST_9) | d) & _HIGH):   # a byte that is not a digit
            return None
        d = (d * np.uint64(10) + (d >> np.uint64(8))) & np.uint64(0x00FF00FF00FF00FF)
        d = (d * np.uint64(100) + (d >> np.uint64(16))) & np.uint64(0x0000FFFF0000FFFF)
        d = (d * np.uint64(10000) + (d >> np.uint64(32))) & np.uint64(0xFFFFFFFF)
        return d.astype(np.int64)
    zero = np.uint8(48)
    digit = b[end - 1] - zero
    bad = digit > 9
    value = digit.astype(np.int64)
    for j in range(1, int(length.max())):   # 10^j times the j-th digit from the right
        digit = b[np.maximum(end - 1 - j, 0)] - zero
        digit[length <= j] = 0
        bad |= digit > 9
        value += digit * np.int64(10 ** j)
    return None if bad.any() else value
