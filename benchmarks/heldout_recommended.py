"""Does the interval a census simulation recommends hold its level on fresh samples? Held-out censuses.

With a census in the params, a report (and ``perdoc estimate --params``) leads each estimand with the
method its coverage simulation recommends (:func:`perdoc.simulate.recommend`: the narrowest method
within Monte Carlo error of the nominal level). Choosing the narrowest of several qualifying methods
from one simulation favours a method whose coverage came out high by chance. This measures that
effect on the censuses no tuning decision saw (``benchmarks/heldout/`` and ``benchmarks/heldout2/``):
for each census, score and K, one simulation (seed 1, what a report runs) picks the recommended micro
and macro methods, and a second simulation with fresh samples (seed 2) measures their coverage.

    python benchmarks/heldout_recommended.py [--reps 2000] [--replicates 999] [--ks 20,40,80]

Writes ``benchmarks/heldout/recommended.json`` and prints a table (written by hand into
benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))


def censuses():
    for folder in ("heldout", "heldout2"):
        meta = json.loads((HERE / folder / "censuses.json").read_text())["censuses"]
        for c in meta:
            score = "y" if c["name"] == "synth_graded" else "hit5"
            yield folder, c["name"], score


def main(argv=None) -> None:
    from perdoc.reading.io import load_chunks
    from perdoc.study.simulate import simulate
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--replicates", type=int, default=999)
    ap.add_argument("--ks", default="20,40,80")
    ap.add_argument("--out", default=str(HERE / "heldout" / "recommended.json"))
    a = ap.parse_args(argv)
    rows, t0 = [], time.perf_counter()
    print("| census | K | estimand | recommended (seed 1) | its coverage, seed 1 | fresh samples, seed 2 (MC se) |")
    print("|---|---|---|---|---|---|")
    for folder, name, score in censuses():
        census = load_chunks(HERE / folder / f"{name}.csv.gz", doc="doc", score=score)
        for k in (int(x) for x in a.ks.split(",")):
            pick = simulate(census, k=k, reps=a.reps, seed=1, replicates=a.replicates)
            fresh = simulate(census, k=k, reps=a.reps, seed=2, replicates=a.replicates)
            for est in ("micro", "macro"):
                m = pick.recommended.get(est)
                row = {"set": folder, "census": name, "score": score, "k": k, "estimand": est, "recommended": m}
                if m is not None:
                    row.update(pick_coverage=pick.methods[m]["coverage"], coverage=fresh.methods[m]["coverage"],
                               mc_se=fresh.methods[m]["mc_se"], mean_width=fresh.methods[m]["mean_width"],
                               fresh_recommended=fresh.recommended.get(est))
                    print(f"| {name} | {k} | {est} | {m} | {row['pick_coverage']:.3f} | {row['coverage']:.3f} "
                          f"({row['mc_se']:.3f}) |", flush=True)
                else:
                    print(f"| {name} | {k} | {est} | none | | |", flush=True)
                rows.append(row)
    got = [r for r in rows if r["recommended"] is not None]
    low = [r for r in got if r["coverage"] < 0.95 - 2 * r["mc_se"]]
    print(f"\n{len(got)} recommendations; {len(low)} below 0.95 - 2 MC se on fresh samples; "
          f"{time.perf_counter() - t0:.0f} s")
    Path(a.out).write_text(json.dumps({"meta": {"reps": a.reps, "replicates": a.replicates, "ks": a.ks,
                                                "pick_seed": 1, "fresh_seed": 2,
                                                "seconds": time.perf_counter() - t0},
                                       "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
