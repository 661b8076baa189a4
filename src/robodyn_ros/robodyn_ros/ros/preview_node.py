"""preview_node: the `preview` action (robodyn_interfaces/action/Preview) — simulate scenarios
ahead from the current state, faster than real time. A lifecycle node (ros.robot_node): it
accepts goals while active.

A goal's scenarios run from goal.start, or from the newest ``joint_states`` (merged by joint
name across publishers, ros.joint_states; refused when older than joint_states_max_age) when
it is empty, fanned out over the parallel backend (parameters ``backend``, ``workers``);
feedback counts the scenarios done; the result holds a PreviewPrediction per scenario (an
optimal_reach's with its plan: the planned JointTrajectory, which controller_node plays as it
is, and its feedback gains). A goal that cannot be previewed is aborted at once with the
reason in result.message (rclpy's goal response cannot carry one). Cancelling stops the
scenarios not yet started. Each preview's frame paths are published as
visualization_msgs/MarkerArray on ``preview/markers`` for RViz, in the robot's root frame with
frame_prefix.

A floating-base robot (parameter floating_base, or a URDF floating joint at the root) starts
from its joints' state (goal.start or joint_states, which carry its joints) and the newest
``odometry`` (nav_msgs/Odometry, REP 105: header.frame_id the world_frame parameter,
child_frame_id its base link), as dynamics_node takes them; a start without an odometry within
joint_states_max_age is refused. It takes torque_profile (its joints' efforts, nothing on the
base) and whole_body_pose scenarios; its predictions carry the joints in the trajectory, the
base in base_path and base_twist, and the paths in the world frame.

A scenario with a world (its planes) previews the robot's contacts with them: the collision
shapes of its description's links that move (ros.contacts.world_shapes, read once per
description; a world without any is refused), and its prediction carries the contacts at the
sample steps and the contact metrics.

A new robot (parameter or topic) is warmed up by a one-step preview before it replaces the
one in service; if that fails it is refused with the reason. Predictions with NaN or inf are
not sent: the goal is aborted with the reason. Every callback runs under the node's guard
(ros.guard): a goal that fails is aborted with the reason, the node reports it on
``/diagnostics`` and goes on serving.

Parameters: COMMON_PARAMETERS (ros.robot_node) and PARAMETERS below (``ros2 param
describe``); every one changeable at run time.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.action.server import ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from robodyn_interfaces.action import Preview
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from robodyn_ros.contact.geometry import CollisionShape
from robodyn_ros.parallel import CancelledError, backend
from robodyn_ros.robot import Robot
from robodyn_ros.ros.contacts import world_shapes
from robodyn_ros.ros.conversions import JointStateMap, RobotState, finite
from robodyn_ros.ros.description import RobotDescription
from robodyn_ros.ros.guard import ERROR, OK, RefusedError
from robodyn_ros.ros.intake import received_ns
from robodyn_ros.ros.joint_states import MAX_AGE_PARAMETER, JointStateMerge, input_qos
from robodyn_ros.ros.odometry import BaseOdometry, OdometryFrames, base_link, odometry_for
from robodyn_ros.ros.parameters import ParameterSpec
from robodyn_ros.ros.preview_messages import (
    goal_scenarios,
    goal_settings,
    path_markers,
    prediction_message,
)
from robodyn_ros.ros.robot_node import WORLD_FRAME_PARAMETER, RobotNode, run_node
from robodyn_ros.sim.preview import PreviewResult, PreviewSettings, preview, warm_up, warm_up_world
from robodyn_ros.sim.scenarios import Scenario, ScenarioError

if TYPE_CHECKING:
    from rclpy.action.server import ServerGoalHandle
    from rclpy.subscription import MessageInfo

PARAMETERS = (
    ParameterSpec("backend", "threads", "what a goal's scenarios fan out over",
                  choices=("threads", "serial")),
    ParameterSpec("workers", 2, "threads of the threads backend", bounds=(1, 256)),
    MAX_AGE_PARAMETER,
    WORLD_FRAME_PARAMETER,
)


@dataclass(frozen=True)
class _HeldStart:
    """The newest complete joint state, a goal's start when it gives none."""

    state: RobotState
    received_ns: int  # when it arrived (system clock)


@dataclass(frozen=True)
class _CollisionShapes:
    """The collision shapes read from a description (None: the robot's own URDF)."""

    description: RobotDescription | None
    shapes: tuple[CollisionShape, ...]


