"""Design-based estimates from a drawn sample (``perdoc estimate LABELS --sample MANIFEST.csv``).

The manifest (:mod:`perdoc.sampling`, ``perdoc sample``) lists every unit drawn with its document's
inclusion probability ``prob`` (``pi_j``), stratum, draw and, for two-stage samples, chunk. The labels
are matched to it row by row. The estimators are design-consistent: whatever relation holds between
a document's size and its score, their bias vanishes as the sample grows, because they only weight
each sampled unit by the inverse of its probability of selection.

For each drawn document j (a draw, with replacement): ``w_j = 1 / pi_j``, ``N_j`` its chunks in
the frame, ``m_j`` labelled chunks with sum ``s_j`` and sum of squares ``q_j``, ``ybar_j = s_j / m_j``.
With ``a_j = N_j`` (micro mean) or ``a_j = 1`` (macro mean), the Hajek ratio

    theta = sum_j w_j a_j ybar_j / X,   X = sum_j w_j a_j,

and its linearised variance (the multistage formula of R's ``survey`` package):

    v = sum_h (1 - f_h) k_h / (k_h - 1) sum_{j in h} (z_j - zbar_h)^2
        + sum_h f_h sum_{j in h} (1 - m_j / N_j) w_j^2 a_j^2 s2_j / (m_j X^2)

with ``z_j = w_j a_j (ybar_j - theta) / X`` and ``s2_j = (q_j - s_j^2/m_j)/(m_j - 1)``. The stage-one
sampling fraction ``f_h`` is 1 for a take-all (certainty) stratum, which then contributes only its
chunk-sampling variance (none when whole documents are labelled), ``k_h / M_h`` for documents drawn
by simple random sampling in stratum h (equal probabilities below 1), and 0 for documents drawn with
unequal probabilities: the with-replacement (Hansen-Hurwitz) form, exact for PPS with replacement and
slightly conservative for PPS without replacement, where the chunk-sampling variance is carried by
the documents' own spread (the ultimate-cluster estimator).

Degrees of freedom: documents (draws) outside take-all strata minus their strata. A stratum drawn
with one document and no take-all gives no variance estimate: then no interval, with the reason.
Oracle: ``svymean`` / ``svyratio`` on ``svydesign(ids = ~psu + chunk, strata = ~stratum, probs = ~prob,
fpc = ...)``, see ``tests/oracle/oracle3.R``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import methods as _methods
from .errors import InputError
from .results import ConfidenceInterval, Interval

__all__ = ["SampleData", "design_estimate", "stage_fractions", "load_sample", "read_manifest", "as_table",
           "from_table"]


@dataclass(frozen=True)
class SampleData:
    """One row per drawn document (per draw): the design and the labelled chunks' sums."""

    doc: np.ndarray          # document ids (text)
    draw: np.ndarray         # 1, 2, ... (with replacement), else 1
    stratum: np.ndarray      # stratum labels (text)
    prob: np.ndarray         # inclusion probability pi_j
    N: np.ndarray            # chunks of the document in the frame
    m: np.ndarray            # labelled chunks
    s: np.ndarray            # sum of labels
    q: np.ndarray            # sum of squared labels
    f: np.ndarray            # stage-one sampling fraction of the document's stratum
    notes: tuple = ()
    info: dict = field(default_factory=dict)

    @property
    def K(self) -> int:
        return int(self.doc.size)


