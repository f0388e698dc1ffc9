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
OVERHEAD_TARGET, WHOLE_TARGET = 3.0, 4.0


def analysis_child(params: str) -> dict:
    from perdoc.report.build import _compute_analysis
    from perdoc.study.params import load_params
    study = load_params(params)
    t = time.perf_counter()
    _compute_analysis(study)
    return {"analysis_s": time.perf_counter() - t}


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PERDOC_MEMO_DIR", None)
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
                raise RuntimeError(f"{key} failed: {r['stderr'].strip()[-300:]}")
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
    part = {"files": results, "overhead_target": OVERHEAD_TARGET, "whole_target": WHOLE_TARGET,
            "pass": all(r["overhead_pass"] for r in results)}
    path = _bench.write_part("bench_report", part)
    part = json.loads(path.read_text())
    print(block_md(part))
    if not a.no_readme:
        README.write_text(replace_block(README.read_text(), block_md(part)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
