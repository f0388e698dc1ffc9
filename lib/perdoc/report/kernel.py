"""The report's kernel, started early, and the progress a report build prints.

A report runs its notebooks in a Jupyter kernel: a second Python process that must start, import
pandas, altair and perdoc, and start the chart renderer before the first cell can run. None of that
depends on the analysis, so :class:`EarlyKernel` starts the kernel as the build begins, and the
kernel does that work (:mod:`perdoc.report.warm`) on the other core while this process reads the
data and computes the estimates and simulations. papermill then executes the notebook in that
kernel. The notebook's outputs do not change: the same cells run in the same order; only the imports
have already happened.

:class:`Progress` prints what the build is doing, one line per step and per report section, and a
bar while a simulation runs (on standard error, when asked: ``perdoc report`` asks when standard
error is a terminal, or with ``--progress``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

#: The kernel's start-up: quiet, perdoc's import guard (:mod:`perdoc._imports`), then the imports.
KERNEL_ARGS = ["--IPKernelApp.log_level=ERROR",
               "--IPKernelApp.exec_lines=['import perdoc.report.warm']"]


class EarlyKernel:
    """A python3 kernel started now, in ``cwd``, with the report's imports done at its start-up.

    Use as a context manager: the kernel is shut down on leaving, whatever happened. ``manager`` is
    the kernel manager to give papermill (``km=``), which then uses this kernel instead of starting
    one. The kernel inherits this process's environment as it is when the kernel starts (the build's
    cache and runtime folders).
    """

    def __init__(self, cwd: Path, kernel_name: str = "python3"):
        self.cwd = Path(cwd)
        self.kernel_name = kernel_name
        self.manager = None

    def __enter__(self) -> "EarlyKernel":
        from jupyter_client.manager import AsyncKernelManager
        from jupyter_core.utils import run_sync

        class Manager(AsyncKernelManager):
            """Keeps the clients it hands out, so that their channels can be closed at the end."""
            clients: list = []

            def client(self, **kwargs):
                kc = super().client(**kwargs)
                self.clients.append(kc)
                return kc

        self.manager = Manager(kernel_name=self.kernel_name)
        self.manager.clients = []
        run_sync(self.manager.start_kernel)(extra_arguments=KERNEL_ARGS, cwd=str(self.cwd))
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def close(self) -> None:
        """Stop the clients' channels and the kernel; remove its connection file."""
        from jupyter_core.utils import run_sync
        km, self.manager = self.manager, None
        if km is None:
            return
        for kc in km.clients:
            try:
                kc.stop_channels()
            except Exception:  # noqa: BLE001 (a client already closed)
                pass
        try:
            if run_sync(km.is_alive)():
                run_sync(km.shutdown_kernel)(now=True)
        finally:
            run_sync(km.cleanup_resources)()


class Progress:
    """One line per step of a report build on ``stream``, with the seconds since the build began,
    and a bar that redraws itself in place while a simulation runs (a terminal) or a line at each
    quarter (a file or pipe)."""

    def __init__(self, name: str, stream=None):
        self.name = name
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self._bar_open = False
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def _prefix(self) -> str:
        return f"perdoc: {self.name} [{time.perf_counter() - self.start:5.1f} s]"

    def step(self, text: str) -> None:
        """Announce a step that begins now."""
        self._close_bar()
        print(f"{self._prefix()} {text}", file=self.stream, flush=True)

    def bar(self, label: str):
        """A ``progress(done, total)`` callback for a simulation, drawing ``label`` and a bar."""
        shown = {"quarter": -1}

        def draw(done: int, total: int) -> None:
            width = 30
            filled = int(width * done / max(total, 1))
            line = f"{self._prefix()} {label} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,}"
            if self._tty:
                print("\r" + line, end="", file=self.stream, flush=True)
                self._bar_open = True
            else:
                quarter = 4 * done // max(total, 1)
                if quarter > shown["quarter"]:
                    shown["quarter"] = quarter
                    print(line, file=self.stream, flush=True)
        return draw

    def _close_bar(self) -> None:
        if self._bar_open:
            print(file=self.stream, flush=True)
            self._bar_open = False

    def section_hook(self, titles: dict[str, str]):
        """An ``on_cell_start`` hook for nbclient: a line when the executed cell begins a section.
        ``titles`` maps a cell's ``perdoc_section`` metadata to the title to print."""
        seen: set[str] = set()

        def hook(cell=None, cell_index=None, **_):
            section = (cell or {}).get("metadata", {}).get("perdoc_section")
            if section is not None and section not in seen:
                seen.add(section)
                self.step(titles.get(section, section))
        return hook

    def done(self, text: str) -> None:
        self.step(text)
