"""perdoc against the minimal GROUP BY over a matrix of chunk files (wall time and peak memory, ratios).

    python benchmarks/groupby_matrix.py [--rows 1e6,1e7] [--ids int64,int32,string] [--scores int8,bool,float64]
        [--sizes equal,lognormal] [--orders sorted,shuffled] [--formats parquet,csv] [--pairs 11]
        [--out benchmarks/groupby_matrix.json]

Each cell is a chunk file (one row per chunk: ``doc_id``, ``hit``) with one hundred chunks per
document on average, its documents' sizes equal or lognormal (sigma 1), its rows sorted by document
or shuffled, Parquet in row groups of 10^6 rows or CSV, generated once under ``benchmarks/data/matrix``
(git-ignored) and seeded. Both sides run as whole processes (interpreter start and imports included,
bytecode already compiled, as an installed package's is):

* the baseline, ``groupby_baseline.py``: DuckDB's ``SELECT doc_id, count(*), sum(hit) ... GROUP BY
  doc_id`` fetched to numpy, adding ``sum(hit * hit)`` when the scores are not 0/1: the least work that
  gives the per-document table the estimate needs;
* ``perdoc estimate FILE --doc doc_id --score hit --replicates 0 --json``.

They alternate (baseline, perdoc, baseline, ...) after one untimed warm-up of each, so both see the same
page cache; per cell the median wall time and peak RSS of each side and their ratios (perdoc /
baseline), and the median of the per-pair ratios. Target (issue 20): both ratios at most 1.2.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _bench  # noqa: E402

import numpy as np  # noqa: E402

MATRIX = HERE / "data" / "matrix"
TARGET = 1.2
SEED = 20261204
DOC_MEAN = 100


def _rows(text: str) -> list[int]:
    return [int(float(x)) for x in text.split(",") if x]


def cell_path(rows: int, ids: str, scores: str, sizes: str, order: str, fmt: str) -> Path:
    return MATRIX / f"r{rows:.0e}-{ids}-{scores}-{sizes}-{order}.{fmt}".replace("+", "")


def generate(rows: int, ids: str, scores: str, sizes: str, order: str, fmt: str) -> Path:
    """The cell's file (made once): ``rows`` chunks in about rows / 100 documents."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq
    path = cell_path(rows, ids, scores, sizes, order, fmt)
    if path.exists():
        return path
    MATRIX.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([SEED, rows, len(sizes)])
    docs = max(rows // DOC_MEAN, 1)
    if sizes == "equal":
        n = np.full(docs, rows // docs, dtype=np.int64)
        n[: rows - int(n.sum())] += 1
    else:   # lognormal sizes, scaled to the row count (every document at least one chunk)
        w = rng.lognormal(0.0, 1.0, docs)
        n = np.maximum(1, np.floor(w / w.sum() * (rows - docs)).astype(np.int64) + 1)
        n[np.argmax(n)] += rows - int(n.sum())
    doc = np.repeat(np.arange(docs, dtype=np.int64), n)
    p = rng.beta(2, 5, docs)[doc]
    hit = rng.random(rows) < p
    if order == "shuffled":
        perm = rng.permutation(rows)
        doc, hit = doc[perm], hit[perm]
    if ids == "int64":
        id_col = pa.array(doc * 7919 + 1000003, type=pa.int64())
    elif ids == "int32":
        id_col = pa.array((doc * 7919 + 1000003).astype(np.int32), type=pa.int32())
    else:   # each document's name made once and taken per row (np.char on 10^8 rows took minutes and GBs)
        import pyarrow.compute as pc
        names = np.char.add("doc-", np.char.zfill((np.arange(docs, dtype=np.int64) * 7919 + 1000003).astype("U"), 12))
        id_col = pc.take(pa.array(names, type=pa.string()), pa.array(doc))
    if scores == "int8":
        hit_col = pa.array(hit.astype(np.int8))
    elif scores == "bool":
        hit_col = pa.array(hit)
    else:   # a graded score in [0, 1]
        hit_col = pa.array(np.where(hit, rng.uniform(0.5, 1.0, rows), rng.uniform(0.0, 0.5, rows)))
    table = pa.table({"doc_id": id_col, "hit": hit_col})
    tmp = path.with_suffix(path.suffix + ".tmp")
    if fmt == "parquet":
        pq.write_table(table, tmp, row_group_size=1_000_000)
    else:
        pacsv.write_csv(table, tmp)
    tmp.rename(path)
    return path


def perdoc_cmd(path: Path) -> list[str]:
    exe = shutil.which("perdoc")
    if exe is None:
        raise SystemExit("perdoc not on PATH (run it with the venv's bin first on PATH, as `make bench` does)")
    return [exe, "estimate", str(path), "--doc", "doc_id", "--score", "hit", "--replicates", "0", "--json"]


def baseline_cmd(path: Path, scores: str) -> list[str]:
    return [_bench.python(), str(HERE / "groupby_baseline.py"), str(path), "binary" if scores != "float64" else "score"]


def run_cell(rows: int, ids: str, scores: str, sizes: str, order: str, fmt: str, pairs: int) -> dict:
    path = generate(rows, ids, scores, sizes, order, fmt)
    cmds = {"baseline": baseline_cmd(path, scores), "perdoc": perdoc_cmd(path)}
    samples = {"baseline": [], "perdoc": []}
    error = None
    for i in range(pairs + 1):   # pair 0 warms the page cache, not recorded
        for who in ("baseline", "perdoc"):
            r = _bench.run_measured(cmds[who])
            if r["returncode"] != 0:
                error = f"{who} exited with status {r['returncode']}: {r['stderr'].strip()[-300:]}"
                break
            if i:
                samples[who].append({"wall_s": r["wall_s"], "maxrss_mib": r["maxrss_mib"]})
        if error:
            break
    out = {"rows": rows, "ids": ids, "scores": scores, "sizes": sizes, "order": order, "format": fmt,
           "file_mib": path.stat().st_size / 2**20, "pairs": pairs, "samples": samples, "error": error}
    if error is None:
        med = {who: {m: _bench.median(x[m] for x in samples[who]) for m in ("wall_s", "maxrss_mib")}
               for who in samples}
        out.update(median=med,
                   time_ratio=med["perdoc"]["wall_s"] / med["baseline"]["wall_s"],
                   rss_ratio=med["perdoc"]["maxrss_mib"] / med["baseline"]["maxrss_mib"],
                   paired_time_ratio=_bench.median(p["wall_s"] / b["wall_s"]
                                                   for p, b in zip(samples["perdoc"], samples["baseline"])))
    return out


def table(results: list[dict]) -> str:
    lines = ["| rows | ids | scores | sizes | order | format | MiB | baseline s | perdoc s | time ratio (pairs) "
             "| baseline MiB | perdoc MiB | memory ratio |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if r["error"]:
            lines.append(f"| {r['rows']:.0e} | {r['ids']} | {r['scores']} | {r['sizes']} | {r['order']} | "
                         f"{r['format']} | | | | error: {r['error'][:60]} | | | |")
            continue
        m = r["median"]
        flag = lambda x: f"**{x:.2f}**" if x > TARGET else f"{x:.2f}"   # noqa: E731
        lines.append(f"| {r['rows']:.0e} | {r['ids']} | {r['scores']} | {r['sizes']} | {r['order']} | {r['format']} | "
                     f"{r['file_mib']:.0f} | {m['baseline']['wall_s']:.2f} | {m['perdoc']['wall_s']:.2f} | "
                     f"{flag(r['time_ratio'])} ({r['paired_time_ratio']:.2f}) | {m['baseline']['maxrss_mib']:.0f} | "
                     f"{m['perdoc']['maxrss_mib']:.0f} | {flag(r['rss_ratio'])} |")
    ok = [r for r in results if not r["error"]]
    if ok:
        lines.append("")
        lines.append(f"cells: {len(results)}; time ratio <= {TARGET}: "
                     f"{sum(r['time_ratio'] <= TARGET for r in ok)}; memory ratio <= {TARGET}: "
                     f"{sum(r['rss_ratio'] <= TARGET for r in ok)}; worst time ratio "
                     f"{max(r['time_ratio'] for r in ok):.2f}, worst memory ratio {max(r['rss_ratio'] for r in ok):.2f}")
    return "\n".join(lines)


#: The runs of the present code, oldest first: a later run's cell replaces an earlier one's
#: (groupby_matrix_first.json and groupby_matrix_one_pass.json measured code since changed).
CURRENT = ("groupby_matrix.json", "groupby_matrix_int32_bool.json", "groupby_matrix_equal.json", "groupby_matrix_1e8.json",
           "groupby_matrix_1e8_b.json", "groupby_matrix_c.json", "groupby_matrix_c_int32_bool.json",
           "groupby_matrix_d_csv.json", "groupby_matrix_d_int32_bool_csv.json", "groupby_matrix_1e8_c.json",
           "groupby_matrix_e_equal.json", "groupby_matrix_1e8_d.json", "groupby_matrix_f.json",
           "groupby_matrix_1e8_e.json", "groupby_matrix_1e8_f_string.json", "groupby_matrix_1e8_g_string.json",
           "groupby_matrix_1e8_g_int_sorted.json", "groupby_matrix_g_string_1e7.json",
           "groupby_matrix_g_csv_bool_1e7.json", "groupby_matrix_1e8_h_sorted.json",
           "groupby_matrix_h_csv_int8_1e7.json", "groupby_matrix_i_1e6_part.json",
           "groupby_matrix_i_1e7.json", "groupby_matrix_i_1e8_float.json", "groupby_matrix_j_csv_float_1e7.json",
           "groupby_matrix_j_1e6.json", "groupby_matrix_k_1e8_csv.json",
           "groupby_matrix_l_1e8_csv.json", "groupby_matrix_m_1e8_csv.json",
           "groupby_matrix_n_keyed_1e6_1e7.json", "groupby_matrix_n_keyed_1e8.json",
           "groupby_matrix_o_1e8_csv_string.json", "groupby_matrix_p_1e8_csv_int.json",
           "groupby_matrix_q_csv_int_1e7.json", "groupby_matrix_r_1e8_sorted.json",
           "groupby_matrix_r_1e6.json")
#: The whole matrix of issue 20, as the defaults of --ids ... --formats and rows 10^6, 10^7, 10^8.
FULL = {"rows": (10**6, 10**7, 10**8), "ids": ("int64", "int32", "string"), "scores": ("int8", "bool", "float64"),
        "sizes": ("equal", "lognormal"), "order": ("sorted", "shuffled"), "format": ("parquet", "csv")}


def _key(r: dict) -> tuple:
    return tuple(r[k] for k in FULL)


def summary(paths: list[Path]) -> str:
    """The table of every cell measured by the runs in ``paths`` (a cell's latest run), in the matrix's
    order, with the files it came from and how much of the whole matrix they cover."""
    cells, used = {}, []
    for path in paths:
        if not path.exists():
            continue
        used.append(path.name)
        for r in json.loads(path.read_text(encoding="utf-8"))["results"]:
            cells[_key(r)] = r
    rank = {k: {v: i for i, v in enumerate(vals)} for k, vals in FULL.items()}
    ordered = sorted(cells.values(), key=lambda r: tuple(rank[k].get(r[k], 99) for k in FULL))
    total = math.prod(len(vals) for vals in FULL.values())
    missing = [f"{k} {v}" for k, vals in FULL.items() for v in vals if not any(r[k] == v for r in ordered)]
    head = (f"runs merged: {', '.join(used) or 'none'}; cells measured: {len(ordered)} of the matrix's {total}"
            + (f"; never measured: {', '.join(missing)}" if missing else ""))
    return head + "\n\n" + (table(ordered) if ordered else "(no results)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1e6,1e7")
    ap.add_argument("--ids", default="int64,int32,string")
    ap.add_argument("--scores", default="int8,bool,float64")
    ap.add_argument("--sizes", default="equal,lognormal")
    ap.add_argument("--orders", default="sorted,shuffled")
    ap.add_argument("--formats", default="parquet,csv")
    ap.add_argument("--pairs", type=int, default=11)
    ap.add_argument("--out", default=str(HERE / "groupby_matrix.json"))
    ap.add_argument("--summary", action="store_true",
                    help="print the matrix as the runs of --from measured it (a cell's latest run) and stop")
    ap.add_argument("--from", dest="sources", default=",".join(CURRENT),
                    help="the result files --summary merges, oldest first (names under benchmarks/)")
    a = ap.parse_args(argv)
    if a.summary:
        print(summary([HERE / name for name in a.sources.split(",") if name]))
        return 0
    # perdoc's bytecode compiled first, as an installed package's is: with PYTHONDONTWRITEBYTECODE set
    # a module edited since the last compile would be compiled again by every timed run
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "lib" / "perdoc")],
                   check=False, stdout=subprocess.DEVNULL)
    t0 = time.perf_counter()
    results = []
    cells = itertools.product(_rows(a.rows), a.ids.split(","), a.scores.split(","), a.sizes.split(","),
                              a.orders.split(","), a.formats.split(","))
    code = _bench.code_state()
    for cell in cells:
        r = run_cell(*cell, pairs=max(a.pairs, 1))
        results.append(r)
        print(table([r]).splitlines()[2], flush=True)
        # written after every cell: a long run stopped half-way keeps the cells it measured
        tmp = Path(a.out).with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"meta": {"pairs": a.pairs, "seconds": time.perf_counter() - t0,
                                            "machine": _bench.machine(), "code": code,
                                            "load": _bench.loadavg()},
                                   "results": results}, indent=1) + "\n")
        tmp.replace(a.out)
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
