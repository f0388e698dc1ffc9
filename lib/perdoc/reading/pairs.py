"""Per-document sums of two systems scored on the same documents (:class:`PairTable`).

Built by :func:`perdoc.load_pairs` or :meth:`PairTable.from_rows`; compared by
:func:`perdoc.compare` (which re-exports it). It depends on the table and the errors only, so the
loaders need not import the comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import InputError, ParameterError
from ..messages import Message
from .table import DocTable, Exclusion

__all__ = ["PairTable"]


@dataclass(frozen=True)
class PairTable:
    """Per-document sums of two systems: ``n_a, s_a, q_a`` and ``n_b, s_b, q_b`` (equal n when
    paired), and ``q_d``, the sum of squared per-row differences (paired only)."""

    doc: np.ndarray
    n_a: np.ndarray
    s_a: np.ndarray
    q_a: np.ndarray
    n_b: np.ndarray
    s_b: np.ndarray
    q_b: np.ndarray
    q_d: np.ndarray | None
    names: tuple[str, str]
    paired: bool
    source: dict = field(default_factory=dict)
    exclusions: tuple[Exclusion, ...] = ()
    #: A power of two the stored sums carry, as :attr:`perdoc.DocTable.scale`: ``s_a``, ``s_b`` hold
    #: ``scale`` times the true sums and ``q_a``, ``q_b``, ``q_d`` ``scale**2`` times theirs.
    scale: float = 1.0

    @classmethod
    def build(cls, *, doc, n_a, s_a, q_a, n_b, s_b, q_b, q_d=None, names=("a", "b"), paired=True,
              source=None, exclusions=(), label="the data") -> "PairTable":
        arrays = {k: np.asarray(v, dtype=float) for k, v in
                  dict(n_a=n_a, s_a=s_a, q_a=q_a, n_b=n_b, s_b=s_b, q_b=q_b).items()}
        doc = np.asarray(doc).astype(str)
        K = doc.size
        if K < 2:
            raise InputError(f"{label}: the data have {K} document; need at least 2 documents to compare")
        if paired and not np.array_equal(arrays["n_a"], arrays["n_b"]):
            raise InputError(f"{label}: a paired comparison needs the same rows for both systems")
        if paired and q_d is None:
            raise InputError(f"{label}: a paired comparison needs q_d, the sum of squared differences")
        # each system must be a valid table on its own documents (raises with the column named)
        for tag, name in (("a", names[0]), ("b", names[1])):
            ok = arrays[f"n_{tag}"] > 0
            if ok.sum() >= 2:
                DocTable.from_arrays(n=arrays[f"n_{tag}"][ok], s=arrays[f"s_{tag}"][ok], q=arrays[f"q_{tag}"][ok],
                                     doc=doc[ok])
            else:
                raise InputError(f"{label}: column '{name}' scores fewer than 2 documents")
        return cls(doc=doc, q_d=None if q_d is None else np.asarray(q_d, dtype=float), names=tuple(names),
                   paired=paired, source=dict(source or {}), exclusions=tuple(exclusions), **arrays)

    @classmethod
    def from_rows(cls, doc, a, b, *, names=("a", "b")) -> "PairTable":
        """Build from per-row arrays (every row scored by both systems)."""
        import pandas as pd
        df = pd.DataFrame({"doc": np.asarray(doc).astype(str), "a": np.asarray(a, float), "b": np.asarray(b, float)})
        df["a2"], df["b2"], df["d2"] = df.a**2, df.b**2, (df.a - df.b) ** 2
        g = df.groupby("doc", sort=True).agg(n=("a", "size"), s_a=("a", "sum"), s_b=("b", "sum"),
                                             q_a=("a2", "sum"), q_b=("b2", "sum"), q_d=("d2", "sum"))
        return cls.build(doc=g.index.to_numpy(), n_a=g.n, s_a=g.s_a, q_a=g.q_a, n_b=g.n, s_b=g.s_b, q_b=g.q_b,
                         q_d=g.q_d, names=names, paired=True)

    @property
    def K(self) -> int:
        return int(self.doc.size)

    def system(self, which: str) -> DocTable:
        """One system's own per-document table (documents it scored)."""
        n, s, q = (self.n_a, self.s_a, self.q_a) if which == "a" else (self.n_b, self.s_b, self.q_b)
        ok = n > 0
        t = DocTable.from_arrays(n=n[ok], s=s[ok], q=q[ok], doc=self.doc[ok], source=self.source,
                                 exclusions=self.exclusions)
        return t if self.scale == 1.0 else replace(t, scale=self.scale)

    def difference(self) -> DocTable:
        """The paired difference table: ``n_d``, ``D_d = s_Ad - s_Bd``, ``q_d = sum (a - b)^2``."""
        if not self.paired:
            raise ParameterError("the difference table exists for paired data only")
        # a difference of scores is never a 0/1 metric, even when every row's difference is 0 or 1
        source = {**self.source, "binary": False}
        if "metric" in source:  # a difference of scores may be any number
            source.update(metric="score", metric_reason=Message("metric_reason.difference", "a difference of two "
                                                                "systems' scores"))
        t = DocTable.from_arrays(n=self.n_a, s=self.s_a - self.s_b, q=self.q_d, doc=self.doc,
                                 source=source, exclusions=self.exclusions)
        return t if self.scale == 1.0 else replace(t, scale=self.scale)
