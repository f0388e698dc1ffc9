"""Design panel: the coverage panel extended with designs (what ``perdoc plan --frame`` recommends).

    python benchmarks/design_panel.py [--quick] [--jobs 2] [--reps 1000] [--plan-reps 300]
        [--censuses 'apipop.*,synthetic.1[3-9]'] [--takes none,5,20] [--out DIR]

Target, on every single-system census of the coverage panel (``benchmarks/coverage_panel.py``: the
synthetic censuses and the real ones of ``benchmarks/censuses/``; the paired censuses are skipped, and
``benchmarks/heldout/`` is not touched -- those censuses are held out from tuning):

    With a frame, the design and interval that ``perdoc plan`` recommends, at a label budget no
    larger than all the chunks of 20 SRS documents (budget = 20 x mean chunks per document,
    cost_doc = 0, cost_chunk = 1), covers >= 0.94 (0/1 and continuous metrics, rates near 0 and 1
    included), and its coverage does not fall as K grows.

For each census:

1. plan: :func:`perdoc.design_plan.plan_designs` at that budget over the designs, the K grid and the
   takes (whole documents and m chunks per document), once with the census itself as the planning
   population (basis ``census``) and, for a 0/1 metric, once from a pilot (basis ``pilot``: a seeded
   SRS of 20 census documents turned into a planning population over the frame by
   :func:`perdoc.design_plan.planning_population`; a continuous census has no pilot variant, the
   planning population being defined for 0/1 scores only);
2. evaluate: the recommended design, take and interval simulated on the census with fresh seeds
   (``--reps`` samples) at the recommended K, and at 2K and 4K while below half the documents;
3. reference: the logit CR2 interval under SRS of K = 20 whole documents (the same budget), read from
   ``benchmarks/coverage_panel.json`` (or simulated when the census is not there).

Verdict per row: every evaluated K covers at least 0.94 - 2 MC SE, and no larger K covers less than a
smaller one by more than 3 combined MC SE. Writes ``design_panel.json`` (every number, the plan's
rows included) and ``design_panel.md`` (the table).

The script works with either form of ``plan_designs``: with ``takes=`` (a list of takes, rows and the
recommendation carrying ``take``) or with a single ``take=`` (then it is called once per take and the
narrowest recommendation within the budget is kept, as ``plan_designs`` would choose).
"""

from __future__ import annotations

import argparse
import fnmatch
import inspect
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

TARGET = 0.94
LEVEL = 0.95
SRS_DOCS = 20               # the budget: all the chunks of this many SRS documents
PILOT_DOCS = 20             # documents in the pilot of the ``pilot`` basis
KS = (5, 10, 20, 40)        # perdoc plan's default grid
TAKES = (None, 5, 20)         # whole documents, 5 or 20 chunks per document (10 adds ~1/3 to the run time)
DESIGNS = ("srs", "stratified", "pps", "certainty")
PLAN_SEED = 1
PILOT_SEED = 20261202
EVAL_SEED = 7_000_001        # evaluation seeds differ from the planning seeds
REF_METHOD = "micro.logit_cr2"


# ------------------------------------------------------------------------------------ censuses
def panel_censuses(quick=False):
    """(name, label, source) for every single-system census of the coverage panel (no paired ones).
    Quick: one synthetic and one real census."""
    from coverage_panel import censuses
    items = [(n, lab, src) for n, lab, src in censuses(quick=quick) if src[0] != "pairs"]
    if quick:
        items = [x for x in items if x[2][0] == "synthetic"][:1] + [x for x in items if x[2][0] == "real"][:1]
    return items


def heldout_censuses(folder="heldout"):
    """(name, label, source) for the held-out censuses (``benchmarks/heldout/``, or another folder of
    ``benchmarks/`` built the same way, e.g. ``heldout2``): every census with each of its scores.
    Evaluated only with ``--heldout``, after the rules were set; no tuning decision reads them."""
    meta = json.loads((HERE / folder / "censuses.json").read_text())
    out = []
    for c in meta["censuses"]:
        for score, st in c["scores"].items():
            label = (f"{c['kind']}: {score}, {c['documents']:,} documents, size CV {c['size_cv']:.1f}, "
                     f"mean {st['micro_mean']:.2f}")
            out.append((f"{c['name']}.{score}", label, ("heldout", c["file"], score)
                        + (() if folder == "heldout" else (folder,))))
    return out


