"""Simulation results kept on disk between runs, when asked (``PERDOC_MEMO_DIR``).

A coverage simulation is a pure function of its inputs: the census's per-document sums, the design,
K, the number of samples, the seed, the level and the bootstrap replicates. Rerunning a study to
change its title, its language or its planning target recomputes the same simulations, which are
most of a report's time. With the environment variable ``PERDOC_MEMO_DIR`` naming a folder, the
functions decorated with :func:`memoized` store each result there under a key made of

* the function's name,
* every argument, with a table (:class:`~perdoc.reading.table.DocTable`,
  :class:`~perdoc.reading.pairs.PairTable`) reduced to the numbers the simulation reads (its
  arrays, scale and document attributes; not its file names, which change from one report build to
  the next while the numbers do not), and
* a hash of perdoc's own source files, so a result computed by other code is never reused,

and return the stored result the next time. A stored result is the pickled object itself, so a hit
gives the same floats, and the same report, byte for byte. Without the variable nothing is stored.
A report's charts are stored the same way: the SVG vl-convert draws from a chart's spec
(:func:`perdoc.report.charts._vega_svg`), a third of the time a report's notebooks take.
Writes go through a temporary file and a rename, so concurrent runs (parallel test workers) never
read half a file. A ``progress`` argument is not part of the key; a hit reports no progress.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from pathlib import Path

import numpy as np

__all__ = ["memoized", "MEMO_ENV", "key_of", "source_hash"]

#: The environment variable naming the folder of stored simulation results.
MEMO_ENV = "PERDOC_MEMO_DIR"

_SKIP = {"progress"}


@functools.lru_cache(maxsize=1)
def source_hash() -> str:
    """SHA-256 of every ``.py`` file of the installed perdoc package (paths and contents)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _feed(h, x) -> None:
    """Add ``x`` to the hash ``h`` in a form that depends only on its value."""
    from ..reading.pairs import PairTable
    from ..reading.table import DocTable
    if isinstance(x, np.ndarray):
        h.update(f"nd{x.dtype.str}{x.shape}".encode())
        h.update(np.ascontiguousarray(x).tobytes() if x.dtype != object else repr(x.tolist()).encode())
    elif isinstance(x, DocTable):
        source = {k: x.source.get(k) for k in ("metric", "binary")}
        _feed(h, ("DocTable", x.doc, x.n, x.s, x.q, x.q_assumed_binary, x.scale, x.attrs, source))
    elif isinstance(x, PairTable):
        _feed(h, ("PairTable", x.doc, x.n_a, x.s_a, x.q_a, x.n_b, x.s_b, x.q_b, x.q_d, x.names, x.paired,
                  x.scale, {k: x.source.get(k) for k in ("metric", "binary")}))
    elif isinstance(x, dict):
        h.update(b"{")
        for k in sorted(x, key=repr):
            _feed(h, k)
            _feed(h, x[k])
        h.update(b"}")
    elif isinstance(x, (list, tuple)):
        h.update(f"{type(x).__name__}[{len(x)}".encode())
        for v in x:
            _feed(h, v)
        h.update(b"]")
    elif x is None or isinstance(x, (bool, int, float, str, bytes, np.generic)):
        h.update(f"{type(x).__name__}:{x!r}".encode())
    else:
        raise TypeError(f"cannot key a {type(x).__name__}")


def key_of(name: str, args: tuple, kwargs: dict) -> str:
    """The store's key of a call: the function's name, the arguments' values and perdoc's source."""
    h = hashlib.sha256(name.encode())
    h.update(source_hash().encode())
    _feed(h, args)
    _feed(h, {k: v for k, v in kwargs.items() if k not in _SKIP})
    return h.hexdigest()


def memoized(fn):
    """``fn`` with its results stored in ``$PERDOC_MEMO_DIR`` (when set) under :func:`key_of`."""
    name = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        folder = os.environ.get(MEMO_ENV)
        if not folder:
            return fn(*args, **kwargs)
        try:
            key = key_of(name, args, kwargs)
        except TypeError:      # an argument without a value-only key: compute, store nothing
            return fn(*args, **kwargs)
        path = Path(folder) / f"{key}.pickle"
        if path.exists():
            return _load(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with _key_lock(path.with_name(f"{key}.lock")):
            if path.exists():      # another process computed it while this one waited
                return _load(path)
            result = fn(*args, **kwargs)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            with open(tmp, "wb") as f:
                pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        return result

    return wrapper


def _load(path: Path):
    with open(path, "rb") as f:
        return pickle.load(f)


class _key_lock:
    """One computation of a key at a time across processes (an advisory lock on a file beside the
    result; released when the holder ends, however it ends): parallel test workers that need the same
    simulation compute it once, the others wait and read it. Where ``fcntl`` is missing, no lock."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:
            return self
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)   # closing releases the lock
            self.fd = None
        return False
