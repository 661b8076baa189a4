"""Kernels compiled ahead, in helper processes, while a process starts on a new machine.

A process about to call kernels (a node adopting a robot, ``robodyn demo``) first names the
calls it will make as WarmUpSteps. Where the kernel cache (dynamics.jit) has not seen a step,
CompileAhead starts helper processes, one per spare core, that make the steps too, from the
other end of the list. Every kernel loads or compiles under a lock of its own
(dynamics.jit.CompileLock), so each compiles once, in whichever process reaches it first, and
the others load it from the cache: the caller's own calls are unchanged, only sooner done. A
caller may also leave steps to the helpers alone, which go on after it has gone on (a node's
service quantities, after the node is in service). A helper reports each step it finished,
which the caller logs as progress, and marks it in the cache folder, so that a warm start
starts no helper.

The helpers run ``python -m robodyn_ros.startup.compile_ahead``: they read pickled lists of steps on
stdin until it closes, and end with their caller.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from robodyn_ros.dynamics.jit import kernel_cache_dir
from robodyn_ros.robot.answers import load_checks_pivots_first


@dataclass(frozen=True)
class WarmUpStep:
    """One call that loads, on a new machine compiles, kernels: ``call(*arguments)``.

    `call` is a module-level function and `arguments` picklable (a Robot pickles as its
    Model), so that a helper process can make the call; `name` says what it compiles, for the
    progress log, and with the call keys the step's mark in the cache folder.
    """

    name: str
    call: Callable[..., object]
    arguments: tuple[Any, ...] = ()

    def run(self) -> None:
        """Make the call."""
        self.call(*self.arguments)

    @property
    def mark(self) -> Path:
        """The file whose presence says the kernel cache holds this step's kernels."""
        key = f"{self.call.__module__}.{self.call.__qualname__}: {self.name}"
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        return kernel_cache_dir() / "warm" / digest


def spare_cores() -> int:
    """The cores this process may run on, less the one it runs on."""
    return max(0, len(os.sched_getaffinity(0)) - 1)


