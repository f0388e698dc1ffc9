"""The defaults on censuses no tuning decision saw (benchmarks/heldout/, built by build.py there).

For each held-out census and K = 10, 20, 40: the coverage of the interval a simple random sample of
documents leads with (``logit_cr2``, ``cr2`` for an unbounded score), of the former frame-aware
default (``logit_frame_rank``), of the design-consistent frame method (``logit_greg``), whether the
frame's unseen-tail warning fires (expected share of chunks in documents longer than every sampled
one > perdoc.frame.TAIL_WARN), and the coverage of PPS with a take of 20 chunks and its logit design
interval (``perdoc sample --design pps --take 20``, a 0/1 metric). Writes
benchmarks/heldout/results.json and results.md.

    python benchmarks/heldout_eval.py [--reps 1000] [--ks 10,20,40]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))


def main() -> None:
    import numpy as np

    from perdoc.design_sim import simulate_design
    from perdoc.frame import TAIL_WARN, expected_tail_share
    from perdoc.io import load_chunks
    from perdoc.simulate import simulate
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--ks", default="10,20,40")
    args = ap.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    meta = json.loads((HERE / "heldout" / "censuses.json").read_text())
    items = meta if isinstance(meta, list) else meta.get("censuses", meta)
    rows = []
    for c in (items if isinstance(items, list) else [dict(name=k, **v) for k, v in items.items()]):
        name = c["name"]
        score = "y" if name == "synth_graded" else "hit5"
        census = load_chunks(HERE / "heldout" / f"{name}.csv.gz", doc="doc", score=score)
        for k in ks:
            t0 = time.perf_counter()
            res = simulate(census, k=k, reps=args.reps, seed=1, replicates=0, frame=True).to_dict()["methods"]
            lead = "micro.logit_cr2" if "micro.logit_cr2" in res else "micro.cr2"
            row = {"census": name, "k": k, "lead": lead, "lead_coverage": res[lead]["coverage"],
                   "lead_mc_se": res[lead]["mc_se"],
                   "frame_rank": res.get("micro.logit_frame_rank", res.get("micro.frame_rank"))["coverage"],
                   "greg": res.get("micro.logit_greg", res.get("micro.greg"))["coverage"],
                   "expected_unseen": expected_tail_share(census.n, k)}
            row["warns"] = row["expected_unseen"] > TAIL_WARN
            if score == "hit5":
                d = simulate_design(census, design="pps", k=k, reps=args.reps, seed=1, take=20)
                m = d["methods"]["micro.logit_design"]
                row.update(pps_coverage=m["coverage"], pps_mc_se=m["mc_se"], pps_labels=d["labels_mean"],
                           pps_half_width=None if m["mean_width"] is None else m["mean_width"] / 2)
            row["seconds"] = time.perf_counter() - t0
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    (HERE / "heldout" / "results.json").write_text(json.dumps({"reps": args.reps, "rows": rows}, indent=1) + "\n")
    lines = [f"Held-out censuses, {args.reps} samples per cell (seed 1). SRS: simple random samples of K documents; "
             "PPS: perdoc sample --design pps --take 20.", "",
             "| census | K | SRS lead | its coverage | logit_frame_rank | logit_greg | expected unseen share | warns |"
             " PPS take 20 (logit design) | labels |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        pps = "—" if "pps_coverage" not in r else f"{r['pps_coverage']:.3f}"
        lab = "—" if "pps_labels" not in r else f"{r['pps_labels']:.0f}"
        lines.append(f"| {r['census']} | {r['k']} | {r['lead'].split('.')[1]} | {r['lead_coverage']:.3f} | "
                     f"{r['frame_rank']:.3f} | {r['greg']:.3f} | {r['expected_unseen']:.2f} | "
                     f"{'yes' if r['warns'] else 'no'} | {pps} | {lab} |")
    (HERE / "heldout" / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
