"""Run a command as a grandchild and report its own wall time and max RSS (used by _bench.py).

Why a launcher: the max RSS the kernel reports for a child (``wait4``, ``RUSAGE_CHILDREN``) is at
least the RSS of the process it was forked from, so a command started directly from a benchmark
script that holds numpy arrays would inherit the script's footprint. This launcher is a bare
interpreter (a few MiB); the command it forks starts from that. ``/usr/bin/time -v`` does the same.

Usage: ``python _launch.py RESULT.json CMD [ARG...]``; exits with the command's exit status.
"""

import json
import os
import sys
import time

out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(out, "w") as fh:
    json.dump({"wall_s": wall, "maxrss_kib": ru.ru_maxrss, "user_s": ru.ru_utime, "sys_s": ru.ru_stime}, fh)
sys.exit(os.waitstatus_to_exitcode(status))
