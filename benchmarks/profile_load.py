"""Where benchmark 1's time goes: imports, and an ablation of perdoc's DuckDB aggregation query.

Not a benchmark with a target: a profile, run by run.sh after bench_cli.py so that a failed target
comes with its explanation. It measures, in fresh processes and in one process:

* import costs (``python -X importtime``: the heaviest modules under ``import perdoc.cli``);
* the SQL that ``perdoc.io.load_chunks`` sends (captured by wrapping ``_Source.fetch``) and
  ``load_chunks`` under cProfile (SQL vs Python work);
* the cost of each ingredient of perdoc's query added alone to the baseline query, a candidate
  query with the same output, and perdoc's current query as captured, each timed
  on its own connection, round robin (best and median of ``--repeat``; other load on the machine only adds
  time, so the best is the better estimate of a clause's own cost).

Run: ``python benchmarks/profile_load.py [--variant str] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _bench  # noqa: E402
import gen_data  # noqa: E402


def import_profile(top: int = 12) -> dict:
    p = subprocess.run([_bench.python(), "-X", "importtime", "-c", "import perdoc.cli, perdoc.estimate, perdoc.io"],
                       capture_output=True, text=True)
    rows = []
    for line in p.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m:
            rows.append((int(m.group(2)) / 1e6, len(m.group(3)), m.group(4)))
    total = max((r[0] for r in rows), default=float("nan"))
    # top-level-ish packages by cumulative time
    wanted = ["scipy.stats", "pandas", "numpy", "duckdb", "pyarrow", "perdoc.results", "perdoc.estimate",
              "perdoc.io", "perdoc.diagnostics", "perdoc.table", "scipy.special", "scipy.optimize"]
    found = {}
    for secs, _, name in rows:
        if name in wanted and name not in found:
            found[name] = secs
    t0 = time.perf_counter()
    subprocess.run([_bench.python(), "-c", "pass"], check=True)
    bare = time.perf_counter() - t0
    # whole-process cost of import sets (fresh processes, median of 3): what the baseline imports,
    # what perdoc imports, and what perdoc would import with scipy.special instead of scipy.stats
    # and without pandas
    sets = {"duckdb, numpy (baseline)": "import duckdb, numpy",
            "perdoc.cli + estimate + io": "import perdoc.cli, perdoc.estimate, perdoc.io",
            "duckdb, numpy, scipy.special": "import duckdb, numpy, scipy.special",
            "duckdb, numpy, pandas": "import duckdb, numpy, pandas",
            "duckdb, numpy, scipy.stats": "import duckdb, numpy, scipy.stats"}
    procs = {}
    for label, code in sets.items():
        runs = [_bench.run_measured([_bench.python(), "-c", code]) for _ in range(3)]
        procs[label] = {"wall_s": statistics.median(r["wall_s"] for r in runs),
                        "maxrss_mib": statistics.median(r["maxrss_mib"] for r in runs)}
    return {"import_perdoc_total_s": total, "cumulative_s": found, "python_startup_s": bare,
            "process_import_sets": procs}


def capture_sql(path: Path) -> dict:
    import perdoc.io as pio

    sqls = []
    orig = pio._Source.fetch

    def fetch(self, sql):
        t = time.perf_counter()
        r = orig(self, sql)
        sqls.append((sql, time.perf_counter() - t))
        return r

    pio._Source.fetch = fetch
    try:
        pr = cProfile.Profile()
        t = time.perf_counter()
        pr.enable()
        pio.load_chunks(str(path), doc="doc_id", score="hit")
        pr.disable()
        total = time.perf_counter() - t
    finally:
        pio._Source.fetch = orig
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(8)
    return {"load_chunks_s": total, "sql": [s for s, _ in sqls], "sql_s": sum(dt for _, dt in sqls),
            "cprofile_top_tottime": buf.getvalue().strip().splitlines()[-10:]}


def ablation(path: Path, repeat: int, current_sql: str | None) -> list[dict]:
    import duckdb

    lit = "'" + str(path).replace("'", "''") + "'"
    src = f"read_parquet({lit})"
    d_expr = "CASE WHEN trim(CAST(doc_id AS VARCHAR)) = '' THEN NULL ELSE CAST(doc_id AS VARCHAR) END"
    x = "CAST(hit AS DOUBLE)"
    filt = ("count(*) FILTER (WHERE raw IS NULL), count(*) FILTER (WHERE isnan(x)), "
            "count(*) FILTER (WHERE isinf(x))")
    base = f"SELECT doc_id, count(*), sum(hit), sum(hit*hit) FROM {src} GROUP BY doc_id"
    # each ingredient alone on top of the baseline query (perdoc's connection settings)
    steps = [
        ("baseline query, default connection", None, base),
        ("baseline query, perdoc's connection (memory_limit=1GB, temp dir, no insertion order)", "perdoc", base),
        ("baseline + doc id as text per row (CAST/trim/CASE before GROUP BY)", "perdoc",
         f"SELECT d, count(*), sum(x), sum(x*x) FROM (SELECT {d_expr} AS d, {x} AS x FROM {src}) GROUP BY d"),
        ("baseline + fsum (Kahan) instead of sum", "perdoc",
         f"SELECT doc_id, count(*), fsum({x}), fsum({x}*{x}) FROM {src} GROUP BY doc_id"),
        ("baseline + 3 FILTER counts (null/NaN/inf)", "perdoc",
         f"SELECT doc_id, count(*), sum(x), sum(x*x), {filt} FROM "
         f"(SELECT doc_id, hit AS raw, {x} AS x FROM {src}) GROUP BY doc_id"),
        ("baseline + ORDER BY doc id", "perdoc", base + " ORDER BY doc_id"),
        # the same output as load_chunks' query for valid input: group on the stored column; text,
        # blank check and sort on the 10^5 groups; missing scores as count(*) - count(raw); NaN/inf
        # visible in the sums (a NaN or inf score makes fsum NaN or inf), counted only on that error path
        ("candidate: GROUP BY stored column, cast/blank check/ORDER BY on groups, no FILTERs", "perdoc",
         f"SELECT CASE WHEN trim(CAST(g AS VARCHAR)) = '' THEN NULL ELSE CAST(g AS VARCHAR) END AS d, "
         f"n, n - n_raw AS n_null, s, q FROM (SELECT doc_id AS g, count(*) AS n, count(hit) AS n_raw, "
         f"fsum({x}) AS s, fsum({x} * {x}) AS q FROM {src} GROUP BY doc_id) ORDER BY d NULLS LAST"),
    ]
    if current_sql:
        steps.append(("perdoc's current query (captured from load_chunks)", "perdoc", current_sql))
    # round robin (every step once, then again ...) so that a burst of other load on the machine
    # hits all steps alike instead of one step's repeats
    times = {label: [] for label, _, _ in steps}
    for _ in range(repeat):
        for label, conf, sql in steps:
            with tempfile.TemporaryDirectory(prefix="perdoc-bench-") as tmp:
                if conf == "perdoc":
                    con = duckdb.connect(config={"memory_limit": "1GB", "temp_directory": tmp,
                                                 "preserve_insertion_order": False})
                else:
                    con = duckdb.connect()
                t = time.perf_counter()
                con.execute(sql).fetchnumpy()
                times[label].append(time.perf_counter() - t)
                con.close()
    out = []
    for label, _, _ in steps:
        ts = times[label]
        out.append({"step": label, "min_s": min(ts), "median_s": statistics.median(ts), "times_s": ts})
        print(f"  best {min(ts):6.3f} s  median {statistics.median(ts):6.3f} s  {label}", flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="str", choices=["str", "int"])
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    path = gen_data.generate()[a.variant]
    print(f"profile of benchmark 1 ({path.name})", flush=True)
    imp = import_profile()
    print(f"  import perdoc.cli+estimate+io: {imp['import_perdoc_total_s']:.2f} s (python startup alone "
          f"{imp['python_startup_s']:.2f} s); cumulative: "
          + ", ".join(f"{k} {v:.2f}" for k, v in imp["cumulative_s"].items()), flush=True)
    for label, r in imp["process_import_sets"].items():
        print(f"    process 'import {label}': {r['wall_s']:.2f} s, {r['maxrss_mib']:.0f} MiB", flush=True)
    cap = capture_sql(path)
    print(f"  load_chunks {cap['load_chunks_s']:.2f} s, of which DuckDB query+fetch {cap['sql_s']:.2f} s", flush=True)
    abl = ablation(path, a.repeat, cap["sql"][-1] if cap["sql"] else None)
    _bench.write_part(f"profile_load_{a.variant}", {"variant": a.variant, "file": path.name, "imports": imp,
                                       "load_chunks": cap, "sql_ablation": abl})
    return 0


if __name__ == "__main__":
    sys.exit(main())