class CompileAhead:
    """Helper processes that compile a caller's WarmUpSteps ahead of it (module docstring).

    Use as a context manager around the calls; `ahead` names them before they are made.
    Leaving the block normally lets the helpers finish their steps in the background (those
    the caller made load at once; the others compile), each logged as it ends; leaving it by
    an exception stops them at once.

    Args:
        log: takes one line of progress (a node's logger, print).
        helpers: how many helper processes at most (default: one per spare core).
    """

    def __init__(self, log: Callable[[str], object], helpers: int | None = None) -> None:
        self.log = log
        self.most_helpers = spare_cores() if helpers is None else helpers
        self._helpers: list[subprocess.Popen[bytes]] = []
        self._readers: list[threading.Thread] = []
        self._started = 0.0
        self._running = 0
        self._pending = 0
        self._finished = 0
        self._lock = threading.Lock()

    def __enter__(self) -> CompileAhead:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.close(stop=kind is not None)

    def ahead(self, steps: Sequence[WarmUpStep]) -> None:
        """Give the helpers the steps the cache has not seen (starting them the first time
        there are any), each helper from another point of the list, backwards."""
        pending = [step for step in steps if not step.mark.exists()]
        if not pending or self.most_helpers < 1:
            return
        try:
            backwards = [pickle.dumps(step) for step in reversed(pending)]
        except Exception as error:
            self.log(f"kernels: compiled here only, the steps do not pickle ({error})")
            return
        if not self._helpers:
            self._start(min(self.most_helpers, len(pending)), len(pending))
        else:
            self._pending += len(pending)
        for index, helper in enumerate(self._helpers):
            shift = index * len(backwards) // len(self._helpers)
            _send(helper.stdin, backwards[shift:] + backwards[:shift])

    def close(self, stop: bool = False) -> None:
        """Close the helpers' input: they finish the steps they have, or end now (`stop`)."""
        for helper in self._helpers:
            if helper.stdin is not None and not helper.stdin.closed:
                try:
                    helper.stdin.close()
                except OSError:  # the helper is gone
                    pass
            if stop:
                helper.kill()
        if stop:
            self.wait()

    def wait(self, timeout: float | None = None) -> None:
        """Close the helpers' input and wait until they have ended (at most `timeout` s)."""
        self.close()
        deadline = None if timeout is None else time.monotonic() + timeout
        for reader in self._readers:
            reader.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def _start(self, count: int, pending: int) -> None:
        """Start `count` helpers, each reading its steps on stdin and reporting on stdout."""
        self._started, self._pending = time.monotonic(), pending
        self.log(f"kernels: {pending} steps not yet in the cache {kernel_cache_dir()}: "
                 f"compiling them for this machine, once, here and in {count} helper "
                 f"process{'es' if count > 1 else ''}")
        self._running = count
        package_parent = str(Path(__file__).resolve().parent.parent)
        path = os.environ.get("PYTHONPATH")
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [package_parent, path] if path else [package_parent])}
        for _ in range(count):
            helper = subprocess.Popen(
                [sys.executable, "-m", "robodyn_ros.startup.compile_ahead", str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=environment, text=False,
            )
            reader = threading.Thread(target=self._follow, args=(helper,), daemon=True,
                                      name="compile-ahead reader")
            reader.start()
            self._helpers.append(helper)
            self._readers.append(reader)

    def _follow(self, helper: subprocess.Popen[bytes]) -> None:
        """Log each step a helper reports finished, and once the last helper has ended, how
        many steps they made."""
        assert helper.stdout is not None
        for line in helper.stdout:
            try:
                report = json.loads(line)
            except ValueError:  # not a report (a library's print)
                continue
            if not report["ok"]:
                continue  # the caller's own call meets the same failure and reports it
            with self._lock:
                self._finished += 1
                count = f"{self._finished} of {self._pending}"
            if report["seconds"] >= 0.5:  # compiled, not loaded
                self._say(f"kernels: {report['name']} compiled in {report['seconds']:.1f} s "
                         f"({count})")
        helper.wait()
        with self._lock:
            self._running -= 1
            if self._running:
                return
        self._say(f"kernels: {self._finished} of {self._pending} steps compiled ahead or loaded "
                  f"in {time.monotonic() - self._started:.1f} s; cached in {kernel_cache_dir()}")

    def _say(self, line: str) -> None:
        """Log a line from a reader thread, which may outlive the caller's logger."""
        try:
            self.log(line)
        except Exception:  # a logger already shut down: the line is lost, nothing else
            pass


def _send(stream: IO[bytes] | None, steps: list[bytes]) -> None:
    """Write one list of pickled steps to a helper (which may have ended: then nothing)."""
    if stream is None:
        return
    try:
        pickle.dump(steps, stream)
        stream.flush()
    except (BrokenPipeError, OSError):
        pass


def run_helper(caller: int, source: IO[bytes], report: IO[str]) -> None:
    """A helper's loop: run each step of each list of pickled steps read from `source` until
    it closes, mark it, and report it as a JSON line; end when the caller process ends."""
    threading.Thread(target=_end_with, args=(caller,), daemon=True).start()
    while True:
        try:
            pickled: list[bytes] = pickle.load(source)
        except EOFError:
            return
        for payload in pickled:
            start, name, ok = time.monotonic(), "", False
            try:
                step: WarmUpStep = pickle.loads(payload)
                name = step.name
                step.run()
            except Exception:  # the caller reports it from its own call
                pass
            else:
                ok = True
                _mark(step)
            print(json.dumps({"name": name, "ok": ok, "seconds": time.monotonic() - start}),
                  file=report, flush=True)


def _mark(step: WarmUpStep) -> None:
    try:
        step.mark.parent.mkdir(parents=True, exist_ok=True)
        step.mark.touch()
    except OSError:  # a read-only cache: no mark, the next start compiles ahead again
        pass


def _end_with(caller: int) -> None:
    """Exit this process once the caller has ended (checked twice a second)."""
    while os.getppid() == caller:
        time.sleep(0.5)
    os._exit(0)


def call_at_rest(robot: Any, function: str, frame: str = "", batch: int = 0) -> None:
    """A step's call: ``robot.<function>`` at rest (Robot.default_positions; q̇, q̈, τ zero),
    of `frame` where the function takes one, for one state or for a batch of `batch` (> 0)
    states."""
    q = robot.default_positions()
    rest = np.zeros(robot.nv)
    if batch:
        q, rest = np.tile(q, (batch, 1)), np.zeros((batch, robot.nv))
    method = getattr(robot, function)
    given = {"q": q, "qd": rest, "qdd": rest, "tau": rest, "frame": frame, "frames": frame}
    method(*(given[name] for name in inspect.signature(method).parameters if name in given))


def robot_calls(robot: Any, calls: Sequence[tuple[str, int]], frame: str) -> list[WarmUpStep]:
    """Steps of `robot`'s functions called at rest (call_at_rest): (function, batch) pairs,
    batch 0 for one state."""
    return [WarmUpStep(f"{function}{f' of {batch} states' if batch else ''}", call_at_rest,
                       (robot, function, frame, batch))
            for function, batch in calls]


def robot_load_step(urdf: str) -> WarmUpStep:
    """The step of a robot's load (Robot.from_urdf_string of `urdf`), before it is built."""
    return WarmUpStep("robot load checks", load_checks_pivots_first, (urdf,))


if __name__ == "__main__":
    run_helper(int(sys.argv[1]), sys.stdin.buffer, sys.stdout)