def stage_fractions(stratum, prob, draw) -> tuple[np.ndarray, dict]:
    """Stage-one sampling fraction per drawn document, from the manifest alone: a stratum whose
    probabilities are all 1 is take-all (f = 1); one with equal probabilities below 1 and single
    draws is a simple random sample (f = k_h / M_h = pi); any other (unequal probabilities, repeated
    draws) is treated with the with-replacement form (f = 0). Returns (f, {stratum: kind})."""
    stratum = np.asarray(stratum).astype(str)
    prob = np.asarray(prob, dtype=float)
    draw = np.asarray(draw)
    if not prob.size:
        return np.zeros(0), {}
    # grouped by sorting (O(K log K)), not one pass over the sample per stratum
    names, inverse, order, starts, counts = _strata_of(stratum)
    p = prob[order]
    first = p[starts]                       # each stratum's first probability, in document order
    take_all = np.logical_and.reduceat(p == 1.0, starts)
    srs = (np.logical_and.reduceat(p == np.repeat(first, counts), starts)
           & np.logical_and.reduceat(draw[order] == 1, starts))
    f_h = np.where(take_all, 1.0, np.where(srs, first, 0.0))
    kinds = {str(h): ("take-all" if t else "simple random sample" if e else
                      "unequal probabilities (with-replacement variance)")
             for h, t, e in zip(names.tolist(), take_all.tolist(), srs.tolist())}
    return f_h[inverse], kinds


def _strata_of(stratum):
    """``(names, inverse, order, starts, counts)`` of the stratum labels: the sorted distinct names,
    each document's position among them, the documents grouped by stratum (stable: document order
    within a stratum), where each stratum's run starts in that order, and its size."""
    names, inverse = np.unique(stratum, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    counts = np.bincount(inverse, minlength=names.size)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp)
    return names, inverse, order, starts, counts


def _linearised(w, a, ybar, m, N, s2, f, stratum):
    """(theta, se, df, reason) of the Hajek ratio sum w a ybar / sum w a, see the module docstring."""
    X = float(np.sum(w * a))
    theta = float(np.sum(w * a * ybar)) / X
    z = w * a * (ybar - theta) / X
    v1 = 0.0
    psus, groups = 0, 0
    names, _, order, starts, counts = _strata_of(stratum)
    fh_all = np.asarray(f, dtype=float)[order[starts]].tolist() if names.size else []
    live = [i for i, fh in enumerate(fh_all) if not fh >= 1.0]   # not taken whole
    for i in live:
        if counts[i] < 2:
            return theta, None, None, (f"stratum {str(names[i])!r} has one drawn document: its variance cannot be "
                                       "estimated (draw at least two documents in every stratum that is not "
                                       "taken whole)")
    squares = _sum_of_squares_by_stratum(z, order, starts, counts, live)
    for i in live:   # in stratum order, as one loop over the strata adds them
        k_h, fh = int(counts[i]), fh_all[i]
        psus += k_h
        groups += 1
        v1 += (1.0 - fh) * k_h / (k_h - 1) * squares[i]
    with np.errstate(divide="ignore", invalid="ignore"):
        within = np.where((m < N) & (m >= 2), (1.0 - m / N) * (w * a) ** 2 * s2 / (m * X * X), 0.0)
    v2 = float(np.sum(f * within))
    if np.any((f > 0) & (m < N) & (m < 2)):
        return theta, None, None, ("a document with a single labelled chunk out of several gives no estimate of "
                                   "the variance within it (label at least two chunks per document)")
    v = v1 + v2
    if psus:
        df = float(max(psus - groups, 1))
    else:  # every document taken whole: only chunk sampling varies
        df = float(max(int(np.sum(np.maximum(m - 1, 0))), 1))
    if not (v > 0 and math.isfinite(v)):
        return theta, 0.0 if v == 0 else None, df, ("zero design variance: every drawn document gives the same "
                                                     "value" if v == 0 else "the design variance is not finite")
    return theta, math.sqrt(v), df, None


def _sum_of_squares_by_stratum(z, order, starts, counts, which) -> dict:
    """{stratum position: float(np.sum((z_h - z_h.mean()) ** 2))} for the strata in ``which``. The
    strata of one size are stacked and reduced together (one call per distinct size, O(K) work); each
    row is reduced as the one-dimensional ``z_h`` would be."""
    out = {}
    which = np.asarray(which, dtype=np.intp)
    if not which.size:
        return out
    sizes = counts[which]
    by_size = which[np.argsort(sizes, kind="stable")]
    for same in np.split(by_size, np.flatnonzero(np.diff(counts[by_size])) + 1):
        k = int(counts[same[0]])
        block = z[order[starts[same][:, None] + np.arange(k)]]          # (strata of size k, k)
        ss = np.sum((block - block.mean(axis=-1)[:, None]) ** 2, axis=-1)
        out.update(zip(same.tolist(), map(float, ss)))
    return out


