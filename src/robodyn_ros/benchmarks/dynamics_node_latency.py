"""dynamics_node under a joint_states stream (1 kHz; a 10 kHz flood): latency, drops, CPU.

Starts the node in its own process on the bundled Panda with M, b, g and Λ of one frame
published each cycle, publishes joint_states at the given rate from this process for the given
time, and reports:
- sent here, and the node's counts (from its last diagnostics): messages and the states they
  form, states handled and superseded (a newer state taken before one was computed), and
  messages dropped by the middleware,
- the age of each answered state in the node, from its arrival in the middleware to the
  publication of its dynamics (per-second p50 and p99 from its diagnostics), and the node's
  take → publish latency,
- end-to-end latency, joint_states publish → JointSpaceDynamics receipt here (p50/p99),
- dynamics received here against joint states sent, and the node's CPU use.

    .venv/bin/python src/robodyn_ros/benchmarks/dynamics_node_latency.py [--seconds 30] [--docs]
    .venv/bin/python src/robodyn_ros/benchmarks/dynamics_node_latency.py --rate 10000 --seconds 10
    .venv/bin/python src/robodyn_ros/benchmarks/dynamics_node_latency.py --split [--best-effort]

--split sends each state as two messages back to back (the first four joints, then the rest),
as one driver of two joint groups does, and counts the complete states the node computed (an
answer at the first half beside the previous second half is a mixed state, counted apart).

--docs also writes the report to a page of its rate, docs/benchmarks/dynamics_node_latency_1khz.md
at 1 kHz.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from common import BUNDLED_PANDA, Report, add_docs_option

FRAME = "panda_hand_tcp"


def node_process(params_file: Path) -> subprocess.Popen:
    """The dynamics node in its own process."""
    command = [sys.executable, "-m", "robodyn_ros.ros.dynamics_node",
               "--ros-args", "--params-file", str(params_file)]
    return subprocess.Popen(command, env=os.environ.copy(), stderr=subprocess.DEVNULL)


def params_yaml(directory: Path) -> Path:
    urdf = BUNDLED_PANDA.read_text().replace("\n", " ").replace("'", "''")
    path = directory / "dynamics_node.yaml"
    path.write_text(
        "dynamics_node:\n  ros__parameters:\n"
        f"    robot_description: '{urdf}'\n    frames: ['{FRAME}']\n"
        "    diagnostic_period: 1.0\n"
    )
    return path


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=1000.0, help="joint_states per second")
    parser.add_argument("--split", action="store_true", help="each state as two messages")
    parser.add_argument("--best-effort", action="store_true", help="a best-effort publisher")
    add_docs_option(parser)
    args = parser.parse_args()
    report = Report.start(__file__, "The dynamics node at 1 kHz and under a 10 kHz flood", args,
                          libraries=(("rclpy", "ros-rclpy"),),
                          page=f"dynamics_node_latency_{args.rate / 1000:g}khz")
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import qos_profile_sensor_data
    from robodyn_interfaces.msg import JointSpaceDynamics
    from sensor_msgs.msg import JointState

    from robodyn_ros import Robot

    robot = Robot.from_urdf(BUNDLED_PANDA)
    with tempfile.TemporaryDirectory() as folder:
        node = node_process(params_yaml(Path(folder)))
        rclpy.init()
        client = rclpy.create_node("latency_client")
        sent: dict[float, float] = {}  # q[0] carries a sequence number → send time
        last_joint: dict[float, float] = {}  # q[0] → the state's last joint, for --split
        mixed = 0  # answers at a first half beside the previous second half (--split)
        latencies: list[float] = []
        computation: list[float] = []  # the node's own computation_time of each message
        diagnostics: list[dict[str, str]] = []

        def on_dynamics(message: JointSpaceDynamics) -> None:
            nonlocal mixed
            start = sent.get(message.position[0])
            if start is not None and last_joint[message.position[0]] != message.position[-1]:
                mixed += 1
            elif start is not None:
                latencies.append(time.perf_counter() - start)
                computation.append(message.computation_time)

        def on_diagnostics(message: DiagnosticArray) -> None:
            for status in message.status:
                if status.name.split(":")[0] == "dynamics_node":
                    values = {kv.key: kv.value for kv in status.values}
                    diagnostics.append(values | {"warn": status.level == DiagnosticStatus.WARN})

        client.create_subscription(JointSpaceDynamics, "dynamics/joint_space", on_dynamics, 1000)
        client.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
        qos = qos_profile_sensor_data if args.best_effort else 1000
        publisher = client.create_publisher(JointState, "joint_states", qos)
        executor = SingleThreadedExecutor()
        executor.add_node(client)
        spinner = threading.Thread(target=executor.spin, daemon=True)
        spinner.start()

        names = list(robot.joint_names)
        groups = [slice(0, 4), slice(4, None)] if args.split else [slice(None)]
        rng = np.random.default_rng(0)
        period, count = 1.0 / args.rate, int(args.seconds * args.rate)
        Q = rng.uniform(-1.0, 1.0, (count, robot.nv))
        Q[:, 0] = np.arange(count) * 1e-6
        positions, velocities = Q.tolist(), rng.uniform(-1, 1, (count, robot.nv)).tolist()
        while publisher.get_subscription_count() == 0 or not diagnostics:  # node up, model in
            time.sleep(0.05)
        cpu_start, wall_start = cpu_seconds(node.pid), time.perf_counter()
        diagnostics.clear()
        for k in range(count):
            sent[positions[k][0]] = time.perf_counter()
            last_joint[positions[k][0]] = positions[k][-1]
            for group in groups:
                publisher.publish(JointState(name=names[group], position=positions[k][group],
                                             velocity=velocities[k][group]))
            remaining = wall_start + (k + 1) * period - time.perf_counter()
            if remaining > 0.0:
                time.sleep(remaining)
        send_wall = time.perf_counter() - wall_start
        time.sleep(1.0)
        wall = time.perf_counter() - wall_start
        cpu = cpu_seconds(node.pid) - cpu_start
        reports = len(diagnostics)
        while len(diagnostics) < reports + 2:  # a report of the whole run, after its end
            time.sleep(0.05)
        executor.shutdown(timeout_sec=2.0)
        spinner.join(timeout=2.0)
        client.destroy_node()
        rclpy.shutdown()
        node.terminate()
        node.wait(timeout=10)

    ms = np.array(latencies) * 1e3
    in_node = [d for d in diagnostics if d.get("latency p99 (ms)")]
    last = diagnostics[-1]
    handled, superseded = int(last["joint_states handled"]), int(last["joint_states superseded"])
    dropped = int(last["joint_states dropped by the middleware"])
    messages = len(groups) * count
    report.print(f"dynamics_node, bundled Panda, M + b + g + Λ of {FRAME} per cycle, "
                 f"{args.rate:.0f} Hz joint_states for {args.seconds:.0f} s "
                 f"(sent at {count / send_wall:.0f} Hz"
                 + (", each state as two messages" if args.split else "")
                 + (", best effort" if args.best_effort else "") + "):\n")
    lines = [
        f"sent {count} states in {messages} messages; the node counted "
        f"{last['joint_states sent']} messages and {last['joint_states states']} states; "
        f"states handled {handled}, superseded {superseded}; messages dropped by the "
        f"middleware {dropped}"
    ]
    gaps = np.diff(sorted(sent.values()))
    bursts = int(np.count_nonzero(gaps < 0.25 / args.rate))
    lines.append(f"sent within a quarter period of the one before (this process's pacing "
                 f"hiccups, each a state that may supersede its predecessor): {bursts}")
    lines.append(f"dynamics of complete states received here {len(latencies)} "
                 f"(sent - received {count - len(latencies)}); of mixed states {mixed}")
    ages = [d for d in in_node if d.get("joint_states age p99 (ms)")]
    if ages:
        p50 = np.median([float(d["joint_states age p50 (ms)"]) for d in ages])
        p99 = max(float(d["joint_states age p99 (ms)"]) for d in ages)
        lines.append(f"age in the node (arrival in the middleware → dynamics published): "
                     f"median per-second p50 {p50:.3f} ms, worst per-second p99 {p99:.3f} ms")
    warned = sum(d["warn"] for d in in_node)
    lines.append(f"diagnostics at WARN (skipping) in {warned} of {len(in_node)} reports")
    lines.append(f"end-to-end latency (publish → receipt, two processes): p50 "
                 f"{np.percentile(ms, 50):.3f} ms, p99 {np.percentile(ms, 99):.3f} ms, "
                 f"max {ms.max():.3f} ms")
    compute_ms = np.array(computation) * 1e3
    lines.append(f"computation in the node (dynamics and messages, before publishing): p50 "
                 f"{np.percentile(compute_ms, 50):.3f} ms, p99 "
                 f"{np.percentile(compute_ms, 99):.3f} ms")
    if in_node:
        p50 = np.median([float(d["latency p50 (ms)"]) for d in in_node])
        p99 = max(float(d["latency p99 (ms)"]) for d in in_node)
        lines.append(f"in the node (take → publish): p50 {p50:.3f} ms, worst per-second p99 "
                     f"{p99:.3f} ms")
    lines.append(f"node CPU: {100 * cpu / wall:.0f} % of one core")
    report.print("\n".join(f"- {line}" for line in lines))
    report.finish()

if __name__ == "__main__":
    main()
