"""Planning the design, not only K: ``perdoc plan --frame FRAME --census FILE`` (or a pilot).

For each design (simple random, size strata, PPS, a take-all stratum and SRS of the rest) and each
number of documents K on a grid, the design is simulated on a planning population over the frame
(:func:`perdoc.design_sim.simulate_design`): the census when there is one; otherwise a population made
from the pilot, every frame document given the scores of the pilot document nearest in log size
(anticipated, not observed: the table says so). Each row gives the documents, the labels (chunks
to label), the cost (``cost_doc`` per document plus ``cost_chunk`` per label), the mean half-width
of the design's leading interval and its simulated coverage. The recommendation is the cheapest
design that reaches the target half-width (or, with a label budget, the narrowest within it) among
those whose coverage holds the level within Monte Carlo error at the chosen K and at twice it (simulated
when it is off the grid): a design whose coverage falls as K grows is passed over.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError

__all__ = ["plan_designs", "planning_population", "pilot_tail", "tail_sentence"]

#: designs that give every chunk of the frame the same chance of being labelled (self-weighting): the only
#: ones recommended from a pilot that never saw the documents holding much of the frame's chunks
SELF_WEIGHTING = ("pps",)


def pilot_tail(frame, pilot, sizes=None) -> dict:
    """What a pilot cannot show about the frame: the share of the frame's chunks in documents longer
    than the pilot's longest (``share``, with ``documents_beyond`` and ``longest_pilot``), and whether
    it exceeds :data:`perdoc.reading.frame.TAIL_WARN` (``restrict``). A planning population fills those
    documents with rates borrowed from the pilot's longest ones, so a design's simulated coverage there
    rests on how the unseen documents were imagined; only a self-weighting design (:data:`SELF_WEIGHTING`)
    does not depend on it: every chunk has the same chance of being labelled, and its variance is read
    from the drawn documents themselves. ``sizes``: the pilot documents' sizes (default: ``pilot.n``)."""
    from ..reading.frame import TAIL_WARN, unseen_tail
    tail = unseen_tail(frame.n, np.asarray(pilot.n if sizes is None else sizes, dtype=float))
    return {"share": tail["sample"], "documents_beyond": tail["documents_beyond"],
            "longest_pilot": tail["longest_sampled"], "threshold": TAIL_WARN,
            "restrict": bool(tail["sample"] > TAIL_WARN), "designs": list(SELF_WEIGHTING)}


def tail_sentence(tail: dict) -> str:
    """:func:`pilot_tail`'s restriction in one English sentence (the CLI prints it; the report has it in
    its language)."""
    return (f"the pilot's longest document has {tail['longest_pilot']:,.0f} chunks, and {tail['share']:.0%} of the "
            f"frame's chunks lie in {tail['documents_beyond']:,} longer documents it never saw: how other designs "
            "fare there is only imagined, so only designs that give every chunk the same chance of being labelled "
            f"({', '.join(tail['designs'])}) are recommended")


def planning_population(frame, pilot, sizes=None):
    """A population over ``frame`` (:class:`perdoc.frame.Frame`) from a labelled ``pilot``
    (:class:`perdoc.table.DocTable` of 0/1 scores): each frame document takes a rate drawn from what
    the pilot document nearest in log size says of its own rate (a beta posterior: the pilot's hits
    and misses over a beta prior fitted to the pilot by moments, see :func:`_beta_prior`), and its
    chunks' hits are drawn with that rate (seeded). Copying the pilot's observed rates instead gives
    every frame document like an all-hit pilot document a rate of exactly 1: no variance within it,
    and designs that draw such documents look as if they could never hold their level (PPS planned at
    coverage 0.16-0.74 on a census where it holds 0.96). ``sizes``: the pilot documents' sizes when
    its rows hold a take of their chunks (default: its ``n``). Returns a DocTable of the frame's
    documents."""
    from ..reading.table import DocTable
    n = np.asarray(frame.n, dtype=float)
    pn = np.asarray(pilot.n if sizes is None else sizes, dtype=float)
    hits = np.asarray(pilot.s, dtype=float) / pilot.scale
    labelled = np.asarray(pilot.n, dtype=float)
    order = np.argsort(np.log(pn), kind="stable")
    lp = np.log(pn)[order]
    pos = np.clip(np.searchsorted(lp, np.log(n)), 0, lp.size - 1)
    left = np.clip(pos - 1, 0, lp.size - 1)
    nearest = np.where(np.abs(lp[left] - np.log(n)) <= np.abs(lp[pos] - np.log(n)), left, pos)
    rng = np.random.Generator(np.random.PCG64(20261201))
    # pilot documents of the same size are tied: each frame document takes one of them at random (the
    # first of them for all would give every frame document of that size one pilot document's rate)
    lo = np.searchsorted(lp, lp[nearest], side="left")
    hi = np.searchsorted(lp, lp[nearest], side="right")
    nearest = lo + np.floor(rng.random(n.size) * (hi - lo)).astype(np.int64)
    a, b = _beta_prior(hits, labelled)
    near = order[nearest]
    r = rng.beta(hits[near] + a, labelled[near] - hits[near] + b)
    s = rng.binomial(n.astype(np.int64), np.clip(r, 0.0, 1.0)).astype(float)
    return DocTable.from_arrays(n, s, s, doc=np.asarray(frame.doc, dtype=object).astype(str),
                                source={"path": "planning population (pilot rates by nearest log size)"})


