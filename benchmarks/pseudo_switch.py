"""Should a pseudo-population built from the sample choose the interval a report leads with?

    python benchmarks/pseudo_switch.py [--samples 60] [--ks 20] [--censuses 'synthetic.0[0-5],apipop.*']
        [--jobs 1] [--out benchmarks/pseudo_switch.json]

Without a census, a report used to run a pseudo-population check (:func:`perdoc.pseudo.pseudo_check`:
1,000 samples of K documents from a population made by replicating the sampled documents) and lead
with the method it supported, while ``perdoc estimate`` led with the panel's default. This measures
which choice holds its level on the coverage panel's censuses: for each census and K, ``--samples``
simple random samples of K documents are drawn; for each, the default (:func:`perdoc.policy.default_method`)
and the pseudo-population's choice (:func:`perdoc.report.build.choose_headline` on the pseudo check,
exactly as a report without a census chose it) are recorded with whether their interval covers the
census value and their width. Seeded; writes one JSON (every cell's counts) and prints a table.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

SEED = 20261202
PSEUDO_REPLICATES = 199      # a report's (perdoc.report.build.PSEUDO_REPLICATES)
STUDY_REPLICATES = 999       # the study's own bootstrap replicates


def one_cell(job) -> dict:
    from coverage_panel import load
    from perdoc.report.build import choose_headline
    from perdoc.study.estimate import estimate
    from perdoc.study.policy import default_method
    from perdoc.study.pseudo import pseudo_check
    name, source, k, samples, kind = job["name"], job["source"], job["k"], job["samples"], job["kind"]
    census = load(source)
    n = np.asarray(census.n, dtype=float)
    s = np.asarray(census.s, dtype=float) / census.scale
    truth = float(s.sum() / n.sum()) if kind == "micro" else float(np.mean(s / n))
    rng = np.random.Generator(np.random.PCG64([SEED, k, sum(map(ord, name))]))
    tally = {"default": [0, 0, 0.0], "pseudo": [0, 0, 0.0]}      # covered, with interval, width sum
    switched, chosen = 0, {}
    t0 = time.perf_counter()
    for i in range(samples):
        idx = np.sort(rng.choice(census.K, size=k, replace=False))
        table = census.take(idx)
        seed = int(rng.integers(1, 2**31))
        est = estimate(table, population_size=census.K, replicates=STUDY_REPLICATES, seed=seed)
        default = est.interval(kind, default_method(est, kind))
        pseudo = pseudo_check(table, population_size=census.K, level=0.95, seed=seed,
                              replicates=PSEUDO_REPLICATES)
        head = default if pseudo is None else choose_headline(est, pseudo, kind, basis="pseudo-population",
                                                              default=default).interval
        if head.method != default.method:
            switched += 1
        chosen[head.method] = chosen.get(head.method, 0) + 1
        for key, iv in (("default", default), ("pseudo", head)):
            if iv.ci is not None and math.isfinite(iv.ci.low) and math.isfinite(iv.ci.high):
                tally[key][1] += 1
                tally[key][2] += iv.ci.high - iv.ci.low
                tally[key][0] += int(iv.ci.low <= truth <= iv.ci.high)
    out = {"census": name, "k": k, "kind": kind, "samples": samples, "truth": truth, "switched": switched,
           "chosen": dict(sorted(chosen.items())), "seconds": time.perf_counter() - t0}
    for key, (cov, m, w) in tally.items():
        c = cov / samples   # no interval counts as a miss
        out[key] = {"coverage": c, "mc_se": math.sqrt(max(c * (1 - c), 1e-12) / samples),
                    "mean_width": w / m if m else None}
    return out


def main(argv=None):
    from coverage_panel import censuses
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=60)
    ap.add_argument("--ks", default="20")
    ap.add_argument("--censuses", default="synthetic.*,apipop.sch_wide,chem97.pass,insteval.top")
    ap.add_argument("--kind", default="micro", choices=("micro", "macro"))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default=str(HERE / "pseudo_switch.json"))
    args = ap.parse_args(argv)
    pats = [p.strip() for p in args.censuses.split(",") if p.strip()]
    items = [(n, src) for n, _, src in censuses() if src[0] != "pairs" and any(fnmatch.fnmatch(n, p) for p in pats)]
    jobs = [{"name": n, "source": src, "k": int(k), "samples": args.samples, "kind": args.kind}
            for n, src in items for k in args.ks.split(",")]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as ex:
        results = list(ex.map(one_cell, jobs))
    print(f"| census | K | default cov. | pseudo choice cov. | switched | width pseudo / default | chosen |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        d, p = r["default"], r["pseudo"]
        ratio = (p["mean_width"] / d["mean_width"]) if d["mean_width"] and p["mean_width"] else float("nan")
        print(f"| {r['census']} | {r['k']} | {d['coverage']:.3f} | {p['coverage']:.3f} | {r['switched']}/{r['samples']} "
              f"| {ratio:.2f} | {', '.join(f'{m} {c}' for m, c in r['chosen'].items())} |")
    cov_d = np.mean([r["default"]["coverage"] for r in results])
    cov_p = np.mean([r["pseudo"]["coverage"] for r in results])
    print(f"mean coverage: default {cov_d:.3f}, pseudo-population choice {cov_p:.3f}; "
          f"{time.perf_counter() - t0:.0f} s")
    Path(args.out).write_text(json.dumps({"meta": {"samples": args.samples, "ks": args.ks, "kind": args.kind,
                                                   "seed": SEED, "pseudo_replicates": PSEUDO_REPLICATES,
                                                   "study_replicates": STUDY_REPLICATES,
                                                   "seconds": time.perf_counter() - t0},
                                          "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
