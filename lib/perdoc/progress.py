"""What a long command prints while it works: a line per step with the seconds since it began, and
a bar while a simulation runs (``perdoc report --progress``, ``perdoc simulate`` on a terminal).
:data:`NO_PROGRESS` stands in where nothing is to be printed, so callers never test for None."""

from __future__ import annotations

import sys
import time


class Progress:
    """One line per step of the command ``name`` on ``stream``, with the seconds since it began,
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
        self.close()
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

    def close(self) -> None:
        """End a bar's line left open on a terminal."""
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


class _Silent:
    """A :class:`Progress` that prints nothing: its bars are None, which the simulations take as
    'no progress'."""

    def step(self, text: str) -> None:
        return None

    def bar(self, label: str):
        return None

    def section_hook(self, titles: dict[str, str]):
        return None

    def close(self) -> None:
        return None


NO_PROGRESS = _Silent()
