"""Oracle data for drawn samples (perdoc sample / perdoc estimate --sample): frames, manifests drawn
by perdoc.sampling, and labels made up here; written to tests/oracle/data3/ with cases3.json.

Each case has a manifest (the perdoc sample CSV) and a labels CSV (the manifest's units with a label
column y, and a judge's score x on the same units); oracle3.R computes the design-based micro and
macro means with R's survey package (and those of y - lambda x, the judge-assisted estimate with a
fixed weight), and tests/test_oracle3.py compares perdoc.survey and perdoc.methods.ppi with them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "lib"))

from perdoc.frame import Frame  # noqa: E402
from perdoc.sample_io import write_manifest  # noqa: E402
from perdoc.sampling import draw_sample  # noqa: E402

CASES = {
    # name: (frame seed, M, design options, label kind)
    "pps_wr_take": (11, 300, dict(design="pps", k=15, take=4, with_replacement=True), "binary"),
    "pps_wor": (12, 250, dict(design="pps", k=30), "binary"),
    "pps_wor_take_cont": (13, 250, dict(design="pps", k=40, take=3), "continuous"),
    "certainty_srs_take": (14, 400, dict(design="certainty", k=16, take=3), "binary"),
    "certainty_pps_take": (15, 400, dict(design="certainty", k=16, take=5, remainder="pps", certainty_size=150),
                           "continuous"),
    "stratified_neyman": (16, 500, dict(design="stratified", k=24, strata=4), "binary"),
    "stratified_take": (17, 500, dict(design="stratified", k=30, strata=3, take=4), "continuous"),
    "srs_take": (18, 200, dict(design="srs", k=12, take=6), "binary"),
}

#: The fixed weight of the judge-assisted golden values: svymean of y - JUDGE_LAMBDA * x.
JUDGE_LAMBDA = 0.6

GREG_CASES = {
    # name: (seed, M, K, kind)
    "greg_binary": (21, 300, 15, "binary"),
    "greg_continuous": (22, 500, 25, "continuous"),
    "greg_small": (23, 80, 5, "binary"),
}


def main(out: Path = HERE) -> None:
    data = out / "data3"
    data.mkdir(exist_ok=True)
    cases = {}
    for name, (seed, M, opts, kind) in CASES.items():
        rng = np.random.default_rng(seed)
        n = np.ceil(rng.lognormal(2.2, 1.4, size=M)).astype(int)
        frame = Frame.from_arrays([f"d{i:04d}" for i in range(M)], n)
        sample = draw_sample(frame, seed=seed, **opts)
        man = data / f"{name}_manifest.csv"
        write_manifest(sample, man, doc="doc", frame_facts={"file": "made up", "documents": M})
        man.with_suffix(".json").unlink()
        rows = pd.read_csv(man)
        if "chunk" not in rows:  # whole documents: every chunk is labelled
            rows = rows.loc[rows.index.repeat(rows["n"])].reset_index(drop=True)
            rows["chunk"] = rows.groupby(["doc", "draw"]).cumcount()
        idx = rows["doc"].str[1:].astype(int).to_numpy()
        eta = -1.0 + 0.45 * np.log(n) + rng.normal(0, 1.0, M)
        if kind == "binary":
            p = 1 / (1 + np.exp(-eta))
            y = (rng.random(len(rows)) < p[idx]).astype(int)
        else:
            y = np.round(eta[idx] + rng.normal(0, 0.7, len(rows)), 6)
        rows["y"] = y
        # an automatic judge's score on the same chunks (its own generator: y stays as it was): right on
        # about 80% of 0/1 labels, the label plus noise for continuous ones
        jrng = np.random.default_rng(seed + 1000)
        if kind == "binary":
            rows["x"] = np.where(jrng.random(len(rows)) < 0.8, y, 1 - y)
        else:
            rows["x"] = np.round(y + jrng.normal(0, 0.5, len(rows)), 6)
        rows.to_csv(data / f"{name}_labels.csv", index=False)
        cases[name] = {"manifest": f"data3/{name}_manifest.csv", "labels": f"data3/{name}_labels.csv",
                       "take": opts.get("take"), "level": 0.95, "judge_lambda": JUDGE_LAMBDA}
    # GREG: a simple random sample of documents, calibrated to the frame's documents and chunks
    for name, (seed, M, K, kind) in GREG_CASES.items():
        rng = np.random.default_rng(seed)
        n = np.ceil(rng.lognormal(2.0, 1.2, size=M)).astype(int)
        idx = np.sort(rng.choice(M, size=K, replace=False))
        p = 1 / (1 + np.exp(-(-0.5 + 0.3 * np.log(n[idx]) + rng.normal(0, 0.8, K))))
        if kind == "binary":
            s = rng.binomial(n[idx], p).astype(float)
        else:
            s = np.round(n[idx] * p * 2.5 + rng.normal(0, 1, K), 6)
        pd.DataFrame({"doc": [f"f{i:04d}" for i in idx], "n": n[idx], "s": s}).to_csv(data / f"{name}.csv", index=False)
        cases[name] = {"greg": f"data3/{name}.csv", "M": M, "N": int(n.sum()), "frame_sizes": f"data3/{name}_frame.csv",
                       "level": 0.95}
        pd.DataFrame({"doc": [f"f{i:04d}" for i in range(M)], "n": n}).to_csv(data / f"{name}_frame.csv", index=False)
    (out / "cases3.json").write_text(json.dumps(cases, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
