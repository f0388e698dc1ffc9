"""A few gold labels and an automatic judge on every chunk: reading them, and the answer they give.

:func:`load_judged` reads the labelled rows (a gold score column and a judge column per chunk) and
the judge's scores on the population (a second file, ``judge_file``, one row per chunk of every
population document), or on a sample of unlabelled documents (``judge_sample``, ppi_py's setting). :func:`estimate_judged` gives the judge-assisted micro and macro means
(:mod:`perdoc.methods.ppi`) beside the labels-only ones, and which one leads: the judge-assisted
interval, or the labels-only one where the judge-assisted one has none (the judge and the gold agree
on every labelled document, so its error cannot be measured). ``benchmarks/judge_panel.py`` measures
that rule's coverage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..methods.ppi import JudgeScores, lead_ends, ppi_macro, ppi_micro
from ..methods.results import _num
from ..reading.table import DocTable

__all__ = ["JudgedSample", "JudgedDesign", "JudgeEstimates", "load_judged", "load_judged_design", "load_judged_pair",
           "estimate_judged", "corrected_table", "plan_judged"]


@dataclass(frozen=True)
class JudgedSample:
    """The labelled documents (``table``: gold sums), the judge's sum on each of them (``f``, in the
    table's order) and the judge's scores on the judged documents (``judge``)."""

    table: DocTable
    f: np.ndarray
    judge: JudgeScores
    #: rows of the judge file or of the unlabelled rows that were left out, with the reason
    judge_exclusions: tuple = ()
    #: for a paired difference of two systems (:func:`load_judged_pair`): the systems' names (A, B), and
    #: whether both gold scores lie in [0, 1] (the difference then in [-1, 1]); else None
    difference: tuple | None = None
    bounded_difference: bool = False
    #: per labelled document, the judge's sum of squares and the sum of gold times judge over its
    #: chunks (the chunk-level variance floor of :func:`perdoc.methods.ppi.ppi_micro`); None where
    #: the rows cannot be read again (data read where they live)
    gg: np.ndarray | None = None
    sg: np.ndarray | None = None
    #: the gold's sum of squares per labelled document where the table has none (a paired difference)
    q: np.ndarray | None = None


@dataclass(frozen=True)
class JudgedDesign:
    """A sample drawn by ``perdoc sample`` with gold and judge labels: the gold sums per drawn document
    (``data``, :class:`perdoc.reading.manifest.SampleData`), the judge's sum ``g``, sum of squares
    ``gg`` and the sum of gold times judge ``sg`` over the same labelled chunks, and the judge's
    scores on every population document (``judge``)."""

    data: Any
    g: np.ndarray
    gg: np.ndarray
    sg: np.ndarray
    judge: JudgeScores
    judge_exclusions: tuple = ()
    #: for a paired difference of two systems (:func:`load_judged_design_pair`): their names (A, B)
    difference: tuple | None = None
    #: each drawn document's row in ``judge`` (None: not known)
    rows: np.ndarray | None = None


def load_judged_design(labels_path, manifest_path, doc: str, score: str, judge: str, *, judge_file,
                       nonresponse: bool = False, **options) -> JudgedDesign:
    """Read a drawn sample's labels (``score`` the gold column, ``judge`` the judge's column of the same
    rows) against its manifest (``perdoc sample``), and the judge's scores on every chunk of every
    frame document (``judge_file``): the frame's documents, each with the manifest's number of chunks.
    ``options`` go to :func:`perdoc.load_chunks` for the judge file (format, ids)."""
    from ..reading.io import load_chunks
    from ..reading.manifest import META_KEYS, load_sample, manifest_meta, read_manifest, read_table_file
    if judge == score:
        raise ParameterError(f"--judge must name another column than --score (both are {score!r})")
    if judge_file is None:
        raise ParameterError("--judge with --sample needs --judge-file: the judge's scores on every chunk of every "
                             "document of the frame the sample was drawn from")
    manifest = read_manifest(manifest_path, doc, allow_similar_ids=bool(options.get("allow_similar_ids")))
    import pandas as pd
    labels = labels_path if isinstance(labels_path, pd.DataFrame) else read_table_file(labels_path, "the labels")
    name = options.pop("labels_name", labels_path)
    if judge not in labels.columns:
        raise ParameterError(f"the labels {name} have no column {judge!r} (--judge)")
    # the gold labels and the judge's scores of the same rows, matched to the manifest once
    gold = load_sample(labels, manifest, doc=doc, score=score, nonresponse=nonresponse,
                       manifest_path=str(manifest_path), labels_path=f"the labels {name}", also=(judge,))
    meta = manifest_meta(manifest_path)
    gold.info.update({k: meta[k] for k in META_KEYS if k in meta})
    judged = gold.also[judge]
    pop = load_chunks(judge_file, doc=doc, score=judge, **_judge_options(options))
    ids = np.asarray(pop.doc).astype(str)
    order = np.argsort(ids, kind="stable")
    pos = _positions(ids[order], gold.doc.astype(str), "the judge file", judge)
    pos = order[pos]
    off = np.flatnonzero(pop.n[pos] != gold.N)
    if off.size:
        i = off[0]
        raise ParameterError(f"document {gold.doc[i]!r} has {int(gold.N[i])} chunks in the manifest but "
                             f"{int(pop.n[pos][i])} in the judge file: the judge file must hold every chunk of the "
                             "frame the sample was drawn from")
    in_frame = (gold.info or {}).get("documents_in_frame")
    if in_frame is not None and int(in_frame) != pop.K:
        raise ParameterError(f"the judge file holds {pop.K:,} documents but the sample was drawn from a frame of "
                             f"{int(in_frame):,}: give the judge's scores on every document of that frame")
    scores = JudgeScores(pop.n, pop.s / pop.scale, _ff(pop), covers=True)
    return JudgedDesign(data=gold, g=judged["s"], gg=judged["q"], sg=judged["sy"], judge=scores,
                        judge_exclusions=tuple(pop.exclusions), rows=pos)


def _check_pair_columns(score: str, vs: str, judge: str, judge_vs: str | None) -> None:
    """A judge-assisted comparison's four columns: two systems' gold scores and each one's judge."""
    if score == vs:
        raise ParameterError(f"--vs must name another column than --score (both are {score!r})")
    if judge_vs is None:
        raise ParameterError("a judge-assisted comparison needs each system's judge column: --judge (for --score) "
                             "and --judge-vs (for --vs)")
    if judge_vs == judge:
        raise ParameterError(f"--judge-vs must name another column than --judge (both are {judge!r})")


