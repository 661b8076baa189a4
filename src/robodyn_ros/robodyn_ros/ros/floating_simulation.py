"""A floating-base robot simulated in one process (`robodyn sim --floating-base`): sim_node
holding it on its feet, dynamics_node computing from its joint_states and odometry,
controller_node's whole-body controller standing it up and preview_node previewing its moves,
with the parameters of a params file (config/floating_sim.yaml), as ros.simulation runs the
arm.

The feet are the frames named, or else the robot's lowest frames at its default configuration
(within FOOT_TOLERANCE of the lowest; point contacts for three or more, whole soles for fewer).
The robot starts on them at z = 0 (Robot.standing). The runner lets it stand, then sends the
base a pose SWAY to its side (along the world's y) in the world frame: a move the legs make
from any posture, straight ones included (a crouch or a lift would wait on straight knees'
singularity; swaying on straight legs lowers the base a little, so the height is printed and
not judged). Before it sends the sway it asks preview_node what the whole-body controller will
do with it (a whole_body_pose scenario with the controller's gains, from the latest state). It
prints the base's position over time from the odometry beside the predicted one, and returns
whether the base ended within TOLERANCE of each target across.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.action.client import ActionClient
from rclpy.parameter import Parameter
from robodyn_interfaces.action import Preview
from robodyn_interfaces.msg import PreviewPrediction, PreviewScenario

from robodyn_ros.robot import Robot
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.ros.odometry import base_link
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.ros.robot_node import RobotNode
from robodyn_ros.ros.sim_node import SimNode
from robodyn_ros.ros.simulation import Observer, nodes_in_process, predict, print_summary

FOOT_TOLERANCE = 0.01  # m above the lowest frame, for a frame to count as a foot
SWAY = 0.02  # m: the base's second target, to its side of where it stands
SIDEWAYS = np.array([0.0, SWAY, 0.0])
TOLERANCE = 0.005  # m: the base from its target, across (x, y), at the end of each phase


@dataclass
class BaseObserver:
    """The newest odometry's stamp (s) and base position (m), and how many arrived."""

    stamp: float = -1.0
    position: np.ndarray = field(default_factory=lambda: np.full(3, np.nan))
    received: int = 0

    def on_odometry(self, message: Odometry) -> None:
        self.stamp = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        p = message.pose.pose.position
        self.position = np.array([p.x, p.y, p.z])
        self.received += 1


def standing_feet(robot: Robot, contacts: Sequence[str]) -> list[str]:
    """The contacts as sim_node and the whole-body controller take them ('frame' or
    'frame:3d'): those given, or else the lowest frames at the default configuration.

    Raises:
        ValueError: a frame the robot lacks.
    """
    if contacts:
        unknown = [c for c in contacts if c.partition(":")[0] not in robot.frame_names]
        if unknown:
            raise ValueError(f"--contacts: robot '{robot.model.name}' has no frame(s) "
                             f"{', '.join(unknown)}")
        return list(contacts)
    heights = robot.frame_poses(robot.default_positions())[:, 2, 3]
    lowest = [name for name, z in zip(robot.frame_names, heights, strict=True)
              if z <= heights.min() + FOOT_TOLERANCE]
    return [f"{foot}:3d" for foot in lowest] if len(lowest) >= 3 else lowest


def run_floating_simulation(
    urdf: Path,
    params_file: Path,
    contacts: Sequence[str] = (),
    seconds_per_target: float = 2.0,
    print_every: float = 0.5,
    gravity: tuple[float, float, float] | None = None,
) -> bool:
    """Run sim_node, dynamics_node, controller_node and preview_node on the floating robot of
    `urdf` standing on `contacts` (standing_feet), hold it where it stands, then preview and
    sway its base by SWAY, each for `seconds_per_target` of sim time; print the base's
    position, actual and predicted; True when it ended within TOLERANCE of each target."""
    robot = Robot.from_urdf(urdf, floating_base=True, gravity=gravity)
    feet = standing_feet(robot, contacts)
    q0 = robot.standing([foot.partition(":")[0] for foot in feet], robot.default_positions())
    base_frame = base_link(robot)
    print(f"robot '{robot.model.name}' on {', '.join(feet)}; its base '{base_frame}' at "
          f"z = {q0[2]:.3f} m")
    node_parameters: tuple[list[Parameter[Any]], ...] = (
        [Parameter("contacts", value=feet), Parameter("initial_positions", value=q0.tolist())],
        [],
        [Parameter("controller_parameters.contacts", value=feet),
         Parameter("controller_parameters.frame", value=base_frame)],
    )
    with nodes_in_process(urdf, params_file,
                          (SimNode, DynamicsNode, ControllerNode, PreviewNode), gravity,
                          floating_base=True, node_parameters=node_parameters) as simulation:
        runner = simulation.runner
        sim_node, _, controller_node, _ = simulation.nodes
        sway = _sway_scenario(robot, q0, feet, base_frame, controller_node)
        ask = partial(predict, ActionClient(runner, Preview, "preview"))
        settings = {"horizon": seconds_per_target, "dt": sim_node.get_parameter("dt").value,
                    "control_period": sim_node.get_parameter("publish_period").value}
        base = BaseObserver()
        runner.create_subscription(Odometry, "odometry", base.on_odometry, 10)
        observer = Observer.watching(runner, robot)
        targets = runner.create_publisher(PoseStamped, "target_pose", 10)
        simulation.start()
        wall_start = time.perf_counter()
        try:
            reached = True
            for name, position in (("stand", q0[:3]), ("sway", q0[:3] + SIDEWAYS)):
                prediction = None
                if name != "stand":
                    prediction = ask(Preview.Goal(scenarios=[sway], **settings))
                    targets.publish(_base_target(q0, position, controller_node))
                reached &= _hold(name, position, base, seconds_per_target, print_every,
                                 prediction, settings["dt"])
            print_summary(observer, time.perf_counter() - wall_start)
            print(f"  odometry: {base.received} messages")
        except KeyboardInterrupt:
            print("\ninterrupted")
            reached = False
    return reached


