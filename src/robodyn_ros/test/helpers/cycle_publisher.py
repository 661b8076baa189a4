"""A driver in a process of its own, for the rate tests: it publishes joint_states cycle by
cycle, each as one message or split in two halves back to back, and records what the node
under test answers (so that neither costs the node's process any time).

Run as ``python cycle_publisher.py best-effort|reliable ANSWERS NODE`` (ANSWERS:
``dynamics/joint_space``, whose answers are recorded by their position, or
``effort_commands``, by their data; NODE: the name of the node under test). It prints
``ready`` once NODE subscribes to joint_states and publishes ANSWERS as this process sees the
graph (another node on joint_states does not make it ready). Commands on stdin, one a line:

- ``send FIRST RATE DURATION SPLIT``: cycles FIRST, FIRST + 1, … at RATE Hz for DURATION s
  (SPLIT 1: as halves); prints ``sent COUNT``. Cycle k carries Q0 + k STEP on every joint.
- ``answers``: prints the answers recorded so far as one JSON list of rows.
"""

from __future__ import annotations

import json
import sys
import threading
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from robodyn_interfaces.msg import JointSpaceDynamics
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from helpers.robots import PANDA_JOINTS, Q0

STEP = 1e-5  # rad
QOS = {"best-effort": qos_profile_sensor_data, "reliable": QoSProfile(depth=10)}
ANSWERS = {"dynamics/joint_space": (JointSpaceDynamics, "position"),
           "effort_commands": (Float64MultiArray, "data")}


def cycle_state(k: int, names: list[str]) -> JointState:
    """Cycle k's state of the joints `names` (Q0 + k STEP)."""
    message = JointState(name=names, velocity=[0.0] * len(names))
    message.position = [Q0[PANDA_JOINTS.index(name)] + k * STEP for name in names]
    return message


def send(out, first: int, rate: float, duration: float, split: bool) -> int:
    """Send the cycles (module docstring); how many."""
    groups = [PANDA_JOINTS[:4], PANDA_JOINTS[4:]] if split else [PANDA_JOINTS]
    count = round(rate * duration)
    messages = [[cycle_state(k, names) for names in groups] for k in range(first, first + count)]
    start = time.perf_counter()
    for i, cycle in enumerate(messages):
        for message in cycle:
            out.publish(message)
        time.sleep(max(0.0, start + (i + 1) / rate - time.perf_counter()))
    return count


def has_endpoint(endpoints: list, node_name: str) -> bool:
    """Whether one of a topic's endpoints (TopicEndpointInfo) is the node `node_name`'s."""
    return any(endpoint.node_name == node_name for endpoint in endpoints)


def main() -> None:
    rclpy.init()
    node = rclpy.create_node("cycle_publisher")
    out = node.create_publisher(JointState, "joint_states", QOS[sys.argv[1]])
    kind, field = ANSWERS[sys.argv[2]]
    answers: list[list[float]] = []
    node.create_subscription(kind, sys.argv[2],
                             lambda message: answers.append(list(getattr(message, field))), 1000)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    while not (has_endpoint(node.get_subscriptions_info_by_topic("/joint_states"), sys.argv[3])
               and has_endpoint(node.get_publishers_info_by_topic(f"/{sys.argv[2]}"),
                                sys.argv[3])):
        time.sleep(0.01)
    print("ready", flush=True)
    for line in sys.stdin:
        command, *arguments = line.split()
        if command == "send":
            first, rate, duration, split = arguments
            count = send(out, int(first), float(rate), float(duration), split == "1")
            print(f"sent {count}", flush=True)
        else:
            print(json.dumps(answers[:]), flush=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