def load_judged_design_pair(labels_path, manifest_path, doc: str, score: str, vs: str, judge: str, judge_vs: str,
                            *, judge_file, nonresponse: bool = False, **options) -> JudgedDesign:
    """Two systems A (gold ``score``, judge ``judge``) and B (gold ``vs``, judge ``judge_vs``) on the
    same labelled units of a drawn sample, and both judges on every chunk of the frame (``judge_file``):
    the paired difference A - B as one judged design, per chunk the gold difference and the judges'
    difference (:func:`load_judged_design` on them)."""
    import pandas as pd

    from ..reading.manifest import read_table_file
    _check_pair_columns(score, vs, judge, judge_vs)
    if judge_file is None:
        raise ParameterError("--judge with --sample needs --judge-file: both judges' scores on every chunk of every "
                             "document of the frame the sample was drawn from")
    labels = read_table_file(labels_path, "the labels")
    for flag, col in (("--score", score), ("--vs", vs), ("--judge", judge), ("--judge-vs", judge_vs)):
        if col not in labels.columns:
            raise ParameterError(f"the labels {labels_path} have no column {col!r} ({flag})")
    frame = judge_file if isinstance(judge_file, pd.DataFrame) else read_table_file(judge_file, "the judge file")
    for flag, col in (("--doc", doc), ("--judge", judge), ("--judge-vs", judge_vs)):
        if col not in frame.columns:
            raise ParameterError(f"the judge file {judge_file} has no column {col!r} ({flag})")
    num = lambda t, c: pd.to_numeric(t[c], errors="coerce").astype(float)   # noqa: E731
    gold, judged = f"{score} - {vs}", f"{judge} - {judge_vs}"
    labels = labels.assign(**{gold: num(labels, score) - num(labels, vs), judged: num(labels, judge) - num(labels, judge_vs)})
    frame = frame.assign(**{judged: num(frame, judge) - num(frame, judge_vs)})
    d = load_judged_design(labels, manifest_path, doc, gold, judged, judge_file=frame, nonresponse=nonresponse,
                           labels_name=labels_path, **options)
    return replace(d, difference=(score, vs))