def design_estimate(data: SampleData, *, level: float = 0.95, bounded: bool | None = None):
    """Design-based micro and macro means of ``data`` (:class:`SampleData`) with t intervals and, for
    a metric in [0, 1], logit-scale intervals; returns :class:`perdoc.results.Estimates` whose
    ``design`` block describes the design (its ``sampling`` is ``"drawn"``)."""
    from .diagnostics import diagnose
    from .estimate import check_level
    from .results import Estimates
    from . import micro as _micro
    level = check_level(level)
    alpha = 1.0 - level
    m = data.m.astype(float)
    N = data.N.astype(float)
    s, q = data.s.astype(float), data.q.astype(float)
    w = 1.0 / data.prob
    ybar = s / m
    with np.errstate(divide="ignore", invalid="ignore"):
        s2 = np.where(m >= 2, np.maximum(q - s * s / m, 0.0) / np.maximum(m - 1, 1), 0.0)
    if bounded is None:
        bounded = bool(np.all((s >= 0) & (s <= m) & (q <= s + 1e-9 * np.maximum(1, s))))
    mrange = (0.0, 1.0) if bounded else None
    intervals = []
    for kind, a in (("micro", N), ("macro", np.ones_like(N))):
        theta, se, df, reason = _linearised(w, a, ybar, m, N, s2, data.f, data.stratum.astype(str))
        label = "design-based (Hajek ratio)" if kind == "micro" else "design-based (weighted document rates)"
        intervals.append(_interval(kind, "design", label, theta, se, df, level, reason, mrange, alpha, logit=False))
        if bounded:
            intervals.append(_interval(kind, "logit_design", "design-based, on the logit scale", theta, se, df, level,
                                       reason, mrange, alpha, logit=True))
    intervals = _lead(intervals)
    diag = diagnose(m, s, q, _micro.var_cr1(m, s), unit_exp=0)
    info = {"sampling": "drawn", **data.info}
    # population_size stays None: the design's own fractions, not one fpc, apply (see ``design``)
    est = Estimates(K=data.K, N=float(m.sum()), level=level, population_size=None,
                    micro_estimate=intervals[0].estimate,
                    macro_estimate=next(iv.estimate for iv in intervals if iv.estimand == "macro"),
                    intervals=tuple(intervals), diagnostics=diag, replicates=0, seed=None,
                    notes=tuple(data.notes) + ("the simple-random-sampling methods (CR2, bootstrap, ...) ignore "
                                               "this design and are not shown",
                                               "diagnostics are computed without design weights"),
                    design=info, metric_range=mrange)
    return est


def _lead(intervals):
    """The logit-scale interval leads a bounded metric's estimand when it is available (it stays in
    [0, 1] and holds its level near 0 and 1); otherwise the plain design interval leads."""
    from dataclasses import replace
    out = []
    for iv in intervals:
        logit = next((x for x in intervals if x.estimand == iv.estimand and x.method == "logit_design"), None)
        lead = "logit_design" if logit is not None and logit.ci is not None else "design"
        out.append(replace(iv, role="primary" if iv.method == lead else "alternative"))
    return out


def _interval(kind, method, label, theta, se, df, level, reason, mrange, alpha, *, logit) -> Interval:
    common = dict(estimand=kind, method=method, label=label, estimate=theta, level=level, se=se, df=df,
                  role="primary", metric_range=mrange)
    if reason is not None or se is None:
        return Interval(**common, reason=reason or "no variance estimate")
    if logit:
        if not (0.0 < theta < 1.0):
            return Interval(**common, reason=f"the estimate is {theta:g}: the logit scale is undefined at 0 and 1 "
                                             "(the plain design interval is shown)")
        lo, hi, code, _ = _methods.logit_cr2(np.float64(theta), np.float64(se), np.float64(df), alpha, False)
    else:
        lo, hi, code = _methods.t_interval(np.float64(theta), np.float64(se), np.float64(df), alpha, False)
    if int(code) != _methods.OK:
        return Interval(**common, reason="no interval: the design variance is zero or undefined")
    return Interval(**common, ci=ConfidenceInterval(float(lo), float(hi)))


