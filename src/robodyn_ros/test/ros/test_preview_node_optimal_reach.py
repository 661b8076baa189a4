"""preview_node's optimal_reach over real DDS, then its plan played by controller_node.

The bundled Panda from Franka's ready pose to its hand 0.35 m above the table, pointing down,
in 1 s (the plan and the preview at 10 ms, semi-implicit Euler): the Preview action's
prediction arrives within 1 mm with its plan, the planned JointTrajectory and the feedback
gains; that trajectory, published as it is to controller_node (computed torque) as `robodyn
send-trajectory` publishes one, is confirmed taken and played on sim_node (lockstep, RK4 at
1 ms), which ends at the plan's end. A goal with a bad optimal_reach field is aborted naming
the field, and the node serves the next goal.

References: the target itself; sim.preview's plan for the same goal, in the same process (the
message must carry it, in the robot's joint order); the plan's last point, where the simulated
arm must come to rest.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Pose
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher
from robodyn_interfaces.action import Preview
from robodyn_interfaces.msg import PreviewPrediction, PreviewScenario
from sensor_msgs.msg import JointState

from robodyn_ros import Robot
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.preview_messages import goal_scenarios
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.ros.sim_node import SimNode
from robodyn_ros.ros.trajectory_sender import Confirmation, publish_until_taken, reliable_publisher
from robodyn_ros.sim.ilqr import ReachPlan, ReachTask
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import OptimalReach, scenario_from_mapping

from helpers.nodes import PATIENCE, goal_response, wait_for
from helpers.robots import PANDA, PANDA_JOINTS, TIP

READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]  # Franka's "ready" pose, rad
TARGET = (0.5, 0.0, 0.35)  # m, root frame; the hand pointing down: (x, y, z, w) = (1, 0, 0, 0)
HORIZON, DT, INTEGRATOR = 1.0, 0.01, "semi_implicit_euler"
TRACKING = 20.0  # rad/s: computed torque's ω (kp = ω², kd = 2ω), as robodyn excite sets it
HOLD = 0.5  # s of sim time the arm is held at READY before the plan is sent
AT_START = 1e-3  # rad from READY, each joint, when the plan is sent: sim_node's first step does
# not wait for a command (lockstep waits after every later state), so a late first command
# lets the arm sag there, and the joints' friction holds the last tenths of a mrad of the way
# back (measured: 0; 0.17 mrad when the first commands came late)
SETTLE = 0.5  # s of sim time after the trajectory's end before the arm is checked
AT_REST = 1e-3  # rad from the plan's last point, each joint (measured 1.6e-4 to 2.4e-4)
REACHED = 1e-4  # m from the target, the hand at the end (measured 2.6e-6 to 4.0e-6)
SUCCEEDED, ABORTED = 4, 6


@pytest.fixture(scope="module")
def panda() -> Robot:
    return Robot.from_urdf_string(PANDA)


@contextmanager
def spun(*nodes: Node) -> Iterator[None]:
    """The nodes spun by one SingleThreadedExecutor in a thread of its own, then destroyed.
    (A MultiThreadedExecutor with an action server or client in this process starves
    sim_node's lockstep loop: its commands come late by up to a second.)"""
    executor = SingleThreadedExecutor()
    for node in nodes:
        executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        executor.shutdown(timeout_sec=5.0)
        thread.join(timeout=5.0)
        for node in nodes:
            node.destroy_node()


@pytest.fixture(scope="module")
def previews(ros) -> Iterator[ActionClient]:
    """preview_node on the panda, and an action client of its preview action."""
    node = PreviewNode(parameter_overrides=[Parameter("robot_description", value=PANDA)])
    peer = ros.create_node("optimal_reach_preview_test")
    client = ActionClient(peer, Preview, "preview")
    with spun(node, peer):
        assert client.wait_for_server(timeout_sec=PATIENCE)
        yield client


def reach(**fields) -> PreviewScenario:
    """The optimal reach to TARGET, with `fields` of the message set."""
    target = Pose()
    target.position.x, target.position.y, target.position.z = TARGET
    target.orientation.x, target.orientation.w = 1.0, 0.0
    return PreviewScenario(name="reach", kind=PreviewScenario.OPTIMAL_REACH, frame=TIP,
                           target=target, **fields)


def goal(scenario: PreviewScenario, horizon: float = HORIZON) -> Preview.Goal:
    return Preview.Goal(scenarios=[scenario], start=JointState(name=PANDA_JOINTS, position=READY),
                        horizon=horizon, dt=DT, integrator=INTEGRATOR)


def test_the_message_fields_make_the_scenario(panda: Robot) -> None:
    """Empty and zero fields are the library's defaults; given ones are taken."""
    (default,) = goal_scenarios(panda, [reach()])
    assert isinstance(default, OptimalReach)
    assert (default.plan_period, default.effort_weight, default.limit_margin,
            default.iterations, default.tolerance) == (0.01, ReachTask.effort_weight,
                                                       ReachTask.limit_margin, 100, 1e-2)
    np.testing.assert_allclose(default.position, TARGET)
    np.testing.assert_allclose(default.orientation, np.diag([1.0, -1.0, -1.0]), atol=1e-12)
    (given,) = goal_scenarios(panda, [reach(
        kp=[50.0], kd=[10.0], plan_period=0.02, position_weight=[1e5], limit_margin=[0.0],
        velocity_weight=[0.0], iterations=7, tolerance=1e-3)])
    assert isinstance(given, OptimalReach)
    assert (given.plan_period, given.position_weight, given.limit_margin, given.velocity_weight,
            given.iterations, given.tolerance) == (0.02, 1e5, 0.0, 0.0, 7, 1e-3)
    np.testing.assert_allclose([given.kp, given.kd], [[50.0] * 6, [10.0] * 6])


@dataclass
class Playback:
    """sim_node and controller_node spun with a listener node: the joint states it hears (sim
    time, q), controller_node's diagnostic statuses, their confirmation of a trajectory taken
    (ros.trajectory_sender) and the joint_trajectory publisher `robodyn send-trajectory`
    uses."""

    sim: SimNode
    confirmation: Confirmation
    trajectories: Publisher
    states: list[tuple[float, np.ndarray]] = field(default_factory=list)
    statuses: list[DiagnosticStatus] = field(default_factory=list)

    def on_joint_state(self, message: JointState) -> None:
        stamp = message.header.stamp
        self.states.append((stamp.sec + 1e-9 * stamp.nanosec, np.array(message.position)))

    def on_diagnostics(self, message: DiagnosticArray) -> None:
        self.confirmation.on_diagnostics(message)
        self.statuses += [s for s in message.status if s.name.startswith("controller_node:")]

    def reported(self, text: str) -> bool:
        """Whether a status of controller_node has `text` in a value."""
        return any(text in kv.value for s in self.statuses for kv in s.values)


@pytest.fixture
def playback(ros) -> Iterator[Playback]:
    """controller_node (computed torque) and sim_node (lockstep at 10 ms from READY,
    configured and connected: the test activates it) on one executor, as `robodyn sim` runs
    them."""
    controller = ControllerNode(parameter_overrides=[
        Parameter("robot_description", value=PANDA),
        Parameter("controller", value="computed_torque"),
        Parameter("controller_parameters.kp", value=TRACKING**2),
        Parameter("controller_parameters.kd", value=2.0 * TRACKING),
        Parameter("diagnostic_period", value=0.2)])
    sim = SimNode(parameter_overrides=[
        Parameter("robot_description", value=PANDA), Parameter("lockstep", value=True),
        Parameter("publish_period", value=0.01), Parameter("initial_positions", value=READY),
        Parameter("autostart", value=False)])
    listener = ros.create_node("optimal_reach_playback_test")
    played = Playback(sim, Confirmation(controller.get_name()),
                      reliable_publisher(listener, "joint_trajectory"))
    listener.create_subscription(JointState, "joint_states", played.on_joint_state, 1000)
    listener.create_subscription(DiagnosticArray, "/diagnostics", played.on_diagnostics, 50)
    with spun(controller, sim, listener):
        sim.trigger_configure()
        assert wait_for(lambda: sim.count_subscribers("joint_states") >= 2  # controller, listener
                        and controller.count_subscribers("effort_commands") >= 1)
        try:
            yield played
        finally:
            sim.stop()


def test_the_plan_arrives_and_controller_node_plays_it(panda, previews, playback) -> None:
    """The simulation starts once the plan is made: planning in this process (the action's
    and the reference's here) would hold up its lockstep loop, and the arm would sag while no
    command came."""
    _, response = goal_response(previews, goal(reach()))
    assert response.status == SUCCEEDED, response.result.message
    (prediction,) = response.result.predictions
    assert prediction.final_position_error < 1e-3  # m
    (expected,) = preview(panda, [scenario_from_mapping(panda, {"name": "reach", "optimal_reach": {
        "frame": TIP, "position": list(TARGET), "orientation": [1, 0, 0, 0]}})],
        PreviewSettings(horizon=HORIZON, dt=DT, integrator=INTEGRATOR), np.array(READY))
    plan = expected.plan
    assert plan is not None
    check_plan(prediction, plan)
    assert (prediction.plan_iterations, prediction.plan_converged) == (plan.iterations, True)
    assert prediction.plan_cost == pytest.approx(plan.cost, rel=1e-9)
    assert 0.0 < prediction.plan_wall_time < HORIZON / prediction.real_time_factor

    playback.sim.trigger_activate()
    assert wait_for(lambda: playback.states and playback.states[-1][0] > HOLD)
    np.testing.assert_allclose(playback.states[-1][1], READY, atol=AT_START)  # the plan's start
    publish_until_taken(playback.trajectories, playback.confirmation,
                        prediction.planned_trajectory, PATIENCE)  # raises if refused
    taken = playback.states[-1][0]  # sim time: the trajectory started by now
    assert wait_for(lambda: playback.states[-1][0] > taken + HORIZON + SETTLE)
    assert playback.reported(f"of {HORIZON:.2f} s"), "controller_node reported no progress"
    end = playback.states[-1][1]
    print(f"played: largest joint offset from the plan's end {np.abs(end - plan.q[-1]).max():.2e}"
          f" rad, the hand {np.linalg.norm(panda.frame_pose(end, TIP)[:3, 3] - TARGET):.2e} m "
          "from the target")
    np.testing.assert_allclose(end, plan.q[-1], atol=AT_REST)
    assert np.linalg.norm(panda.frame_pose(end, TIP)[:3, 3] - TARGET) < REACHED


def check_plan(prediction: PreviewPrediction, plan: ReachPlan) -> None:
    """The prediction's plan fields carry the plan (times, states, efforts and gains of its
    N steps) in the documented layout."""
    trajectory = prediction.planned_trajectory
    assert list(trajectory.joint_names) == PANDA_JOINTS
    assert trajectory.header.frame_id == "panda_link0"
    assert (trajectory.header.stamp.sec, trajectory.header.stamp.nanosec) == (0, 0)
    points = trajectory.points
    np.testing.assert_allclose(
        [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points],
        plan.times, rtol=0, atol=1e-9)
    np.testing.assert_allclose([p.positions for p in points], plan.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose([p.velocities for p in points], plan.v, rtol=0, atol=1e-12)
    np.testing.assert_allclose([p.effort for p in points], np.vstack([plan.u, plan.u[-1:]]),
                               rtol=0, atol=1e-12)
    n = len(PANDA_JOINTS)
    gains = np.reshape(prediction.feedback_gains, (len(points), n, 2 * n))
    np.testing.assert_allclose(gains, np.concatenate([plan.K, plan.K[-1:]]), rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize("fields, reason", [
    ({"plan_period": 0.015}, "optimal_reach.plan_period (0.015 s) must be a whole number of dt"),
    ({"plan_period": -0.01}, "optimal_reach.plan_period must be > 0"),
    ({"effort_weight": [-1.0]}, "optimal_reach.effort_weight must be ≥ 0"),
    ({"limit_margin": [0.05, 0.1]}, "optimal_reach.limit_margin must have shape (1,)"),
    ({"kp": [100.0, 100.0]}, "optimal_reach.kp must have shape (6,)"),
])
def test_a_bad_field_is_aborted_naming_it_and_the_next_goal_served(previews, fields,
                                                                    reason) -> None:
    _, response = goal_response(previews, goal(reach(**fields)))
    assert response.status == ABORTED
    assert response.result.message.startswith(f"scenario 'reach': {reason}"), \
        response.result.message  # refused as bad input, not a fault of the node
    _, response = goal_response(previews, goal(reach(iterations=1), horizon=0.1))
    assert response.status == SUCCEEDED, response.result.message
    assert response.result.predictions[0].plan_iterations == 1
