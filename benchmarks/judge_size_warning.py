"""How often the size-bias warning of ``perdoc estimate --judge`` fires, by judge, on the judge panel.

    python benchmarks/judge_size_warning.py [--reps 1000] [--ks 20,40] [--heldout]

The censuses and simulated judges of ``judge_panel.py``; simple random samples of K documents; per
sample :func:`perdoc.methods.ppi.size_bias` (the judge's error rate against log document size, flagged
at p < 0.05). The warning should fire often for the judge biased in long documents (where a simple
random sample fails the judge-assisted micro interval) and seldom for the others. Prints a table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from judge_panel import JUDGES, SEED, binary_censuses, make_judge  # noqa: E402


def main(argv=None) -> None:
    from perdoc.methods.ppi import size_bias
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--ks", default="20,40")
    ap.add_argument("--censuses", default="synthetic.*,apipop.*,chem97.*,insteval.*")
    ap.add_argument("--heldout", action="store_true")
    a = ap.parse_args(argv)
    rates = {}
    for set_name, name, census in binary_censuses([p for p in a.censuses.split(",") if p], a.heldout):
        n, s = np.asarray(census.n, float), np.asarray(census.s, float) / census.scale
        for judge in JUDGES:
            for k in (int(x) for x in a.ks.split(",")):
                rng = np.random.Generator(np.random.PCG64([SEED, k, sum(map(ord, name + judge))]))
                f, _ = make_judge(n, s, judge, rng)
                fired = 0
                for _ in range(a.reps):
                    i = rng.choice(n.size, k, replace=False)
                    fired += size_bias(n[i], s[i], f[i])["flag"]
                rates.setdefault((set_name != "panel", judge, k), []).append(fired / a.reps)
    print("| set | judge | K | censuses | warning rate: min / median / max |")
    print("|---|---|---|---|---|")
    for (held, judge, k), v in sorted(rates.items(), key=lambda kv: (kv[0][0], JUDGES.index(kv[0][1]), kv[0][2])):
        print(f"| {'held-out' if held else 'panel'} | {judge} | {k} | {len(v)} | "
              f"{min(v):.2f} / {statistics.median(v):.2f} / {max(v):.2f} |")


if __name__ == "__main__":
    main()
