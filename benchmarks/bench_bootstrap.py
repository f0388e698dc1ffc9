"""Benchmark 3: ``perdoc.estimate(table, replicates=9999, seed=1)`` at K = 10^5 documents.

Each run is a fresh process (``--child``) that imports perdoc, builds the per-document table with
``DocTable.from_arrays`` (seeded, skewed sizes, 0/1 scores), notes its RSS, then runs the document
bootstrap-t estimate. Reported: the process's max RSS (``os.wait4``; target at most 512 MB =
488 MiB), the increment over the RSS right after imports + table creation, and the estimate's time.
A last child runs the same call under tracemalloc (peak of traced allocations, numpy's included)
and a line sampler (share of the time by perdoc source line), the profile to read if a target
fails.

Run: ``python benchmarks/bench_bootstrap.py [--runs 1] [--K 100000] [--replicates 9999]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _bench  # noqa: E402

K = 100_000
B = 9999
SEED = 20260503
RSS_TARGET_MIB = 512e6 / 2**20  # 512 MB


def make_table(K: int):
    import numpy as np
    import perdoc
    rng = np.random.default_rng(SEED)
    n = np.maximum(1, np.round(rng.lognormal(3.0, 1.0, size=K))).astype(float)
    s = rng.binomial(n.astype(np.int64), rng.beta(0.6, 2.6, size=K)).astype(float)
    doc = np.char.add("d", np.char.zfill(np.arange(1, K + 1).astype(str), 7))
    return perdoc.DocTable.from_arrays(n, s, s.copy(), doc)


def child(K: int, B: int, trace: bool) -> dict:
    import perdoc
    table = make_table(K)
    rss0 = _bench.rss_mib()
    peak0 = _bench.peak_rss_mib()
    if trace:
        import tracemalloc
        tracemalloc.start(1)
        prof = _LineSampler()
        prof.start()
    t = time.perf_counter()
    res = perdoc.estimate(table, replicates=B, seed=1)
    secs = time.perf_counter() - t
    if trace:
        prof.stop()
    out = {"K": K, "replicates": B, "estimate_s": secs, "rss_after_setup_mib": rss0,
           "peak_before_estimate_mib": peak0, "rss_end_mib": _bench.rss_mib(), "peak_rss_mib": _bench.peak_rss_mib(),
           "n_intervals": len(res.intervals)}
    boot = [iv for iv in res.intervals if iv.method == "bootstrap_t"]
    out["bootstrap_t_ci"] = [[iv.ci.low, iv.ci.high] if iv.ci else None for iv in boot]
    if trace:
        import tracemalloc
        cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out["tracemalloc_peak_mib"] = peak / 2**20
        out["tracemalloc_note"] = "peak of Python-visible allocations (numpy arrays included) during estimate()"
        out["line_profile"] = prof.report(8)
        out["traced_memory_at_highest_sample"] = prof.mem_at_high
    return out


class _LineSampler:
    """Wall-time sampling profiler of the main thread: which perdoc source line is running; under
    tracemalloc it also notes, at the highest traced memory it sees, which lines allocated it.

    A thread wakes every few ms and charges the time since its last sample to the innermost
    ``perdoc`` line of the main thread's stack. A long numpy call holds the GIL, so the sampler
    gets in just after it and charges the whole call to the line that made it (the line is what
    matters here; cProfile cannot see inside ``document_bootstrap``'s numpy calls).
    """

    def __init__(self, interval: float = 0.005):
        import threading
        self.interval, self.counts, self._stop = interval, {}, threading.Event()
        self.mem_high, self.mem_at_high = 0, None
        self._main = threading.main_thread().ident
        import perdoc
        self._pkg = str(Path(perdoc.__file__).resolve().parent) + os.sep
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()

    def _run(self):
        import linecache
        last = time.perf_counter()
        while not self._stop.wait(self.interval):
            now = time.perf_counter()
            frame = sys._current_frames().get(self._main)
            key = "(outside perdoc)"
            while frame is not None:
                if frame.f_code.co_filename.startswith(self._pkg):
                    f = frame.f_code.co_filename
                    key = f"{Path(f).name}:{frame.f_lineno}  {linecache.getline(f, frame.f_lineno).strip()[:70]}"
                    break
                frame = frame.f_back
            self.counts[key] = self.counts.get(key, 0.0) + (now - last)
            last = now
            self._memory()

    def _memory(self):
        """When traced memory reaches a new high (by 10%), note which lines hold it."""
        import tracemalloc
        if not tracemalloc.is_tracing():
            return
        cur = tracemalloc.get_traced_memory()[0]
        if cur < 32 * 2**20 or cur < 1.1 * self.mem_high:
            return
        self.mem_high = cur
        stats = tracemalloc.take_snapshot().statistics("lineno")[:4]
        self.mem_at_high = {"traced_mib": cur / 2**20,
                            "top": [{"line": f"{Path(s.traceback[0].filename).name}:{s.traceback[0].lineno}",
                                     "mib": s.size / 2**20} for s in stats]}

    def report(self, top: int):
        total = sum(self.counts.values())
        rows = sorted(self.counts.items(), key=lambda kv: -kv[1])[:top]
        return [{"line": k, "seconds": v, "share": v / total if total else None} for k, v in rows]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--K", type=int, default=K)
    ap.add_argument("--replicates", type=int, default=B)
    ap.add_argument("--no-trace", action="store_true", help="skip the profiled child")
    ap.add_argument("--child", choices=["plain", "trace"], help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.K, a.replicates, a.child == "trace")))
        return 0
    print(f"benchmark 3: estimate(replicates={a.replicates}) at K = {a.K:,}", flush=True)
    runs = []
    kinds = ["plain"] * max(1, a.runs) + ([] if a.no_trace else ["trace"])
    trace = None
    error = None
    for kind in kinds:
        out = _bench.DATA / f".boot_{kind}.json.tmp"
        _bench.DATA.mkdir(parents=True, exist_ok=True)
        r = _bench.run_measured([_bench.python(), __file__, "--child", kind, "--K", str(a.K),
                                 "--replicates", str(a.replicates)], stdout_path=out)
        if r["returncode"] != 0:
            error = f"child ({kind}) exited with {r['returncode']}: {r['stderr'].strip()[-500:]}"
            print("  " + error)
            break
        d = json.loads(out.read_text())
        out.unlink()
        d.update(process_maxrss_mib=r["maxrss_mib"], process_wall_s=r["wall_s"],
                 increment_mib=r["maxrss_mib"] - d["rss_after_setup_mib"])
        if kind == "trace":
            trace = d
            print(f"  profiled run (tracemalloc + line sampler): {d['estimate_s']:.1f} s, traced peak "
                  f"{d['tracemalloc_peak_mib']:.0f} MiB; time by line:", flush=True)
            for x in d["line_profile"][:6]:
                print(f"      {x['share']:5.1%}  {x['line']}", flush=True)
            mh = d.get("traced_memory_at_highest_sample")
            if mh:
                print(f"    largest traced memory seen by the sampler: {mh['traced_mib']:.0f} MiB, held by "
                      + ", ".join(f"{x['line']} {x['mib']:.0f} MiB" for x in mh["top"]), flush=True)
        else:
            runs.append(d)
            print(f"  run: estimate {d['estimate_s']:.1f} s, process {d['process_wall_s']:.1f} s; max RSS "
                  f"{d['process_maxrss_mib']:.0f} MiB (after imports+table {d['rss_after_setup_mib']:.0f} MiB, "
                  f"increment {d['increment_mib']:.0f} MiB; target max RSS <= {RSS_TARGET_MIB:.0f} MiB)", flush=True)
    summary = {"target_rss_mib": RSS_TARGET_MIB, "runs": runs, "trace": trace, "error": error}
    if runs:
        summary["median"] = {k: _bench.median(r[k] for r in runs)
                             for k in ("process_maxrss_mib", "increment_mib", "estimate_s", "process_wall_s",
                                       "rss_after_setup_mib")}
        summary["pass"] = summary["median"]["process_maxrss_mib"] <= RSS_TARGET_MIB
    else:
        summary["pass"] = False
    print(f"  -> {_bench.write_part('bench_bootstrap', summary)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