# -------------------------------------------------------------------------------- reading
MANIFEST_COLUMNS = ("stratum", "prob", "draw")


def read_manifest(path, doc: str, *, allow_similar_ids: bool = False):
    """The manifest of ``perdoc sample`` as a pandas DataFrame with columns doc, stratum, prob, draw,
    chunk (or no chunk column) and n; checked: the columns exist, probabilities lie in (0, 1] (or are
    expected draws for a with-replacement design), draws are whole and positive, no unit twice, and
    no two document ids that differ only in surrounding spaces, letter case or Unicode form (the
    data's rule) unless ``allow_similar_ids``."""
    import pandas as pd
    from .sample_io import read_table_file
    df = read_table_file(path, "the manifest")
    missing = [c for c in (doc, *MANIFEST_COLUMNS, "n") if c not in df.columns]
    if missing:
        raise InputError(f"the manifest {path} has no column {missing[0]!r}; a perdoc sample manifest has the "
                         f"columns {doc}, stratum, prob, draw, n (and chunk with --take)")
    out = pd.DataFrame({"doc": df[doc].map(_unneutralise).astype(str), "stratum": df["stratum"].astype(str)})
    from ._rows import _similar_ids
    _similar_ids(out["doc"].unique(), doc, f"the manifest {path}", allow_similar_ids)
    for col in ("prob", "draw", "n"):
        v = pd.to_numeric(df[col], errors="coerce")
        if v.isna().any():
            i = int(np.flatnonzero(v.isna().to_numpy())[0])
            raise InputError(f"the manifest {path}: column {col!r} row {i + 2} is not a number ({df[col].iloc[i]!r})")
        out[col] = v.astype(float)
    if ((out["prob"] <= 0) | ~np.isfinite(out["prob"])).any():
        raise InputError(f"the manifest {path}: column 'prob' must be positive (inclusion probabilities)")
    for col in ("draw", "n"):
        if ((out[col] < 1) | (out[col] != np.round(out[col]))).any():
            raise InputError(f"the manifest {path}: column {col!r} must hold whole numbers from 1")
    if "chunk" in df.columns:
        c = pd.to_numeric(df["chunk"], errors="coerce")
        if c.isna().any() or ((c < 0) | (c != np.round(c))).any() or (c >= out["n"]).any():
            raise InputError(f"the manifest {path}: column 'chunk' must hold chunk positions from 0 to n - 1")
        out["chunk"] = c.astype(np.int64)
    key = ["doc", "draw"] + (["chunk"] if "chunk" in out else [])
    dup = out.duplicated(key)
    if dup.any():
        r = out[dup].iloc[0]
        raise InputError(f"the manifest {path} lists the unit {tuple(r[k] for k in key)!r} twice")
    per_doc = out.groupby(["doc", "draw"]).agg(stratum=("stratum", "nunique"), prob=("prob", "nunique"),
                                               n=("n", "nunique"))
    if (per_doc > 1).any().any():
        raise InputError(f"the manifest {path}: a document's stratum, prob and n must be the same on all its rows")
    return out


def _unneutralise(v):
    """A manifest id as written: perdoc's CSV writer put ``'`` before ids a spreadsheet would run."""
    from .export import neutralise_csv_cell
    if isinstance(v, str) and v.startswith("'") and neutralise_csv_cell(v[1:]) == v:
        return v[1:]
    return v


