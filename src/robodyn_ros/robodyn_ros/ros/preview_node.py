"""preview_node: the `preview` action (robodyn_interfaces/action/Preview) — simulate scenarios
ahead from the current state, faster than real time.

A goal's scenarios run from goal.start, or from the latest ``joint_states`` when it is empty,
fanned out over the parallel backend (parameters ``backend``: "threads" or "serial",
``workers``); feedback counts the scenarios done; the result holds a PreviewPrediction per
scenario. A goal that cannot be previewed is aborted at once with the reason in
result.message (rclpy's goal response cannot carry one). Cancelling stops the scenarios not
yet started. Each preview's frame paths are published as visualization_msgs/MarkerArray on
``preview/markers`` for RViz.

A new robot (parameter or topic) is warmed up by a one-step preview before it replaces the
one in service; if that fails it is refused with the reason. Predictions with NaN or inf are
not sent: the goal is aborted with the reason. Every callback runs under the node's guard
(ros.guard): a goal that fails is aborted with the reason, the node reports it on
``/diagnostics`` and goes on serving.

Parameters: robot_description (string; empty: the ``robot_description`` topic), armature
(string) and gravity (double[3]) as dynamics_node's, backend, workers, diagnostic_period
(double, 1.0 s).
"""

from __future__ import annotations

import threading

import numpy as np
from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from robodyn_interfaces.action import Preview
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from robodyn_ros.parallel import CancelledError, backend
from robodyn_ros.robot import Robot
from robodyn_ros.ros.conversions import JointStateMap, finite
from robodyn_ros.ros.entry import (
    follow_robot_description,
    publish_diagnostics,
    spin_until_interrupted,
)
from robodyn_ros.ros.guard import ERROR, OK, Guard, NodeHealth, RefusedError
from robodyn_ros.ros.preview_messages import (
    goal_scenarios,
    goal_settings,
    path_markers,
    prediction_message,
)
from robodyn_ros.sim.preview import PreviewResult, PreviewSettings, preview, warm_up
from robodyn_ros.sim.scenarios import ScenarioError


class PreviewNode(Node):
    """The preview action server."""

    def __init__(self, **kwargs) -> None:
        super().__init__("preview_node", **kwargs)
        self.declare_parameter("robot_description", "")
        self.declare_parameter("backend", "threads")
        self.declare_parameter("workers", 2)
        self.declare_parameter("diagnostic_period", 1.0)
        self.health = NodeHealth(self.get_logger())
        self.guard = Guard(self.health)
        self.robot: Robot | None = None
        self._latest: JointState | None = None
        self._cancels: dict[bytes, threading.Event] = {}
        self._goals = 0
        group = ReentrantCallbackGroup()
        self.create_subscription(JointState, "joint_states",
                                 self.guard.callback("joint_states", self._on_joint_state), 1)
        self._markers = self.create_publisher(MarkerArray, "preview/markers", 1)
        self._server = ActionServer(
            self, Preview, "preview", self.guard.action("preview", self._execute, Preview.Result),
            cancel_callback=self.guard.callback("preview cancel", self._on_cancel,
                                                lambda _reason, _handle: CancelResponse.REJECT),
            callback_group=group,
        )
        publish_diagnostics(self, self.guard, self.get_parameter("diagnostic_period").value,
                            self._status)
        follow_robot_description(self, self.guard, self._adopt)

    def _adopt(self, robot: Robot) -> None:
        """Put `robot` in service once its forward dynamics exists (at rest, q = 0) and a
        one-step preview has worked on it.

        Raises:
            Exception: SingularMassMatrixError (a joint that moves no mass), or the failure of
                that preview.
        """
        rest = np.zeros(robot.nv)
        robot.forward_dynamics(rest, rest, rest)
        warm_up(robot, PreviewSettings())
        self.robot = robot

    def _on_joint_state(self, message: JointState) -> None:
        """Keep the newest joint state (the start of a goal without one)."""
        self._latest = message

    def _on_cancel(self, goal_handle) -> CancelResponse:
        event = self._cancels.get(bytes(goal_handle.goal_id.uuid))
        if event is not None:
            event.set()
        return CancelResponse.ACCEPT

    def _execute(self, goal_handle) -> Preview.Result:
        """Run the goal's scenarios; succeed with their predictions or be cancelled.

        Raises:
            RefusedError: the goal cannot be previewed (the guard aborts it with the reason);
                any other failure of the preview is aborted so too.
        """
        self._goals += 1
        goal, robot = goal_handle.request, self.robot
        if robot is None:
            raise RefusedError("no robot yet: robot_description has not arrived")
        try:
            scenarios, settings = goal_scenarios(robot, goal.scenarios), goal_settings(goal)
        except ScenarioError as error:
            raise RefusedError(str(error)) from error
        q, qd = self._start(robot, goal.start)
        key, done = bytes(goal_handle.goal_id.uuid), []
        cancel = self._cancels[key] = threading.Event()

        def report(result) -> None:
            done.append(result.name)
            goal_handle.publish_feedback(Preview.Feedback(
                scenarios_done=len(done), scenarios_total=len(scenarios), last_scenario=result.name,
            ))

        try:
            with backend(self.get_parameter("backend").value,
                         workers=self.get_parameter("workers").value) as pool:
                results = preview(robot, scenarios, settings, q, qd, pool=pool, on_done=report,
                                  cancel=cancel)
        except CancelledError:
            goal_handle.canceled()
            return Preview.Result(message=f"cancelled after {len(done)} scenarios")
        finally:
            self._cancels.pop(key, None)
        for result in results:
            check_prediction_finite(result)
        self._markers.publish(path_markers(robot, results))
        goal_handle.succeed()
        return Preview.Result(predictions=[prediction_message(robot, r) for r in results])

    def _start(self, robot: Robot, start: JointState):
        """(q, q̇) of goal.start, else of the latest joint_states.

        Raises:
            RefusedError: neither is there, or the state is bad (naming the field).
        """
        if start.name:
            return JointStateMap(robot.joint_names).state(start, "start")[:2]
        if self._latest is None:
            raise RefusedError("start is empty and no joint_states has arrived")
        return JointStateMap(robot.joint_names).state(self._latest)[:2]

    def _status(self):
        robot = self.robot
        level, message = (OK, "previewing") if robot is not None else (ERROR, "no robot")
        values = {"model": robot.model.name if robot is not None else "",
                  "goals": str(self._goals), "goals running": str(len(self._cancels))}
        self._goals = 0
        return self.health.status(f"robodyn_ros: {self.get_name()}", values["model"], level,
                                  message, values)


def check_prediction_finite(result: PreviewResult) -> None:
    """Raises NonFiniteAnswerError when a scenario's predicted trajectory has NaN or inf."""
    for quantity, values in (("q", result.q), ("q̇", result.qd), ("effort", result.effort),
                             ("frame path", result.frame_path)):
        finite(f"scenario '{result.name}': predicted {quantity}", np.asarray(values))


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted (on two threads: a cancel arrives while a goal runs)."""
    spin_until_interrupted(PreviewNode, args, threads=2)


if __name__ == "__main__":
    main()
