"""Benchmark 1: ``perdoc estimate --replicates 0 --json`` on 10^7 chunk rows in 10^5 documents.

Compared, as whole processes (interpreter start and imports included), with a separate Python
process running the bare DuckDB ``GROUP BY`` fetched to numpy (``baseline_groupby.py``). Runs
alternate (baseline, perdoc, baseline, perdoc, ...) after one untimed warm-up of each, so both see
the same warm page cache; medians are reported.

Targets: perdoc wall time at most 1.3x the baseline's at 10^7 rows and 1.1x at 10^8 (``--rows``);
perdoc peak RSS at most 1 GB (10^9 bytes).

A phase breakdown of one in-process perdoc run (imports, load_chunks, estimate) is recorded too,
so a failed target points at where the time goes.

Run: ``python benchmarks/bench_cli.py [--runs 5] [--variants str,int]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _bench  # noqa: E402
import gen_data  # noqa: E402

TIME_RATIO_TARGET = 1.3        # at 10^7 rows; the fixed start-up weighs less on larger files:
TIME_RATIO_TARGET_LARGE = 1.1  # from 5 * 10^7 rows on (measured at 10^8)
LARGE_ROWS = 50_000_000
RSS_TARGET_MIB = 1e9 / 2**20  # 1 GB
VARIANTS = {"str": "doc_id string, hit int8", "int": "doc_id int64, hit double"}

PHASES = r"""
import json, sys, time
t0 = time.perf_counter()
import perdoc.cli  # what the console script imports first
import perdoc.estimate
t1 = time.perf_counter()
import perdoc.io
t2 = time.perf_counter()
table = perdoc.io.load_chunks(sys.argv[1], doc="doc_id", score="hit")
t3 = time.perf_counter()
res = perdoc.estimate(table, replicates=0)
t4 = time.perf_counter()
json.dumps(res.to_dict())
t5 = time.perf_counter()
print(json.dumps({"import_perdoc_s": t1 - t0, "import_io_s": t2 - t1, "load_chunks_s": t3 - t2,
                  "estimate_s": t4 - t3, "json_s": t5 - t4}))
