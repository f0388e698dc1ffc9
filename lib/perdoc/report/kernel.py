"""The report's kernel, started early, and the progress a report build prints.

A report runs its notebooks in a Jupyter kernel: a second Python process that must start, import
pandas, altair and perdoc, and start the chart renderer before the first cell can run. None of that
depends on the analysis, so :class:`EarlyKernel` starts the kernel as the build begins, and the
kernel does that work (:mod:`perdoc.report.warm`) on the other core while this process reads the
data and computes the estimates and simulations. papermill then executes the notebook in that
kernel. The notebook's outputs do not change: the same cells run in the same order; only the imports
have already happened.

:class:`perdoc.progress.Progress` prints what the build is doing, one line per step and per report
section, and a bar while a simulation runs (on standard error, when asked: ``perdoc report`` asks
when standard error is a terminal, or with ``--progress``).
"""

from __future__ import annotations

from pathlib import Path

from ..progress import NO_PROGRESS, Progress  # noqa: F401  (the report's progress lines; re-exported)

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

            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.clients = []

            def client(self, **kwargs):
                kc = super().client(**kwargs)
                self.clients.append(kc)
                return kc

        self.manager = Manager(kernel_name=self.kernel_name)
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
