"""The per-document table: one row per sampled document.

Every estimator in perdoc works on three arrays over the K sampled documents (methods.md):

* ``n[d]``: number of measurements (chunks or queries) of document d, ``n_d > 0``;
* ``s[d]``: sum of their scores, ``s_d``;
* ``q[d]``: sum of their squared scores, ``q_d`` (``q_d = s_d`` for a 0/1 metric).

``q`` is optional: only the diagnostics (ICC, design effect) and the Wald baselines need it.
When it is absent and every score sum is consistent with a 0/1 metric (``0 <= s_d <= n_d``),
perdoc assumes a binary metric (``q = s``) and says so in :attr:`DocTable.notes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..messages import Message

__all__ = ["AsciiIds", "DeferredIds", "DocTable", "Exclusion", "MAX_COUNT"]

#: The largest count (and total count N) a table may hold: 2**53, above which doubles skip integers.
MAX_COUNT = 2 ** 53


@dataclass(frozen=True)
class Exclusion:
    """Rows left out of the analysis, with the reason. Never silent: reports list these."""

    rows: int
    reason: str


class DeferredIds:
    """Document ids whose text is written only when first read: ``build()`` returns the unicode
    array (and keeps it, dropping what it was built from). The loaders give one for ids read as
    integers, already distinct and in the text order of their decimal forms; an estimate that never
    shows an id never pays for their text (at 10^6 documents, tens of milliseconds and 28 MiB)."""

    __slots__ = ("size", "_build", "_text")

    def __init__(self, size: int, build):
        self.size = int(size)
        self._build = build
        self._text = None

    def build(self) -> np.ndarray:
        if self._text is None:
            self._text = self._build()
            self._build = None
        return self._text

    def __getstate__(self):
        return {"size": self.size, "text": self.build()}

    def __setstate__(self, state):
        self.size, self._text, self._build = state["size"], state["text"], None


#: What ``str.strip()`` removes from ASCII text, and the same by byte value (the similar-ids rule).
_ASCII_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
_SPACE_BYTES = np.zeros(256, dtype=bool)
_SPACE_BYTES[[ord(c) for c in _ASCII_SPACE]] = True


class AsciiIds(DeferredIds):
    """Text ids that are all ASCII (no NUL), kept as bytes until first read: ``raw`` is a numpy
    ``S`` array in the loader's order (bytes compare as the text does), its text the unicode array
    of the same width. ``plain``: no id holds an ASCII space or an upper-case letter, so each id is
    its own key for the similar-ids check. At 10^6 sixteen-character ids the bytes take 16 MiB
    where the text takes 64 MiB (and a Python string each, 75 MiB, before it)."""

    __slots__ = ("raw", "plain")

    def __init__(self, raw: np.ndarray, plain: bool):
        super().__init__(raw.size, None)
        self.raw, self.plain = raw, bool(plain)

    def build(self) -> np.ndarray:
        if self._text is None:     # (each byte is its character's code point)
            raw, width = self.raw, self.raw.dtype.itemsize
            self._text = raw.view(np.uint8).reshape(raw.size, width).astype(np.uint32).view(
                f"U{width}").reshape(raw.size)
            self.raw = None
        return self._text

    def increasing(self) -> bool:
        """Whether the ids are in strictly increasing text order (so distinct), told from the bytes."""
        raw = self.raw if self.raw is not None else self._text
        return raw.size < 2 or bool(np.all(raw[1:] > raw[:-1]))

    def __getstate__(self):
        return {"size": self.size, "text": self.build()}

    def __setstate__(self, state):
        self.size, self._text, self._build, self.raw, self.plain = state["size"], state["text"], None, None, False


class _Ids:
    """The ``doc`` field of :class:`DocTable`: a text array to every reader; a :class:`DeferredIds`
    given to the constructor is turned into its text on the first read."""

    def __set_name__(self, owner, name):
        self.slot = "_" + name + "_ids"

    def __get__(self, obj, owner=None):
        if obj is None:
            raise AttributeError(self.slot)   # (a dataclass field without a default)
        value = obj.__dict__[self.slot]
        if isinstance(value, DeferredIds):
            value = value.build()
            obj.__dict__[self.slot] = value
        return value

    def __set__(self, obj, value):
        obj.__dict__[self.slot] = value


@dataclass(frozen=True)
class DocTable:
    """Per-document sums (doc id, n_d, s_d, q_d), sorted by document id.

    Build it with :func:`perdoc.load_chunks`, :func:`perdoc.load_docs` or :meth:`from_arrays`.
    """

    doc: np.ndarray = _Ids()   # (text; see DeferredIds)
    n: np.ndarray
    s: np.ndarray
    q: np.ndarray | None = None
    q_assumed_binary: bool = False
    source: dict = field(default_factory=dict)
    exclusions: tuple[Exclusion, ...] = ()
    attrs: dict = field(default_factory=dict)  # document-level columns, e.g. stratum, chunks_in_doc
    #: A power of two the stored sums carry: ``s`` holds ``scale * sum(score)`` and ``q`` holds
    #: ``scale**2 * sum(score**2)``. It is 1 except for scores so large (or so small) that their
    #: squares leave the double range; the loader then stores rescaled sums, and the estimators
    #: divide the scale back out (exactly, being a power of two).
    scale: float = 1.0

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_arrays(cls, n, s, q=None, doc=None, *, source: dict | None = None,
                    exclusions: tuple[Exclusion, ...] = (), attrs: dict | None = None,
                    scale: float = 1.0, assume_binary: bool = True) -> "DocTable":
        """Validate per-document arrays and build the table (rows kept in the given order).

        ``scale`` is the power of two ``s`` and ``q`` already carry (see :attr:`scale`). Counts must
        be whole numbers no larger than 2**53, as must their total N. Without ``q``, a table whose
        sums all lie in [0, n] is taken as a 0/1 metric (``q = s``) unless ``assume_binary=False``
        (the metric is known not to be 0/1) or the sums are rescaled.
        """
        scale = _check_scale(scale)
        n = _as_float_array(n, "n")
        s = _as_float_array(s, "s")
        if n.shape != s.shape:
            raise InputError(f"columns n and s must have the same length (got {n.size} and {s.size})")
        K = n.size
        if isinstance(doc, AsciiIds) and not doc.increasing():
            doc = doc.build()   # (repeated or unordered ids: checked, and worded, as text below)
        deferred = isinstance(doc, DeferredIds)
        if deferred:
            if doc.size != K:
                raise InputError(f"column doc must have one id per document (got {doc.size} ids for {K} documents)")
        else:
            doc = _doc_ids(doc, n.shape)
        if K == 0:
            raise InputError("the data have no rows: need at least 2 documents")
        _check_counts(n)
        if not np.isfinite(s).all():
            bad = int((~np.isfinite(s)).sum())
            raise InputError(f"column s: {bad} document(s) have a NaN or infinite score sum")
        if not deferred:   # (deferred ids are distinct: by construction, or checked above)
            _check_distinct(doc)
        if K < 2:
            raise InputError(f"the data have {K} document; need at least 2 documents to estimate a variance")
        q, q_assumed = _squares(q, n, s, scale=scale, assume_binary=assume_binary)
        attrs = {k: np.asarray(v) for k, v in (attrs or {}).items()}
        for k, v in attrs.items():
            if v.shape != n.shape:
                raise InputError(f"document attribute {k!r} must have one value per document")
        return cls(doc=doc, n=n, s=s, q=q, q_assumed_binary=q_assumed,
                   source=dict(source or {}), exclusions=tuple(exclusions), attrs=attrs, scale=scale)

    # ------------------------------------------------------------------ derived values
    @property
    def K(self) -> int:
        """Number of sampled documents."""
        return int(self.n.size)

    @property
    def N(self) -> float:
        """Total number of measurements, sum n_d."""
        return float(self.n.sum())

    @property
    def rate(self) -> np.ndarray:
        """Per-document rates r_d = s_d / n_d (true values: the :attr:`scale` divided out)."""
        if self.scale == 1.0:
            return self.s / self.n
        return self.s / self.scale / self.n

    @property
    def binary(self) -> bool:
        """Whether every score is 0 or 1 (as the loader saw the rows; else inferred from the sums)."""
        if "binary" in self.source:
            return bool(self.source["binary"])
        if self.q is None:
            return False
        return bool(np.all(self.q == self.s) and np.all((self.s >= 0) & (self.s <= self.n))
                    and np.all(self.s == np.round(self.s)))

    @property
    def notes(self) -> tuple[str, ...]:
        out = []
        if self.q_assumed_binary:
            out.append(Message("note.q_assumed_binary", "q (sum of squared scores) not given: scores assumed "
                               "binary, q = s"))
        elif self.q is None:
            out.append(Message("note.q_missing", "q (sum of squared scores) not given and scores are not binary: "
                               "ICC, design effect and Wald baselines are not available"))
        return tuple(out)

    def to_frame(self):
        """The table as a pandas DataFrame with columns doc, n, s, q, rate and the attributes.

        Values are true sums: ``s / scale`` and ``q / scale**2`` (see :attr:`scale`). For scores
        near the top of the double range the true ``q`` overflows to ``inf`` (and for scores near its
        bottom it may underflow to 0); it is given as it comes out.
        """
        import pandas as pd
        if self.scale == 1.0:
            s, q = self.s, self.q
        else:
            with np.errstate(over="ignore", under="ignore"):
                s = self.s / self.scale
                q = None if self.q is None else self.q / self.scale / self.scale
        df = pd.DataFrame({"doc": self.doc, "n": self.n, "s": s})
        if q is not None:
            df["q"] = q
        df["rate"] = self.rate
        for k, v in self.attrs.items():
            df[k] = v
        return df

    def write(self, path, *, doc_name: str = "doc") -> None:
        """Write the table for audit: ``.csv`` or ``.parquet`` by the file's extension (see
        :func:`perdoc.export.write_table`: true values, formula-like text cells neutralised in CSV)."""
        from .export import write_table
        write_table(self, path, doc_name=doc_name)

    def take(self, index) -> "DocTable":
        """A new table with the documents at ``index`` (used by resampling and subsetting)."""
        index = np.asarray(index)
        return DocTable(doc=self.doc[index], n=self.n[index], s=self.s[index],
                        q=None if self.q is None else self.q[index],
                        q_assumed_binary=self.q_assumed_binary, source=self.source,
                        exclusions=self.exclusions, attrs={k: v[index] for k, v in self.attrs.items()},
                        scale=self.scale)


def _doc_ids(doc, shape: tuple) -> np.ndarray:
    """The document ids as a text array, one per document (``1, 2, ...`` when none are given); a
    missing id is an InputError."""
    K = shape[0]
    if doc is None:
        doc = np.arange(1, K + 1).astype(str)
    doc = np.asarray(doc)
    if doc.shape != shape:
        raise InputError(f"column doc must have one id per document (got {doc.size} ids for {K} documents)")
    text = _text_values(doc)  # the ids as a list when they are all text (as the loaders give them)
    missing = 0 if text is not None else _missing_ids(doc)
    if missing:
        raise InputError(f"column doc: {missing} document id(s) are missing; every row needs a document id")
    # text ids convert faster when numpy is told their width (the same dtype astype(str) finds); a
    # text array is kept as given, as n and s are (a copy was 40 MiB at 10^6 ten-digit ids, and the
    # loaders' peak of memory)
    if text:
        return doc.astype(f"<U{max(1, max(map(len, text)))}")
    return doc if doc.dtype.kind == "U" else doc.astype(str)


def _check_counts(n: np.ndarray) -> None:
    """Counts must be whole numbers from 1 to 2**53, and so must their total N."""
    if not np.isfinite(n).all():
        raise InputError("column n: counts must be finite numbers")
    if (n <= 0).any():
        bad = int((n <= 0).sum())
        raise InputError(f"column n: {bad} document(s) have n <= 0; every document needs at least one measurement")
    if _any_in_blocks(lambda b: b != np.round(b), n):
        frac = n != np.round(n)
        raise InputError(f"column n: {int(frac.sum())} document(s) have a non-integer count (e.g. {n[frac][0]:g}); "
                         "n must be the whole number of chunks or queries")
    huge = n > MAX_COUNT
    if huge.any():
        raise InputError(f"column n: {int(huge.sum())} document(s) have a count above 2**53 = {MAX_COUNT:d} "
                         f"(e.g. {n[huge][0]:g}); counts must be whole numbers no larger than that")
    if n.sum() > MAX_COUNT:
        raise InputError(f"column n: the counts add up to N = {n.sum():g}, more than 2**53 = {MAX_COUNT:d}; "
                         "the total number of measurements must stay below that")


def _check_distinct(doc: np.ndarray) -> None:
    """Every document id appears once (an aggregated table has one row per document)."""
    # ids in strictly increasing order (as the loaders give them) are distinct: no sort needed
    if doc.size > 1 and not bool(np.all(doc[1:] > doc[:-1])):
        uniq, counts = np.unique(doc, return_counts=True)
        if (counts > 1).any():
            dup = str(uniq[counts > 1][0])
            raise InputError(f"column doc: document id {dup!r} appears {int(counts[counts > 1][0])} times; "
                             "an aggregated table needs one row per document")


def _squares(q, n: np.ndarray, s: np.ndarray, *, scale: float,
             assume_binary: bool) -> tuple[np.ndarray | None, bool]:
    """``(q, assumed)``: the sums of squared scores checked against ``s`` and ``n``; without them, ``s``
    itself when every sum lies in [0, n] and a 0/1 metric may be assumed (``assumed`` true)."""
    if q is None:
        if assume_binary and scale == 1.0 and np.all((s >= 0) & (s <= n)):
            return s.copy(), True
        return None, False
    q = _as_float_array(q, "q")
    if q.shape != n.shape:
        raise InputError(f"column q must have one value per document (got {q.size} for {n.size})")
    if not np.isfinite(q).all():
        raise InputError("column q: sums of squared scores must be finite")
    # Cauchy-Schwarz: sum of squares >= (sum)^2 / n, up to rounding (for q = s, as 0/1 scores give,
    # that is 0 <= s <= n); checked a block at a time, so no temporary is as long as the table
    if not (q is s and bool(np.all((s >= 0) & (s <= n)))) and _any_in_blocks(_short_squares, q, s, n):
        raise InputError("column q: a sum of squared scores is smaller than s^2/n, which no scores can give; "
                         "q must be the sum of the squared scores")
    return q, False


def _short_squares(q: np.ndarray, s: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Where ``q`` is below ``s^2 / n`` beyond rounding; where ``s^2`` overflows, the same test on
    square roots (``sqrt(q) >= |s| / sqrt(n)``), which cannot."""
    with np.errstate(over="ignore", invalid="ignore"):
        bound = s * s / n
        slack = 1e-9 * np.maximum(np.abs(q), bound) + 1e-12
        short = q < bound - slack
        wide = ~np.isfinite(bound)
        if wide.any():
            short[wide] = (np.sqrt(np.maximum(q[wide], 0.0)) * (1 + 1e-9)
                           < np.abs(s[wide]) / np.sqrt(n[wide]))
    return short


