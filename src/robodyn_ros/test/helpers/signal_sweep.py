"""A node's executable signalled at a sweep of moments of its start-up, run as a script:

    python signal_sweep.py MODULE SIGNAL STEP -- ROS_ARGS...

imports robodyn_ros.ros.MODULE once (the seconds of imports every start would pay), then
forks processes that each run the module's main() with ROS_ARGS, as its console script does.
The first is signalled once it serves (which warms the kernel cache and times the start);
then one for each moment STEP, 2·STEP, ... up to that time and one STEP beyond, signalled
that long after its fork. It prints one JSON line per process: the moment (s, null for the
first), the exit status (negative: killed by that signal; null: still running PATIENCE s
after the signal, then killed) and the process's output.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from typing import IO

PATIENCE = 30.0  # s a signalled process has to exit: bounds a failure, not the speed
START_PATIENCE = 900.0  # s to serve, a cold kernel cache included
SERVING = "in service"  # what a node logs once its robot is in service


def fork_node(main: Callable[[], None], output: IO[str], ros_args: list[str]) -> int:
    """A forked process running `main` with its output to `output`; its pid."""
    child = os.fork()
    if child == 0:
        os.dup2(output.fileno(), 1)
        os.dup2(output.fileno(), 2)
        sys.argv = ["node", *ros_args]
        status = 0
        try:
            main()
        except SystemExit as end:
            status = end.code if isinstance(end.code, int) else 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    return child


def signal_and_wait(child: int, signum: int) -> int | None:
    """Send `signum` and wait PATIENCE s for the exit status (None: killed after that)."""
    os.kill(child, signum)
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        done, raw = os.waitpid(child, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(raw)
        time.sleep(0.02)
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    return None


def run_once(main: Callable[[], None], moment: float | None, signum: int,
             ros_args: list[str]) -> tuple[dict, float]:
    """A process signalled `moment` s after its fork, or once it serves (None): its record
    and the seconds it ran before the signal."""
    with tempfile.TemporaryFile("w+") as output:
        started = time.monotonic()
        child = fork_node(main, output, ros_args)
        if moment is None:
            while time.monotonic() - started < START_PATIENCE:
                output.seek(0)
                if SERVING in output.read():
                    break
                time.sleep(0.01)
        else:
            time.sleep(moment)
        ran = time.monotonic() - started
        status = signal_and_wait(child, signum)
        output.seek(0)
        return {"moment": moment, "status": status, "output": output.read()}, ran


def main() -> None:
    module, signame, step, separator, *ros_args = sys.argv[1:]
    assert separator == "--", sys.argv
    node_main = importlib.import_module(f"robodyn_ros.ros.{module}").main
    signum = signal.Signals[signame]
    record, start_time = run_once(node_main, None, signum, ros_args)
    print(json.dumps(record), flush=True)
    moment = float(step)
    while moment <= start_time + float(step):
        record, _ = run_once(node_main, moment, signum, ros_args)
        print(json.dumps(record), flush=True)
        moment += float(step)


if __name__ == "__main__":
    main()