"""


def perdoc_cmd(path: Path) -> list[str]:
    exe = shutil.which("perdoc")
    if exe is None:
        raise SystemExit("perdoc not on PATH (run through benchmarks/run.sh or `make bench`)")
    return [exe, "estimate", str(path), "--doc", "doc_id", "--score", "hit", "--replicates", "0", "--json"]


def baseline_cmd(path: Path) -> list[str]:
    return [_bench.python(), str(Path(__file__).with_name("baseline_groupby.py")), str(path)]


def check_perdoc_output(out: Path, rows: int, docs: int) -> str | None:
    try:
        res = json.loads(out.read_text())
    except (OSError, ValueError) as e:
        return f"perdoc output is not JSON: {e}"
    if res.get("K") != docs or int(res.get("N", -1)) != rows:
        return f"perdoc reports K={res.get('K')}, N={res.get('N')}; expected K={docs}, N={rows}"
    return None


def ratio_target(rows: int) -> float:
    return TIME_RATIO_TARGET_LARGE if rows >= LARGE_ROWS else TIME_RATIO_TARGET


def bench_variant(key: str, path: Path, runs: int, rows: int, docs: int) -> dict:
    out = _bench.DATA / f".perdoc_{key}.json.tmp"
    cmds = {"baseline": baseline_cmd(path), "perdoc": perdoc_cmd(path)}
    samples = {"baseline": [], "perdoc": []}
    error = None
    for i in range(runs + 1):  # run 0 is the warm-up, not recorded
        for who in ("baseline", "perdoc"):
            r = _bench.run_measured(cmds[who], stdout_path=out if who == "perdoc" else None)
            if r["returncode"] != 0:
                error = f"{who} exited with status {r['returncode']}: {r['stderr'].strip()[-500:]}"
                break
            if who == "perdoc" and i == 0:
                error = check_perdoc_output(out, rows, docs)
            if i > 0:
                samples[who].append({k: r[k] for k in ("wall_s", "maxrss_mib", "user_s", "sys_s")})
            print(f"  [{key}] run {i}{' (warm-up)' if i == 0 else ''} {who:8s} "
                  f"{r['wall_s']:6.2f} s  {r['maxrss_mib']:7.1f} MiB", flush=True)
        if error:
            break
    if out.exists():
        out.unlink()
    result = {"variant": key, "description": VARIANTS[key], "file": path.name,
              "file_mib": path.stat().st_size / 2**20, "rows": rows, "docs": docs, "runs": runs,
              "commands": {k: " ".join(v) for k, v in cmds.items()}, "samples": samples, "error": error}
    if error is None:
        med = {who: {m: _bench.median(x[m] for x in samples[who]) for m in ("wall_s", "maxrss_mib")}
               for who in samples}
        ratio = med["perdoc"]["wall_s"] / med["baseline"]["wall_s"]
        # robustness checks, not the target: the median of the per-pair ratios (run i of each side
        # ran back to back), and the ratio of CPU time (user + sys), which other load inflates less
        pair = _bench.median(p["wall_s"] / b["wall_s"] for p, b in zip(samples["perdoc"], samples["baseline"]))
        cpu = {who: _bench.median(x["user_s"] + x["sys_s"] for x in samples[who]) for who in samples}
        result.update(median=med, time_ratio=ratio, paired_time_ratio=pair, cpu_s=cpu,
                      cpu_ratio=cpu["perdoc"] / cpu["baseline"],
                      time_pass=ratio <= ratio_target(rows),
                      rss_pass=med["perdoc"]["maxrss_mib"] <= RSS_TARGET_MIB,
                      max_perdoc_rss_mib=max(x["maxrss_mib"] for x in samples["perdoc"]))
        # phases of one in-process run (separate process; not part of the timed comparison)
        p = subprocess.run([_bench.python(), "-c", PHASES, str(path)], capture_output=True, text=True)
        if p.returncode == 0:
            result["phases"] = json.loads(p.stdout.strip().splitlines()[-1])
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each (default 5; at least 3)")
    ap.add_argument("--variants", default="str,int", help="comma list of str,int (default both)")
    ap.add_argument("--rows", type=int, default=gen_data.ROWS)
    ap.add_argument("--docs", type=int, default=gen_data.DOCS)
    a = ap.parse_args(argv)
    files = gen_data.generate(a.rows, a.docs)
    variants = []
    for key in a.variants.split(","):
        print(f"benchmark 1 [{key}: {VARIANTS[key]}] {files[key].name}", flush=True)
        variants.append(bench_variant(key, files[key], max(a.runs, 1), a.rows, a.docs))
    ok = [v for v in variants if v["error"] is None]
    summary = {
        "targets": {"time_ratio_max": ratio_target(a.rows), "rss_max_mib": RSS_TARGET_MIB},
        "rows": a.rows,
        "variants": variants,
        "pass": bool(ok) and len(ok) == len(variants) and all(v["time_pass"] and v["rss_pass"] for v in ok),
    }
    path = _bench.write_part("bench_cli" if a.rows == gen_data.ROWS else f"bench_cli_{a.rows}", summary)
    for v in variants:
        if v["error"]:
            print(f"  [{v['variant']}] ERROR: {v['error']}")
        else:
            m = v["median"]
            print(f"  [{v['variant']}] median wall perdoc {m['perdoc']['wall_s']:.2f} s vs baseline "
                  f"{m['baseline']['wall_s']:.2f} s = {v['time_ratio']:.2f}x (target <= {ratio_target(a.rows)}x); "
                  f"peak RSS perdoc {m['perdoc']['maxrss_mib']:.0f} MiB (target <= {RSS_TARGET_MIB:.0f} MiB), "
                  f"baseline {m['baseline']['maxrss_mib']:.0f} MiB")
            print(f"        checks: median of paired ratios {v['paired_time_ratio']:.2f}x; CPU time (user+sys) "
                  f"perdoc {v['cpu_s']['perdoc']:.2f} s vs baseline {v['cpu_s']['baseline']:.2f} s = {v['cpu_ratio']:.2f}x")
            if "phases" in v:
                print("        phases (in-process): " + ", ".join(f"{k} {x:.2f}" for k, x in v["phases"].items()))
    print(f"  -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