#: Elements a block of :func:`_any_in_blocks` holds: its temporaries stay in the processor's cache
#: (the checks of a 10^6-document table made whole-length temporaries, tens of MiB and of ms).
_BLOCK = 1 << 16


def _any_in_blocks(test, *arrays: np.ndarray) -> bool:
    """Whether ``test(*blocks)`` is true anywhere, taking the 1-D ``arrays`` a block at a time (and
    stopping at the first block where it is)."""
    size = arrays[0].size
    for start in range(0, size, _BLOCK):
        if bool(np.any(test(*(a[start:start + _BLOCK] for a in arrays)))):
            return True
    return False


def _check_scale(scale) -> float:
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        raise InputError(f"scale must be a power of two, got {scale!r}") from None
    if not (np.isfinite(scale) and scale > 0 and np.frexp(scale)[0] == 0.5):
        raise InputError(f"scale must be a positive power of two, got {scale!r}")
    return scale


def _text_values(doc: np.ndarray) -> list | None:
    """The ids of a one-dimensional object array as a list when every one is text (none missing),
    else None. Joining them checks that at C speed."""
    if doc.dtype.kind != "O" or doc.ndim != 1:
        return None
    values = doc.tolist()
    try:
        "".join(values)
    except TypeError:  # some id is not text (None, a number, ...)
        return None
    return values


def _missing_ids(doc: np.ndarray) -> int:
    """How many ids are missing (None, or NaN in a float or object array)."""
    if doc.dtype.kind == "f":
        return int(np.isnan(doc).sum())
    if doc.dtype.kind == "O":
        return int(np.count_nonzero(doc == None)) + int(sum(  # noqa: E711 (elementwise)
            1 for v in doc if isinstance(v, float) and v != v))
    return 0


def _as_float_array(x, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"column {name}: values must be numeric") from None
    if arr.ndim != 1:
        raise InputError(f"column {name}: expected one value per document")
    return arr
