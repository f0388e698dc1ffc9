"""Shared helpers of the benchmarks: measuring a child process, machine facts, result files.

Wall time is measured around the whole child process (interpreter start and imports included).
Peak memory is the child's own maximum resident set size from ``os.wait4``, taken by the small
launcher ``_launch.py`` (the number ``/usr/bin/time -v`` prints as "Maximum resident set size"),
so nothing outside the venv is needed.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
PARTS = DATA / "results"          # per-benchmark result files (git-ignored)
RESULTS_JSON = HERE / "results.json"
MACHINE_LABEL = "2 cores / 24 GiB"


def run_measured(cmd: list[str], *, stdout_path: Path | None = None, env: dict | None = None,
                 timeout: float = 900.0) -> dict:
    """Run ``cmd`` as a fresh process; return wall seconds, max RSS (MiB), exit code, stderr tail.

    The command is started by ``_launch.py`` (a bare interpreter), which measures it: see there
    why the max RSS of a process forked straight from this (larger) one would be inflated.
    """
    DATA.mkdir(parents=True, exist_ok=True)
    tag = f"{os.getpid()}.{time.monotonic_ns()}"
    err_path = DATA / f".stderr.{tag}.tmp"
    res_path = DATA / f".launch.{tag}.tmp"
    out = open(stdout_path, "wb") if stdout_path is not None else subprocess.DEVNULL
    try:
        with open(err_path, "wb") as err:
            proc = subprocess.Popen([sys.executable, str(HERE / "_launch.py"), str(res_path), *cmd],
                                    stdout=out, stderr=err, env=env, start_new_session=True)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                code = proc.wait()
    finally:
        if stdout_path is not None:
            out.close()
    stderr = err_path.read_text(errors="replace")
    err_path.unlink()
    try:
        m = json.loads(res_path.read_text())
        res_path.unlink()
    except (OSError, ValueError):
        m = {"wall_s": float("nan"), "maxrss_kib": float("nan"), "user_s": float("nan"), "sys_s": float("nan")}
    return {"wall_s": m["wall_s"], "maxrss_mib": m["maxrss_kib"] / 1024.0, "returncode": code,
            "user_s": m["user_s"], "sys_s": m["sys_s"], "stderr": stderr[-2000:]}


def rss_mib() -> float:
    """Current resident set size of this process (MiB), from /proc/self/status."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (MiB)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def median(xs) -> float:
    return float(statistics.median(xs))


def machine() -> dict:
    mem_kib = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    mem_kib = int(line.split()[1])
    except OSError:
        pass
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = {"python": platform.python_version()}
    for mod in ("numpy", "duckdb", "pyarrow", "scipy", "pandas", "perdoc"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - only a label
            versions[mod] = None
    return {"label": MACHINE_LABEL, "cores": os.cpu_count(), "mem_gib": round(mem_kib / 2**20, 1) if mem_kib else None,
            "cpu": cpu, "platform": platform.platform(), "versions": versions,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE")}


def loadavg() -> list[float] | None:
    """1, 5 and 15 minute load averages: other work on the machine distorts timings."""
    try:
        return [float(x) for x in open("/proc/loadavg").read().split()[:3]]
    except OSError:
        return None


def code_state() -> dict:
    """Which library code was measured: commit, and a hash of lib/perdoc/**/*.py (edits not committed)."""
    import hashlib
    lib = HERE.parent / "lib" / "perdoc"
    h = hashlib.sha256()
    for f in sorted(p for p in lib.rglob("*.py") if "__pycache__" not in p.parts):
        h.update(f.relative_to(lib).as_posix().encode() + b"\0" + f.read_bytes())
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE.parent, capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "lib"], cwd=HERE.parent,
                                    capture_output=True, text=True, timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        commit, dirty = None, None
    return {"commit": commit, "lib_uncommitted_changes": dirty, "lib_sha256": h.hexdigest()[:16]}


def today() -> str:
    return _dt.date.today().isoformat()


def write_part(name: str, payload: dict) -> Path:
    """Write one benchmark's results to ``data/results/<name>.json`` (merged by report.py)."""
    PARTS.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": name, "date": today(), "time": _dt.datetime.now().isoformat(timespec="seconds"),
               "machine": machine(), "loadavg_at_end": loadavg(), "code": code_state(), **payload}
    path = PARTS / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    os.replace(tmp, path)
    return path


def python() -> str:
    """The ``python`` on PATH (run.sh puts the venv's bin first), else this interpreter."""
    import shutil
    return shutil.which("python") or sys.executable