class PreviewNode(RobotNode):
    """The preview action server."""

    TASK = "preview"
    PARAMETERS = PARAMETERS

    def __init__(self, **kwargs: Any) -> None:
        self._joint_states: JointStateMerge | None = None
        self._latest: _HeldStart | None = None  # the newest complete joint state
        self._odometry: BaseOdometry | None = None  # a floating base's
        self._cancels: dict[bytes, threading.Event] = {}
        self._goals = 0
        self._collision: _CollisionShapes | None = None
        super().__init__("preview_node", **kwargs)

    def create_interfaces(self) -> None:
        self.create_subscription(Odometry, "odometry",
                                 self.guard.callback("odometry", self._on_odometry),
                                 **input_qos(1))
        self.create_subscription(JointState, "joint_states",
                                 self.guard.callback("joint_states", self._on_joint_state),
                                 **input_qos(1))
        self._markers = self.create_lifecycle_publisher(MarkerArray, "preview/markers", 1)
        ActionServer(
            self, Preview, "preview", self.guard.action("preview", self._execute, Preview.Result),
            cancel_callback=self.guard.callback("preview cancel", self._on_cancel,
                                                lambda _reason, _handle: CancelResponse.REJECT),
            callback_group=ReentrantCallbackGroup(),
        )

    def adopt(self, robot: Robot) -> None:
        """Put `robot` in service once its forward dynamics exists (at rest, at its neutral
        configuration) and a one-step preview has worked on it.

        Raises:
            Exception: SingularMassMatrixError (a joint that moves no mass), or the failure of
                that preview.
        """
        rest = np.zeros(robot.nv)
        robot.forward_dynamics(robot.neutral(), rest, rest)
        warm_up(robot, PreviewSettings())
        warm_up_world(robot, PreviewSettings())
        floating = robot.model.floating_base
        self._joint_states = JointStateMerge(
            JointStateMap(robot.measured_joints, None if floating else robot.coupling),
            self.value("joint_states_max_age"))
        frames = OdometryFrames(self.frame_id(self.value("world_frame")),
                                self.frame_id(base_link(robot))) if floating else None
        self._odometry, self._latest = odometry_for(frames, self._odometry), None

    def release(self) -> None:
        self._joint_states = self._latest = self._odometry = None

    def apply(self, changes: dict[str, Any]) -> None:
        if "joint_states_max_age" in changes and self._joint_states is not None:
            self._joint_states.max_age = changes["joint_states_max_age"]
        if "world_frame" in changes and self._odometry is not None:
            self._odometry = odometry_for(OdometryFrames(self.frame_id(changes["world_frame"]),
                                                         self._odometry.frames.base),
                                          self._odometry)

    def paths_frame(self, robot: Robot) -> str:
        """The frame_id of the predicted paths: the root link's, a floating base's world."""
        if self._odometry is not None:
            return self._odometry.frames.world
        return self.frame_id(robot.model.root_link)

    def _on_odometry(self, message: Odometry, info: MessageInfo) -> None:
        """Keep the newest odometry of a floating base (ignored for a fixed base).

        Raises:
            RefusedError: its frames, pose or twist cannot be the base's (ros.odometry).
        """
        if self._odometry is not None:
            self._odometry.take(message, received_ns(info))

    def _on_joint_state(self, message: JointState, info: MessageInfo) -> None:
        """Keep the newest joint state (the start of a goal without one)."""
        joint_states = self._joint_states
        if joint_states is not None:
            received = received_ns(info)
            self._latest = _HeldStart(joint_states.update(message, received, time.time_ns()),
                                      received)

    def _on_cancel(
        self, goal_handle: ServerGoalHandle[Preview.Goal, Preview.Result, Preview.Feedback]
    ) -> CancelResponse:
        event = self._cancels.get(bytes(goal_handle.goal_id.uuid))
        if event is not None:
            event.set()
        return CancelResponse.ACCEPT

    def _execute(
        self, goal_handle: ServerGoalHandle[Preview.Goal, Preview.Result, Preview.Feedback]
    ) -> Preview.Result:
        """Run the goal's scenarios; succeed with their predictions or be cancelled.

        Raises:
            RefusedError: the goal cannot be previewed (the guard aborts it with the reason);
                any other failure of the preview is aborted so too.
        """
        self._goals += 1
        goal, robot = goal_handle.request, self.robot
        if not isinstance(robot, Robot):  # None: a floating base is never adopted here
            raise RefusedError("no robot yet: robot_description has not arrived")
        if not self.active:
            raise RefusedError("preview_node is not active")
        try:
            scenarios, settings = goal_scenarios(robot, goal.scenarios), goal_settings(goal)
        except ScenarioError as error:
            raise RefusedError(str(error)) from error
        q, qd = self._start(robot, goal.start)
        key, done = bytes(goal_handle.goal_id.uuid), []
        cancel = self._cancels[key] = threading.Event()

        def report(result: PreviewResult) -> None:
            done.append(result.name)
            goal_handle.publish_feedback(Preview.Feedback(
                scenarios_done=len(done), scenarios_total=len(scenarios), last_scenario=result.name,
            ))

        try:
            with backend(self.get_parameter("backend").value,
                         workers=self.get_parameter("workers").value) as pool:
                results = preview(robot, scenarios, settings, q, qd, pool=pool, on_done=report,
                                  cancel=cancel, collision_shapes=self._shapes(robot, scenarios))
        except CancelledError:
            goal_handle.canceled()
            return Preview.Result(message=f"cancelled after {len(done)} scenarios")
        except ScenarioError as error:  # a scenario at odds with the settings (a plan_period)
            raise RefusedError(str(error)) from error
        finally:
            self._cancels.pop(key, None)
        for result in results:
            check_prediction_finite(result)
        paths_frame = self.paths_frame(robot)
        self._markers.publish(path_markers(results, paths_frame))
        goal_handle.succeed()
        return Preview.Result(predictions=[
            prediction_message(robot, r, self.frame_prefix, paths_frame) for r in results])

    def _shapes(self, robot: Robot, scenarios: Sequence[Scenario]
                ) -> tuple[CollisionShape, ...]:
        """The robot's collision shapes that can touch the scenarios' worlds (none without a
        world), read from its description once for each description.

        Raises:
            RefusedError: a world and no collision shape on a link that moves.
        """
        world = next((s.world for s in scenarios if s.world.planes), None)
        description = self.follower.description if self.follower is not None else None
        if world is None:
            return ()
        if self._collision is None or self._collision.description is not description:
            self._collision = _CollisionShapes(description,
                                               world_shapes(world, description, robot))
        return self._collision.shapes

    def _start(self, robot: Robot, start: JointState) -> tuple[np.ndarray, np.ndarray]:
        """(q, q̇) of goal.start, else of the latest joint_states; a floating base's from the
        newest odometry.

        Raises:
            RefusedError: neither is there, the state is bad (naming the field), or a floating
                base has no odometry within joint_states_max_age.
        """
        assert self._joint_states is not None  # configured along with the robot
        max_age, now = self._joint_states.max_age, time.time_ns()
        if start.name:
            joints = JointStateMap(robot.measured_joints).state(start, "start")
            q, qd = joints.q, joints.qd
        elif self._latest is None:
            raise RefusedError("start is empty and no complete joint_states has arrived")
        else:
            q, qd = self._latest.state.q, self._latest.state.qd
            age = (now - self._latest.received_ns) * 1e-9
            if age > max_age:
                raise RefusedError(f"start is empty and the newest complete joint_states is "
                                   f"{age:.3g} s old (joint_states_max_age {max_age:g} s)")
        if self._odometry is None:
            return q, qd
        floating = self._odometry.robot_state(RobotState(q, qd, None), now, max_age)
        return floating.q, floating.qd

    def report(self) -> tuple[int, str, dict[str, str]]:
        level, message = (OK, "previewing") if self.robot is not None else (ERROR, "no robot")
        values = {"goals": str(self._goals), "goals running": str(len(self._cancels))}
        self._goals = 0
        return level, message, values


def check_prediction_finite(result: PreviewResult) -> None:
    """Raises NonFiniteAnswerError when a scenario's predicted trajectory, or its plan, has NaN
    or inf."""
    quantities = [("predicted q", result.q), ("predicted q̇", result.qd),
                  ("predicted effort", result.effort), ("predicted frame path", result.frame_path)]
    if result.plan is not None:
        quantities += [("planned q", result.plan.q), ("planned q̇", result.plan.v),
                       ("planned effort", result.plan.u), ("feedback gains", result.plan.K)]
    for quantity, values in quantities:
        finite(f"scenario '{result.name}': {quantity}", np.asarray(values))


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted (on two threads: a cancel arrives while a goal runs)."""
    sys.exit(run_node(PreviewNode, args, threads=2))


if __name__ == "__main__":
    main()
