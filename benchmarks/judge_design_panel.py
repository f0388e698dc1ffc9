"""Judge-assisted intervals under drawn designs: coverage and width by judge quality and design.

    python benchmarks/judge_design_panel.py [--reps 1000] [--ks 20,40] [--designs srs,pps,stratified]
        [--judges ...] [--censuses 'synthetic.*,...'] [--heldout] [--out benchmarks/judge_design_panel.json]

The censuses and simulated judges of ``judge_panel.py`` (a judge on every chunk, from useless to
r = 0.95, errors clustered by document, a judge biased in long documents). Each sample is drawn
as ``perdoc sample`` draws it (:func:`perdoc.study.sampling.prepare_design`: simple random,
size-stratified with Neyman allocation, or probability proportional to size with the largest
documents taken whole), whole documents labelled, and estimated design-based: labels only
(:func:`perdoc.methods.ppi.ppi_design` with weight 0, which is
:func:`perdoc.methods.survey.design_estimate` exactly, and its leading interval) and judge-assisted
(:func:`perdoc.methods.ppi.ppi_design`, cross-fitted weights; the logit interval for a 0/1 metric,
else the labels-only one where it has none, as ``perdoc estimate --judge --sample`` leads). Coverage
of the census's gold micro and macro means (no interval counts as a miss), Monte Carlo SE, mean
width relative to the labels-only lead. Seeded; writes JSON and prints a table.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from judge_panel import JUDGES, binary_censuses, make_judge  # noqa: E402

SEED = 20261204


def run_cell(job) -> dict:
    from perdoc.methods.ppi import JudgeScores, lead_ends, ppi_design
    from perdoc.reading.frame import Frame
    from perdoc.reading.manifest import SampleData, stage_fractions
    from perdoc.study.sampling import prepare_design
    census = job["census"]
    n, s = np.asarray(census.n, float), np.asarray(census.s, float) / census.scale
    rng = np.random.Generator(np.random.PCG64([SEED, job["k"], sum(map(ord, job["name"] + job["judge"]))]))
    f, sf = make_judge(n, s, job["judge"], rng)
    judge = JudgeScores(n, f, f.copy(), covers=True)
    truth = {"micro": s.sum() / n.sum(), "macro": float(np.mean(s / n))}
    frame = Frame.from_arrays(np.arange(n.size).astype(str), n, allow_similar_ids=True)
    prepared = prepare_design(frame, design=job["design"], k=job["k"])
    seeds = rng.integers(0, 2**62, size=job["reps"])
    tally = {f"{kind}.{m}": [0, 0.0, 0, 0] for kind in ("micro", "macro") for m in ("labels", "judge")}
    lams = []
    for r in range(job["reps"]):
        smp = prepared.draw(int(seeds[r]))
        idx = smp.doc.astype(np.int64)
        N = n[idx]
        fr, _ = stage_fractions(smp.stratum, smp.prob, smp.draw)
        data = SampleData(doc=smp.doc.astype(str), draw=smp.draw, stratum=smp.stratum.astype(str), prob=smp.prob,
                          N=N, m=N, s=s[idx], q=s[idx], f=fr)
        for kind in ("micro", "macro"):
            # labels only: lambda = 0 is the design estimate exactly, and lead_ends leads it as
            # design_estimate does (logit where it exists, else the plain design interval)
            lab = lead_ends(ppi_design(data, f[idx], f[idx], sf[idx], judge, kind, lam=0.0, bounded=True))
            ends = lab[1:] if lab else (math.nan, math.nan)
            res = ppi_design(data, f[idx], f[idx], sf[idx], judge, kind, bounded=True, judge_rows=idx)
            if kind == "micro":
                lams.append(res["lam"])
            le = lead_ends(res)
            for m, (lo, hi) in (("labels", ends), ("judge", le[1:] if le else ends)):
                t = tally[f"{kind}.{m}"]
                if math.isfinite(lo) and math.isfinite(hi):
                    t[2] += 1
                    t[1] += hi - lo
                    t[0] += int(lo <= truth[kind] <= hi)
                else:
                    t[3] += 1
    out = {"census": job["name"], "set": job["set"], "judge": job["judge"], "design": job["design"], "k": job["k"],
           "reps": job["reps"], "lam_mean": float(np.mean(lams)), "methods": {}}
    for m, (cov, w, got, none) in tally.items():
        c = cov / job["reps"]
        out["methods"][m] = {"coverage": c, "mc_se": math.sqrt(max(c * (1 - c), 1e-12) / job["reps"]),
                             "mean_width": w / got if got else None, "no_interval": none / job["reps"]}
    for kind in ("micro", "macro"):
        a, b = out["methods"][f"{kind}.judge"]["mean_width"], out["methods"][f"{kind}.labels"]["mean_width"]
        out["methods"][f"{kind}.judge"]["width_vs_labels"] = a / b if a and b else None
    return out


def summary(results) -> str:
    lines = ["| set | design | judge | K | cells | micro judge cov. min / mean | >= 0.94 | labels only min / mean | "
             "width / labels | macro judge cov. min / mean | >= 0.94 | labels only min / mean | width / labels |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for held in sorted({r["set"] != "panel" for r in results}):
        for design in dict.fromkeys(r["design"] for r in results):
            for judge in JUDGES:
                for k in sorted({r["k"] for r in results}):
                    cells = [r for r in results if (r["set"] != "panel") == held and r["judge"] == judge
                             and r["k"] == k and r["design"] == design]
                    if not cells:
                        continue
                    row = ["held-out" if held else "panel", design, judge, str(k), str(len(cells))]
                    for kind in ("micro", "macro"):
                        cov = [c["methods"][f"{kind}.judge"]["coverage"] for c in cells]
                        lab = [c["methods"][f"{kind}.labels"]["coverage"] for c in cells]
                        w = [c["methods"][f"{kind}.judge"]["width_vs_labels"] for c in cells
                             if c["methods"][f"{kind}.judge"]["width_vs_labels"]]
                        row += [f"{min(cov):.3f} / {statistics.mean(cov):.3f}", str(sum(x >= 0.94 for x in cov)),
                                f"{min(lab):.3f} / {statistics.mean(lab):.3f}",
                                f"{statistics.median(w):.2f}" if w else "-"]
                    lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--ks", default="20,40")
    ap.add_argument("--designs", default="srs,pps,stratified")
    ap.add_argument("--censuses", default="synthetic.*,apipop.*,chem97.*,insteval.*")
    ap.add_argument("--judges", default=",".join(JUDGES))
    ap.add_argument("--heldout", action="store_true")
    ap.add_argument("--out", default=str(HERE / "judge_design_panel.json"))
    ap.add_argument("--summary", action="store_true", help="print the summary of --out and stop")
    a = ap.parse_args(argv)
    if a.summary:
        print(summary(json.loads(Path(a.out).read_text())["results"]))
        return
    t0 = time.perf_counter()
    results = []
    for set_name, name, census in binary_censuses([p for p in a.censuses.split(",") if p], a.heldout):
        for design in a.designs.split(","):
            for judge in a.judges.split(","):
                for k in (int(x) for x in a.ks.split(",")):
                    if k >= census.K:
                        continue
                    r = run_cell({"census": census, "name": name, "set": set_name, "judge": judge, "k": k,
                                  "design": design, "reps": a.reps})
                    results.append(r)
                    m = r["methods"]
                    print(f"{set_name} {name} {design} {judge} K={k}: micro labels {m['micro.labels']['coverage']:.3f} "
                          f"judge {m['micro.judge']['coverage']:.3f} (w {m['micro.judge']['width_vs_labels'] or 0:.2f}); "
                          f"macro labels {m['macro.labels']['coverage']:.3f} judge {m['macro.judge']['coverage']:.3f}",
                          flush=True)
    Path(a.out).write_text(json.dumps({"meta": {"reps": a.reps, "ks": a.ks, "designs": a.designs, "seed": SEED,
                                                "judges": a.judges, "seconds": time.perf_counter() - t0},
                                       "results": results}, indent=1) + "\n")
    print(f"{time.perf_counter() - t0:.0f} s")
    print(summary(results))


if __name__ == "__main__":
    main()
