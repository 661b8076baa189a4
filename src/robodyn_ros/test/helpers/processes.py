"""Processes a test starts and ends with signals: one per signal, each told its signal once
it has printed a marker line, and what each printed by the time it ended."""

from __future__ import annotations

import select
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

SIGNALS = (signal.SIGINT, signal.SIGTERM)
MARKER_PATIENCE = 120.0  # s, for a process to print its marker line


@contextmanager
def one_per_signal(command: list[str], envs: list[dict[str, str]]
                   ) -> Iterator[dict[signal.Signals, subprocess.Popen]]:
    """`command` started once per signal of SIGNALS (the environments in that order), its
    output (stdout and stderr) on stdout; killed at the end if still running."""
    processes = {signum: subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True)
                 for signum, env in zip(SIGNALS, envs, strict=True)}
    try:
        yield processes
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.communicate()


def signalled_outputs(processes: dict[signal.Signals, subprocess.Popen], marker: str,
                      settle: float, patience: float) -> dict[signal.Signals, str]:
    """Wait until each process printed a line starting with `marker` (at most MARKER_PATIENCE
    s each), then `settle` s, send each its signal and wait at most `patience` s for it to end
    (the test fails if it does not).

    Returns:
        What each printed, by its signal.
    """
    printed = {}
    for signum, process in processes.items():
        lines: list[str] = []
        deadline = time.monotonic() + MARKER_PATIENCE
        while not any(line.startswith(marker) for line in lines):
            ready, _, _ = select.select([process.stdout], [], [], deadline - time.monotonic())
            if not ready:
                pytest.fail(f"{process.args} printed no '{marker}' line in {MARKER_PATIENCE} s:"
                            f"\n{''.join(lines)}")
            line = process.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
        printed[signum] = "".join(lines)
    time.sleep(settle)
    for signum, process in processes.items():
        assert process.poll() is None, printed[signum]
        process.send_signal(signum)
    for signum, process in processes.items():
        try:
            rest, _ = process.communicate(timeout=patience)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{process.args[0]} still running {patience} s after {signum.name}")
        printed[signum] += rest
    return printed
