"""Benchmark 6: the same ``perdoc estimate --replicates 0 --json`` on benchmark 1's file with
``--engine duckdb`` (the default) and ``--engine spark`` (a local PySpark session, ``local[2]``,
aggregating through Ibis's pyspark backend), side by side. No target: Spark is there to run where
the data lives, not to beat DuckDB on one machine; this records what it costs here.

Whole processes, as in benchmark 1 (interpreter, JVM start and imports included); runs alternate
after one untimed warm-up of each; medians. Peak memory is the largest single process's max RSS
(the Python process, or the JVM it starts, whichever is larger: ``wait4`` reports the largest
waited-for descendant, not a sum), so Spark's number is a lower bound of what the pair uses.

Run: ``python benchmarks/bench_engines.py [--runs 2] [--variant str]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _bench  # noqa: E402
import gen_data  # noqa: E402


def cmd(path: Path, engine: str) -> list[str]:
    exe = shutil.which("perdoc")
    if exe is None:
        raise SystemExit("perdoc not on PATH (run through benchmarks/run.sh or `make bench`)")
    return [exe, "estimate", str(path), "--doc", "doc_id", "--score", "hit", "--replicates", "0", "--json",
            "--engine", engine]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--variant", default="str", choices=("str", "int"))
    ap.add_argument("--rows", type=int, default=gen_data.ROWS)
    ap.add_argument("--docs", type=int, default=gen_data.DOCS)
    a = ap.parse_args(argv)
    path = gen_data.generate(a.rows, a.docs)[a.variant]
    samples = {"duckdb": [], "spark": []}
    outputs, error = {}, None
    for i in range(a.runs + 1):
        for engine in ("duckdb", "spark"):
            out = _bench.DATA / f".engine_{engine}.json.tmp"
            r = _bench.run_measured(cmd(path, engine), stdout_path=out)
            if r["returncode"] != 0:
                error = f"{engine} exited with status {r['returncode']}: {r['stderr'].strip()[-500:]}"
                break
            outputs[engine] = json.loads(out.read_text())
            out.unlink()
            if i > 0:
                samples[engine].append({k: r[k] for k in ("wall_s", "maxrss_mib", "user_s", "sys_s")})
            print(f"  run {i}{' (warm-up)' if i == 0 else ''} {engine:6s} {r['wall_s']:6.2f} s  "
                  f"{r['maxrss_mib']:7.1f} MiB", flush=True)
        if error:
            break
    result = {"variant": a.variant, "file": path.name, "rows": a.rows, "docs": a.docs, "runs": a.runs,
              "samples": samples, "error": error}
    if error is None:
        med = {e: {m: _bench.median(x[m] for x in samples[e]) for m in ("wall_s", "maxrss_mib")} for e in samples}
        same = {k: outputs["duckdb"][k] == outputs["spark"][k] for k in outputs["duckdb"] if k != "input"}
        result.update(median=med, spark_over_duckdb=med["spark"]["wall_s"] / med["duckdb"]["wall_s"],
                      identical_estimates=all(same.values()))
        print(f"  median wall duckdb {med['duckdb']['wall_s']:.2f} s, spark {med['spark']['wall_s']:.2f} s "
              f"= {result['spark_over_duckdb']:.1f}x; peak RSS duckdb {med['duckdb']['maxrss_mib']:.0f} MiB, "
              f"spark {med['spark']['maxrss_mib']:.0f} MiB; identical estimates: {result['identical_estimates']}")
    else:
        print(f"  ERROR: {error}")
    print(f"  -> {_bench.write_part('bench_engines', result)}")
    return 0 if error is None else 1


if __name__ == "__main__":
    sys.exit(main())
