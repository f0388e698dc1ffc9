"""Does the frame's unseen-tail warning fire wherever the leading simple-random-sample interval fails?

    python benchmarks/tail_warning_panel.py

Reads the coverage panel's results (benchmarks/coverage_panel.json) and, for every single-system
census and K >= 10, compares the leading micro interval with a frame (logit CR2, or CR2 for an
unbounded score) with the warning perdoc prints from the frame alone
(perdoc.frame.expected_tail_share above perdoc.frame.TAIL_WARN). Prints a table and the count of
cells below 0.90 coverage without a warning (the target is none).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
sys.path.insert(0, str(HERE))


def main() -> int:
    import coverage_panel as cp

    from perdoc.frame import TAIL_WARN, expected_tail_share
    panel = json.loads((HERE / "coverage_panel.json").read_text())
    sources = {name: source for name, _, source in cp.censuses()}
    sizes, rows = {}, []
    for r in panel["results"]:
        if r.get("paired") or r.get("skipped") or r["k"] < 10 or r["census"] not in sources:
            continue
        lead = "micro.logit_cr2" if "micro.logit_cr2" in r["methods"] else "micro.cr2"
        cov = r["methods"][lead]["coverage"]
        if r["census"] not in sizes:
            sizes[r["census"]] = cp.load(sources[r["census"]]).n
        share = expected_tail_share(sizes[r["census"]], r["k"])
        rows.append((r["census"], r["k"], lead.split(".")[1], cov, share, share > TAIL_WARN))
    print("| census | K | leading | coverage | expected unseen share | warns |")
    print("|---|---|---|---|---|---|")
    for c, k, m, cov, share, warn in rows:
        if cov < 0.90 or not warn:
            print(f"| {c} | {k} | {m} | {cov:.3f} | {share:.2f} | {'yes' if warn else 'no'} |")
    failing = [x for x in rows if x[3] < 0.90]
    silent = [x for x in failing if not x[5]]
    print(f"\n{len(rows)} cells (K >= 10); {len(failing)} below 0.90, of which {len(silent)} without the warning; "
          f"the warning also fires in {sum(x[5] for x in rows) - (len(failing) - len(silent))} cells that hold 0.90")
    return 1 if silent else 0


if __name__ == "__main__":
    raise SystemExit(main())