def load_judged(data, doc: str, score: str, judge: str, *, judge_file=None, judge_sample=None,
                **options) -> JudgedSample:
    """Read the labelled rows of ``data`` (``score`` the gold column, ``judge`` the judge's column of
    the same rows; every labelled chunk needs both) and the judge's scores beyond them, from exactly one of:

    * ``judge_file``: rows of every population document (the ``doc`` and ``judge`` columns); the
      judge's mean over the population is then known, and the file is a frame. The labelled
      documents must be among them with the same number of chunks;
    * ``judge_sample``: rows of judged documents that were not labelled, a random sample of the
      population of their own (ppi_py's setting): the judge's mean is estimated from them.

    ``options`` go to :func:`perdoc.load_chunks` (format, metric of the gold score, ...)."""
    from ..reading.io import load_chunks
    if judge == score:
        raise ParameterError(f"--judge must name another column than --score (both are {score!r})")
    if (judge_file is None) == (judge_sample is None):
        raise ParameterError("give the judge's scores beyond the labelled rows: --judge-file (every population "
                             "document) or --judge-sample (judged documents that were not labelled), one of them")
    gold = load_chunks(data, doc=doc, score=score, **options)
    judged_rows = load_chunks(data, doc=doc, score=judge, **_judge_options(options))
    pos = _positions(judged_rows.doc, gold.doc, "the judge column", judge)
    n_j = judged_rows.n[pos]
    bad = np.flatnonzero(n_j != gold.n)
    if bad.size or judged_rows.K != gold.K:
        i = bad[0] if bad.size else None
        what = (f"document {gold.doc[i]!r}: {int(gold.n[i])} chunks have a gold {score!r} and {int(n_j[i])} a judge "
                f"{judge!r}" if i is not None else f"{judged_rows.K - gold.K} document(s) have a judge {judge!r} "
                f"but no gold {score!r}")
        raise ParameterError(f"{what}: every labelled chunk needs both (put unlabelled judged rows in --judge-sample)")
    f = judged_rows.s[pos] / judged_rows.scale
    if judge_file is not None:
        pop = load_chunks(judge_file, doc=doc, score=judge, **_judge_options(options))
        where = _positions(pop.doc, gold.doc, "the judge file", judge)
        short = np.flatnonzero(pop.n[where] != gold.n)
        if short.size:
            d = gold.doc[short[0]]
            raise ParameterError(f"document {d!r} has {int(gold.n[short[0]])} labelled chunks but "
                                 f"{int(pop.n[where][short[0]])} in the judge file: label every chunk of a "
                                 "labelled document (a sample of its chunks is not supported yet)")
        f_pop = pop.s[where] / pop.scale
        off = np.flatnonzero(np.abs(f_pop - f) > 1e-9 * np.maximum(1.0, np.abs(f)))
        if off.size:
            d = gold.doc[off[0]]
            raise ParameterError(f"document {d!r}: the judge {judge!r} sums to {f[off[0]]:g} on the labelled rows but "
                                 f"{f_pop[off[0]]:g} in the judge file: both must hold the same judge's scores")
        scores = JudgeScores(pop.n, pop.s / pop.scale, _ff(pop), covers=True)
    else:
        pop = load_chunks(judge_sample, doc=doc, score=judge, **_judge_options(options))
        both = np.intersect1d(pop.doc, gold.doc)
        if both.size:
            raise ParameterError(f"document {both[0]!r} is both labelled and in --judge-sample: the judged sample "
                                 "holds the documents that were not labelled")
        if pop.K < 2:
            raise ParameterError(f"--judge-sample holds {pop.K} document(s); at least 2 are needed")
        scores = JudgeScores(pop.n, pop.s / pop.scale, _ff(pop), covers=False)
    from ..reading.io import load_cross_sums
    sg = load_cross_sums(data, doc, score, judge, gold, **options) if judged_rows.scale == 1.0 else None
    gg = None if sg is None or judged_rows.q is None else np.asarray(judged_rows.q, dtype=float)[pos]
    return JudgedSample(table=gold, f=f, judge=scores, judge_exclusions=tuple(pop.exclusions), gg=gg,
                        sg=None if gg is None else sg)


