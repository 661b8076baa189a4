"""preview_node: the `preview` action (robodyn_interfaces/action/Preview) — simulate scenarios
ahead from the current state, faster than real time.

A goal's scenarios run from goal.start, or from the latest ``joint_states`` when it is empty,
fanned out over the parallel backend (parameters ``backend``: "threads" or "serial",
``workers``); feedback counts the scenarios done; the result holds a PreviewPrediction per
scenario. A goal that cannot be previewed is aborted at once with the reason in
result.message (rclpy's goal response cannot carry one). Cancelling stops the scenarios not
yet started. Each preview's frame paths are published as visualization_msgs/MarkerArray on
``preview/markers`` for RViz.

Parameters: robot_description (string; empty: the ``robot_description`` topic), backend,
workers.
"""

from __future__ import annotations

import threading

from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from robodyn_interfaces.action import Preview
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from robodyn_ros.model import ModelError
from robodyn_ros.parallel import CancelledError, ParallelError, backend
from robodyn_ros.robot import Robot
from robodyn_ros.ros.conversions import JointStateError, JointStateMap
from robodyn_ros.ros.entry import follow_robot_description, spin_until_interrupted
from robodyn_ros.ros.preview_messages import (
    goal_scenarios,
    goal_settings,
    path_markers,
    prediction_message,
)
from robodyn_ros.sim.preview import PreviewSettings, preview, warm_up
from robodyn_ros.sim.scenarios import ScenarioError


class PreviewNode(Node):
    """The preview action server."""

    def __init__(self, **kwargs) -> None:
        super().__init__("preview_node", **kwargs)
        self.declare_parameter("robot_description", "")
        self.declare_parameter("backend", "threads")
        self.declare_parameter("workers", 2)
        self.robot: Robot | None = None
        self._latest: JointState | None = None
        self._cancels: dict[bytes, threading.Event] = {}
        group = ReentrantCallbackGroup()
        self.create_subscription(JointState, "joint_states", self._on_joint_state, 10)
        self._markers = self.create_publisher(MarkerArray, "preview/markers", 1)
        self._server = ActionServer(
            self, Preview, "preview", self._execute, cancel_callback=self._on_cancel,
            callback_group=group,
        )
        follow_robot_description(self, self._load)

    def _load(self, urdf: str) -> None:
        try:
            robot = Robot.from_urdf_string(urdf)
        except ModelError as error:
            self.get_logger().error(f"robot_description refused: {error}")
            return
        warm_up(robot, PreviewSettings())
        self.robot = robot
        self.get_logger().info(f"previewing '{robot.model.name}'")

    def _on_joint_state(self, message: JointState) -> None:
        self._latest = message

    def _on_cancel(self, goal_handle) -> CancelResponse:
        event = self._cancels.get(bytes(goal_handle.goal_id.uuid))
        if event is not None:
            event.set()
        return CancelResponse.ACCEPT

    def _execute(self, goal_handle) -> Preview.Result:
        goal, robot = goal_handle.request, self.robot
        try:
            if robot is None:
                raise ScenarioError("no robot yet: robot_description has not arrived")
            scenarios, settings = goal_scenarios(robot, goal.scenarios), goal_settings(goal)
            q, qd = self._start(robot, goal.start)
        except ScenarioError as error:
            goal_handle.abort()
            return Preview.Result(message=str(error))
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
        except (ValueError, ParallelError) as error:  # a start outside the limits, a failure
            goal_handle.abort()
            return Preview.Result(message=str(error))
        finally:
            self._cancels.pop(key, None)
        self._markers.publish(path_markers(robot, results))
        goal_handle.succeed()
        return Preview.Result(predictions=[prediction_message(robot, r) for r in results])

    def _start(self, robot: Robot, start: JointState):
        """(q, q̇) of goal.start, else of the latest joint_states."""
        message = start if start.name else self._latest
        if message is None:
            raise ScenarioError("start is empty and no joint_states has arrived")
        try:
            return JointStateMap(robot.joint_names).state(message)[:2]
        except JointStateError as error:
            raise ScenarioError(f"start: {error}") from None


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted (on two threads: a cancel arrives while a goal runs)."""
    spin_until_interrupted(PreviewNode, args, threads=2)


if __name__ == "__main__":
    main()
