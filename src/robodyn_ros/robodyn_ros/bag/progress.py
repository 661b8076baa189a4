"""A progress bar with the rate and the time left, on a terminal (stderr)."""

from __future__ import annotations

import sys
import time
from contextlib import AbstractContextManager, nullcontext
from typing import TextIO

WIDTH = 30  # characters of the bar
PERIOD = 0.2  # s between redraws


class ProgressBar:
    """Call with the number of items just done; close() (or leaving a with block) ends the
    line. Draws
    ``label [#####.....]  45%  450000/1000000  120000/s  ETA 0:00:04``."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total, self.label = total, label
        self.stream = sys.stderr if stream is None else stream  # the one current at the start
        self.done = 0
        self.started = self._drawn = time.monotonic()

    def __call__(self, count: int) -> None:
        self.done += count
        now = time.monotonic()
        if now - self._drawn >= PERIOD or self.done >= self.total:
            self._drawn = now
            self.stream.write("\r" + self.line(now - self.started))
            self.stream.flush()

    def line(self, elapsed: float) -> str:
        """The bar after `elapsed` seconds."""
        fraction = self.done / self.total if self.total else 1.0
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        bar = "#" * round(fraction * WIDTH)
        return (f"{self.label} [{bar:.<{WIDTH}}] {fraction:4.0%}  {self.done}/{self.total}  "
                f"{rate:.0f}/s  ETA {_clock(left)}")

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _clock(seconds: float) -> str:
    minutes, second = divmod(round(seconds), 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}:{minute:02d}:{second:02d}"


def progress_bar(show: bool, total: int, label: str) -> AbstractContextManager[ProgressBar | None]:
    """A ProgressBar of `total` items closed on exit, or nothing when not `show`."""
    if not show:
        return nullcontext(None)
    return ProgressBar(total, label)