def load_judged_pair(data, doc: str, score: str, vs: str, judge: str, judge_vs: str, *, judge_file=None,
                     judge_sample=None, **options) -> JudgedSample:
    """Two systems A (gold ``score``, judge ``judge``) and B (gold ``vs``, judge ``judge_vs``) scored on
    the same labelled rows, the judge's scores of both on the population (``judge_file``, both judge
    columns) or on unlabelled documents (``judge_sample``): the paired difference A - B as one judged
    sample, per document the gold difference ``s_A - s_B`` and the judge's ``f_A - f_B``, to which the
    prediction-powered estimators apply unchanged (pairing cancels what the systems share, and the
    judge's errors common to both cancel too)."""
    _check_pair_columns(score, vs, judge, judge_vs)
    a = load_judged(data, doc, score, judge, judge_file=judge_file, judge_sample=judge_sample, **options)
    b = load_judged(data, doc, vs, judge_vs, judge_file=judge_file, judge_sample=judge_sample, **options)
    ta, tb = a.table, b.table
    if ta.K != tb.K or not np.array_equal(ta.doc, tb.doc) or not np.array_equal(ta.n, tb.n):
        raise ParameterError(f"the systems {score!r} and {vs!r} were not scored on the same rows: a paired "
                             "comparison needs both gold scores on every labelled chunk")
    if a.judge.M != b.judge.M or not np.array_equal(a.judge.n, b.judge.n):
        raise ParameterError(f"the judge columns {judge!r} and {judge_vs!r} do not cover the same chunks: both "
                             "judges must score every chunk of the judged documents")
    sa, sb = ta.s / ta.scale, tb.s / tb.scale
    q = gg = sg = None
    if a.sg is not None and b.sg is not None and ta.q is not None and tb.q is not None:
        # the chunk-level floor's sums for the differences: sum (yA - yB)^2, sum (gA - gB)^2 and
        # sum (yA - yB)(gA - gB), from the rows' cross products
        from ..reading.io import load_cross_sums_many
        cross = load_cross_sums_many(data, doc, ((score, vs), (judge, judge_vs), (score, judge_vs), (vs, judge)), ta,
                                     **options)
        if cross is not None:
            q = ta.q / ta.scale ** 2 - 2.0 * cross[(score, vs)] + tb.q / tb.scale ** 2
            gg = a.gg - 2.0 * cross[(judge, judge_vs)] + b.gg
            sg = a.sg - cross[(score, judge_vs)] - cross[(vs, judge)] + b.sg
    table = DocTable.from_arrays(ta.n, sa - sb, doc=ta.doc, assume_binary=False,
                                 source={**ta.source, "difference": [score, vs]})
    scores = JudgeScores(a.judge.n, a.judge.f - b.judge.f, covers=a.judge.covers)
    unit = all(bool(np.all((s >= 0) & (s <= t.n))) and (t.q is None or bool(np.all(t.q / t.scale ** 2 <= s + 1e-9)))
               for s, t in ((sa, ta), (sb, tb)))
    return JudgedSample(table=table, f=a.f - b.f, judge=scores,
                        judge_exclusions=tuple(a.judge_exclusions) + tuple(b.judge_exclusions),
                        difference=(score, vs), bounded_difference=unit, gg=gg, sg=sg, q=q)


def _judge_options(options: dict) -> dict:
    """The reading options for the judge's column: its own kind of score (not the gold's metric)."""
    return {k: v for k, v in options.items() if k != "metric"}


def _ff(table: DocTable):
    return None if table.q is None else table.q / table.scale ** 2


def _positions(ids: np.ndarray, wanted: np.ndarray, where: str, judge: str) -> np.ndarray:
    """Positions in ``ids`` (sorted) of every id of ``wanted``; an id missing is an error."""
    pos = np.searchsorted(ids, wanted)
    pos = np.minimum(pos, max(ids.size - 1, 0))
    missing = np.flatnonzero((ids.size == 0) | (ids[pos] != wanted))
    if missing.size:
        raise ParameterError(f"labelled document {wanted[missing[0]]!r} has no judge score {judge!r} in {where} "
                             f"({missing.size} labelled document(s) missing)")
    return pos


