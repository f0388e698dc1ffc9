"""Synthetic censuses: populations of documents with chosen size inequality, intra-class
correlation, base rate, score shape and size-rate relationship.

They are what the coverage panel (``benchmarks/coverage_panel.py``) checks every interval method
on, and what a student varies to see a method fail or hold. A census is a
:class:`~perdoc.table.DocTable` of per-document sums, built from simulated chunk scores:

* sizes: ``n_d = max(1, round(median_size * exp(size_sigma * Z_d)))`` (lognormal; ``size_sigma = 0``
  gives every document ``median_size`` chunks);
* document means: ``p_d`` drawn from a Beta distribution with mean ``base_rate`` and intra-class
  correlation ``icc`` (``a + b = 1/icc - 1``), then shifted on the logit scale by
  ``size_rate_corr * z(log n_d)`` so that larger documents score higher (positive) or lower
  (negative);
* chunk scores: ``binary`` draws 0/1 with probability ``p_d``; ``continuous`` draws from a Beta
  distribution with mean ``p_d`` and precision ``precision`` (scores in (0, 1); a small base rate
  gives right-skewed scores, a large one left-skewed).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..errors import ParameterError
from ..reading.table import DocTable

__all__ = ["CensusSpec", "synthetic_census", "synthetic_chunk_scores", "synthetic_pairs"]


@dataclass(frozen=True)
class CensusSpec:
    """The knobs of a synthetic census (see the module docstring)."""

    documents: int = 1000
    median_size: float = 4.0
    size_sigma: float = 1.0
    icc: float = 0.2
    base_rate: float = 0.3
    size_rate_corr: float = 0.0
    metric: str = "binary"
    precision: float = 5.0
    seed: int = 1

    def label(self) -> str:
        return (f"{self.metric}, M={self.documents}, sizes lognormal sigma {self.size_sigma:g}, "
                f"ICC {self.icc:g}, base rate {self.base_rate:g}, size-rate {self.size_rate_corr:+g}")

    def to_dict(self) -> dict:
        return asdict(self)


def synthetic_census(spec: CensusSpec | None = None, **knobs) -> DocTable:
    """A census drawn from ``spec`` (or from :class:`CensusSpec` built from ``knobs``)."""
    spec = spec or CensusSpec(**knobs)
    if spec.documents < 2:
        raise ParameterError(f"documents must be at least 2 (got {spec.documents})")
    if not 0 < spec.icc < 1:
        raise ParameterError(f"icc must be strictly between 0 and 1 (got {spec.icc})")
    if not 0 < spec.base_rate < 1:
        raise ParameterError(f"base_rate must be strictly between 0 and 1 (got {spec.base_rate})")
    if spec.metric not in ("binary", "continuous"):
        raise ParameterError(f"metric must be binary or continuous (got {spec.metric!r})")
    if spec.size_sigma < 0 or spec.median_size < 1 or spec.precision <= 0:
        raise ParameterError("size_sigma must be >= 0, median_size >= 1 and precision > 0")
    n, doc_of_chunk, pc, x = _draw(spec)
    M = n.size
    s = np.bincount(doc_of_chunk, weights=x, minlength=M)
    q = np.bincount(doc_of_chunk, weights=x * x, minlength=M)
    if spec.metric == "binary":
        q = s.copy()
    doc = np.array([f"d{i:06d}" for i in range(M)])
    return DocTable.from_arrays(n.astype(float), s, q, doc,
                                source={"synthetic": spec.to_dict(), "binary": spec.metric == "binary"})


def _scores(rng, pc, spec: CensusSpec):
    """One score per chunk with the chunk's document mean ``pc``: 0/1 or Beta with precision ``spec.precision``."""
    if spec.metric == "binary":
        return (rng.random(pc.size) < pc).astype(float)
    k = spec.precision
    return rng.beta(np.maximum(pc * k, 1e-3), np.maximum((1 - pc) * k, 1e-3))


def _draw(spec: CensusSpec):
    """Sizes, each chunk's document, each chunk's document mean and the chunk scores of ``spec``
    (one random stream seeded by ``spec.seed``, so a census can be redrawn chunk by chunk)."""
    rng = np.random.default_rng(spec.seed)
    M = int(spec.documents)
    n = np.maximum(1, np.round(spec.median_size * np.exp(spec.size_sigma * rng.standard_normal(M)))).astype(np.int64)
    ab = 1.0 / spec.icc - 1.0
    p = rng.beta(spec.base_rate * ab, (1 - spec.base_rate) * ab, M)
    if spec.size_rate_corr:
        ln = np.log(n)
        z = (ln - ln.mean()) / ln.std() if ln.std() > 0 else np.zeros(M)
        p = np.clip(p, 1e-9, 1 - 1e-9)
        p = 1.0 / (1.0 + np.exp(-(np.log(p / (1 - p)) + spec.size_rate_corr * z)))
    doc_of_chunk = np.repeat(np.arange(M), n)
    pc = p[doc_of_chunk]
    return n, doc_of_chunk, pc, _scores(rng, pc, spec)


def synthetic_pairs(spec: CensusSpec | None = None, *, effect: float = 0.05, agreement: float = 0.7,
                    **knobs):
    """A paired census: system A scored as :func:`synthetic_census` draws it, system B on the same
    chunks. B copies A's score with probability ``agreement`` (exact ties, as two retrievers that
    mostly agree), and is otherwise drawn afresh with the document mean shifted by ``-effect`` on
    the probability scale (A better by about ``effect``). Returns a :class:`perdoc.pairs.PairTable`."""
    from ..reading.pairs import PairTable
    spec = spec or CensusSpec(**knobs)
    if not 0 <= agreement <= 1:
        raise ParameterError(f"agreement must be in [0, 1] (got {agreement})")
    a = synthetic_census(spec)
    rng = np.random.default_rng(spec.seed + 1_000_003)
    _, doc_of_chunk, pc, xa = _draw(spec)   # A's chunk scores, to pair B with them chunk by chunk
    M = a.K
    fresh = _scores(rng, np.clip(pc - effect, 1e-6, 1 - 1e-6), spec)
    xb = np.where(rng.random(pc.size) < agreement, xa, fresh)
    sums = lambda w: np.bincount(doc_of_chunk, weights=w, minlength=M)  # noqa: E731
    return PairTable.build(doc=a.doc, n_a=a.n, s_a=sums(xa), q_a=sums(xa * xa), n_b=a.n, s_b=sums(xb),
                           q_b=sums(xb * xb), q_d=sums((xa - xb) ** 2), names=("A", "B"), paired=True,
                           source={"synthetic": spec.to_dict(), "effect": effect, "agreement": agreement},
                           label="the synthetic census")


def synthetic_chunk_scores(spec: CensusSpec | None = None, **knobs) -> np.ndarray:
    """Every chunk's score of :func:`synthetic_census` (same ``spec``), document after document in the
    census's order: what :func:`perdoc.design_sim.simulate_design` needs to simulate a take of a
    continuous metric."""
    spec = spec or CensusSpec(**knobs)
    return _draw(spec)[3]