def load_sample(labels, manifest, *, doc: str, score: str, nonresponse: bool = False,
                manifest_path: str = "the manifest", labels_path: str = "the labels") -> SampleData:
    """Match the labelled rows (a DataFrame with the ``doc`` and ``score`` columns, and ``chunk`` /
    ``draw`` when the manifest has them) to the manifest (:func:`read_manifest`), and sum them per
    drawn document. A label for a unit not in the manifest, a unit labelled twice, or a unit left
    without a label is refused with one line; with ``nonresponse=True`` unlabelled units are left
    out, counted, and the remaining documents of their stratum reweighted."""
    import pandas as pd
    if doc not in labels.columns:
        raise InputError(f"{labels_path} has no column {doc!r} (--doc)")
    if score not in labels.columns:
        raise InputError(f"{labels_path} has no column {score!r} (--score)")
    lab = pd.DataFrame({"doc": labels[doc].astype(str)})
    y = pd.to_numeric(labels[score], errors="coerce")
    if labels[score].dtype == bool:
        y = labels[score].astype(float)
    bad = y.isna() | ~np.isfinite(y.astype(float))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{labels_path}: column {score!r} row {i + 2} is not a finite number "
                         f"({labels[score].iloc[i]!r}); every drawn unit needs its label")
    lab["y"] = y.astype(float)
    has_chunk = "chunk" in manifest.columns
    lab["draw"] = pd.to_numeric(labels["draw"], errors="coerce") if "draw" in labels.columns else 1.0
    if "draw" not in labels.columns and (manifest["draw"] > 1).any():
        d = manifest.loc[manifest["draw"] > 1, "doc"].iloc[0]
        raise InputError(f"{labels_path} needs the manifest's column 'draw': document {d!r} was drawn more than "
                         "once, and each draw is labelled on its own")
    if has_chunk and "chunk" in labels.columns:
        lab["chunk"] = pd.to_numeric(labels["chunk"], errors="coerce")
        key = ["doc", "draw", "chunk"]
    else:
        key = ["doc", "draw"]
    for col in key[1:]:
        if lab[col].isna().any():
            raise InputError(f"{labels_path}: column {col!r} must hold whole numbers, as in the manifest")
    units = manifest[key].drop_duplicates() if key != ["doc", "draw"] else manifest[["doc", "draw"]]
    merged = lab.merge(units.assign(_in=True), on=key, how="left")
    extra = merged["_in"].isna()
    if extra.any():
        r = merged[extra].iloc[0]
        from ._rows import _similar_hint
        hint = _similar_hint(merged.loc[extra, "doc"].unique(), manifest["doc"].unique(), manifest_path)
        raise InputError(f"{labels_path}: {int(extra.sum())} labelled row(s) are not in {manifest_path} (e.g. "
                         f"{', '.join(f'{k}={r[k]!r}' for k in key)}); label only the units the manifest lists{hint}")
    if key[-1] == "chunk":
        dup = lab.duplicated(key)
        if dup.any():
            r = lab[dup].iloc[0]
            raise InputError(f"{labels_path}: the unit {', '.join(f'{k}={r[k]!r}' for k in key)} is labelled "
                             "twice; give one label per unit")
    per = lab.groupby(["doc", "draw"]).agg(m=("y", "size"), s=("y", "sum"), q=("y", lambda v: float(np.sum(v * v))))
    psu = (manifest.groupby(["doc", "draw"], sort=True)
           .agg(stratum=("stratum", "first"), prob=("prob", "first"), n=("n", "first"),
                want=("n", "size")).reset_index())
    if not has_chunk:
        psu["want"] = psu["n"]
    psu = psu.merge(per.reset_index(), on=["doc", "draw"], how="left")
    psu["m"] = psu["m"].fillna(0)
    over = psu["m"] > psu["want"]
    if over.any():
        r = psu[over].iloc[0]
        raise InputError(f"{labels_path}: document {r['doc']!r} has {int(r['m'])} labelled rows but the manifest "
                         f"lists {int(r['want'])} unit(s) of it; label only the units the manifest lists")
    short = psu["m"] < psu["want"]
    notes = []
    info = {}
    if short.any():
        missing_units = int((psu["want"] - psu["m"])[short].sum())
        if not nonresponse:
            r = psu[short].iloc[0]
            raise InputError(f"{labels_path}: {missing_units} unit(s) of the manifest have no label (e.g. document "
                             f"{r['doc']!r}: {int(r['m'])} of {int(r['want'])}); label them, or pass --nonresponse "
                             "to count them as nonresponse")
        gone = psu["m"] == 0
        info["nonresponse"] = {"units": missing_units, "documents": int(gone.sum())}
        notes.append(f"nonresponse: {missing_units} unit(s) of the manifest have no label ({int(gone.sum())} whole "
                     "document(s)); missing chunks are treated as missing at random within their document, missing "
                     "documents within their stratum (the others' weights are raised to make up)")
        if gone.any():
            k_h = psu.groupby("stratum")["doc"].transform("size")
            r_h = psu.assign(r=~gone).groupby("stratum")["r"].transform("sum")
            if (r_h[~gone] == 0).any():
                raise InputError("nonresponse: a stratum has no labelled document left")
            psu.loc[~gone, "prob"] = psu.loc[~gone, "prob"] * r_h[~gone] / k_h[~gone]
            psu = psu[~gone].reset_index(drop=True)
    f, kinds = stage_fractions(psu["stratum"].to_numpy(), psu["prob"].to_numpy(), psu["draw"].to_numpy())
    # a simple-random stratum's fraction counts the documents drawn, before nonresponse
    info["strata"] = {h: {"kind": kinds[h], "drawn": int((psu["stratum"] == h).sum())} for h in kinds}
    if any(k == "take-all" for k in kinds.values()):
        notes.append("documents of the take-all (certainty) stratum add no sampling variance between documents "
                     "(all of them were drawn); only their chunk subsampling, if any, adds variance")
    if any(k.startswith("unequal") for k in kinds.values()):
        notes.append("documents drawn with unequal probabilities: with-replacement (Hansen-Hurwitz) variance, exact "
                     "with replacement and slightly conservative without")
    return SampleData(doc=psu["doc"].to_numpy().astype(str), draw=psu["draw"].to_numpy().astype(np.int64),
                      stratum=psu["stratum"].to_numpy().astype(str), prob=psu["prob"].to_numpy(float),
                      N=psu["n"].to_numpy(float), m=psu["m"].to_numpy(float), s=psu["s"].to_numpy(float),
                      q=psu["q"].to_numpy(float), f=f, notes=tuple(notes), info=info)



