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

from dataclasses import dataclass

import numpy as np

from ._rows import _similar_hint, _similar_ids
from ..errors import InputError
from .table import MAX_COUNT, DocTable

__all__ = ["Frame", "FrameTotals", "read_frame", "FRAME_SIZE_COLUMN"]

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
        doc = np.asarray(doc, dtype=object).reshape(-1)
        absent = np.equal(doc, None)
        doc = np.where(absent, None, doc.astype(str)).astype(object)
        try:
            n = np.asarray(n, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise InputError(f"column '{FRAME_SIZE_COLUMN}' of {label} must hold numbers (chunks per "
                             "document)") from None
        if doc.shape != n.shape:
            raise InputError(f"{label}: one id per size is needed (got {doc.size} ids and {n.size} sizes)")
        if n.size < 2:
            raise InputError(f"{label} must list at least 2 documents (got {n.size})")
        missing = int(absent.sum())
        if missing:
            raise InputError(f"{label}: {missing} row(s) have no document id; every population document needs one")
        bad = ~np.isfinite(n) | (n < 1) | (n != np.round(n)) | (n > MAX_COUNT)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"column '{FRAME_SIZE_COLUMN}' of {label}: document {doc[i]!r} has size {n[i]:g}; "
                             "sizes must be whole numbers of chunks from 1 to 2^53")
        if float(n.sum()) > MAX_COUNT:
            raise InputError(f"column '{FRAME_SIZE_COLUMN}' of {label}: the total number of chunks exceeds 2^53")
        ids, counts = np.unique(doc.astype(str), return_counts=True)
        if ids.size != doc.size:
            dup = ids[counts > 1]
            raise InputError(f"{label}: {dup.size} document id(s) appear more than once (e.g. {str(dup[0])!r}); "
                             "a frame lists each population document once")
        _similar_ids(doc, column, label, allow_similar_ids)
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
        """Chunks in the population."""
        return float(self.totals.N)

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
    from ._rows import _plain
    from .io import _doc_expr, _open_source
    with _open_source(path, fmt) as src:
        label = f"the frame {src.label}"
        src.require(doc, n_col)
        raw, x, text = src.number(n_col)
        extra = f", CASE WHEN {raw} IS NOT NULL AND {x} IS NULL THEN {raw} END AS bad" if text else ""
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
        bad = [v for v in _plain(res["bad"], object) if v is not None]
        if bad:
            raise InputError(f"column '{n_col}' of {label}: {len(bad)} value(s) are not numbers "
                             f"(e.g. {str(bad[0])[:40]!r})")
    return Frame.from_arrays(ids, _plain(res["x"], float), label=label, allow_similar_ids=allow_similar_ids,
                             column=doc)
