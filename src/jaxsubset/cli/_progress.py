"""The command's progress bar on stderr, drawn only on a terminal."""

import sys
import threading
import time
from typing import TextIO


class Progress:
    """A progress bar on ``stream`` (stderr), drawn only on a terminal and after ``delay`` s.

    Work goes through stages (``stage("reading data.csv")``, ``stage("computing", total=12)``);
    a stage with a total shows a bar, one without shows the elapsed time. After :meth:`start`
    a background thread redraws the line a few times a second, so a long stage with no steps
    (reading a big file, one large computation) still shows that it is alive. Quick runs and
    redirected output never see it; :meth:`close` erases it.
    """

    def __init__(
        self,
        total: int | None,
        label: str,
        *,
        stream: TextIO | None = None,
        enabled: bool = True,
        delay: float = 0.5,
    ) -> None:
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = enabled and bool(isatty and isatty())
        self.total = total
        self.label = label
        self.done = 0
        self.t0 = self.t_stage = time.perf_counter()
        self.delay = delay
        self.last = -1.0
        self.width = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def drawn(self) -> bool:
        return self.width > 0

    def start(self) -> "Progress":
        """Start redrawing in the background (only when enabled)."""
        if self.enabled and self._thread is None:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            self._draw(force=True)

    def stage(self, label: str, total: int | None = None) -> None:
        """Begin a new stage of work."""
        with self._lock:
            self.label, self.total, self.done = label, total, 0
            self.t_stage = time.perf_counter()
        self._draw(force=True)

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more steps of the current stage done."""
        with self._lock:
            self.done += n
        self._draw()

    def _line(self) -> str:
        elapsed = time.perf_counter() - self.t_stage
        if not self.total:
            return f"{self.label} ... {elapsed:.1f} s"
        done = min(self.done, self.total)
        filled = 30 * done // self.total
        bar = "#" * filled + "-" * (30 - filled)
        return f"{self.label} [{bar}] {100 * done // self.total:3d}% ({done}/{self.total})"

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        with self._lock:
            now = time.perf_counter()
            if now - self.t0 < self.delay:
                return
            finished = bool(self.total and self.done >= self.total)
            if not force and not finished and now - self.last < 0.1:
                return
            self.last = now
            line = self._line()
            pad = " " * max(self.width - len(line), 0)
            self.stream.write(f"\r{line}{pad}")
            self.stream.flush()
            self.width = max(self.width, len(line))

    def close(self) -> None:
        """Stop redrawing and erase the line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            if self.width:
                self.stream.write("\r" + " " * self.width + "\r")
                self.stream.flush()
                self.width = 0
