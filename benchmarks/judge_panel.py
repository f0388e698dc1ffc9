"""Judge-assisted (prediction-powered) intervals on censuses: coverage and width by judge quality.

    python benchmarks/judge_panel.py [--reps 2000] [--ks 10,20,40] [--censuses 'synthetic.*,apipop.*']
        [--heldout] [--out benchmarks/judge_panel.json]

Every 0/1 census of the coverage panel (and, with ``--heldout``, the hit@5 censuses of
``benchmarks/heldout/`` and ``heldout2/``, reported apart) gets an automatic judge scored on every
chunk, simulated from the gold labels, each of these kinds:

* ``r=0``: unrelated to the gold (a useless judge); ``r=0.5``, ``r=0.8``, ``r=0.95``: symmetric
  errors at the rate that gives that chunk-level correlation with the gold;
* ``clustered``: r = 0.8 on average, but each document has its own error rates (a normal effect with
  SD 1 on the logit of the judge's answer), so its errors cluster by document;
* ``long-biased``: r = 0.8 on average, and the judge says "relevant" more often the longer the
  document (a logit shift of 0.7 per unit of log size about the median).

The judge covers the population (its mean over every chunk is known). For each census, judge and K,
``--reps`` simple random samples of K documents; per sample the labels-only intervals (the leading
``logit_cr2`` and ``cr2`` for the micro mean, ``t`` for the macro mean), the prediction-powered
``micro.ppi`` and ``macro.ppi`` (:mod:`perdoc.methods.ppi`) and the chunk-level baseline
``micro.ppi_iid`` (ppi_py's interval with chunks as items). ``*.ppi_lead`` is what would lead: the
judge-assisted interval (on the logit scale, as :func:`perdoc.methods.ppi.lead_ends` chooses), or the labels-only one (``logit_cr2``, macro ``t``) in a sample where the
judge-assisted one has none (no labelled document where judge and gold differ: zero variance). Coverage of the census's gold value
(no interval counts as a miss), Monte Carlo SE, mean width, and the width relative to the
labels-only leading interval. Seeded; writes JSON and prints a table.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

SEED = 20261202
JUDGES = ("r=0", "r=0.5", "r=0.8", "r=0.95", "clustered", "long-biased")


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def _logit(p):
    return math.log(p / (1.0 - p))


def _symmetric_error(p: float, r: float) -> float:
    """The flip rate e (judge says 1 - y with probability e) giving chunk-level correlation r."""
    if r <= 0:
        return 0.5
    lo, hi = 0.0, 0.5
    for _ in range(100):
        e = 0.5 * (lo + hi)
        q = p * (1 - e) + (1 - p) * e
        corr = (1 - 2 * e) * math.sqrt(p * (1 - p) / (q * (1 - q)))
        lo, hi = (e, hi) if corr > r else (lo, e)
    return 0.5 * (lo + hi)


def make_judge(n, s, kind: str, rng):
    """Per document: judge sum f and the number of chunks both gold and judge call 1 (sf)."""
    n_i, s_i = n.astype(np.int64), np.round(s).astype(np.int64)
    p = float(s.sum() / n.sum())
    if kind == "r=0":
        q = min(max(p, 0.05), 0.95)
        f = rng.binomial(n_i, q)
        sf = rng.hypergeometric(s_i, n_i - s_i, f)    # which of the judged-1 chunks are gold 1: unrelated
        return f.astype(float), sf.astype(float)
    r = {"r=0.5": 0.5, "r=0.8": 0.8, "r=0.95": 0.95}.get(kind, 0.8)
    e = _symmetric_error(p, r)
    sens, fpr = np.full(n.size, 1 - e), np.full(n.size, e)
    if kind in ("clustered", "long-biased"):
        if kind == "clustered":
            shift = rng.normal(0.0, 1.0, n.size)
        else:
            shift = 0.7 * (np.log(n) - np.median(np.log(n)))
        sens = _expit(_logit(1 - e) + shift)
        fpr = _expit(_logit(e) + shift)
    tp = rng.binomial(s_i, sens)
    fp = rng.binomial(n_i - s_i, fpr)
    return (tp + fp).astype(float), tp.astype(float)


def run_cell(job) -> dict:
    from perdoc.methods import micro
    from perdoc.methods.intervals import logit_cr2, t_interval
    from perdoc.methods.ppi import JudgeScores, lead_ends, ppi_iid, ppi_macro, ppi_micro
    census = job["census"]
    n, s = np.asarray(census.n, float), np.asarray(census.s, float) / census.scale
    rng = np.random.Generator(np.random.PCG64([SEED, job["k"], sum(map(ord, job["name"] + job["judge"]))]))
    f, sf = make_judge(n, s, job["judge"], rng)
    M, K, reps = n.size, job["k"], job["reps"]
    judge = JudgeScores(n, f, f.copy(), covers=True)     # 0/1 judge: ff = f
    truth = {"micro": s.sum() / n.sum(), "macro": float(np.mean(s / n))}
    yc, fc = s / n.sum(), f / n.sum()
    corr = float(((sf.sum() / n.sum()) - yc.sum() * fc.sum())
                 / math.sqrt(yc.sum() * (1 - yc.sum()) * fc.sum() * (1 - fc.sum())))
    fpc = math.sqrt(1 - K / M)
    names = ("micro.logit_cr2", "micro.cr2", "micro.ppi", "micro.ppi_lead", "micro.ppi_iid", "macro.t", "macro.ppi",
             "macro.ppi_lead")
    tally = {m: [0, 0.0, 0, 0] for m in names}      # covered, width sum, with interval, no interval
    lams = []
    for _ in range(reps):
        i = np.sort(rng.choice(M, K, replace=False))
        ni, si, fi, sfi = n[i], s[i], f[i], sf[i]
        R = si.sum() / ni.sum()
        se2 = math.sqrt(micro.var_cr2(ni, si)) * fpc
        df = micro.df_bell_mccaffrey(ni)
        r = si / ni
        flat = bool(np.all(r == r[0]))
        out = {}
        lo, hi, _, _ = logit_cr2(np.float64(R), np.float64(se2), np.float64(df), 0.05, np.bool_(flat), True)
        out["micro.logit_cr2"] = (float(lo), float(hi))
        lo, hi, _ = t_interval(R, se2, df, 0.05, flat)
        out["micro.cr2"] = (float(lo), float(hi))
        pm = ppi_micro(ni, si, fi, judge, fpc=fpc, bounded=True, chunks=(si, fi, sfi))   # 0/1: q = s, ff = f
        lams.append(pm["lam"])
        out["micro.ppi"] = (pm["low"], pm["high"])
        # what leads: the judge-assisted interval, or the labels-only one where it has none
        # (no labelled document where the judge and the gold differ: zero variance)
        le = lead_ends(pm)
        out["micro.ppi_lead"] = le[1:] if le else out["micro.logit_cr2"]
        pi = ppi_iid(ni, si, fi, si, fi, sfi, judge, fpc=fpc)
        out["micro.ppi_iid"] = (pi["low"], pi["high"])
        sem = math.sqrt(np.var(r, ddof=1) / K) * fpc
        lo, hi, _ = t_interval(float(np.mean(r)), sem, K - 1.0, 0.05, flat)
        out["macro.t"] = (float(lo), float(hi))
        pa = ppi_macro(ni, si, fi, judge, fpc=fpc, bounded=True, chunks=(si, fi, sfi))
        out["macro.ppi"] = (pa["low"], pa["high"])
        le = lead_ends(pa)
        out["macro.ppi_lead"] = le[1:] if le else out["macro.t"]
        for m, (lo, hi) in out.items():
            t = tally[m]
            if math.isfinite(lo) and math.isfinite(hi):
                t[2] += 1
                t[1] += hi - lo
                t[0] += int(lo <= truth[m.split(".")[0]] <= hi)
            else:
                t[3] += 1
    res = {"census": job["name"], "set": job["set"], "judge": job["judge"], "k": K, "reps": reps,
           "judge_corr": corr, "judge_bias": float(f.sum() / n.sum() - truth["micro"]),
           "lam_mean": float(np.mean(lams)), "methods": {}}
    for m, (cov, w, got, none) in tally.items():
        c = cov / reps
        res["methods"][m] = {"coverage": c, "mc_se": math.sqrt(max(c * (1 - c), 1e-12) / reps),
                             "mean_width": w / got if got else None, "no_interval": none / reps}
    lead = res["methods"]["micro.logit_cr2"]["mean_width"]
    for m in ("micro.ppi", "micro.ppi_lead", "micro.ppi_iid"):
        w = res["methods"][m]["mean_width"]
        res["methods"][m]["width_vs_lead"] = (w / lead) if (w and lead) else None
    mw = res["methods"]["macro.t"]["mean_width"]
    for m in ("macro.ppi", "macro.ppi_lead"):
        w = res["methods"][m]["mean_width"]
        res["methods"][m]["width_vs_lead"] = (w / mw) if (w and mw) else None
    return res


def binary_censuses(patterns, heldout: bool):
    from coverage_panel import censuses, load
    out = []
    for name, _, src in censuses():
        if src[0] == "pairs" or not any(fnmatch.fnmatch(name, p) for p in patterns):
            continue
        c = load(src)
        if c.binary:
            out.append(("panel", name, c))
    if heldout:
        from perdoc import load_chunks
        for folder in ("heldout", "heldout2"):
            for meta in json.loads((HERE / folder / "censuses.json").read_text())["censuses"]:
                if meta["name"] == "synth_graded":
                    continue
                out.append((folder, meta["name"], load_chunks(HERE / folder / f"{meta['name']}.csv.gz",
                                                              doc="doc", score="hit5")))
    return out


def summary(results) -> str:
    """Per set (panel, held-out), judge and K: cells, min and mean coverage of what leads, cells at
    0.94 or more, and the median width relative to the labels-only lead (micro, then macro)."""
    import statistics
    lines = ["| set | judge | K | cells | micro lead cov. min / mean | >= 0.94 | labels only: min / mean | width / "
             "labels (median) | macro lead cov. min / mean | >= 0.94 | t: min / mean | width / t |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    sets = sorted({r["set"] != "panel" for r in results})
    for held in sets:
        for judge in JUDGES:
            for k in sorted({r["k"] for r in results}):
                cells = [r for r in results if (r["set"] != "panel") == held and r["judge"] == judge and r["k"] == k]
                if not cells:
                    continue
                row = [("held-out" if held else "panel"), judge, str(k), str(len(cells))]
                for m, base in (("micro.ppi_lead", "micro.logit_cr2"), ("macro.ppi_lead", "macro.t")):
                    cov = [c["methods"][m]["coverage"] for c in cells]
                    bc = [c["methods"][base]["coverage"] for c in cells]
                    w = [c["methods"][m]["width_vs_lead"] for c in cells if c["methods"][m]["width_vs_lead"]]
                    row += [f"{min(cov):.3f} / {statistics.mean(cov):.3f}", f"{sum(x >= 0.94 for x in cov)}",
                            f"{min(bc):.3f} / {statistics.mean(bc):.3f}", f"{statistics.median(w):.2f}" if w else "-"]
                lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--ks", default="10,20,40")
    ap.add_argument("--censuses", default="synthetic.*,apipop.*,chem97.*,insteval.*")
    ap.add_argument("--judges", default=",".join(JUDGES))
    ap.add_argument("--heldout", action="store_true")
    ap.add_argument("--out", default=str(HERE / "judge_panel.json"))
    ap.add_argument("--summary", action="store_true", help="print the summary of --out and stop")
    a = ap.parse_args(argv)
    if a.summary:
        print(summary(json.loads(Path(a.out).read_text())["results"]))
        return
    t0 = time.perf_counter()
    results = []
    print("| set | census | judge | r | K | labels lead cov. | ppi lead cov. (MC se) | width / labels | ppi_iid cov. "
          "| macro t cov. | macro ppi lead cov. | width / t | mean lambda |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for set_name, name, census in binary_censuses([p for p in a.censuses.split(",") if p], a.heldout):
        for judge in a.judges.split(","):
            for k in (int(x) for x in a.ks.split(",")):
                r = run_cell({"census": census, "name": name, "set": set_name, "judge": judge, "k": k,
                              "reps": a.reps})
                results.append(r)
                m = r["methods"]
                f = lambda x, d=3: "-" if x is None else f"{x:.{d}f}"  # noqa: E731
                print(f"| {set_name} | {name} | {judge} | {r['judge_corr']:.2f} | {k} | "
                      f"{f(m['micro.logit_cr2']['coverage'])} | {f(m['micro.ppi_lead']['coverage'])} "
                      f"({f(m['micro.ppi_lead']['mc_se'])}) | {f(m['micro.ppi_lead']['width_vs_lead'], 2)} | "
                      f"{f(m['micro.ppi_iid']['coverage'])} | {f(m['macro.t']['coverage'])} | "
                      f"{f(m['macro.ppi_lead']['coverage'])} | {f(m['macro.ppi_lead']['width_vs_lead'], 2)} | "
                      f"{r['lam_mean']:.2f} |", flush=True)
    Path(a.out).write_text(json.dumps({"meta": {"reps": a.reps, "ks": a.ks, "seed": SEED, "judges": a.judges,
                                                "seconds": time.perf_counter() - t0}, "results": results},
                                      indent=1) + "\n")
    print(f"{time.perf_counter() - t0:.0f} s")
    print(summary(results))


if __name__ == "__main__":
    main()
