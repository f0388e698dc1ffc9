"""Benchmark 7: a report's time against executing an empty notebook, measured side by side.

For each bundled params file (``params/*.yaml``), in alternating order, each a fresh process:

* **report**: ``perdoc report PARAMS --out TMP --no-progress`` (whole process: start-up, analysis,
  the notebooks in a kernel, HTML);
* **analysis**: the report's own analysis timed alone, in a process of its own
  (``bench_report.py --analysis PARAMS``: reads the data, computes the estimates, comparisons,
  simulations and plans the report shows, the time of that call only);
* **empty**: ``jupyter nbconvert --execute --to html`` of a notebook with no cells: Jupyter's own
  irreducible start-up (interpreter, imports, a kernel started and shut down, an HTML export);
* **empty-papermill**: the same through papermill and nbconvert's HTML exporter in one Python process,
  the machinery a report uses.

Two ratios per file, medians of ``--runs`` (the target of each is stated in the README block):

* **overhead ratio** = (report - analysis) / empty: what a report costs beyond its own analysis,
  target at most 3;
* **whole ratio** = report / empty: target at most 4. Census simulations dominate it; see
  ``bench_simulate.py``.

**Simulations** (``--simulations``, on by default): ``perdoc simulate`` on the example census with
2,000 samples x 999 replicates at K = 20 (every method), for one system and for the paired
comparison, alternating with the empty notebook; target: at most 1x the empty notebook. The same
with ``PERDOC_THREADS=1`` (one thread) is measured too and shown, with no target.

No simulation store is used (``PERDOC_MEMO_DIR`` is removed from the environment of every child).

Output: ``benchmarks/data/results/bench_report.json`` and the block between the
``<!-- report:start/end -->`` markers of ``benchmarks/README.md``.

Run: ``python benchmarks/bench_report.py [--runs 3] [--params params/example.yaml ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _bench  # noqa: E402

ROOT = _bench.HERE.parent
README = _bench.HERE / "README.md"
OVERHEAD_TARGET, WHOLE_TARGET, SIMULATE_TARGET = 3.0, 4.0, 1.0
SIMULATE_ARGS = ["--census", str(ROOT / "data" / "example" / "census.csv"), "--doc", "doc_id", "--score", "bm25",
                 "--k", "20", "--reps", "2000", "--replicates", "999", "--seed", "1", "--json"]


def analysis_child(params: str) -> dict:
    from perdoc.report.build import _compute_analysis
    from perdoc.study.params import load_params
    study = load_params(params)
    t = time.perf_counter()
    _compute_analysis(study)
    return {"analysis_s": time.perf_counter() - t}


def _env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("PERDOC_MEMO_DIR", None)
    env.pop("PERDOC_THREADS", None)
    env.update(extra)
    return env


def _empty_notebook(folder: Path) -> Path:
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "empty.ipynb"
    nbformat.write(nb, path)
    return path


EMPTY_PAPERMILL = ("import sys, papermill as pm, nbformat\n"
                   "from nbconvert import HTMLExporter\n"
                   "nb = pm.execute_notebook(sys.argv[1], None, kernel_name='python3', progress_bar=False,\n"
                   "                         request_save_on_cell_execute=False)\n"
                   "HTMLExporter().from_notebook_node(nb)\n")


def measure(params: Path, runs: int, folder: Path) -> dict:
    bindir = Path(_bench.python()).parent
    empty = _empty_notebook(folder)
    cmds = {
        "report": [str(bindir / "perdoc"), "report", str(params), "--out", str(folder / "out"), "--no-progress"],
        "analysis": [_bench.python(), __file__, "--analysis", str(params)],
        "empty": [str(bindir / "jupyter"), "nbconvert", "--execute", "--to", "html", "--output",
                  str(folder / "empty.html"), str(empty)],
        "empty_papermill": [_bench.python(), "-c", EMPTY_PAPERMILL, str(empty)],
    }
    samples = {k: [] for k in cmds}
    for i in range(runs):
        for key, cmd in cmds.items():      # alternating: one of each per round
            out = folder / f"{key}.out"
            r = _bench.run_measured(cmd, stdout_path=out, env=_env())
            if r["returncode"] != 0:
                raise RuntimeError(f"{key} failed (exit {r['returncode']}): {r['stderr'].strip()[-300:]}")
            value = r["wall_s"]
            if key == "analysis":
                value = json.loads(out.read_text())["analysis_s"]
            samples[key].append(value)
        print(f"  {params.name} round {i + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in samples.items()),
              flush=True)
    med = {k: _bench.median(v) for k, v in samples.items()}
    overhead = [(r - a) / e for r, a, e in zip(samples["report"], samples["analysis"], samples["empty"])]
    whole = [r / e for r, e in zip(samples["report"], samples["empty"])]
    return {"params": str(params.relative_to(ROOT)), "runs": runs, "samples": samples, "median": med,
            "overhead_ratio": _bench.median(overhead), "whole_ratio": _bench.median(whole),
            "overhead_ratio_papermill": _bench.median(
                [(r - a) / e for r, a, e in zip(samples["report"], samples["analysis"], samples["empty_papermill"])]),
            "overhead_pass": _bench.median(overhead) <= OVERHEAD_TARGET,
            "whole_pass": _bench.median(whole) <= WHOLE_TARGET}


def measure_simulations(runs: int, folder: Path) -> dict:
    """``perdoc simulate`` (one system, the paired comparison; all threads and one) against the
    empty notebook, alternating."""
    bindir = Path(_bench.python()).parent
    empty = _empty_notebook(folder)
    sim = [str(bindir / "perdoc"), "simulate", *SIMULATE_ARGS]
    cmds = {
        "simulate": (sim, {}),
        "simulate_paired": (sim + ["--vs", "tfidf"], {}),
        "empty": ([str(bindir / "jupyter"), "nbconvert", "--execute", "--to", "html", "--output",
                   str(folder / "empty.html"), str(empty)], {}),
        "simulate_1thread": (sim, {"PERDOC_THREADS": "1"}),
        "simulate_paired_1thread": (sim + ["--vs", "tfidf"], {"PERDOC_THREADS": "1"}),
    }
    samples = {k: [] for k in cmds}
    for i in range(runs):
        for key, (cmd, extra) in cmds.items():
            r = _bench.run_measured(cmd, stdout_path=folder / f"{key}.out", env=_env(**extra))
            if r["returncode"] != 0:
                raise RuntimeError(f"{key} failed (exit {r['returncode']}): {r['stderr'].strip()[-300:]}")
            samples[key].append(r["wall_s"])
        print(f"  simulations round {i + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in samples.items()),
              flush=True)
    ratios = {k: _bench.median([x / e for x, e in zip(v, samples["empty"])])
              for k, v in samples.items() if k != "empty"}
    return {"runs": runs, "samples": samples, "median": {k: _bench.median(v) for k, v in samples.items()},
            "ratio": ratios, "pass": ratios["simulate"] <= SIMULATE_TARGET and
            ratios["simulate_paired"] <= SIMULATE_TARGET}


def simulations_md(s: dict) -> str:
    m, r = s["median"], s["ratio"]
    rows = [("one system", "simulate"), ("paired comparison (`--vs tfidf`)", "simulate_paired")]
    lines = ["", f"`perdoc simulate` on the example census, 2,000 samples x 999 replicates at K = 20, every method "
                 f"(target: at most {SIMULATE_TARGET:g}x the empty notebook, {m['empty']:.1f} s here):", "",
             "| simulation | all threads | ratio | one thread (`PERDOC_THREADS=1`) | ratio |", "|---|---|---|---|---|"]
    for label, key in rows:
        ok = r[key] <= SIMULATE_TARGET
        lines.append(f"| {label} | {m[key]:.1f} s | {r[key]:.2f} {_pass(ok)} | {m[key + '_1thread']:.1f} s | "
                     f"{r[key + '_1thread']:.2f} |")
    lines += ["", f"Medians of {s['runs']} alternating rounds, each command a fresh process (start-up and reading "
                  "the census included)."]
    return "\n".join(lines)


def block_md(part: dict) -> str:
    lines = ["| params | report | analysis alone | beyond the analysis | empty notebook (nbconvert / papermill) | "
             f"overhead ratio (target <= {OVERHEAD_TARGET:g}) | whole ratio (target <= {WHOLE_TARGET:g}) |",
             "|---|---|---|---|---|---|---|"]
    for r in part["files"]:
        m = r["median"]
        lines.append(
            f"| `{r['params']}` | {m['report']:.1f} s | {m['analysis']:.1f} s | {m['report'] - m['analysis']:.1f} s | "
            f"{m['empty']:.1f} s / {m['empty_papermill']:.1f} s | {r['overhead_ratio']:.2f} "
            f"({r['overhead_ratio_papermill']:.2f} against papermill) {_pass(r['overhead_pass'])} | "
            f"{r['whole_ratio']:.2f} {_pass(r['whole_pass'])} |")
    lines += ["", f"Medians of {part['files'][0]['runs']} alternating rounds per file, each command a fresh process, "
                  f"{part['date']}, {_bench.MACHINE_LABEL}; no simulation store. Ratios are the medians of the "
                  "per-round ratios."]
    if part.get("simulations"):
        lines.append(simulations_md(part["simulations"]))
    return "\n".join(lines)


def _pass(ok: bool) -> str:
    return "**pass**" if ok else "**FAIL**"


def replace_block(text: str, body: str) -> str:
    start, end = "<!-- report:start -->", "<!-- report:end -->"
    pat = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    block = f"{start}\n{body}\n{end}"
    if pat.search(text):
        return pat.sub(lambda _: block, text)
    return text.rstrip() + "\n\n## Report time against an empty notebook (generated by `bench_report.py`)\n\n" + \
        block + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--params", nargs="*", default=None, help="params files (default: params/*.yaml)")
    ap.add_argument("--no-readme", action="store_true")
    ap.add_argument("--no-simulations", action="store_true", help="skip the perdoc simulate measurements")
    ap.add_argument("--analysis", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.analysis is not None:
        print(json.dumps(analysis_child(a.analysis)))
        return 0
    files = [Path(p).resolve() for p in (a.params or sorted(str(p) for p in (ROOT / "params").glob("*.yaml")))]
    print(f"benchmark 7: report against an empty notebook, {len(files)} params file(s), {a.runs} round(s)",
          flush=True)
    results = []
    for params in files:
        folder = Path(tempfile.mkdtemp(prefix="bench_report."))
        try:
            results.append(measure(params, max(1, a.runs), folder))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    sims = None
    if not a.no_simulations:
        folder = Path(tempfile.mkdtemp(prefix="bench_report."))
        try:
            sims = measure_simulations(max(1, a.runs), folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    part = {"files": results, "overhead_target": OVERHEAD_TARGET, "whole_target": WHOLE_TARGET,
            "simulate_target": SIMULATE_TARGET, "simulations": sims,
            "pass": all(r["overhead_pass"] and r["whole_pass"] for r in results) and (sims is None or sims["pass"])}
    path = _bench.write_part("bench_report", part)
    part = json.loads(path.read_text())
    print(block_md(part))
    if not a.no_readme:
        README.write_text(replace_block(README.read_text(), block_md(part)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
