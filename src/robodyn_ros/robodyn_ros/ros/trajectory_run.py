"""`robodyn sim --trajectory FILE --record BAG`: a joint trajectory played on the simulated
robot and its joint states recorded, in one process.

sim_node and controller_node run with the parameters of a params file (`robodyn excite`'s
params.yaml: sim_node in lockstep at the control period the preview checked, controller_node
with computed torque), on one executor (ros.simulation.nodes_in_process). joint_states
(positions, velocities and the efforts applied) are recorded to a new rosbag2 from a state
after the simulation's first, whose effort is zero since no command came before it
(ros.bag_record.BagRecorder), with half the publish period as the lag
of its efforts in the bag's metadata (bag.reading.EFFORT_LAG_KEY: sim_node's effort at a stamp
is the command it held over the period before it); the trajectory goes to controller_node
as `robodyn send-trajectory` sends it, stamped START_DELAY of sim time after the newest state so
that its time 0 is known here; recording ends SETTLE s of sim time after its last point, and
the nodes stop. The tracking error is each joint's largest |q − q*| from the trajectory's time 0
on, q* the reference controller_node follows (control.trajectory).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from robodyn_ros.bag.reading import EFFORT_LAG_KEY
from robodyn_ros.bag.writing import open_writer
from robodyn_ros.control.trajectory import JointTrajectoryReference
from robodyn_ros.ros.bag_record import QUEUE, BagRecorder
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.conversions import JointStateMap, trajectory_reference
from robodyn_ros.ros.sim_node import SimNode
from robodyn_ros.ros.simulation import nodes_in_process
from robodyn_ros.ros.trajectory_sender import (
    Confirmation,
    publish_until_taken,
    reliable_publisher,
    trajectory_from_yaml,
)

RECORDED_TOPIC = "/joint_states"
START_DELAY = 1.0
"""s of sim time from the newest state to the trajectory's time 0: room for it to be taken."""
SETTLE = 0.5
"""s of sim time recorded after the trajectory's last point."""
PATIENCE = 30.0
"""s of wall time to wait for the first joint state, the controller, or the next state."""


@dataclass(frozen=True, eq=False)
class RecordedRun:
    """What was recorded.

    Attributes:
        bag: the rosbag2 folder.
        messages: joint_states messages written.
        duration: s of sim time recorded, from a state once the recording had begun to the
            trajectory's end.
        tracking_error: (n,) each joint's largest |q − q*| from the trajectory's time 0 on, rad
            (m).
        joint_names: the robot's joints, the order of tracking_error.
    """

    bag: Path
    messages: int
    duration: float
    tracking_error: np.ndarray
    joint_names: tuple[str, ...]


@dataclass(frozen=True)
class _StampedPosition:
    """A joint state's sim time (s) and position q in the robot's order."""

    time: float
    q: np.ndarray


@dataclass
class _Tracker:
    """The newest joint state's sim time and position, and the largest tracking error of the
    trajectory once its time 0 is set."""

    joint_map: JointStateMap
    newest: _StampedPosition | None = None
    reference: JointTrajectoryReference | None = None
    start: float = 0.0
    worst: np.ndarray | None = None

    def on_joint_state(self, message: JointState) -> None:
        q = self.joint_map.state(message).q
        t = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        self.newest = _StampedPosition(t, q)
        if self.reference is not None and t >= self.start:
            error = np.abs(q - self.reference.at(t - self.start)[0])
            self.worst = error if self.worst is None else np.maximum(self.worst, error)

    def spin_until(self, executor: Executor, sim_time: float | None,
                   what: str) -> _StampedPosition:
        """Spin `executor` (the recording's, in this thread) until a state stamped at
        `sim_time` or later has arrived (None: any); that state.

        Raises:
            TimeoutError: no new state within PATIENCE s, naming `what` it waited for.
        """
        waited_from, seen = time.monotonic(), self.newest
        while self.newest is None or (sim_time is not None and self.newest.time < sim_time):
            executor.spin_once(timeout_sec=0.05)
            if self.newest is not seen:
                waited_from, seen = time.monotonic(), self.newest
            elif time.monotonic() - waited_from > PATIENCE:
                raise TimeoutError(f"no joint state from sim_node within {PATIENCE:g} s while "
                                   f"waiting for {what}")
        return self.newest


