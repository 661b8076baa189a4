"""The simulation in one process: sim_node, dynamics_node, controller_node and preview_node
with the parameters of a params file (the same file the launch file gives the separate
processes), driven through a sequence of end-effector pose targets. Before sending each
target the runner asks preview_node what the controller will do with it, and prints the
prediction beside what then happens.

The nodes share one SingleThreadedExecutor; the simulation loop has a thread of its own.
rclpy's MultiThreadedExecutor was measured here at 13 closed-loop cycles per second against
100 for the single-threaded one (callbacks are short and Python runs one thread at a time, so
the pool only adds hand-over latency).

It prints each target, the tracking error over time, and at the end the rates the nodes
achieved and the dynamics node's latency; it returns whether every target was reached.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped
from rclpy.action.client import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions
from robodyn_interfaces.action import Preview
from robodyn_interfaces.msg import PreviewPrediction, PreviewScenario
from sensor_msgs.msg import JointState

from robodyn_ros.model import read_robot_description
from robodyn_ros.robot import Robot
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.conversions import JointStateMap, quaternion_from_rotation
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.ros.robot_node import RobotNode, ignore_signals, interrupt_on_signals, spin_until
from robodyn_ros.ros.sim_node import SimNode

if TYPE_CHECKING:
    from rclpy.publisher import Publisher
    from rclpy.task import Future

PREVIEW_GAINS = ("kp", "kd", "null_stiffness", "null_damping")


@dataclass(frozen=True)
class PoseTarget:
    """A position (m) and a rotation matrix for the end-effector frame, in the root frame."""

    position: np.ndarray
    rotation: np.ndarray


@dataclass(frozen=True)
class ObservedState:
    """A joint state the runner received: its stamp (s) and q in the robot's order."""

    time: float
    q: np.ndarray


@dataclass
class Observer:
    """What the runner sees: the latest joint state and the nodes' diagnostics."""

    map: JointStateMap
    state: ObservedState | None = None
    states_received: int = 0
    diagnostics: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    @classmethod
    def watching(cls, runner: Node, robot: Robot) -> Observer:
        """An Observer of the robot's joint states (its measured joints) and of every node's
        diagnostics, subscribed on the runner."""
        observer = cls(JointStateMap(robot.measured_joints))
        runner.create_subscription(JointState, "joint_states", observer.on_joint_state, 10)
        runner.create_subscription(DiagnosticArray, "/diagnostics", observer.on_diagnostics, 50)
        return observer

    def on_joint_state(self, message: JointState) -> None:
        q, _, _ = self.map.state(message)
        self.state = ObservedState(
            message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec, q)
        self.states_received += 1

    def on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            values = {kv.key: kv.value for kv in status.values}
            self.diagnostics.setdefault(status.name, []).append(values | {"": status.message})


def pose_error(robot: Robot, q: np.ndarray, frame: str, target: PoseTarget) -> tuple[float, float]:
    """Position error (m) and rotation angle (rad) between the frame at q and the target."""
    pose = robot.frame_pose(q, frame)
    position = float(np.linalg.norm(target.position - pose[:3, 3]))
    cosine = (np.trace(target.rotation @ pose[:3, :3].T) - 1.0) / 2.0
    return position, float(np.arccos(np.clip(cosine, -1.0, 1.0)))


def default_targets(robot: Robot, q0: np.ndarray, frame: str) -> list[PoseTarget]:
    """Three targets around the frame's start pose: moves of 10–15 cm, turns of 15–20°."""
    start = robot.frame_pose(q0, frame)
    turns = [np.eye(3), _rotation_z(np.radians(20.0)), _rotation_x(np.radians(-15.0))]
    offsets = [(0.10, 0.0, 0.0), (0.0, 0.15, -0.10), (-0.05, -0.10, 0.10)]
    return [
        PoseTarget(start[:3, 3] + np.array(offset), turn @ start[:3, :3])
        for offset, turn in zip(offsets, turns, strict=True)
    ]


