"""Merge the benchmark results into ``benchmarks/results.json``, print a summary, and rewrite the
generated parts of ``benchmarks/README.md`` (between the ``<!-- results:start/end -->`` and
``<!-- profile:start/end -->`` markers; the rest of the README is left alone).

Run: ``python benchmarks/report.py`` (after the bench_*.py scripts; run.sh does this).
Exit status 1 if a benchmark is missing or errored, or (with ``--strict``) if a target fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _bench  # noqa: E402

README = _bench.HERE / "README.md"
NAMES = ("bench_cli", "bench_cr2", "bench_bootstrap", "profile_load_str", "profile_load_int",
         "bench_cli_100000000", "bench_engines")  # the last two: in results.json, findings by hand


def load_parts() -> dict:
    parts = {}
    for name in NAMES:
        p = _bench.PARTS / f"{name}.json"
        if p.exists():
            parts[name] = json.loads(p.read_text())
    return parts


def _pf(ok) -> str:
    return "n/a" if ok is None else ("**pass**" if ok else "**FAIL**")


def rows(parts: dict) -> list[dict]:
    """One dict per table row: benchmark, target, measured, ratio, pass, date, machine."""
    out = []
    cli = parts.get("bench_cli")
    if cli:
        for v in cli["variants"]:
            name = f"1. `perdoc estimate --replicates 0 --json`, 10^7 rows / 10^5 docs ({v['description']})"
            if v.get("error"):
                out.append({"benchmark": name, "target": "<= 1.5x baseline wall; <= 1 GB RSS",
                            "measured": f"ERROR: {v['error'][:200]}", "ratio": "", "pass": False,
                            "date": cli["date"]})
                continue
            m = v["median"]
            out.append({
                "benchmark": name + ": wall time",
                "target": f"<= {cli['targets']['time_ratio_max']}x baseline",
                "measured": f"{m['perdoc']['wall_s']:.2f} s vs baseline {m['baseline']['wall_s']:.2f} s "
                            f"(medians of {v['runs']}, alternating)",
                "ratio": f"{v['time_ratio']:.2f}x baseline (paired {v['paired_time_ratio']:.2f}x; "
                         f"CPU time {v['cpu_ratio']:.2f}x)",
                "pass": v["time_pass"], "date": cli["date"]})
            out.append({
                "benchmark": name + ": peak memory",
                "target": "<= 1 GB (954 MiB) max RSS",
                "measured": f"{m['perdoc']['maxrss_mib']:.0f} MiB (worst {v['max_perdoc_rss_mib']:.0f}); "
                            f"baseline {m['baseline']['maxrss_mib']:.0f} MiB",
                "ratio": f"{m['perdoc']['maxrss_mib'] / m['baseline']['maxrss_mib']:.2f}x baseline, "
                         f"{m['perdoc']['maxrss_mib'] / cli['targets']['rss_max_mib']:.2f} of target",
                "pass": v["rss_pass"], "date": cli["date"]})
    cr2 = parts.get("bench_cr2")
    if cr2:
        b = cr2["big"]
        big_k = f"{b['K']:,}"
        out.append({
            "benchmark": f"2. `var_cr2` + `df_bell_mccaffrey`, K = {big_k} documents",
            "target": f"< {cr2['target_s']} s",
            "measured": f"{b['median_s'] * 1e3:.0f} ms (var_cr2 {b['var_cr2_s'] * 1e3:.0f} ms, "
                        f"df {b['df_bell_mccaffrey_s'] * 1e3:.0f} ms; median of {b['calls']})",
            "ratio": f"{b['median_s'] / cr2['target_s']:.2f} of target", "pass": cr2["pass"], "date": cr2["date"]})
        for d in cr2["naive"]:
            if "error" in d:
                out.append({"benchmark": f"2b. naive K x K df, K = {d['K']:,} (baseline)", "target": "-",
                            "measured": f"ERROR: {d['error'][:200]}", "ratio": "", "pass": None, "date": cr2["date"]})
                continue
            out.append({
                "benchmark": f"2b. naive K x K df, K = {d['K']:,} (baseline) vs O(K) df at the same K",
                "target": "- (reference)",
                "measured": f"naive {d['naive_s']:.3f} s, +{d['naive_rss_increase_mib']:.0f} MiB RSS; "
                            f"O(K) {d['fast_df_s'] * 1e6:.0f} us; df agree to {d['df_rel_diff']:.0e}",
                "ratio": f"naive / O(K) = {d['ratio_naive_over_fast']:,.0f}x", "pass": None, "date": cr2["date"]})
    bt = parts.get("bench_bootstrap")
    if bt:
        if bt.get("runs"):
            r0 = bt["runs"][0]
            m = bt["median"]
            out.append({
                "benchmark": f"3. `estimate(replicates={r0['replicates']}, seed=1)`, K = {r0['K']:,} documents",
                "target": "<= 512 MB (488 MiB) max RSS",
                "measured": f"max RSS {m['process_maxrss_mib']:.0f} MiB (after imports + table "
                            f"{m['rss_after_setup_mib']:.0f} MiB, increment {m['increment_mib']:.0f} MiB); "
                            f"time {m['estimate_s']:.1f} s (process {m['process_wall_s']:.1f} s)",
                "ratio": f"{m['process_maxrss_mib'] / bt['target_rss_mib']:.2f} of target",
                "pass": bt["pass"], "date": bt["date"]})
        else:
            out.append({"benchmark": "3. `estimate(replicates=9999)`, K = 10^5", "target": "<= 512 MB",
                        "measured": f"ERROR: {bt.get('error')}", "ratio": "", "pass": False, "date": bt["date"]})
    for r in out:
        r["machine"] = _bench.MACHINE_LABEL
    return out


def table_md(rs: list[dict], parts: dict) -> str:
    lines = ["| benchmark | target | measured | ratio | pass/fail | date | machine |",
             "|---|---|---|---|---|---|---|"]
    for r in rs:
        lines.append(f"| {r['benchmark']} | {r['target']} | {r['measured']} | {r['ratio']} | "
                     f"{_pf(r['pass'])} | {r['date']} | {r['machine']} |")
    mach = next((p["machine"] for p in parts.values() if "machine" in p), None)
    if mach:
        v = mach["versions"]
        lines.append("")
        lines.append(f"Machine: {mach['cores']} cores, {mach['mem_gib']} GiB RAM, {mach['cpu']}, {mach['platform']}; "
                     + ", ".join(f"{k} {x}" for k, x in v.items() if x)
                     + (f"; OPENBLAS_CORETYPE={mach['OPENBLAS_CORETYPE']}" if mach.get("OPENBLAS_CORETYPE") else "")
                     + ".")
        loads = {n: p.get("loadavg_at_end") for n, p in parts.items() if p.get("loadavg_at_end")}
        if loads:
            lines.append("Load average (1 min) when each benchmark ended: "
                         + ", ".join(f"{n} {x[0]:.2f}" for n, x in loads.items())
                         + " (on 2 cores; above ~0.5 other work was running and timings are noisier).")
        codes = {p["code"]["lib_sha256"]: p["code"] for p in parts.values() if p.get("code")}
        if codes:
            c = next(iter(codes.values()))
            lines.append(f"Code measured: commit {c['commit']}"
                         + (" + uncommitted changes in lib/" if c["lib_uncommitted_changes"] else "")
                         + f", lib/perdoc/**/*.py sha256 {', '.join(codes)}"
                         + (" (the library changed during the run!)" if len(codes) > 1 else "") + ".")
    return "\n".join(lines)


def profile_md(parts: dict) -> str:
    lines = []
    cli = parts.get("bench_cli")
    if cli:
        for v in cli["variants"]:
            if "phases" in v:
                ph = v["phases"]
                lines.append(f"- Benchmark 1 ({v['description']}), one in-process perdoc run: "
                             + ", ".join(f"{k.removesuffix('_s').replace('_', ' ')} {x:.2f} s" for k, x in ph.items())
                             + f"; the whole baseline process takes {v['median']['baseline']['wall_s']:.2f} s.")
    for key in ("profile_load_str", "profile_load_int"):
        p = parts.get(key)
        if not p:
            continue
        imp = p["imports"]
        lines.append(f"- Imports (`python -X importtime`, {p['variant']} run): `import perdoc.cli, perdoc.estimate, "
                     f"perdoc.io` {imp['import_perdoc_total_s']:.2f} s; cumulative: "
                     + ", ".join(f"`{k}` {x:.2f} s" for k, x in imp["cumulative_s"].items()) + ".")
        lc = p["load_chunks"]
        lines.append(f"- `load_chunks` on {p['file']}: {lc['load_chunks_s']:.2f} s, of which the DuckDB "
                     f"query + fetch {lc['sql_s']:.2f} s. Ablation from the baseline query to perdoc's query "
                     f"(each on a fresh connection, best and median of {len(p['sql_ablation'][0]['times_s'])}, in one process):")
        lines.append("")
        lines.append("  | step | best s | median s |")
        lines.append("  |---|---|---|")
        for s in p["sql_ablation"]:
            lines.append(f"  | {s['step']} | {s.get('min_s', min(s['times_s'])):.3f} | {s['median_s']:.3f} |")
        sets = imp.get("process_import_sets")
        if sets:
            lines.append("")
            lines.append("  Whole-process import cost (fresh process, median of 3): "
                         + "; ".join(f"`import {k}` {x['wall_s']:.2f} s / {x['maxrss_mib']:.0f} MiB"
                                     for k, x in sets.items()) + ".")
        lines.append("")
    bt = parts.get("bench_bootstrap")
    if bt and bt.get("trace"):
        tr = bt["trace"]
        lines.append(f"- Benchmark 3 profiled run: traced peak (tracemalloc) {tr['tracemalloc_peak_mib']:.0f} MiB "
                     f"during `estimate`; time by line of perdoc ({tr['estimate_s']:.1f} s under the profilers):")
        for x in tr["line_profile"][:6]:
            lines.append(f"  - {x['share']:.0%} `{x['line']}`")
        mh = tr.get("traced_memory_at_highest_sample")
        if mh:
            lines.append(f"- Benchmark 3, memory: at the highest traced memory the sampler saw ({mh['traced_mib']:.0f} MiB) "
                         "it was allocated by " + ", ".join(f"`{x['line']}` {x['mib']:.0f} MiB" for x in mh["top"]
                                                            if x["mib"] >= 1) + ".")
    return "\n".join(lines) if lines else "(no profile recorded)"


def replace_block(text: str, tag: str, body: str) -> str:
    start, end = f"<!-- {tag}:start -->", f"<!-- {tag}:end -->"
    pat = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    block = f"{start}\n{body}\n{end}"
    if pat.search(text):
        return pat.sub(lambda _: block, text)
    return text.rstrip() + "\n\n" + block + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strict", action="store_true", help="exit 1 if a target fails")
    a = ap.parse_args(argv)
    parts = load_parts()
    rs = rows(parts)
    results = {"machine": next((p["machine"] for p in parts.values()), _bench.machine()),
               "rows": rs, "benchmarks": parts}
    tmp = _bench.RESULTS_JSON.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=2) + "\n")
    os.replace(tmp, _bench.RESULTS_JSON)
    if README.exists():
        text = README.read_text()
        text = replace_block(text, "results", table_md(rs, parts))
        text = replace_block(text, "profile", profile_md(parts))
        README.write_text(text)
    print("\nsummary")
    for r in rs:
        print(f"  {_pf(r['pass']).strip('*'):5s} {r['benchmark']}\n        target {r['target']}; measured "
              f"{r['measured']}; {r['ratio']}")
    print(f"results: {_bench.RESULTS_JSON}; table: {README}")
    missing = [n for n in ("bench_cli", "bench_cr2", "bench_bootstrap") if n not in parts]
    errored = [r for r in rs if str(r["measured"]).startswith("ERROR")]
    if missing:
        print(f"missing results: {', '.join(missing)}")
    if missing or errored:
        return 1
    if a.strict and any(r["pass"] is False for r in rs):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
