"""Processes started and stopped together, as ``ros2 launch`` supervises its nodes: each line
they print prefixed with the process's name; SIGINT or SIGTERM stops them all (SIGINT to
each, then SIGTERM and SIGKILL to those still running after a grace period), and so does one
that exits on its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

GRACE = 10.0  # s a process has, after SIGINT and again after SIGTERM, before the next signal
POLL = 0.1  # s between looks at the processes while they run
LAUNCH = "launch"  # the prefix of what the supervisor itself says
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass(frozen=True)
class Command:
    """A process to run: its name (the prefix of its output) and its command line."""

    name: str
    command: list[str]


class _Output:
    """Lines written whole to one stream, from several threads."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream, self._lock = stream, threading.Lock()

    def line(self, prefix: str, text: str) -> None:
        with self._lock:
            self._stream.write(f"[{prefix}] {text}\n")
            self._stream.flush()


class _Started:
    """A process started, and the thread that copies its output, line by line, prefixed."""

    def __init__(self, command: Command, output: _Output, env: dict[str, str]) -> None:
        self.name = command.name
        # a process group of its own: a terminal's Ctrl-C reaches the supervisor alone, which
        # then signals each process once
        self.process = subprocess.Popen(
            command.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, errors="replace", env=env, process_group=0,
        )
        self._copy = threading.Thread(target=self._copy_output, args=(output,), daemon=True)
        self._copy.start()
        output.line(LAUNCH, f"{self.name} started, pid {self.process.pid}")

    def _copy_output(self, output: _Output) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            output.line(self.name, line.rstrip("\n"))

    def signal(self, signum: signal.Signals) -> None:
        """Send `signum` if it still runs."""
        if self.process.poll() is None:
            self.process.send_signal(signum)

    def wait_output(self) -> None:
        """Wait until all it printed is copied (it has ended)."""
        self._copy.join()


def supervise(commands: Sequence[Command], stream: IO[str] = sys.stdout,
              grace: float = GRACE) -> int:
    """Run `commands`, one process each, until SIGINT or SIGTERM, or until one exits on its
    own; then stop the others (SIGINT, then SIGTERM and SIGKILL to those still running
    `grace` s after the one before) and wait for every one.

    What the processes print goes to `stream`, each line prefixed with the process's name,
    and so does what happens to them (under ``[launch]``).

    Returns:
        0 when a signal stopped them and each ended by itself after SIGINT (status 0, or
        killed by that SIGINT); 1 when one exited on its own, or one had to be sent SIGTERM
        or SIGKILL, or ended with another status (each such process is named in `stream`).
    """
    output = _Output(stream)
    stop = threading.Event()
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    started: list[_Started] = []
    with _signals_set(stop):
        try:
            for command in commands:
                if stop.is_set():
                    break
                started.append(_Started(command, output, env))
        except OSError as error:  # the others are stopped as when one exits
            output.line(LAUNCH, f"{command.name} did not start ({error}); stopping the others")
            _stop(started, output, grace)
            for process in started:
                process.wait_output()
            return 1
        exited = _wait_for_stop_or_exit(started, stop)
        if exited is None:
            output.line(LAUNCH, "stopping every node (signal received)")
        else:
            output.line(LAUNCH, f"{exited.name} exited on its own with "
                        f"{_status(exited.process.returncode)}; stopping the others")
        forced = _stop(started, output, grace)
    for process in started:
        process.wait_output()
    failed = [process for process in started
              if process.process.returncode not in (0, -signal.SIGINT)]
    for process in failed:
        if process is not exited:
            output.line(LAUNCH, f"{process.name} ended with {_status(process.process.returncode)}")
    return 1 if exited is not None or forced or failed else 0


def _wait_for_stop_or_exit(started: list[_Started], stop: threading.Event) -> _Started | None:
    """Wait for a stop signal (None) or for a process that exits (it)."""
    while not stop.wait(POLL):
        for process in started:
            if process.process.poll() is not None:
                return process
    return None


def _stop(started: list[_Started], output: _Output, grace: float) -> bool:
    """SIGINT to every process still running, then SIGTERM and SIGKILL to those still running
    `grace` s after the signal before; waits for every one. Returns whether any needed more
    than SIGINT."""
    forced = False
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        running = [process for process in started if process.process.poll() is None]
        if not running:
            break
        if signum != signal.SIGINT:
            forced = True
            output.line(LAUNCH, f"{', '.join(p.name for p in running)} still running "
                        f"{grace:g} s after the last signal: {signum.name}")
        for process in running:
            process.signal(signum)
        for process in running:
            try:
                process.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
    for process in started:
        process.process.wait()
    return forced


def _status(returncode: int) -> str:
    """An exit status as words: "status 1", "signal SIGKILL"."""
    if returncode < 0:
        return f"signal {signal.Signals(-returncode).name}"
    return f"status {returncode}"


@contextmanager
def _signals_set(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set `stop` while the block runs (a second one too: the stop under
    way goes on), then the handlers before are put back."""
    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    before = {signum: signal.signal(signum, on_signal) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
