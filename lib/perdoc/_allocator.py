"""The ``perdoc`` command's use of the C allocator (a process of its own; a program that imports
perdoc keeps its allocator as it is).

Arrays of more than 128 KiB (a column of 16,384 documents) come from glibc's malloc as fresh
mappings by default, and each page of a fresh mapping costs a fault when first written: at 10^6
documents the per-document work after the aggregation (ordering the ids, checking the table, the
estimate's temporaries of 8 MiB each) spent about a quarter of its time there. Once the aggregation
is fetched, the command asks malloc to take arrays of up to 32 MiB from its heap and to keep up to
64 MiB freed there, so each new array reuses pages already touched. Measured at 10^6 documents
(benchmarks/README.md): about 240 -> 180 ms after the fetch, the same peak of memory. Asked only
after the aggregation, so DuckDB's reading and its peak are as before.
"""

from __future__ import annotations

import os
import sys

#: Turned on by :func:`perdoc.cli.console` (the command), never by the library.
ENABLED = False

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_MAX = 32 << 20    # (glibc's largest allowed M_MMAP_THRESHOLD on 64-bit systems)
_TRIM = 64 << 20

_done = False


def enable() -> None:
    global ENABLED
    ENABLED = True


def reuse_freed_memory() -> bool:
    """Ask glibc's malloc to serve and keep arrays of up to 32 MiB in its heap, when the command
    turned this on and the C library is glibc (once a process). Whether it was asked, now or before."""
    global _done
    if _done:
        return True
    if not ENABLED or not sys.platform.startswith("linux"):
        return False
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return False
        import ctypes
        libc = ctypes.CDLL(None)
        _done = bool(libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_MAX)) & bool(libc.mallopt(_M_TRIM_THRESHOLD, _TRIM))
    except (AttributeError, OSError, ValueError):
        return False
    return _done