def load_census(source):
    if source[0] == "heldout":
        from perdoc.io import load_chunks
        return load_chunks(HERE / (source[3] if len(source) > 3 else "heldout") / source[1], doc="doc",
                           score=source[2])
    from coverage_panel import load
    return load(source)


def chunk_scores_for(source, census):
    """Every chunk's score, document after document in the census's order, for a continuous census
    (None for a 0/1 one: its takes are hypergeometric from the sums). Checked against the sums."""
    if census.binary:
        return None
    if source[0] == "synthetic":
        from perdoc.synthetic import synthetic_chunk_scores
        x = np.asarray(synthetic_chunk_scores(source[1]), dtype=float)
    elif source[0] in ("real", "heldout"):
        import pandas as pd
        file, col = source[1], source[2]
        path = (HERE / "censuses" / f"{file}.csv.gz" if source[0] == "real"
                else HERE / (source[3] if len(source) > 3 else "heldout") / file)
        df = pd.read_csv(path, usecols=["doc", col], dtype={"doc": str})
        pos = {d: i for i, d in enumerate(np.asarray(census.doc).astype(str).tolist())}
        where = df["doc"].map(pos)
        if where.isna().any():
            raise ValueError(f"{file}.csv.gz: {int(where.isna().sum())} rows whose document is not in the census")
        order = np.argsort(where.to_numpy(dtype=np.int64), kind="stable")
        x = df[col].to_numpy(dtype=float)[order]
    else:
        return None
    n = np.asarray(census.n, dtype=np.int64)
    if x.size != int(n.sum()):
        raise ValueError(f"{x.size} chunk scores for a census of {int(n.sum())} chunks")
    starts = np.concatenate([[0], np.cumsum(n)[:-1]])
    s = np.asarray(census.s, dtype=float) / census.scale
    if not np.allclose(np.add.reduceat(x, starts), s, rtol=1e-9, atol=1e-9):
        raise ValueError("chunk scores do not add up to the census's per-document sums")
    return x * census.scale


def pilot_table(census, docs=PILOT_DOCS, seed=PILOT_SEED):
    """A seeded SRS of ``docs`` census documents, as a DocTable (the labelled pilot)."""
    from perdoc.table import DocTable
    rng = np.random.Generator(np.random.PCG64(seed))
    idx = np.sort(rng.choice(census.K, size=min(docs, census.K), replace=False))
    q = None if census.q is None else np.asarray(census.q)[idx]
    return DocTable.from_arrays(np.asarray(census.n)[idx], np.asarray(census.s)[idx], q,
                                doc=np.asarray(census.doc).astype(str)[idx], scale=census.scale,
                                source={"path": "pilot: SRS of the census"})


# ------------------------------------------------------------------------------------ planning
def plan_api():
    """Which form of plan_designs is installed: its keyword parameters."""
    from perdoc.design_plan import plan_designs
    return set(inspect.signature(plan_designs).parameters)