def _rotation_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rotation_x(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


@dataclass
class NodesInProcess:
    """Nodes configured in this process, spun by one executor with a runner node of the
    caller's, every node active but the simulation (the first), which `start` activates.

    Attributes:
        robot: the robot of the nodes' description.
        nodes: the nodes, sim_node first.
        runner: a plain node for the caller's subscriptions and publishers.
    """

    robot: Robot
    nodes: list[RobotNode]
    runner: Node

    def start(self) -> None:
        """Activate the simulation, once what listens to it is in place."""
        transition(self.nodes[0], "activate")


@contextmanager
def nodes_in_process(
    urdf: Path,
    params_file: Path,
    node_types: Sequence[Callable[..., RobotNode]],
    gravity: tuple[float, float, float] | None = None,
    xacro_args: Mapping[str, str] | None = None,
    floating_base: bool = False,
    node_parameters: Sequence[Sequence[Parameter[Any]]] = (),
) -> Iterator[NodesInProcess]:
    """The nodes of `node_types` (sim_node's first) with the parameters of `params_file`,
    configured and activated one by one (the simulation left for NodesInProcess.start), on
    one executor spun in a thread of its own; every node's robot_description is the URDF text
    of `urdf` (a xacro file expanded with `xacro_args`), `gravity` (the base frame's, m/s²;
    the world's for a floating base) every node's gravity parameter when given, and
    `floating_base` every node's; node_parameters[k], when given, more of node k's. Ctrl-C or
    SIGTERM raise KeyboardInterrupt in the block; the nodes are torn down after it whatever
    happens.

    Raises:
        RuntimeError: a transition failed (the node's log says why).
    """
    description = read_robot_description(urdf, xacro_args)
    overrides: list[Parameter[Any]] = [Parameter("robot_description", value=description),
                                        Parameter("floating_base", value=floating_base)]
    if gravity is not None:
        overrides.append(Parameter("gravity", value=list(gravity)))
    robot = Robot.from_urdf_string(description, source=str(urdf), gravity=gravity,
                                   floating_base=floating_base)
    interrupt_on_signals()  # Ctrl-C or SIGTERM: KeyboardInterrupt here, then the tear-down
    rclpy.init(args=["--ros-args", "--params-file", str(params_file)],
               signal_handler_options=SignalHandlerOptions.NO)
    overrides.append(Parameter("autostart", value=False))  # the transitions are driven here
    nodes: list[RobotNode] = []
    runner = rclpy.create_node("simulation_runner")
    executor = SingleThreadedExecutor()
    stop = threading.Event()
    spinner = threading.Thread(target=spin_until, args=(executor, stop), daemon=True)
    try:
        extras = [*node_parameters, *([()] * (len(node_types) - len(node_parameters)))]
        nodes += [node_type(parameter_overrides=[*overrides, *extra])
                  for node_type, extra in zip(node_types, extras, strict=True)]
        for node in nodes:
            transition(node, "configure")
        for node in nodes[1:]:  # the simulation starts last, once its controller is listening
            transition(node, "activate")
        for each in (*nodes, runner):
            executor.add_node(each)
        spinner.start()
        yield NodesInProcess(robot, nodes, runner)
    finally:
        ignore_signals()
        stop.set()
        if spinner.is_alive():
            spinner.join(timeout=5.0)
        executor.shutdown(timeout_sec=5.0)
        for each in (*nodes, runner):
            each.destroy_node()
        rclpy.try_shutdown()


@dataclass(frozen=True)
class TargetTour:
    """The pose targets run_simulation sends, and when it calls one reached.

    Attributes:
        frame: the frame the operational-space controller moves (default_targets').
        seconds_per_target: sim time each target is held, s.
        position_tolerance: the largest position error of a reached target, m.
        orientation_tolerance: the largest orientation error of a reached target, rad.
        print_every: sim time between two printed errors, s.
    """

    frame: str
    seconds_per_target: float = 3.0
    position_tolerance: float = 0.005
    orientation_tolerance: float = 0.02
    print_every: float = 0.5

    def reached(self, position_error: float, orientation_error: float) -> bool:
        """Whether a final pose error (m, rad) is within the tolerances."""
        return (position_error <= self.position_tolerance
                and orientation_error <= self.orientation_tolerance)


def run_simulation(
    urdf: Path,
    params_file: Path,
    tour: TargetTour,
    *,
    gravity: tuple[float, float, float] | None = None,
    xacro_args: Mapping[str, str] | None = None,
    sim_parameters: Sequence[Parameter[Any]] = (),
) -> bool:
    """Run the four nodes in this process (nodes_in_process), send the tour's targets one
    after the other, print the tracking error and a summary; True when every target was
    reached. `urdf`, `gravity` and `xacro_args` as nodes_in_process takes them;
    `sim_parameters`: more of sim_node's (its world_file)."""
    with nodes_in_process(urdf, params_file, (SimNode, DynamicsNode, ControllerNode, PreviewNode),
                          gravity, xacro_args, node_parameters=[sim_parameters]) as simulation:
        robot, runner = simulation.robot, simulation.runner
        sim_node, _, controller_node, _ = simulation.nodes
        preview = Previewer(ActionClient(runner, Preview, "preview"), robot, tour.frame,
                            _controller_gains(controller_node), sim_node.get_parameter("dt").value,
                            sim_node.get_parameter("publish_period").value)
        observer = Observer.watching(runner, robot)
        targets_out = runner.create_publisher(PoseStamped, "target_pose", 10)
        simulation.start()
        wall_start = time.perf_counter()
        try:
            reached = _follow_targets(tour, observer, targets_out, preview)
            print_summary(observer, time.perf_counter() - wall_start)
        except KeyboardInterrupt:
            print("\ninterrupted")
            reached = False
    return reached


def transition(node: RobotNode, name: str) -> None:
    """Take a lifecycle node through a transition ("configure": load and warm up the robot;
    "activate"), printing it.

    Raises:
        RuntimeError: the transition failed (the node's log says why).
    """
    started = time.perf_counter()
    if getattr(node, f"trigger_{name}")() != TransitionCallbackReturn.SUCCESS:
        raise RuntimeError(f"{node.get_name()}: {name} failed")
    print(f"{node.get_name()}: {name}d in {time.perf_counter() - started:.2f} s")


@dataclass
class Previewer:
    """Asks preview_node what the controller will do with a target, from the latest state."""

    client: ActionClient[Any, Any, Any]
    robot: Robot
    frame: str
    gains: dict[str, list[float]]
    dt: float
    control_period: float  # sim_node's publish_period: the controller answers each state

    def predict(self, target: PoseTarget, seconds: float) -> PreviewPrediction | None:
        """The prediction of `seconds` under the target, or None (the reason printed)."""
        scenario = PreviewScenario(name="next target", kind=PreviewScenario.POSE_TARGET,
                                   frame=self.frame, **self.gains)
        p, o = scenario.target.position, scenario.target.orientation
        p.x, p.y, p.z = target.position.tolist()
        o.x, o.y, o.z, o.w = quaternion_from_rotation(target.rotation.tolist())
        return predict(self.client, Preview.Goal(scenarios=[scenario], horizon=seconds,
                                                 dt=self.dt, control_period=self.control_period))

    def error_at(self, prediction: PreviewPrediction | None, elapsed: float,
                 target: PoseTarget) -> tuple[float, float]:
        """pose_error of the predicted state `elapsed` s after the start (NaN without one)."""
        if prediction is None:
            return float("nan"), float("nan")
        points = prediction.trajectory.points
        q = points[min(len(points) - 1, round(elapsed / self.dt))].positions
        return pose_error(self.robot, np.array(q), self.frame, target)


def predict(
    client: ActionClient[Any, Any, Any], goal: Preview.Goal,
) -> PreviewPrediction | None:
    """preview_node's prediction of the goal's first scenario from the latest state, or None
    (the reason printed)."""
    if not client.wait_for_server(timeout_sec=10.0):
        print("  preview: preview_node did not answer")
        return None
    handle = _wait(client.send_goal_async(goal))
    response = _wait(handle.get_result_async())
    if response.result.message:
        print(f"  preview: {response.result.message}")
        return None
    prediction: PreviewPrediction = response.result.predictions[0]
    return prediction


def _wait(future: Future[Any]) -> Any:
    while not future.done():
        time.sleep(0.005)
    return future.result()


def _controller_gains(controller: RobotNode) -> dict[str, list[float]]:
    """The operational-space controller's gains as PreviewScenario fields."""
    parameters = controller.get_parameters_by_prefix("controller_parameters")
    return {name: np.atleast_1d(parameters[name].value).astype(float).tolist()
            for name in PREVIEW_GAINS if name in parameters}


def _follow_targets(tour: TargetTour, observer: Observer, publisher: Publisher[PoseStamped],
                    preview: Previewer) -> bool:
    robot, frame, seconds = preview.robot, tour.frame, tour.seconds_per_target
    while observer.state is None:  # the simulation's first joint state
        time.sleep(0.01)
    targets = default_targets(robot, observer.state.q, frame)
    reached = True
    for k, target in enumerate(targets, start=1):
        prediction = preview.predict(target, seconds)
        message = PoseStamped()
        message.header.frame_id = robot.model.root_link
        p, o = message.pose.position, message.pose.orientation
        p.x, p.y, p.z = target.position.tolist()
        o.x, o.y, o.z, o.w = quaternion_from_rotation(target.rotation.tolist())
        publisher.publish(message)
        t0 = observer.state.time
        print(f"\ntarget {k}: position {np.round(target.position, 3)} m, sent at t = {t0:.2f} s"
              + (f"; previewed at {prediction.real_time_factor:.0f}x real time"
                 if prediction else ""))
        print(f"  {'':11}   {'position error mm':>20}   {'orientation error rad':>24}")
        print(f"  {'':11}   {'actual':>9} {'predicted':>10}   {'actual':>11} {'predicted':>12}")
        next_print = t0
        while observer.state.time < t0 + seconds:
            latest = observer.state  # one state: the subscription replaces it at any moment
            t, q = latest.time, latest.q
            if t >= next_print:
                position, angle = pose_error(robot, q, frame, target)
                predicted_position, predicted_angle = preview.error_at(prediction, t - t0,
                                                                       target)
                print(f"  t = {t:6.2f} s   {1e3 * position:9.2f} "
                      f"{1e3 * predicted_position:10.2f}   {angle:11.4f} {predicted_angle:12.4f}")
                next_print += tour.print_every
            time.sleep(0.005)
        position, angle = pose_error(robot, observer.state.q, frame, target)
        ok = tour.reached(position, angle)
        reached &= ok
        print(f"  final: {1e3 * position:.2f} mm, {angle:.4f} rad "
              f"({'reached' if ok else 'NOT reached'}; tolerance "
              f"{1e3 * tour.position_tolerance:.0f} mm, {tour.orientation_tolerance} rad)")
    return reached


def print_summary(observer: Observer, wall: float) -> None:
    """The sim time, wall time, joint states and each node's last diagnostics."""
    sim_time = observer.state.time if observer.state else 0.0
    print(f"\nsimulated {sim_time:.2f} s in {wall:.2f} s of wall time "
          f"(real-time factor {sim_time / wall:.2f}); {observer.states_received} joint states")
    for name, reports in sorted(observer.diagnostics.items()):
        last = reports[-1]
        shown = ", ".join(f"{key} {value}" for key, value in last.items() if key and value)
        print(f"  {name}: {last['']}; {shown}")
