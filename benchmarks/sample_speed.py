"""``perdoc sample`` of 20 documents from a frame of 10^6 documents, as whole processes.

Target: under 2 s wall-clock for each design (srs, stratified, pps, certainty) with ``--take 20``,
interpreter start, imports, reading and hashing the frame, the draw and writing the manifest all
included.

The frame is written to a temporary folder: 10^6 rows of string ids ``doc-000123`` and sizes drawn
from a seeded lognormal (whole numbers of chunks from 1 up). Each design is run ``--runs`` times
(default 5) after one untimed warm-up, as a fresh ``perdoc sample`` process started by
``subprocess``; the min and median wall seconds are printed as a table.

Run: ``python benchmarks/sample_speed.py [--docs 1000000] [--runs 5] [--keep DIR] [--exe CMD]``.
``--keep DIR`` writes the frame and each design's manifest (CSV and JSON) to DIR and leaves them
there (to compare the outputs of two versions byte for byte); ``--exe`` times another command line in
place of this environment's ``perdoc`` (another checkout: ``--exe "env PYTHONPATH=OTHER/lib python -m
perdoc.cli"``).
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DESIGNS = ("srs", "stratified", "pps", "certainty")
TARGET_S = 2.0


def write_frame(path: Path, docs: int, seed: int = 20240601) -> None:
    """``doc,n`` with ``docs`` rows: ids ``doc-000000`` ..., lognormal sizes rounded up to 1."""
    rng = np.random.default_rng(seed)
    sizes = np.maximum(1, np.rint(rng.lognormal(mean=3.0, sigma=1.2, size=docs))).astype(np.int64)
    width = max(6, len(str(docs - 1)))
    ids = np.char.add("doc-", np.char.zfill(np.arange(docs).astype(str), width))
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("doc,n\n")
        f.write("\n".join(f"{d},{n}" for d, n in zip(ids.tolist(), sizes.tolist())))
        f.write("\n")


def perdoc_exe() -> str:
    exe = Path(sys.executable).with_name("perdoc")
    return str(exe) if exe.exists() else (shutil.which("perdoc") or "perdoc")


def command(frame: Path, design: str, out: Path, exe: str | None = None) -> list[str]:
    return [*(shlex.split(exe) if exe else [perdoc_exe()]), "sample", "--frame", str(frame), "--doc", "doc", "--k", "20", "--design", design,
            "--take", "20", "--seed", "1", "--out", str(out)]


def time_once(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-500:]}")
    return wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=1_000_000, help="documents in the frame (default 10^6)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per design (default 5)")
    ap.add_argument("--designs", default=",".join(DESIGNS), help="designs to time (default all four)")
    ap.add_argument("--keep", metavar="DIR", default=None,
                    help="write the frame and the manifests here and keep them (default: a temporary folder)")
    ap.add_argument("--exe", default=None, help="the command to time instead of this environment's perdoc")
    args = ap.parse_args(argv)
    designs = [d.strip() for d in args.designs.split(",") if d.strip()]
    tmp = None
    if args.keep:
        work = Path(args.keep)
        work.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.mkdtemp(prefix="perdoc-sample-speed-")
        work = Path(tmp)
    try:
        frame = work / "frame.csv"
        t0 = time.perf_counter()
        write_frame(frame, args.docs)
        print(f"frame: {args.docs:,} documents, {frame.stat().st_size / 2**20:.1f} MiB "
              f"(written in {time.perf_counter() - t0:.1f} s); {args.runs} runs per design after a warm-up")
        print(f"{'design':<11} {'min s':>7} {'median s':>9}  target < {TARGET_S:g} s")
        for design in designs:
            out = work / f"manifest_{design}.csv"
            cmd = command(frame, design, out, args.exe)
            time_once(cmd)  # warm-up: page cache, .pyc files
            walls = [time_once(cmd) for _ in range(args.runs)]
            med = statistics.median(walls)
            print(f"{design:<11} {min(walls):>7.3f} {med:>9.3f}  {'ok' if med < TARGET_S else 'SLOW'}", flush=True)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