def plan(census, *, budget, ks, takes, designs, reps, seed, basis, chunk_scores=None, tail=None):
    """plan_designs at ``budget`` (labels: cost_doc 0, cost_chunk 1) over ``takes``, whichever form is
    installed. Returns (result, api), result['recommended'] carrying 'take'."""
    from perdoc.design_plan import plan_designs
    params = plan_api()
    continuous_takes_ok = chunk_scores is None or "chunk_scores" in params
    if chunk_scores is not None and not continuous_takes_ok:
        takes = tuple(t for t in takes if t is None) or (None,)
    base = dict(ks=tuple(ks), designs=tuple(designs), budget=float(budget), cost_doc=0.0, cost_chunk=1.0,
                reps=int(reps), seed=int(seed), level=LEVEL, basis=basis)
    if chunk_scores is not None and "chunk_scores" in params:
        base["chunk_scores"] = chunk_scores
    if tail is not None and "tail" in params:
        base["tail"] = tail
    if "takes" in params:
        res = plan_designs(census, takes=tuple(takes), **base)
        rec = res.get("recommended")
        if rec is not None and "take" not in rec:
            rec["take"] = res.get("take")
        return res, "takes"
    # older form: one call per take; the affordable SRS K of each take added to the grid
    n = np.asarray(census.n, dtype=float)
    rows, recs, calls = [], [], []
    for t in takes:
        per_doc = float(np.mean(n if t is None else np.minimum(n, t)))
        k_max = int(budget // per_doc)
        grid = sorted({k for k in (*ks, k_max) if 2 <= k < census.K})
        if not grid:
            continue
        res = plan_designs(census, take=t, **{**base, "ks": tuple(grid)})
        calls.append({"take": t, "ks": grid})
        for r in res["rows"]:
            rows.append({**r, "take": t})
        if res["recommended"] is not None:
            recs.append({**res["recommended"], "take": t})
    rec = min(recs, key=lambda r: (r["half_width"], r["cost"])) if recs else None
    return {"basis": basis, "level": LEVEL, "takes": list(takes), "reps": reps, "cost_doc": 0.0, "cost_chunk": 1.0,
            "budget": float(budget), "rows": rows, "recommended": rec, "calls": calls}, "take"


# ------------------------------------------------------------------------------------ evaluation
def evaluate(census, rec, *, reps, seed, chunk_scores=None, multiples=(1, 2, 4)):
    """The recommended design, take and method simulated on the census at K, 2K, 4K (2K and 4K only
    while below half the documents), with fresh seeds."""
    from perdoc.design_sim import simulate_design
    method = "micro." + rec["method"]
    opts = dict(rec.get("options") or {})
    out = []
    for j, mult in enumerate(multiples):
        k = int(rec["k"]) * mult
        if mult > 1 and not k < census.K / 2:
            break
        if k >= census.K:
            break
        t0 = time.perf_counter()
        kw = {}
        if chunk_scores is not None and rec.get("take") is not None:
            kw["chunk_scores"] = chunk_scores
        res = simulate_design(census, design=rec["design"], k=k, reps=reps, seed=seed + j, level=LEVEL,
                              take=rec.get("take"), **kw, **opts)
        m = res["methods"].get(method) or {}
        out.append({"multiple": mult, "k": k, "method": method, "coverage": m.get("coverage"),
                    "mc_se": m.get("mc_se"), "mean_width": m.get("mean_width"), "miss_low": m.get("miss_low"),
                    "miss_high": m.get("miss_high"), "no_interval": m.get("no_interval"),
                    "labels": res["labels_mean"], "seed": seed + j, "seconds": time.perf_counter() - t0,
                    "others": {name: {"coverage": v["coverage"], "mc_se": v["mc_se"], "mean_width": v["mean_width"]}
                               for name, v in res["methods"].items() if name.startswith("micro.")}})
    return out


def srs_reference(name, census, *, reps, seed, panel_json=HERE / "coverage_panel.json"):
    """logit CR2 under SRS of 20 whole documents: from coverage_panel.json, else simulated."""
    if panel_json is not None and Path(panel_json).exists():
        try:
            data = json.loads(Path(panel_json).read_text())
            for r in data.get("results", []):
                if r.get("census") == name and r.get("k") == SRS_DOCS and REF_METHOD in r.get("methods", {}):
                    m = r["methods"][REF_METHOD]
                    return {"method": REF_METHOD, "k": SRS_DOCS, "coverage": m["coverage"], "mc_se": m["mc_se"],
                            "mean_width": m.get("mean_width"), "reps": data.get("meta", {}).get("reps"),
                            "source": "coverage_panel.json"}
        except (ValueError, KeyError, TypeError):
            pass
    if SRS_DOCS >= census.K:
        return None
    from perdoc.simulate import simulate
    d = simulate(census, k=SRS_DOCS, reps=reps, seed=seed, level=LEVEL, replicates=0, frame=True).to_dict()
    m = d["methods"].get(REF_METHOD)
    if m is None:
        return None
    return {"method": REF_METHOD, "k": SRS_DOCS, "coverage": m["coverage"], "mc_se": m["mc_se"],
            "mean_width": m.get("mean_width"), "reps": reps, "source": "simulated"}


def verdict(evals, target=TARGET):
    """Pass when every evaluated K covers >= target - 2 MC SE and coverage does not fall by more than
    3 combined MC SE from any smaller K to a larger one."""
    if not evals:
        return {"pass": False, "covers": False, "not_falling": False, "reason": "no recommendation"}
    low = [e for e in evals if e["coverage"] is None or e["coverage"] < target - 2 * e["mc_se"]]
    falls = []
    for i, a in enumerate(evals):
        for b in evals[i + 1:]:
            if a["coverage"] is None or b["coverage"] is None:
                continue
            if b["coverage"] < a["coverage"] - 3 * math.hypot(a["mc_se"], b["mc_se"]):
                falls.append((a["k"], b["k"]))
    reasons = []
    if low:
        reasons.append("below target at K = " + ", ".join(str(e["k"]) for e in low))
    cov = {e["k"]: e for e in evals}
    if falls:
        reasons.append("falls " + ", ".join(f"{cov[a]['coverage']:.3f}@{a} -> {cov[b]['coverage']:.3f}@{b}"
                                            for a, b in falls))
    # a fall from over-coverage that ends at the level (>= level - 2 MC SE) is still a fall by the target's
    # rule, but not a loss of coverage: said apart
    to_level = bool(falls) and all(cov[b]["coverage"] >= LEVEL - 2 * cov[b]["mc_se"] for _, b in falls)
    if to_level:
        reasons.append(f"the fall ends at the level ({LEVEL} - 2 MC SE or above)")
    return {"pass": not low and not falls, "covers": not low, "not_falling": not falls,
            "fall_to_level": to_level, "reason": "; ".join(reasons)}


def no_recommendation_reason(plan_result) -> str:
    """Why the plan recommended nothing: per design and take, the first K whose coverage did not hold
    (the recommender needs it to hold at every K up to the chosen one), and its coverage."""
    first = {}
    for r in plan_result.get("rows", []):
        key = (r["design"], r.get("take"))
        if "error" in r:
            first.setdefault(key, (r["k"], None))
        elif not r["holds"]:
            if key not in first or r["k"] < first[key][0]:
                first[key] = (r["k"], r["coverage"])
    if not first:
        return "no cell within the budget"
    ks = sorted({v[0] for v in first.values()})
    parts = []
    for k in ks:
        cells = [(d, t, c) for (d, t), (kk, c) in first.items() if kk == k]
        covs = [c for *_, c in cells if c is not None]
        parts.append(f"{len(cells)} design/take pairs first fail at K = {k}"
                     + (f" (coverage {min(covs):.3f}-{max(covs):.3f})" if covs else " (error)"))
    return "; ".join(parts)


# ------------------------------------------------------------------------------------ one census
def run_census(job) -> dict:
    """Plan, evaluate and judge one census on one basis. ``job``: dict with name, label, source, basis
    ('census' or 'pilot'), ks, takes, designs, plan_reps, reps, seed, ref_reps."""
    name, label, source, basis = job["name"], job["label"], job["source"], job["basis"]
    t0 = time.perf_counter()
    census = load_census(source)
    n = np.asarray(census.n, dtype=float)
    budget = SRS_DOCS * float(n.mean())
    out = {"census": name, "label": label, "basis": basis, "documents": int(census.K), "chunks": int(n.sum()),
           "binary": bool(census.binary), "mean_size": float(n.mean()), "budget": budget,
           "truth": float(np.asarray(census.s, dtype=float).sum() / census.scale / n.sum())}
    scores = chunk_scores_for(source, census)
    # a take of at least the largest document labels whole documents: the same design as no take
    takes = tuple(t for t in job["takes"] if t is None or t < n.max())
    if None not in takes and len(takes) < len(job["takes"]):
        takes = (None, *takes)
    out["takes"] = list(takes)
    out["takes_dropped"] = [t for t in job["takes"] if t not in takes]
    if basis == "pilot":
        if not census.binary:
            return {**out, "skipped": "no pilot variant for a continuous metric (planning_population takes 0/1 "
                                      "pilot scores)", "seconds": time.perf_counter() - t0}
        from perdoc.design_plan import planning_population
        from perdoc.frame import Frame
        frame = Frame.from_arrays(np.asarray(census.doc).astype(str), n, allow_similar_ids=True)
        pilot = pilot_table(census, seed=PILOT_SEED + job["seed"])
        population = planning_population(frame, pilot)
        try:
            from perdoc.design_plan import pilot_tail
            tail = pilot_tail(frame, pilot)
        except ImportError:     # an older perdoc: no pilot rule
            tail = None
        out["pilot_tail"] = tail
        plan_scores = None
    else:
        population, plan_scores, tail = census, scores, None
    t1 = time.perf_counter()
    res, api = plan(population, budget=budget, ks=job["ks"], takes=takes, designs=job["designs"],
                    reps=job["plan_reps"], seed=PLAN_SEED + job["seed"] - 1, basis=basis, chunk_scores=plan_scores,
                    tail=tail)
    out["plan_seconds"] = time.perf_counter() - t1
    out["plan_api"] = api
    out["plan"] = res
    rec = res.get("recommended")
    out["recommended"] = rec
    t2 = time.perf_counter()
    out["evaluation"] = [] if rec is None else evaluate(census, rec, reps=job["reps"],
                                                        seed=EVAL_SEED + 1000 * job["seed"], chunk_scores=scores)
    out["eval_seconds"] = time.perf_counter() - t2
    out["verdict"] = verdict(out["evaluation"])
    if rec is None:
        out["verdict"]["reason"] = "no recommendation: " + no_recommendation_reason(res)
    out["reference"] = srs_reference(name, census, reps=job.get("ref_reps", job["reps"]), seed=EVAL_SEED + 999,
                                     panel_json=job.get("panel_json", HERE / "coverage_panel.json"))
    out["seconds"] = time.perf_counter() - t0
    return _clean(out)


def _clean(x):
    """JSON-safe: numpy scalars to Python, NaN/inf to None."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_clean(v) for v in x.tolist()]
    if isinstance(x, (np.bool_,)):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    return x


def merge_rerun(panel_json, rerun_jsons, note):
    """Replace the rows of ``panel_json`` whose (census, basis) a later partial run (``rerun_jsons``, in
    order: a later one wins) evaluated again, each row marked with the run it came from; ``note`` says
    what changed in between. Rewrites the JSON and the table."""
    data = json.loads(Path(panel_json).read_text())
    key = lambda r: (r["census"], r["basis"])  # noqa: E731
    index = {key(r): i for i, r in enumerate(data["results"])}
    for path in rerun_jsons:
        for r in json.loads(Path(path).read_text())["results"]:
            r["run"] = Path(path).parent.name
            if key(r) in index:
                data["results"][index[key(r)]] = r
            else:
                index[key(r)] = len(data["results"])
                data["results"].append(r)
    data["meta"]["reruns"] = note
    Path(panel_json).write_text(json.dumps(_clean(data), indent=1) + "\n")
    table = markdown(data["results"], data["meta"])
    Path(panel_json).with_suffix(".md").write_text(table + "\n")
    return table


def jobs_for(items, *, quick=False, reps=None, plan_reps=None, takes=TAKES, ks=KS, designs=DESIGNS, seed=1,
             bases=("census", "pilot")):
    reps = reps or (100 if quick else 1000)
    plan_reps = plan_reps or (60 if quick else 300)
    out = []
    for name, label, source in items:
        for basis in bases:
            out.append({"name": name, "label": label, "source": source, "basis": basis, "ks": tuple(ks),
                        "takes": tuple(takes), "designs": tuple(designs), "plan_reps": plan_reps, "reps": reps,
                        "ref_reps": reps, "seed": seed})
    return out


def run_panel(jobs, *, workers=2, log=sys.stderr):
    """Every job, in order (ProcessPoolExecutor with ``workers`` processes; 1 runs in this process)."""
    results = [None] * len(jobs)
    if workers <= 1:
        for i, job in enumerate(jobs):
            results[i] = run_census(job)
            _progress(results[i], i + 1, len(jobs), log)
        return results
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futs = {pool.submit(run_census, job): i for i, job in enumerate(jobs)}
        for done, fut in enumerate(as_completed(futs), 1):
            i = futs[fut]
            results[i] = fut.result()
            _progress(results[i], done, len(jobs), log)
    return results


def _progress(r, i, total, log):
    if log is None:
        return
    if r.get("skipped"):
        print(f"[{i}/{total}] {r['census']} ({r['basis']}): skipped", file=log, flush=True)
        return
    rec = r.get("recommended")
    what = "no recommendation" if rec is None else (
        f"{rec['design']} take={rec.get('take')} K={rec['k']} {rec['method']}: "
        + ", ".join(f"{e['coverage']:.3f}@{e['k']}" for e in r["evaluation"]))
    print(f"[{i}/{total}] {r['census']} ({r['basis']}): {what}; {'pass' if r['verdict']['pass'] else 'FAIL'} "
          f"({r['seconds']:.0f} s)", file=log, flush=True)


# ------------------------------------------------------------------------------------ report
def markdown(results, meta) -> str:
    f = lambda x, d=3: "—" if x is None else f"{x:.{d}f}"  # noqa: E731
    done = [r for r in results if not r.get("skipped")]
    passed = sum(r["verdict"]["pass"] for r in done)
    lines = ["# Design panel: the coverage panel extended with designs", "",
             "Target: with a frame, the design and interval that `perdoc plan` recommends at a label budget of "
             f"all the chunks of {SRS_DOCS} SRS documents (budget = {SRS_DOCS} x mean chunks per document, cost_doc "
             f"= 0, cost_chunk = 1) covers >= {TARGET} (pass: >= {TARGET} - 2 MC SE at every K evaluated) and its "
             "coverage does not fall as K grows (no fall of more than 3 combined MC SE from a smaller K to a larger).",
             "",
             f"Planning: `plan_designs` (form: {meta['plan_api']}), designs {', '.join(meta['designs'])}, K grid "
             f"{list(meta['ks'])}, takes {['all' if t is None else t for t in meta['takes']]}, {meta['plan_reps']} "
             "samples per cell; basis `census` plans on the census itself, `pilot` on the planning population made "
             f"from a seeded SRS pilot of {PILOT_DOCS} documents (0/1 metrics only). Evaluation: the recommended "
             f"design, take and method on the census with fresh seeds, {meta['reps']:,} samples at K, 2K and 4K "
             "(2K and 4K only below half the documents). Reference: logit CR2 under SRS of K = 20 whole documents "
             f"(same budget) from the coverage panel. Generated by `benchmarks/design_panel.py` in "
             f"{meta['seconds']:.0f} s on {meta['jobs']} processes; {passed} of {len(done)} rows pass."
             + (" " + meta["reruns"] if meta.get("reruns") else ""), "",
             "| census | label | basis | budget | recommended: design / take / K / method | planned cov. | "
             "cov. at K (SE) | at 2K | at 4K | labels at K | width at K | SRS logit CR2, K=20: cov. (SE) / width | "
             "verdict |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if r.get("skipped"):
            continue
        rec = r.get("recommended")
        ev = {e["multiple"]: e for e in r["evaluation"]}

        def cov(m):
            e = ev.get(m)
            return "—" if e is None else f"{f(e['coverage'])} ({f(e['mc_se'])})"
        if rec is None:
            what, planned = "none", "—"
        else:
            take = "all" if rec.get("take") is None else str(rec["take"])
            what, planned = f"{rec['design']} / {take} / {rec['k']} / {rec['method']}", f(rec.get("coverage"))
        ref = r.get("reference")
        ref_text = "—" if not ref else f"{f(ref['coverage'])} ({f(ref['mc_se'])}) / {f(ref.get('mean_width'), 4)}"
        e1 = ev.get(1)
        v = r["verdict"]
        lines.append(f"| {r['census']} | {r['label']} | {r['basis']} | {r['budget']:.0f} | {what} | {planned} | "
                     f"{cov(1)} | {cov(2)} | {cov(4)} | {'—' if e1 is None else f(e1['labels'], 0)} | "
                     f"{'—' if e1 is None else f(e1['mean_width'], 4)} | {ref_text} | "
                     f"{'pass' if v['pass'] else 'FAIL: ' + v['reason']} |")
    lines.append("")
    for basis in dict.fromkeys(r["basis"] for r in done):
        rows = [r for r in done if r["basis"] == basis]
        fails = [r for r in rows if not r["verdict"]["pass"]]
        lines.append(f"Basis `{basis}`: {len(rows) - len(fails)} of {len(rows)} pass"
                     + ("." if not fails else "; fail: " + ", ".join(
                         f"{r['census']} ({r['verdict']['reason']})" for r in fails) + "."))
    skipped = [r for r in results if r.get("skipped")]
    if skipped:
        lines += ["", "Skipped: " + ", ".join(f"{r['census']} ({r['basis']})" for r in skipped)
                  + f": {skipped[0]['skipped']}."]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=None, help="evaluation samples per K (default 1000; quick 100)")
    ap.add_argument("--plan-reps", type=int, default=None, help="planning samples per cell (default 300; quick 60)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="one synthetic and one real census, few samples")
    ap.add_argument("--censuses", default=None, help="comma-separated census names or shell patterns")
    ap.add_argument("--takes", default=None, help="comma-separated takes, 'none' for whole documents "
                                                  "(default none,5,20)")
    ap.add_argument("--ks", default=None, help="K grid of the plan (default 5,10,20,40)")
    ap.add_argument("--bases", default="census,pilot", help="planning bases (default census,pilot)")
    ap.add_argument("--out", default=None, help="folder for design_panel.json and .md (default benchmarks/)")
    ap.add_argument("--heldout", nargs="?", const="heldout", default=None, metavar="FOLDER",
                    help="the held-out censuses of benchmarks/FOLDER/ (default heldout) instead of the panel "
                         "(written to FOLDER/design_panel.json and .md unless --out is given)")
    ap.add_argument("--merge", nargs="+", default=None, metavar="RERUN.json",
                    help="replace the rows of --out's design_panel.json that these partial runs evaluated again")
    ap.add_argument("--note", default=None, help="with --merge: what changed before the reruns")
    ap.add_argument("--render", action="store_true",
                    help="only rewrite design_panel.md from the design_panel.json in --out (no simulation)")
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = str(HERE / args.heldout if args.heldout else HERE)
    if args.merge:
        print(merge_rerun(Path(args.out) / "design_panel.json", args.merge, args.note or ""))
        return
    if args.render:
        data = json.loads((Path(args.out) / "design_panel.json").read_text())
        for r in data["results"]:   # verdicts recomputed from the stored evaluations (the rule may have changed)
            if not r.get("skipped"):
                r["verdict"] = verdict(r["evaluation"])
                if r.get("recommended") is None:
                    r["verdict"]["reason"] = "no recommendation: " + no_recommendation_reason(r["plan"])
        (Path(args.out) / "design_panel.json").write_text(json.dumps(data, indent=1) + "\n")
        table = markdown(data["results"], data["meta"])
        (Path(args.out) / "design_panel.md").write_text(table + "\n")
        print(table)
        return
    takes = TAKES if args.takes is None else tuple(
        None if x.strip().lower() in ("none", "all") else int(x) for x in args.takes.split(",") if x.strip())
    ks = KS if args.ks is None else tuple(int(x) for x in args.ks.split(","))
    bases = tuple(b.strip() for b in args.bases.split(",") if b.strip())
    pats = None if args.censuses is None else [p.strip() for p in args.censuses.split(",") if p.strip()]
    pool = heldout_censuses(args.heldout) if args.heldout else panel_censuses(args.quick and pats is None)
    items = [x for x in pool
             if pats is None or any(fnmatch.fnmatchcase(x[0], p) for p in pats)]
    if not items:
        ap.error(f"--censuses {args.censuses!r} matches no census")
    import perdoc.design_plan  # noqa: F401  (imported once, before the workers start)
    import perdoc.design_sim  # noqa: F401
    jobs = jobs_for(items, quick=args.quick, reps=args.reps, plan_reps=args.plan_reps, takes=takes, ks=ks,
                    seed=args.seed, bases=bases)
    api = "takes" if "takes" in plan_api() else "take (one call per take)"
    print(f"{len(jobs)} jobs on {args.jobs} processes; plan_designs form: {api}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    results = run_panel(jobs, workers=args.jobs)
    seconds = time.perf_counter() - t0
    meta = {"reps": jobs[0]["reps"], "plan_reps": jobs[0]["plan_reps"], "seed": args.seed, "jobs": args.jobs,
            "ks": list(ks), "takes": list(takes), "designs": list(DESIGNS), "bases": list(bases), "plan_api": api,
            "target": TARGET, "level": LEVEL, "srs_docs": SRS_DOCS, "pilot_docs": PILOT_DOCS,
            "censuses": len(items), "quick": bool(args.quick), "heldout": args.heldout or False, "seconds": seconds}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "design_panel.json").write_text(json.dumps(_clean({"meta": meta, "results": results}), indent=1) + "\n")
    table = markdown(results, meta)
    (out / "design_panel.md").write_text(table + "\n")
    print(table)
    print(f"total {seconds:.1f} s")


if __name__ == "__main__":
    main()