def _beta_prior(s, n) -> tuple[float, float]:
    """``(a, b)`` of a beta distribution of document rates fitted to a pilot's hits ``s`` out of ``n``
    by moments: mean ``p`` = sum s / sum n and intra-document correlation ``rho`` from the chunk-weighted
    spread of the documents' rates (the one-way ANOVA estimator for 0/1 data), ``a + b = (1 - rho) /
    rho``. ``rho`` is kept in [0.01, 0.99] and ``p`` in [0.5 / (N + 1), 1 - 0.5 / (N + 1)], so that a
    pilot with no misses (or no hits) still leaves room for them."""
    s = np.asarray(s, dtype=float)
    n = np.asarray(n, dtype=float)
    N, K = float(n.sum()), int(n.size)
    p = min(max(float(s.sum()) / N, 0.5 / (N + 1)), 1 - 0.5 / (N + 1))
    spread = float(np.sum(n * (s / n - p) ** 2)) / (p * (1 - p))
    n0 = (N - float(np.sum(n * n)) / N) / max(K - 1, 1)
    between, within = spread / max(K - 1, 1), (N - spread) / max(N - K, 1)
    rho = (between - within) / (between + (n0 - 1) * within) if K > 1 and N > K and n0 > 0 else 0.5
    rho = min(max(rho if np.isfinite(rho) else 0.5, 0.01), 0.99)
    total = (1 - rho) / rho
    return p * total, (1 - p) * total


def plan_designs(census, *, ks=(5, 10, 20, 40), designs=("srs", "stratified", "pps", "certainty"),
                 take: int | None = None, takes=None, half_width: float | None = None, budget: float | None = None,
                 cost_doc: float = 1.0, cost_chunk: float = 1.0, reps: int = 400, seed: int = 1,
                 level: float = 0.95, basis: str = "census", chunk_scores=None, tail: dict | None = None) -> dict:
    """Simulate every design at every K on ``census`` (the planning population) and recommend one.

    ``half_width``: the target half-width of the interval; ``budget``: the most the labelling may
    cost (``cost_doc`` per drawn document plus ``cost_chunk`` per labelled chunk); give one.
    ``takes``: the takes to try (chunks labelled per drawn document; ``None`` labels whole
    documents); default ``(take,)``. With a budget, the largest K that each design and take can
    afford is simulated too, so that the budget is spent rather than rounded down to the grid.
    ``chunk_scores``: every chunk's score in the census's order (a take of a continuous metric).
    ``tail``: :func:`pilot_tail` of a pilot-made population; when it says ``restrict``, only the
    self-weighting designs may be recommended (the others are still simulated and shown)."""
    from .design_sim import check_simulation, check_take, simulate_design
    from .sampling import check_costs
    # checked once here: a value no simulation can take must not read as "not possible" on every row
    reps, seed, level = check_simulation(reps, seed, level)
    check_costs(cost_doc, cost_chunk)
    if (half_width is None) == (budget is None):
        raise ParameterError("give either --half-width (a target) or --budget (what the labels may cost)")
    for name, v in (("--half-width", half_width), ("--budget", budget)):
        if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ParameterError(f"{name} must be a positive number, got {v!r}")
    takes = (take,) if takes is None else tuple(dict.fromkeys(takes))
    for m in takes:
        check_take(m)
    grid = sorted({int(k) for k in ks if 2 <= int(k) < census.K})
    if not grid:
        raise ParameterError(f"no K on the grid fits a population of {census.K} documents")
    rows = []

    def run(design, m, k):
        try:
            res = simulate_design(census, design=design, k=k, reps=reps, seed=seed, level=level, take=m,
                                  chunk_scores=chunk_scores)
        except ParameterError as err:
            return {"design": design, "take": m, "k": k, "error": str(err)}
        lead = "micro.logit_design" if "micro.logit_design" in res["methods"] else "micro.design"
        r = res["methods"][lead]
        labels = res["labels_mean"]
        return {"design": design, "take": m, "k": k, "method": lead.split(".", 1)[1], "coverage": r["coverage"],
                "mc_se": r["mc_se"], "half_width": None if r["mean_width"] is None else r["mean_width"] / 2,
                "labels": labels, "cost": k * cost_doc + labels * cost_chunk,
                "holds": r["coverage"] >= level - 2 * r["mc_se"]}

    for design in designs:
        for m in takes:
            done = [run(design, m, k) for k in grid]
            if budget is not None:
                done += _affordable(done, run, design, m, budget=budget, cost_doc=cost_doc, cost_chunk=cost_chunk,
                                    documents=census.K)
            rows += sorted(done, key=lambda r: r["k"])
    def verify(row):   # twice the documents (or all but one), to see that the coverage does not fall
        k2 = min(2 * row["k"], census.K - 1)
        if k2 <= row["k"]:
            return None
        return {**run(row["design"], row.get("take"), k2), "check": True}

    restrict = tail is not None and tail.get("restrict")
    allowed = set(tail["designs"]) if restrict else None
    rec = _recommend(rows, half_width=half_width, budget=budget, verify=verify, allowed=allowed)
    rows.sort(key=lambda r: (designs.index(r["design"]), takes.index(r.get("take")), r["k"]))
    return {"basis": basis, "level": level, "take": take if len(takes) == 1 else None, "takes": list(takes),
            "reps": reps, "cost_doc": cost_doc, "cost_chunk": cost_chunk, "half_width_target": half_width,
            "budget": budget, "rows": rows, "recommended": rec, **({} if tail is None else {"pilot_tail": tail})}