def as_table(data: SampleData, *, source: dict | None = None):
    """The drawn sample as a :class:`perdoc.table.DocTable` (one row per drawn document, ``doc#draw``
    when a document was drawn more than once), the design in its attributes, so the report's sections
    (diagnostics, documents.csv) read it as any other table and :func:`from_table` gets it back."""
    from .table import DocTable
    repeated = bool(np.any(data.draw > 1))
    ids = [f"{d}#{r}" if repeated else str(d) for d, r in zip(data.doc, data.draw)]
    attrs = {"stratum": data.stratum.astype(str), "prob": data.prob, "chunks_in_doc": data.N,
             "draw": data.draw, "frame_doc": data.doc.astype(str), "stage_fraction": data.f}
    table = DocTable.from_arrays(data.m, data.s, data.q, doc=np.asarray(ids, dtype=object), attrs=attrs,
                                 source=dict(source or {}), assume_binary=False)
    table.source["drawn_sample"] = {"notes": list(data.notes), "info": dict(data.info)}
    return table


def from_table(table) -> SampleData:
    """The :class:`SampleData` of a table made by :func:`as_table`."""
    a = table.attrs
    extra = table.source.get("drawn_sample", {})
    return SampleData(doc=np.asarray(a["frame_doc"]).astype(str), draw=np.asarray(a["draw"]),
                      stratum=np.asarray(a["stratum"]).astype(str), prob=np.asarray(a["prob"], dtype=float),
                      N=np.asarray(a["chunks_in_doc"], dtype=float), m=np.asarray(table.n, dtype=float),
                      s=np.asarray(table.s, dtype=float) / table.scale,
                      q=np.asarray(table.q, dtype=float) / table.scale ** 2,
                      f=np.asarray(a["stage_fraction"], dtype=float), notes=tuple(extra.get("notes", ())),
                      info=dict(extra.get("info", {})))