@dataclass(frozen=True)
class JudgeEstimates:
    """Judge-assisted and labels-only estimates of one sample, and which interval leads per mean."""

    K: int
    judged_documents: int
    covers: bool
    level: float
    population_size: int | None
    ppi: dict                 # {"micro": result of ppi_micro, "macro": result of ppi_macro}
    labels: Any               # perdoc Estimates of the gold labels alone
    agreement: dict           # correlation of judge and gold rates by document, bias, documents that differ
    judge_mean: dict = field(default_factory=dict)
    design: dict | None = None   # a drawn sample's design (perdoc sample), else None (simple random sample)
    difference: tuple | None = None   # the systems (A, B) of a paired difference A - B, else None
    warnings: tuple = ()              # what qualifies the judge-assisted answer (the size-bias warning)

    def labels_interval(self, kind: str):
        """The labels-only interval that would lead ``kind`` (:func:`perdoc.policy.default_method`)."""
        from .policy import default_interval
        return default_interval(self.labels, kind, difference=self.difference is not None)

    def lead(self, kind: str = "micro") -> dict:
        """The leading interval of ``kind``: ``{"method", "estimate", "low", "high", "basis"}``: the
        judge-assisted one (:func:`perdoc.methods.ppi.lead_ends`), else the labels-only one."""
        ends = lead_ends(self.ppi[kind])
        if ends is not None:
            method, low, high = ends
            return {"method": f"{kind}.{method}", "estimate": self.ppi[kind]["estimate"], "low": low, "high": high,
                    "basis": "judge"}
        iv = self.labels_interval(kind)
        return {"method": f"{kind}.{iv.method}", "estimate": iv.estimate,
                "low": None if iv.ci is None else iv.ci.low, "high": None if iv.ci is None else iv.ci.high,
                "basis": "labels only"}

    def verdict(self, kind: str = "micro") -> str:
        """For a paired difference A - B, what the leading interval says (:func:`perdoc.compare.verdict`):
        ``a_higher``, ``b_higher``, ``includes_zero`` or ``no_interval``."""
        h = self.lead(kind)
        lo, hi = h["low"], h["high"]
        if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
            return "no_interval"
        return "a_higher" if lo > 0 else "b_higher" if hi < 0 else "includes_zero"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe (NaN and infinities become None)."""
        def clean(d):
            return {k: _num(v) if isinstance(v, float) else v for k, v in d.items()}

        def head(kind):   # also the interval as "ci", the key perdoc estimate's headline uses
            h = clean(self.lead(kind))
            h["ci"] = None if h["low"] is None or h["high"] is None else [h["low"], h["high"]]
            if self.difference is not None:   # as perdoc compare's headline says it
                h["verdict"] = self.verdict(kind)
            return h
        return {"K": self.K, "judged_documents": self.judged_documents, "judge_covers_population": self.covers,
                "level": self.level, "population_size": self.population_size,
                "headline": head("micro"), "headlines": {k: head(k) for k in ("micro", "macro")},
                "ppi": {k: clean(v) for k, v in self.ppi.items()}, "agreement": clean(self.agreement),
                "judge_mean": clean(self.judge_mean), "design": self.design,
                "difference": None if self.difference is None else list(self.difference),
                "warnings": list(self.warnings),
                "labels_only": self.labels.to_dict()}

    def tidy(self):
        """One row per mean and interval (judge-assisted and labels-only lead): a pandas DataFrame."""
        import pandas as pd
        rows = []
        for kind in ("micro", "macro"):
            r = self.ppi[kind]
            ends = lead_ends(r)
            method, low, high = ends or ("ppi", r["low"], r["high"])
            rows.append({"estimand": kind, "method": method, "estimate": r["estimate"], "low": low,
                         "high": high, "se": r["se"], "df": r["df"], "lam": r["lam"],
                         "effective_documents": r["effective_documents"], "leads": ends is not None})
            iv = self.labels_interval(kind)
            rows.append({"estimand": kind, "method": iv.method, "estimate": iv.estimate,
                         "low": None if iv.ci is None else iv.ci.low, "high": None if iv.ci is None else iv.ci.high,
                         "se": iv.se, "df": iv.df, "lam": 0.0, "effective_documents": float(self.K),
                         "leads": ends is None})
        return pd.DataFrame(rows)


def _population_of(sample: JudgedSample, population_size):
    """M for a judged sample: the judge file's documents when it covers the population (a population
    size given beside it must be that count, as beside a frame), else ``population_size`` as given."""
    if not sample.judge.covers:
        return population_size
    M = sample.judge.M
    if population_size is not None and not isinstance(population_size, bool) and population_size != M:
        raise ParameterError(f"population size M = {population_size} differs from the {M:,} documents of the judge "
                             "file, which covers the population; leave it out (the judge file gives M) or give "
                             "its count")
    return M


def estimate_judged(sample: JudgedSample, *, level: float = 0.95, population_size: int | None = None,
                    replicates: int = 0, seed: int | None = 1) -> JudgeEstimates:
    """The judge-assisted micro and macro means of ``sample`` (:func:`perdoc.methods.ppi.ppi_micro`,
    ``ppi_macro``; cross-fitted weights), the labels-only estimates (:func:`perdoc.estimate`), and what
    leads. ``population_size``: M, the documents the labelled ones were drawn from (finite population
    correction); with a judge file it defaults to the judged documents."""
    from .estimate import check_level, estimate
    level = check_level(level)
    if isinstance(sample, JudgedDesign):
        return _estimate_judged_design(sample, level)
    t = sample.table
    population_size = _population_of(sample, population_size)
    if sample.difference is not None:   # a paired difference: what perdoc compare estimates on it
        from .estimate import _estimate
        labels = _estimate(t, level=level, population_size=population_size, replicates=replicates, seed=seed,
                           bounds=(-1.0, 1.0) if sample.bounded_difference else None, difference=True)
    else:
        labels = estimate(t, level=level, population_size=population_size, replicates=replicates, seed=seed)
    K = t.K
    fpc = math.sqrt(1.0 - K / population_size) if population_size else 1.0
    s = t.s / t.scale
    bounded = tuple(labels.metric_range or ()) == (0.0, 1.0)   # never for a difference (in [-1, 1])
    chunks = None
    q = sample.q if sample.q is not None else (None if t.q is None or t.scale != 1.0 else np.asarray(t.q, dtype=float))
    if sample.sg is not None and sample.gg is not None and q is not None:
        chunks = (q, sample.gg, sample.sg)
    ppi = {"micro": ppi_micro(t.n, s, sample.f, sample.judge, level=level, fpc=fpc, bounded=bounded, chunks=chunks),
           "macro": ppi_macro(t.n, s, sample.f, sample.judge, level=level, fpc=fpc, bounded=bounded, chunks=chunks)}
    agreement = _agreement(s, sample.f, t.n)
    warnings = _size_warning(t.n, s, sample.f, agreement)
    judge_mean = {"micro": sample.judge.mean, "macro": sample.judge.macro_mean}
    return JudgeEstimates(K=K, judged_documents=sample.judge.M, covers=sample.judge.covers, level=level,
                          population_size=population_size, ppi=ppi, labels=labels,
                          agreement=agreement, judge_mean=judge_mean, difference=sample.difference,
                          warnings=warnings)


def _agreement(s, f, n) -> dict:
    """Judge against gold on the labelled documents: correlation of their rates, the judge's bias by
    chunks, and the documents where the sums differ."""
    r, g = s / n, f / n
    corr = float(np.corrcoef(r, g)[0, 1]) if (np.std(r) > 0 and np.std(g) > 0) else float("nan")
    return {"rate_correlation": corr, "bias": float((f.sum() - s.sum()) / n.sum()),
            "documents_differing": int(np.sum(f != s))}


#: The size-bias warning (:func:`perdoc.methods.ppi.size_bias`), with the panel's measurement behind it.
def size_warning_message(r: float, p: float):
    from ..messages import Message
    r_text, p_text = format(r, "+.2f"), format(p, ".3g")
    return Message("warning.judge_size", "the judge's error rate follows document size in the labelled documents "
                   "(correlation {r} with log size given the gold rate, p = {p}): with documents drawn at random the "
                   "judge-assisted micro interval rests on the few long documents the sample holds, and on the judge "
                   "panel such a judge left it covering about 0.82 instead of 0.95 at K = 20; draw documents in "
                   "proportion to their size (perdoc sample --design pps) and estimate with --sample, or lead with "
                   "the labels-only interval", r=r_text, p=p_text)


def _size_warning(n, s, f, agreement: dict, *, design: str | None = None, size=None) -> tuple:
    """The size-bias check, recorded in ``agreement`` (``size_correlation``, ``size_p_value``,
    ``size_flag``), and its warning when it flags a judge under a design that does not draw documents by
    size (``size``: the documents' sizes when ``n`` counts only their labelled chunks)."""
    from ..methods.ppi import size_bias
    sb = size_bias(n, s, f, size=size)
    agreement["size_correlation"], agreement["size_p_value"] = sb["correlation"], sb["p_value"]
    agreement["size_flag"] = sb["flag"]
    if sb["flag"] and design in (None, "srs"):
        return (size_warning_message(sb["correlation"], sb["p_value"]),)
    return ()


def _estimate_judged_design(sample: JudgedDesign, level: float) -> JudgeEstimates:
    """:func:`estimate_judged` for a drawn sample: design-based, :func:`perdoc.methods.ppi.ppi_design`."""
    from ..methods.ppi import ppi_design
    from ..methods.survey import design_estimate
    d = sample.data
    labels = design_estimate(d, level=level, bounded=False if sample.difference is not None else None)
    bounded = tuple(labels.metric_range or ()) == (0.0, 1.0)
    ppi = {kind: ppi_design(d, sample.g, sample.gg, sample.sg, sample.judge, kind, level=level, bounded=bounded,
                            judge_rows=sample.rows)
           for kind in ("micro", "macro")}
    agreement = _agreement(d.s, sample.g, d.m)
    warnings = _size_warning(d.m, d.s, sample.g, agreement, design=(d.info or {}).get("design"), size=d.N)
    return JudgeEstimates(K=d.K, judged_documents=sample.judge.M, covers=True, level=level,
                          population_size=sample.judge.M, ppi=ppi, labels=labels,
                          agreement=agreement, warnings=warnings, difference=sample.difference,
                          judge_mean={"micro": sample.judge.mean, "macro": sample.judge.macro_mean},
                          design={"sampling": "drawn", **labels.design})


def corrected_table(sample: JudgedSample, estimand: str = "micro") -> DocTable:
    """The pilot's gold corrected by the judge, per labelled document, as a table whose labels-only
    interval is the judge-assisted one (without the judge's own sampling error): for the micro mean
    the sums ``z_d = s_d - lambda_d (f_d - F n_d)``, for the macro mean the sums ``n_d e_d`` with
    ``e_d = r_d - lambda_d (g_d - G)`` (so its rates are ``e_d``), the weights cross-fitted as
    :func:`perdoc.methods.ppi.ppi_micro` and ``ppi_macro`` fit them. The CR2 variance of its micro
    mean is the judge-assisted micro variance, and the variance of its rates the macro one: the plan
    for the judge-assisted interval is the plan on this table."""
    from ..methods.ppi import crossfit_weights
    t = sample.table
    n = np.asarray(t.n, dtype=float)
    s = np.asarray(t.s, dtype=float) / t.scale
    f = np.asarray(sample.f, dtype=float)
    if estimand == "micro":
        lam = crossfit_weights(f, s, n)
        z = s - lam * (f - sample.judge.mean * n)
        lam_mean = float(np.sum(lam * n) / n.sum())
    elif estimand == "macro":
        r, g = s / n, f / n
        lam = crossfit_weights(g, r)
        z = n * (r - lam * (g - sample.judge.macro_mean))
        lam_mean = float(np.mean(lam))
    else:
        raise ParameterError(f"estimand must be micro or macro (got {estimand!r})")
    return DocTable.from_arrays(n, z, doc=t.doc, assume_binary=False,
                                source={"judge_corrected": estimand, "lam_mean": lam_mean})


def plan_judged(sample: JudgedSample, target: float, *, estimand: str = "micro", level: float = 0.95,
                population_size: int | None = None) -> dict:
    """How many documents to label for a judge-assisted interval of half-width ``target``, from a
    pilot labelled with the judge beside the gold: :func:`perdoc.study.plan.plan_k` on the pilot's
    judge-corrected table (:func:`corrected_table`, its spread and sizes taken as the report's
    planning section takes a study's own sample), beside the labels-only plan on the pilot's gold.
    The judge's agreement enters through the corrected spread: with gold and judge rates of
    correlation rho the spread shrinks by about ``sqrt(1 - rho^2)``. Returns ``{"judge": Plan,
    "labels_only": Plan, "estimand", "pilot_k", "notes"}``."""
    from .plan import pilot_inputs, plan_k, spread_problem
    population_size = _population_of(sample, population_size)
    from ..methods.ppi import FLOOR_DOCUMENTS
    spreads = {}
    corrected = corrected_table(sample, estimand)
    for key, table in (("labels_only", sample.table), ("judge", corrected)):
        sd, sizes, _, _ = pilot_inputs(table, estimand, own_sample=True)
        problem = spread_problem(table, estimand, sd, source="pilot")
        if problem:
            raise ParameterError(("the judge-corrected pilot: " if key == "judge" else "") + problem)
        spreads[key] = (sd, sizes)
    # the judge-assisted interval's small-sample floor (perdoc.methods.ppi._floored) at the pilot's K: the
    # plan is exact there and a little cautious beyond (the floor shrinks as 1/K)
    sd_j, sizes_j = spreads["judge"]
    sd_l = spreads["labels_only"][0]
    if corrected.source["lam_mean"] != 0.0:   # as the interval: no floor when every weight is 0
        spreads["judge"] = (math.sqrt(sd_j * sd_j + FLOOR_DOCUMENTS * sd_l * sd_l / sample.table.K), sizes_j)
    plans = {key: plan_k(sd, target, level=level, population_size=population_size, estimand=estimand, sizes=sizes)
             for key, (sd, sizes) in spreads.items()}
    notes = []
    if not sample.judge.covers:
        notes.append("the judge scored a sample of documents, not the population: the judge's own sampling error "
                     "(which more judged documents reduce) is not in the plan")
    return {"judge": plans["judge"], "labels_only": plans["labels_only"], "estimand": estimand,
            "pilot_k": sample.table.K, "notes": notes}


def judge_intervals(judged: JudgeEstimates, metric_range=None) -> tuple:
    """The judge-assisted intervals of ``judged`` as rows of a :class:`perdoc.results.Estimates`: per
    mean, ``ppi`` (t scale) and, for a metric in [0, 1], ``logit_ppi``; each with its estimate, se, df,
    the judge's weight and effective documents (``extra``), or the reason it has no interval."""
    from ..messages import Message
    from ..methods.results import ConfidenceInterval, Interval
    rows = []
    for kind in ("micro", "macro"):
        r = judged.ppi[kind]
        extra = {"lam": r["lam"], "effective_documents": r["effective_documents"], "judge": True}
        forms = [("ppi", "judge-assisted (prediction-powered, by document)", r["low"], r["high"], r["code"])]
        if "logit_code" in r:
            forms.insert(0, ("logit_ppi", "judge-assisted, on the logit scale", r["logit_low"], r["logit_high"],
                             r["logit_code"]))
        for method, label, lo, hi, code in forms:
            ok = code == 0 and math.isfinite(lo) and math.isfinite(hi)
            reason = None if ok else Message(
                "reason.judge_no_interval", "no interval: {why}",
                why=r.get("reason") or "the judge's corrected values show no spread: its errors cannot be measured")
            rows.append(Interval(estimand=kind, method=method, label=label, estimate=r["estimate"], level=judged.level,
                                 se=r["se"], df=r["df"], ci=ConfidenceInterval(lo, hi) if ok else None, reason=reason,
                                 role="alternative", extra=extra, metric_range=metric_range))
    return tuple(rows)


def with_judge(estimates, judged: JudgeEstimates):
    """``estimates`` (the labels-only ones of the same sample) with the judge-assisted rows added
    (:func:`judge_intervals`): :func:`perdoc.policy.lead` then leads with them wherever they give an
    interval, in every interface."""
    from dataclasses import replace
    return replace(estimates, intervals=tuple(estimates.intervals) + judge_intervals(judged, estimates.metric_range),
                   notes=tuple(estimates.notes) + tuple(judged.warnings))
