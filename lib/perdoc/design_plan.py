"""Planning the design, not only K: ``perdoc plan --frame FRAME --census FILE`` (or a pilot).

For each design (simple random, size strata, PPS, a take-all stratum and SRS of the rest) and each
number of documents K on a grid, the design is simulated on a planning population over the frame
(:func:`perdoc.design_sim.simulate_design`): the census when there is one; otherwise a population made
from the pilot, every frame document given the scores of the pilot document nearest in log size
(anticipated, not observed: the table says so). Each row gives the documents, the labels (chunks
to label), the cost (``cost_doc`` per document plus ``cost_chunk`` per label), the mean half-width
of the design's leading interval and its simulated coverage. The recommendation is the cheapest
design that reaches the target half-width (or, with a label budget, the narrowest within it) among
those whose coverage holds the level within Monte Carlo error at every K tried up to it.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ParameterError

__all__ = ["plan_designs", "planning_population"]

def planning_population(frame, pilot):
    """A population over ``frame`` (:class:`perdoc.frame.Frame`) from a labelled ``pilot``
    (:class:`perdoc.table.DocTable` of 0/1 scores): each frame document takes the rate of the pilot
    document nearest in log size and its chunks' hits are drawn with that rate (seeded). Returns a
    DocTable of the frame's documents."""
    from .table import DocTable
    n = np.asarray(frame.n, dtype=float)
    pn = np.asarray(pilot.n, dtype=float)
    rate = np.asarray(pilot.s, dtype=float) / pn / pilot.scale
    order = np.argsort(np.log(pn), kind="stable")
    lp = np.log(pn)[order]
    pos = np.clip(np.searchsorted(lp, np.log(n)), 0, lp.size - 1)
    left = np.clip(pos - 1, 0, lp.size - 1)
    nearest = np.where(np.abs(lp[left] - np.log(n)) <= np.abs(lp[pos] - np.log(n)), left, pos)
    r = rate[order][nearest]
    rng = np.random.Generator(np.random.PCG64(20261201))
    s = rng.binomial(n.astype(np.int64), np.clip(r, 0.0, 1.0)).astype(float)
    return DocTable.from_arrays(n, s, s, doc=np.asarray(frame.doc, dtype=object).astype(str),
                                source={"path": "planning population (pilot rates by nearest log size)"})


def plan_designs(census, *, ks=(5, 10, 20, 40), designs=("srs", "stratified", "pps", "certainty"),
                 take: int | None = None, half_width: float | None = None, budget: float | None = None,
                 cost_doc: float = 1.0, cost_chunk: float = 1.0, reps: int = 400, seed: int = 1,
                 level: float = 0.95, basis: str = "census") -> dict:
    """Simulate every design at every K on ``census`` (the planning population) and recommend one.

    ``half_width``: the target half-width of the interval; ``budget``: the most the labelling may
    cost (``cost_doc`` per drawn document plus ``cost_chunk`` per labelled chunk); give one."""
    from .design_sim import simulate_design
    if (half_width is None) == (budget is None):
        raise ParameterError("give either --half-width (a target) or --budget (what the labels may cost)")
    for name, v in (("--half-width", half_width), ("--budget", budget)):
        if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ParameterError(f"{name} must be a positive number, got {v!r}")
    ks = sorted({int(k) for k in ks if 2 <= int(k) < census.K})
    if not ks:
        raise ParameterError(f"no K on the grid fits a population of {census.K} documents")
    rows = []
    for design in designs:
        for k in ks:
            try:
                res = simulate_design(census, design=design, k=k, reps=reps, seed=seed, level=level, take=take)
            except ParameterError as err:
                rows.append({"design": design, "k": k, "error": str(err)})
                continue
            lead = "micro.logit_design" if "micro.logit_design" in res["methods"] else "micro.design"
            m = res["methods"][lead]
            labels = res["labels_mean"]
            rows.append({"design": design, "k": k, "method": lead.split(".", 1)[1], "coverage": m["coverage"],
                         "mc_se": m["mc_se"], "half_width": None if m["mean_width"] is None else m["mean_width"] / 2,
                         "labels": labels, "cost": k * cost_doc + labels * cost_chunk,
                         "holds": m["coverage"] >= level - 2 * m["mc_se"]})
    rec = _recommend(rows, half_width=half_width, budget=budget)
    return {"basis": basis, "level": level, "take": take, "reps": reps, "cost_doc": cost_doc, "cost_chunk": cost_chunk,
            "half_width_target": half_width, "budget": budget, "rows": rows, "recommended": rec}


def _recommend(rows, *, half_width, budget):
    """The cheapest design reaching the target half-width (or the narrowest within the budget) whose
    coverage held at every K tried up to the chosen one."""
    ok = []
    for r in rows:
        if "error" in r or r["half_width"] is None:
            continue
        earlier = [x for x in rows if x["design"] == r["design"] and "error" not in x and x["k"] <= r["k"]]
        if not all(x["holds"] for x in earlier):
            continue
        if half_width is not None and r["half_width"] <= half_width:
            ok.append((r["cost"], r["half_width"], r))
        if budget is not None and r["cost"] <= budget:
            ok.append((r["half_width"], r["cost"], r))
    if not ok:
        return None
    best = min(ok, key=lambda t: (t[0], t[1]))[2]
    return {"design": best["design"], "k": best["k"], "half_width": best["half_width"], "coverage": best["coverage"],
            "labels": best["labels"], "cost": best["cost"], "method": best["method"]}