def _affordable(done, run, design, take, *, budget, cost_doc, cost_chunk, documents):
    """The largest K whose expected cost stays within ``budget``, simulated when it is off the grid
    (labels per document read from the largest K simulated; one correction if the simulated cost
    still exceeds the budget)."""
    good = [r for r in done if "error" not in r and r["k"] > 0]
    if not good:
        return []
    ref = max(good, key=lambda r: r["k"])
    per_doc = cost_doc + cost_chunk * ref["labels"] / ref["k"]
    if per_doc <= 0:
        return []
    tried = {r["k"] for r in done}
    k = min(int(budget // per_doc), documents - 1)
    extra = []
    for _ in range(3):
        if k < 2 or k in tried:
            break
        r = run(design, take, k)
        tried.add(k)
        extra.append(r)
        if "error" in r or r["cost"] <= budget:
            break
        k = min(int(k * budget / r["cost"]), k - 1)
    return extra


def _recommend(rows, *, half_width, budget, verify=None, allowed=None):
    """The cheapest design reaching the target half-width (or the narrowest within the budget) whose
    coverage holds at the chosen K and at every larger K tried up to twice it. ``verify(row)``
    simulates the row's design and take at twice its K (a row dict, or None where that is not
    possible); a candidate whose coverage fails there is passed over, so a design whose coverage
    falls as K grows is not recommended. Smaller K do not count against a candidate: a design may fail
    with 5 documents and hold from 10 on. ``allowed``: the designs that may be recommended (None: all)."""
    def same(x, r):
        return x["design"] == r["design"] and x.get("take") == r.get("take") and "error" not in x

    def holds_from(r):
        return all(x["holds"] for x in rows if same(x, r) and r["k"] <= x["k"] <= 2 * r["k"])

    ok = []
    for r in rows:
        if "error" in r or r["half_width"] is None or not r["holds"]:
            continue
        if allowed is not None and r["design"] not in allowed:
            continue
        if half_width is not None and r["half_width"] <= half_width:
            ok.append((r["cost"], r["half_width"], r["k"], r))
        if budget is not None and r["cost"] <= budget:
            ok.append((r["half_width"], r["cost"], r["k"], r))
    for *_, best in sorted(ok, key=lambda t: t[:3]):
        if not holds_from(best):
            continue
        if verify is not None and not any(same(x, best) and x["k"] >= 2 * best["k"] for x in rows):
            extra = verify(best)
            if extra is not None:
                rows.append(extra)
                if not holds_from(best):
                    continue
        return {"design": best["design"], "k": best["k"], "take": best.get("take"), "half_width": best["half_width"],
                "coverage": best["coverage"], "mc_se": best["mc_se"], "labels": best["labels"],
                "cost": best["cost"], "method": best["method"]}
    return None