def _base_target(q0: np.ndarray, position: np.ndarray, controller: RobotNode) -> PoseStamped:
    """The base's pose at `position`, its start orientation, in the controller's world
    frame."""
    message = PoseStamped()
    message.header.frame_id = controller.frame_id(controller.get_parameter("world_frame").value)
    p, o = message.pose.position, message.pose.orientation
    p.x, p.y, p.z = (float(x) for x in position)
    o.x, o.y, o.z, o.w = (float(x) for x in q0[3:7])
    return message


def _sway_scenario(robot: Robot, q0: np.ndarray, feet: Sequence[str], base_frame: str,
                   controller: RobotNode) -> PreviewScenario:
    """The sway as preview_node takes it: the whole-body controller on the feet, with its
    gains and weights, the base to SWAY aside in its start orientation, the centre of mass
    held where it started (where the controller holds it)."""
    gains = controller.get_parameters_by_prefix("controller_parameters")
    scenario = PreviewScenario(
        name="sway", kind=PreviewScenario.WHOLE_BODY_POSE, frame=base_frame, contacts=feet,
        com=robot.centre_of_mass(q0).tolist(),
        **{name: [float(x) for x in gains[name].value]
           for name in ("kp", "kd", "weights") if name in gains})
    p, o = scenario.target.position, scenario.target.orientation
    p.x, p.y, p.z = (float(x) for x in q0[:3] + SIDEWAYS)
    o.x, o.y, o.z, o.w = (float(x) for x in q0[3:7])
    return scenario


def _hold(name: str, position: np.ndarray, base: BaseObserver, seconds: float,
          print_every: float, prediction: PreviewPrediction | None, dt: float) -> bool:
    """Print the base's position for `seconds` of sim time, and the predicted one (its steps
    dt apart) where there is a prediction; whether it ends within TOLERANCE of `position`
    across (x, y)."""
    while base.stamp < 0.0:  # the simulation's first odometry
        time.sleep(0.01)
    start = next_print = base.stamp
    print(f"\n{name}: the base to {np.round(position, 3)} m, from t = {start:.2f} s"
          + (f"; previewed at {prediction.real_time_factor:.0f}x real time" if prediction
             else ""))
    while base.stamp < start + seconds:
        if base.stamp >= next_print:
            predicted = _predicted_base(prediction, round((base.stamp - start) / dt))
            print(f"  t = {base.stamp:6.2f} s   base {np.round(base.position, 4)} m   error "
                  f"across {1e3 * np.linalg.norm((base.position - position)[:2]):7.2f} mm"
                  + (f"   predicted {1e3 * np.linalg.norm((predicted - position)[:2]):7.2f} mm"
                     if prediction else ""))
            next_print += print_every
        time.sleep(0.005)
    error = float(np.linalg.norm((base.position - position)[:2]))
    ok = error <= TOLERANCE
    print(f"  final: {1e3 * error:.2f} mm ({'reached' if ok else 'NOT reached'}; tolerance "
          f"{1e3 * TOLERANCE:.0f} mm)")
    return ok


def _predicted_base(prediction: PreviewPrediction | None, step: int) -> np.ndarray:
    """The predicted base position at a step of the prediction (its last, past the end; NaN
    without a prediction)."""
    if prediction is None or not prediction.base_path.poses:
        return np.full(3, np.nan)
    position = prediction.base_path.poses[min(step, len(prediction.base_path.poses) - 1)].position
    return np.array([position.x, position.y, position.z])
