"""Coverage panel: every interval method on many censuses, at K = 5, 10, 20 and 40 documents.

    python benchmarks/coverage_panel.py [--reps 2000] [--replicates 499] [--quick] [--jobs 2]
        [--censuses 'apipop.*,synthetic.1[3-9]'] [--ks 10,20] [--out DIR]

Every single-system census is also the frame of its samples (the size of every population document
is known), so the frame-aware micro methods (``micro.frame_ratio``, ``micro.frame_loglinear``) are
measured beside the others.

Censuses:

* synthetic (perdoc.synthetic): size inequality from equal sizes to a lognormal with sigma 2,
  intra-class correlation 0.02 to 0.5, base rates 0.02 to 0.5 for 0/1 metrics, continuous scores
  skewed either way, size-rate correlation of both signs;
* paired censuses (perdoc.synthetic.synthetic_pairs): two systems on the same chunks that mostly
  agree (exact ties), A better by a small effect; their rows are ``diff.<method>``;
* real clustered data sets shipped with R packages, exported by ``benchmarks/real_censuses.R`` to
  ``benchmarks/censuses/``: California schools by district (survey::apipop), A-level chemistry scores by
  school (mlmRev::Chem97), lecture ratings by lecturer (lme4::InstEval), exam scores by school
  (mlmRev::Exam, an unbounded score).

For every census, K and method: coverage of the census value with its Monte Carlo SE, mean width,
the two one-sided miss rates (interval entirely below / above the census value) and the share of
samples without an interval. Writes ``benchmarks/coverage_panel.json`` and
``benchmarks/coverage_panel.md`` (the full tables), and the summary section of
``benchmarks/README.md`` between the ``coverage-panel`` markers.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))

import numpy as np  # noqa: E402

KS = (5, 10, 20, 40)
REAL = [  # (name, file, score column, label)
    ("apipop.sch_wide", "apipop", "sch_wide", "school met its growth target (0/1), schools in 757 districts"),
    ("apipop.awards", "apipop", "awards", "school eligible for awards (0/1), schools in 757 districts"),
    ("apipop.api00", "apipop", "api00", "API 2000 score / 1000, schools in 757 districts"),
    ("apipop.meals", "apipop", "meals", "share of students with subsidised meals, schools in 757 districts"),
    ("chem97.score", "chem97", "score", "A-level chemistry score / 10, pupils in 2,410 schools"),
    ("chem97.pass", "chem97", "pass", "score >= 6 (0/1), pupils in 2,410 schools"),
    ("insteval.rating", "insteval", "rating", "lecture rating rescaled to [0, 1], ratings of 1,128 lecturers"),
    ("insteval.top", "insteval", "top", "top rating (0/1), ratings of 1,128 lecturers"),
    ("exam.normexam", "exam", "normexam", "normalised exam score (unbounded), pupils in 65 schools"),
]


def synthetic_specs():
    from perdoc.synthetic import CensusSpec
    out = []
    base = dict(documents=1000, median_size=4, seed=11)
    for sigma in (0.0, 1.0, 2.0):
        for icc in (0.02, 0.2, 0.5):
            out.append(CensusSpec(size_sigma=sigma, icc=icc, base_rate=0.3, **base))
    for rate in (0.02, 0.1, 0.5):
        out.append(CensusSpec(size_sigma=1.0, icc=0.2, base_rate=rate, **base))
    for corr in (-0.5, 0.5):
        out.append(CensusSpec(size_sigma=1.5, icc=0.2, base_rate=0.3, size_rate_corr=corr, **base))
    for sigma in (1.0, 2.0):
        for rate in (0.2, 0.8):  # right- and left-skewed continuous scores
            out.append(CensusSpec(size_sigma=sigma, icc=0.2, base_rate=rate, metric="continuous", **base))
    for corr in (-0.5, 0.5):
        out.append(CensusSpec(size_sigma=1.5, icc=0.2, base_rate=0.3, size_rate_corr=corr, metric="continuous",
                              **base))
    return out


def censuses(quick=False):
    """(name, label, loader) for every census of the panel."""
    from perdoc.synthetic import CensusSpec
    base = dict(documents=1000, median_size=4, seed=11)
    items = []
    specs = synthetic_specs()
    if quick:
        specs = specs[:2]
    for i, spec in enumerate(specs):
        items.append((f"synthetic.{i:02d}", spec.label(), ("synthetic", spec)))
    for name, file, col, label in (REAL[:1] if quick else REAL):
        items.append((name, label, ("real", file, col)))
    pairs = [(CensusSpec(size_sigma=1.0, icc=0.2, base_rate=0.3, **base), 0.05, 0.7),
             (CensusSpec(size_sigma=2.0, icc=0.2, base_rate=0.3, **base), 0.05, 0.7),
             (CensusSpec(size_sigma=1.0, icc=0.2, base_rate=0.3, **base), 0.02, 0.9),
             (CensusSpec(size_sigma=1.5, icc=0.2, base_rate=0.3, metric="continuous", **base), 0.05, 0.5)]
    for i, (spec, effect, agreement) in enumerate(pairs[:1] if quick else pairs):
        items.append((f"paired.{i:02d}", f"paired A - B ({spec.label()}; A better by {effect:g}, "
                      f"{agreement:.0%} of chunks scored alike)", ("pairs", spec, effect, agreement)))
    return items


def load(source):
    if source[0] == "synthetic":
        from perdoc.synthetic import synthetic_census
        return synthetic_census(source[1])
    if source[0] == "pairs":
        from perdoc.synthetic import synthetic_pairs
        return synthetic_pairs(source[1], effect=source[2], agreement=source[3])
    from perdoc import load_chunks
    _, file, col = source
    return load_chunks(HERE / "censuses" / f"{file}.csv.gz", doc="doc", score=col)


def run_one(job):
    name, label, source, k, reps, replicates, seed = job[:7]
    from perdoc.simulate import simulate, simulate_pairs
    census = load(source)
    if k >= census.K:  # a sample of every document has no sampling error: no cell
        return {"census": name, "label": label, "k": k, "documents": census.K, "skipped": True, "seconds": 0.0,
                "paired": source[0] == "pairs", "methods": {}, "recommended": {}, "truth": None,
                "binary": None}
    t0 = time.perf_counter()
    paired = source[0] == "pairs"
    if paired:
        res = simulate_pairs(census, k=k, reps=reps, seed=seed, level=0.95, replicates=replicates)
    else:
        res = simulate(census, k=k, reps=reps, seed=seed, level=0.95, replicates=replicates, frame=True)
    d = res.to_dict()
    prefix = "diff." if paired else ""
    return {"census": name, "label": label, "k": k, "documents": census.K,
            "binary": False if paired else bool(census.binary), "paired": paired,
            "seconds": time.perf_counter() - t0, "truth": d["truth"],
            "methods": {prefix + m: v for m, v in d["methods"].items()},
            "recommended": {e: (None if m is None else prefix + m) for e, m in d["recommended"].items()}}


def summarise(results):
    """Per method: coverage over the panel (min, mean), share of cells >= 0.94 (K = 20) and >= 0.93
    (K = 10), mean width relative to CR2 (micro) or t (macro)."""
    rows = {}
    for r in results:
        pre = "diff." if r.get("paired") else ""
        ref = {"micro": r["methods"].get(pre + "micro.cr2", {}).get("mean_width"),
               "macro": r["methods"].get(pre + "macro.t", {}).get("mean_width")}
        for m, v in r["methods"].items():
            if v.get("coverage") is None:
                continue
            est = m.removeprefix("diff.").split(".", 1)[0]
            w = v.get("mean_width")
            ratio = w / ref[est] if (w is not None and ref[est]) else None
            rows.setdefault(m, []).append((r["k"], v["coverage"], ratio, r["census"]))
    out = {}
    for m, cells in rows.items():
        def stat(k):
            c = [x for x in cells if x[0] == k]
            if not c:
                return None
            cov = [x[1] for x in c]
            ratios = [x[2] for x in c if x[2] is not None and math.isfinite(x[2])]
            return {"cells": len(c), "min": min(cov), "mean": float(np.mean(cov)),
                    "at_least_0.94": float(np.mean([x >= 0.94 for x in cov])),
                    "at_least_0.93": float(np.mean([x >= 0.93 for x in cov])),
                    "width_ratio_median": float(np.median(ratios)) if ratios else None,
                    "worst": min(c, key=lambda x: x[1])[3]}
        out[m] = {str(k): stat(k) for k in KS}
    return out


def markdown(results, summary, meta):
    lines = [f"Coverage panel: {meta['censuses']} censuses x K in {list(KS)}, {meta['reps']:,} samples each, "
             f"{meta['replicates']} bootstrap replicates and wild draws per sample, level 0.95, seed {meta['seed']}. "
             f"Total {meta['seconds']:.0f} s on {meta['jobs']} processes.", ""]
    lines.append("| method | K=5 min / mean | K=10 min / mean / share >= .93 | K=20 min / mean / share >= .94 | "
                 "K=40 min / mean | width vs CR2 or t (K=20, median) |")
    lines.append("|---|---|---|---|---|---|")
    for m in sorted(summary):
        s = summary[m]

        def mm(k, share=None):
            x = s.get(str(k))
            if not x:
                return "—"
            text = f"{x['min']:.3f} / {x['mean']:.3f}"
            if share:
                text += f" / {x[share]:.2f}"
            return text
        w = (s.get("20") or {}).get("width_ratio_median")
        lines.append(f"| {m} | {mm(5)} | {mm(10, 'at_least_0.93')} | {mm(20, 'at_least_0.94')} | {mm(40)} | "
                     f"{'—' if w is None else f'{w:.2f}'} |")
    return "\n".join(lines)


def full_tables(results):
    lines = ["# Coverage panel: every census, K and method", "",
             "Columns: coverage (Monte Carlo SE), mean width, miss below (interval entirely below the census "
             "value), miss above, no interval. Generated by `benchmarks/coverage_panel.py`.", ""]
    for r in results:
        lines.append(f"## {r['census']}, K = {r['k']}")
        lines.append(f"{r['label']}; {r['documents']:,} documents; census micro {r['truth']['micro']:.4f}, "
                     f"macro {r['truth']['macro']:.4f}; recommended: micro {r['recommended'].get('micro')}, "
                     f"macro {r['recommended'].get('macro')}")
        lines.append("")
        lines.append("| method | coverage | mean width | miss below | miss above | no interval |")
        lines.append("|---|---|---|---|---|---|")
        for m, v in r["methods"].items():
            f = lambda x, d=3: "—" if x is None else f"{x:.{d}f}"  # noqa: E731
            lines.append(f"| {m} | {f(v.get('coverage'))} ({f(v.get('mc_se'))}) | {f(v.get('mean_width'), 4)} | "
                         f"{f(v.get('miss_low'))} | {f(v.get('miss_high'))} | {f(v.get('no_interval'))} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--replicates", type=int, default=499)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="two synthetic and one real census, for a smoke test")
    ap.add_argument("--out", default=str(HERE), help="folder for coverage_panel.json and .md")
    ap.add_argument("--censuses", default=None,
                    help="comma-separated census names or shell patterns (apipop.*,synthetic.13); default: all. "
                         "A selection does not touch README.md")
    ap.add_argument("--ks", default=None, help="comma-separated K values (default: 5,10,20,40)")
    args = ap.parse_args(argv)
    import fnmatch
    import perdoc.simulate  # noqa: F401  (imported once, before the workers start)
    ks = KS if args.ks is None else tuple(int(x) for x in args.ks.split(","))
    pats = None if args.censuses is None else [p.strip() for p in args.censuses.split(",") if p.strip()]
    chosen = [(name, label, source) for name, label, source in censuses(args.quick)
              if pats is None or any(fnmatch.fnmatchcase(name, p) for p in pats)]
    if not chosen:
        ap.error(f"--censuses {args.censuses!r} matches no census")
    jobs = [(name, label, source, k, args.reps, args.replicates, args.seed)
            for name, label, source in chosen for k in ks]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = []
        for i, res in enumerate(pool.map(run_one, jobs), 1):
            if res.get("skipped"):
                print(f"[{i}/{len(jobs)}] {res['census']} K={res['k']}: skipped (K >= {res['documents']} documents)",
                      file=sys.stderr)
                continue
            results.append(res)
            print(f"[{i}/{len(jobs)}] {res['census']} K={res['k']}: {res['seconds']:.1f} s", file=sys.stderr)
    meta = {"reps": args.reps, "replicates": args.replicates, "seed": args.seed, "jobs": args.jobs,
            "censuses": len({r['census'] for r in results}), "seconds": time.perf_counter() - t0}
    summary = summarise(results)
    out = Path(args.out)
    (out / "coverage_panel.json").write_text(json.dumps({"meta": meta, "summary": summary, "results": results},
                                                        indent=1) + "\n")
    (out / "coverage_panel.md").write_text(full_tables(results) + "\n")
    table = markdown(results, summary, meta)
    readme = HERE / "README.md"
    if not args.quick and pats is None and args.ks is None and readme.exists():
        text = readme.read_text()
        start, end = "<!-- coverage-panel:start -->", "<!-- coverage-panel:end -->"
        block = f"{start}\n{table}\n{end}"
        if start in text:
            text = text[:text.index(start)] + block + text[text.index(end) + len(end):]
        else:
            text += f"\n## Coverage panel\n\n{block}\n"
        readme.write_text(text)
    print(table)


if __name__ == "__main__":
    main()
