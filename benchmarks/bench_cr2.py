"""Benchmark 2: CR2 variance + Bell-McCaffrey df on K = 10^6 pre-aggregated documents.

* ``perdoc.micro.var_cr2(n, s)`` + ``perdoc.micro.df_bell_mccaffrey(n)`` at K = 10^6: target
  under 0.5 s (median of repeated calls, one process).
* Baseline: the naive K x K computation of the df (below) at K = 2,000, 5,000, 10,000 (the
  largest that runs in a few GB), each in a fresh process, with its time and memory (RSS increase
  over the process after imports and data), beside the O(K) ``df_bell_mccaffrey`` at the same K
  (ratio = naive time / O(K) time) and the relative difference of the two df values::

      N=n.sum(); h=n/N; a=1/np.sqrt(1-h); M=-np.outer(a*n,a*n)/N
      M[np.diag_indices(K)]+=a**2*n; df=np.trace(M)**2/np.sum(M*M)

The naive code's first call in a fresh process is the measured time (it pays for mapping its
K x K arrays); a second call is recorded as ``naive_second_call_s``.

Run: ``python benchmarks/bench_cr2.py [--naive-k 2000,5000,10000]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _bench  # noqa: E402

K_BIG = 1_000_000
TARGET_S = 0.5
SEED = 20260502
NAIVE_K = (2000, 5000, 10000)


def make_docs(K: int, seed: int = SEED):
    import numpy as np
    rng = np.random.default_rng(seed)
    n = np.maximum(1, np.round(rng.lognormal(3.0, 1.0, size=K))).astype(float)
    rate = rng.beta(0.6, 2.6, size=K)
    s = rng.binomial(n.astype(np.int64), rate).astype(float)
    return n, s


def per_call(fn, min_total: float = 0.3, min_calls: int = 5) -> tuple[float, list[float]]:
    """Median seconds per call of ``fn()`` over at least ``min_calls`` calls / ``min_total`` seconds."""
    times = []
    start = time.perf_counter()
    while len(times) < min_calls or time.perf_counter() - start < min_total:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if len(times) >= 10_000:
            break
    return _bench.median(times), times


def naive_df(n):
    import numpy as np
    K = n.size
    N = n.sum(); h = n / N; a = 1 / np.sqrt(1 - h); M = -np.outer(a * n, a * n) / N  # noqa: E702
    M[np.diag_indices(K)] += a**2 * n
    return np.trace(M)**2 / np.sum(M * M)


def child_naive(K: int) -> dict:
    """In a fresh process: naive K x K df vs O(K) df at the same K."""
    import numpy as np  # noqa: F401
    from perdoc import micro
    n, s = make_docs(K)
    micro.df_bell_mccaffrey(n)  # warm
    rss0 = _bench.rss_mib()
    t = time.perf_counter()
    df_naive = naive_df(n)
    naive_s = time.perf_counter() - t
    peak = _bench.peak_rss_mib()
    t = time.perf_counter()
    naive_df(n)  # second call: memory pages already mapped once
    naive_warm_s = time.perf_counter() - t
    fast_s, _ = per_call(lambda: micro.df_bell_mccaffrey(n))
    both_s, _ = per_call(lambda: (micro.var_cr2(n, s), micro.df_bell_mccaffrey(n)))
    df_fast = micro.df_bell_mccaffrey(n)
    return {"K": K, "naive_s": naive_s, "naive_second_call_s": naive_warm_s, "naive_rss_increase_mib": peak - rss0, "rss_before_mib": rss0,
            "peak_rss_mib": peak, "matrix_mib": K * K * 8 / 2**20, "fast_df_s": fast_s,
            "fast_cr2_and_df_s": both_s, "ratio_naive_over_fast": naive_s / fast_s,
            "df_naive": float(df_naive), "df_fast": df_fast,
            "df_rel_diff": abs(df_naive - df_fast) / abs(df_fast)}


def big(K: int) -> dict:
    import numpy as np  # noqa: F401
    from perdoc import micro
    n, s = make_docs(K)
    both_s, both = per_call(lambda: (micro.var_cr2(n, s), micro.df_bell_mccaffrey(n)), min_total=2.0, min_calls=7)
    cr2_s, _ = per_call(lambda: micro.var_cr2(n, s), min_total=0.5)
    df_s, _ = per_call(lambda: micro.df_bell_mccaffrey(n), min_total=0.5)
    return {"K": K, "median_s": both_s, "min_s": min(both), "calls": len(both), "var_cr2_s": cr2_s,
            "df_bell_mccaffrey_s": df_s, "df": micro.df_bell_mccaffrey(n), "var_cr2": micro.var_cr2(n, s)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--naive-k", default=",".join(map(str, NAIVE_K)))
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child_naive(a.child)))
        return 0
    print(f"benchmark 2: CR2 + Bell-McCaffrey df at K = {K_BIG:,}", flush=True)
    res_big = big(K_BIG)
    print(f"  O(K) var_cr2 + df_bell_mccaffrey: median {res_big['median_s'] * 1e3:.1f} ms "
          f"(var_cr2 {res_big['var_cr2_s'] * 1e3:.1f} ms, df {res_big['df_bell_mccaffrey_s'] * 1e3:.1f} ms; "
          f"target < {TARGET_S * 1e3:.0f} ms)", flush=True)
    # each naive K in a fresh process: its memory is measured from a clean start
    naive = []
    for K in (int(k) for k in a.naive_k.split(",") if k):
        out = _bench.DATA / f".cr2_child_{K}.json.tmp"
        _bench.DATA.mkdir(parents=True, exist_ok=True)
        r = _bench.run_measured([_bench.python(), __file__, "--child", str(K)], stdout_path=out)
        if r["returncode"] != 0:
            naive.append({"K": K, "error": r["stderr"].strip()[-500:]})
            print(f"  naive K={K}: FAILED ({r['stderr'].strip()[-200:]})")
            continue
        d = json.loads(out.read_text())
        out.unlink()
        d["process_maxrss_mib"] = r["maxrss_mib"]
        d["process_wall_s"] = r["wall_s"]
        naive.append(d)
        print(f"  naive K={K:>6,}: {d['naive_s']:7.3f} s (2nd call {d['naive_second_call_s']:.3f} s), +{d['naive_rss_increase_mib']:6.0f} MiB "
              f"(process peak {d['process_maxrss_mib']:.0f} MiB); O(K) df {d['fast_df_s'] * 1e6:7.1f} us "
              f"-> {d['ratio_naive_over_fast']:,.0f}x; |df diff|/df = {d['df_rel_diff']:.1e}", flush=True)
    ok = [d for d in naive if "error" not in d]
    largest = max(ok, key=lambda d: d["K"]) if ok else None
    summary = {"target_s": TARGET_S, "big": res_big, "pass": res_big["median_s"] < TARGET_S,
               "naive": naive, "largest_naive": largest}
    print(f"  -> {_bench.write_part('bench_cr2', summary)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