def play_and_record(
    urdf: Path,
    params_file: Path,
    trajectory_file: Path,
    bag: Path,
    storage: str = "sqlite3",
    gravity: tuple[float, float, float] | None = None,
    xacro_args: dict[str, str] | None = None,
) -> RecordedRun:
    """Play the trajectory of `trajectory_file` on sim_node and controller_node (parameters
    from `params_file`) and record joint_states to the new rosbag2 `bag` until SETTLE s after
    its last point (module docstring).

    Args:
        urdf: the robot's URDF or xacro file (expanded with `xacro_args`).
        params_file: the ROS parameters of sim_node and controller_node.
        trajectory_file: a trajectory_msgs/JointTrajectory in the YAML form of ros2 topic pub.
        bag: the new rosbag2 folder.
        storage: "sqlite3" or "mcap".
        gravity: every node's gravity (the base frame's, m/s²) when given.
        xacro_args: a xacro file's arguments.

    Returns:
        What was recorded.

    Raises:
        TrajectoryError: an unreadable trajectory file, or one controller_node refuses or does
            not confirm.
        JointStateError: a trajectory that does not fit the robot (named).
        BagError: the bag folder exists, or an unknown storage.
        TimeoutError: the simulation stopped publishing joint states.
        RuntimeError: a node that did not configure or activate.
    """
    message = trajectory_from_yaml(trajectory_file)
    with open_writer(bag, storage) as writer, nodes_in_process(
            urdf, params_file, (SimNode, ControllerNode), gravity, xacro_args) as simulation:
        robot = simulation.robot
        sim_node, controller_node = simulation.nodes
        joint_map = JointStateMap(robot.joint_names)
        confirmation = Confirmation(controller_node.get_name())
        simulation.runner.create_subscription(DiagnosticArray, "/diagnostics",
                                              confirmation.on_diagnostics, 50)
        publisher = reliable_publisher(simulation.runner, "joint_trajectory")
        tracker = _Tracker(joint_map)
        recording = rclpy.create_node("trajectory_recorder")  # spun here: the bag's writer
        executor = SingleThreadedExecutor()                   # is used from this thread only
        try:
            executor.add_node(recording)
            recording.create_subscription(JointState, RECORDED_TOPIC, tracker.on_joint_state,
                                          QoSProfile(depth=QUEUE,
                                                     reliability=ReliabilityPolicy.BEST_EFFORT))
            simulation.start()
            first = tracker.spin_until(executor, None, "the simulation's first state").time
            recorder = BagRecorder(recording, writer, [RECORDED_TOPIC])
            _wait_for_recording(executor, recorder)
            recorded = tracker.spin_until(executor, first, "a recorded state")
            now, q = recorded.time, recorded.q
            start = now + START_DELAY
            tracker.reference = trajectory_reference(message, joint_map, q, np.zeros_like(q))
            tracker.start = start
            stamp = round(start * 1e9)
            message.header.stamp = Time(sec=stamp // 10**9, nanosec=stamp % 10**9)
            publish_period = sim_node.get_parameter("publish_period").value
            writer.set_custom_data(EFFORT_LAG_KEY, repr(0.5 * publish_period))
            publish_until_taken(publisher, confirmation, message, PATIENCE)
            end = tracker.spin_until(executor, start + tracker.reference.duration + SETTLE,
                                     "the trajectory's end").time
            count = recorder.recorded[RECORDED_TOPIC].count
        finally:
            executor.shutdown()
            recording.destroy_node()
    return RecordedRun(bag, count, end - now,
                       tracker.worst if tracker.worst is not None else np.zeros(robot.nv),
                       tuple(robot.joint_names))


def _wait_for_recording(executor: Executor, recorder: BagRecorder) -> None:
    """Spin the recording until it has written a state of the recorded topic.

    Raises:
        TimeoutError: none within PATIENCE s.
    """
    deadline = time.monotonic() + PATIENCE
    while RECORDED_TOPIC not in recorder.recorded or not recorder.recorded[RECORDED_TOPIC].count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing of {RECORDED_TOPIC} recorded within {PATIENCE:g} s")
        executor.spin_once(timeout_sec=0.05)
