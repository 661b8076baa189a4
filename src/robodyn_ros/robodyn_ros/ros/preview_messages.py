"""Preview messages ↔ sim.preview: a Preview goal into scenarios and settings (every error a
ScenarioError naming the field), results into PreviewPrediction and MarkerArray messages (an
optimal reach's plan as a JointTrajectory controller_node plays, with its feedback gains)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Point, Pose, PoseArray, Twist
from robodyn_interfaces.action import Preview
from robodyn_interfaces.msg import PreviewPrediction, PreviewPush, PreviewScenario
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import Marker, MarkerArray

from robodyn_ros.contact.world import WorldError
from robodyn_ros.robot import Robot
from robodyn_ros.ros.contacts import contacts_message, world_from_planes
from robodyn_ros.ros.conversions import JointStateError, JointStateMap, fill_pose
from robodyn_ros.sim.ilqr import ReachPlan
from robodyn_ros.sim.preview import PreviewResult, PreviewSettings
from robodyn_ros.sim.scenarios import (
    KINDS,
    REACH_WEIGHTS,
    Scenario,
    ScenarioError,
    scenario_from_mapping,
)

MARKER_POINTS = 500  # at most, per predicted path
PALETTE = ((0.12, 0.47, 0.71), (1.0, 0.5, 0.05), (0.17, 0.63, 0.17), (0.84, 0.15, 0.16),
           (0.58, 0.4, 0.74), (0.55, 0.34, 0.29))
REACH_SETTINGS = ("plan_period", "iterations", "tolerance")
"""An optimal_reach message's numbers whose 0 stands for the default."""


def goal_scenarios(robot: Robot, scenarios: Sequence[PreviewScenario]) -> list[Scenario]:
    """The goal's scenarios, checked; ScenarioError names the scenario and field."""
    if not scenarios:
        raise ScenarioError("scenarios must not be empty")
    return [_with_world(scenario_from_mapping(robot, scenario_mapping(robot, message, k), k),
                        message)
            for k, message in enumerate(scenarios)]


def _with_world(scenario: Scenario, message: PreviewScenario) -> Scenario:
    """The scenario with the world of the message's planes (none: as it is)."""
    if not message.world:
        return scenario
    try:
        world = world_from_planes(message.world, f"scenario '{scenario.name}': world")
    except WorldError as error:
        raise ScenarioError(str(error)) from None
    return replace(scenario, world=world)


def goal_settings(goal: Preview.Goal) -> PreviewSettings:
    """horizon, dt, integrator (empty: rk4), method (empty: aba) and control period of a
    Preview goal."""
    return PreviewSettings(
        horizon=goal.horizon, dt=goal.dt, integrator=goal.integrator or "rk4",
        forward_dynamics_method=goal.forward_dynamics_method or "aba",
        control_period=goal.control_period,
    )


def scenario_mapping(robot: Robot, message: PreviewScenario, index: int) -> dict[str, Any]:
    """A PreviewScenario as the mapping scenario_from_mapping reads."""
    name = message.name or f"scenario{index}"
    if message.kind not in KINDS:
        raise ScenarioError(f"scenario '{name}': kind must be one of {', '.join(KINDS)}; "
                            f"got {message.kind!r}")
    fields: dict[str, object] = {"frame": message.frame} if message.frame else {}
    p, o = message.target.position, message.target.orientation
    if message.kind in (PreviewScenario.POSE_TARGET, PreviewScenario.OPTIMAL_REACH):
        fields.update(position=[p.x, p.y, p.z], orientation=[o.x, o.y, o.z, o.w])
    if message.kind == PreviewScenario.POSE_TARGET:
        gains: tuple[str, ...] = ("kp", "kd", "null_stiffness", "null_damping", "force_axes",
                                  "force_target", "force_damping")
        if message.force_integral_gain:
            fields["force_integral_gain"] = message.force_integral_gain
    elif message.kind == PreviewScenario.OPTIMAL_REACH:
        fields.update({name: getattr(message, name) for name in REACH_SETTINGS
                       if getattr(message, name)})
        gains = ("kp", "kd", *REACH_WEIGHTS)
    elif message.kind == PreviewScenario.WHOLE_BODY_POSE:
        fields.update(position=[p.x, p.y, p.z], contacts=[
            {"frame": frame, "kind": kind or "6d"}
            for frame, _, kind in (text.partition(":") for text in message.contacts)])
        if any((o.x, o.y, o.z, o.w)):  # four zeros: as at the start
            fields["orientation"] = [o.x, o.y, o.z, o.w]
        if len(message.com):
            fields["com"] = list(message.com)
        if message.friction:
            fields["friction"] = message.friction
        if message.min_normal_force:
            fields["min_normal_force"] = message.min_normal_force
        gains = ("kp", "kd", "weights", "sole_size")
    else:
        values = "positions" if message.kind == PreviewScenario.JOINT_TRAJECTORY else "efforts"
        fields.update(_waypoints(robot, name, message, values))
        gains = ("stiffness", "damping") if values == "positions" else ()
    for gain in gains:
        value = list(getattr(message, gain))
        if value:
            fields[gain] = value[0] if len(value) == 1 else value
    mapping: dict[str, object] = {"name": name, message.kind: fields}
    if message.pushes:
        mapping["pushes"] = [_push_mapping(push) for push in message.pushes]
    return mapping


def _push_mapping(push: PreviewPush) -> dict[str, Any]:
    """A PreviewPush as scenario_from_mapping reads it."""
    force, torque = push.wrench.wrench.force, push.wrench.wrench.torque
    return {"frame": push.wrench.header.frame_id,
            "wrench": [force.x, force.y, force.z, torque.x, torque.y, torque.z],
            "start": push.start, "duration": push.duration}


def _waypoints(
    robot: Robot, name: str, message: PreviewScenario, values: str,
) -> dict[str, Any]:
    """times and positions (or efforts) of the trajectory's points, in the robot's joint
    order; a floating base's rows are zero (the trajectory names its joints)."""
    trajectory, field = message.trajectory, "positions" if values == "positions" else "effort"
    try:
        index = JointStateMap(robot.measured_joints).index(trajectory.joint_names)
    except JointStateError as error:
        raise ScenarioError(f"scenario '{name}': trajectory.joint_names: "
                            f"{str(error).split(': ', 2)[-1]}") from None
    rows = []
    for k, point in enumerate(trajectory.points):
        row = np.asarray(getattr(point, field), dtype=float)
        if row.shape != (len(trajectory.joint_names),):
            raise ScenarioError(f"scenario '{name}': trajectory.points[{k}].{field} must have "
                                f"one value per joint name; got {row.shape[0]}")
        rows.append(np.concatenate([np.zeros(robot.nv - index.size), row[index]]))
    times = [point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec
             for point in trajectory.points]
    return {"times": times, values: rows}


def prediction_message(robot: Robot, result: PreviewResult, prefix: str,
                       paths_frame: str) -> PreviewPrediction:
    """A PreviewPrediction of one result; `prefix`: the node's frame_prefix, before every
    frame name; `paths_frame`: the frame_id of the paths (the root link's, a floating base's
    world frame). A floating base's trajectory carries its joints, base_path and base_twist
    the free flyer; an optimal reach's prediction its plan (plan_fields)."""
    m = result.metrics
    joints = robot.measured_joints
    first = robot.nv - len(joints)  # the first joint's row: after a floating base's six
    q_first = robot.nq - len(joints)
    root = prefix + robot.model.root_link
    base_path, base_twist = PoseArray(), []
    base_path.header.frame_id = paths_frame
    if first:
        base_path.poses = [_pose(x) for x in result.q[:, :q_first].tolist()]
        base_twist = [_twist(x) for x in result.qd[:, :first].tolist()]
    return PreviewPrediction(
        name=result.name,
        trajectory=joint_trajectory(joints, result.times, result.q[:, q_first:],
                                    result.qd[:, first:], result.effort[:, first:], root),
        frame_path=pose_array(result.frame_path, paths_frame), frame=prefix + result.frame,
        base_path=base_path, base_twist=base_twist,
        peak_effort=m.peak_effort[first:].tolist(), effort_ratio=m.effort_ratio,
        limit_stops=m.limit_violations.tolist(), min_singular_value=m.min_singular_value,
        final_position_error=m.final_position_error,
        final_orientation_error=m.final_orientation_error, energy_start=m.energy_start,
        energy_end=m.energy_end, energy_peak=m.energy_peak,
        real_time_factor=result.real_time_factor,
        contacts=[contacts_message(contacts, _time(result.times[step]), paths_frame)
                  for step, contacts in zip(result.samples, result.contacts, strict=False)],
        peak_contact_force=m.contact.peak_contact_force, slip_distance=m.contact.slip_distance,
        lost_contacts=m.contact.lost_contacts, penetration=m.contact.penetration,
        **plan_fields(joints, result.plan, root),
    )


def plan_fields(joints: Sequence[str], plan: ReachPlan | None, frame_id: str
                ) -> dict[str, object]:
    """The PreviewPrediction fields of an optimal reach's plan (a fixed base's: `joints` are
    all of the robot's).

    Args:
        joints: the robot's joints, the order of the plan's rows.
        plan: the plan (sim.ilqr); None: a scenario of another kind.
        frame_id: the planned trajectory's header frame (the root link with frame_prefix).

    Returns:
        planned_trajectory (q, q̇ and the feed-forward u at the plan's times, from 0),
        feedback_gains (K at each point, the last repeating the last step's as the efforts
        do, each nv x 2nv row-major), plan_iterations, plan_converged, plan_cost and
        plan_wall_time; none without a plan (the message's empty and zero defaults).
    """
    if plan is None:
        return {}
    gains = np.concatenate([plan.K, plan.K[-1:]])
    return {"planned_trajectory": joint_trajectory(joints, plan.times, plan.q, plan.v, plan.u,
                                                   frame_id),
            "feedback_gains": gains.ravel().tolist(), "plan_iterations": plan.iterations,
            "plan_converged": plan.converged, "plan_cost": plan.cost,
            "plan_wall_time": plan.wall_time}


def joint_trajectory(joints: Sequence[str], times: np.ndarray, q: np.ndarray, qd: np.ndarray,
                     effort: np.ndarray, frame_id: str) -> JointTrajectory:
    """q, q̇ and the commanded effort of `joints` at every step (the last command repeated at
    the end)."""
    effort = np.concatenate([effort, effort[-1:]])
    points = [
        JointTrajectoryPoint(positions=q_k, velocities=qd_k, effort=tau,
                             time_from_start=_duration(t))
        for t, q_k, qd_k, tau in zip(times.tolist(), q.tolist(), qd.tolist(), effort.tolist(),
                                     strict=True)
    ]
    trajectory = JointTrajectory(joint_names=list(joints), points=points)
    trajectory.header.frame_id = frame_id
    return trajectory


def _pose(x: list[float]) -> Pose:
    """The Pose of a free flyer's configuration [x y z, qx qy qz qw]."""
    pose = Pose()
    p, o = pose.position, pose.orientation
    p.x, p.y, p.z, o.x, o.y, o.z, o.w = x
    return pose


def _twist(v: list[float]) -> Twist:
    """The Twist of a free flyer's velocity [linear; angular]."""
    twist = Twist()
    twist.linear.x, twist.linear.y, twist.linear.z = v[:3]
    twist.angular.x, twist.angular.y, twist.angular.z = v[3:]
    return twist


def pose_array(transforms: np.ndarray, frame_id: str) -> PoseArray:
    poses = PoseArray()
    poses.header.frame_id = frame_id
    for transform in transforms:
        pose = Pose()
        fill_pose(pose, transform)
        poses.poses.append(pose)
    return poses


def path_markers(results: Sequence[PreviewResult], frame_id: str) -> MarkerArray:
    """A line strip per predicted frame path (namespace "preview", id = scenario index) in
    `frame_id` (the robot's root frame), after a DELETEALL that clears the previous
    preview's."""
    markers = [Marker(action=Marker.DELETEALL)]
    for k, result in enumerate(results):
        marker = Marker(ns="preview", id=k, type=Marker.LINE_STRIP, action=Marker.ADD)
        marker.header.frame_id = frame_id
        marker.pose.orientation.w = 1.0
        marker.scale.x = 0.005
        marker.color.r, marker.color.g, marker.color.b = PALETTE[k % len(PALETTE)]
        marker.color.a = 1.0
        stride = max(1, -(-len(result.frame_path) // MARKER_POINTS))
        marker.points = [Point(x=x, y=y, z=z)
                         for x, y, z in result.frame_path[::stride, :3, 3].tolist()]
        markers.append(marker)
    return MarkerArray(markers=markers)


def _time(seconds: float) -> Time:
    """The stamp of a time from the start of the horizon."""
    whole, nanoseconds = divmod(round(seconds * 1e9), 1_000_000_000)
    return Time(sec=whole, nanosec=nanoseconds)


def _duration(seconds: float) -> Duration:
    whole, nanoseconds = divmod(round(seconds * 1e9), 1_000_000_000)
    return Duration(sec=whole, nanosec=nanoseconds)


__all__ = ["goal_scenarios", "goal_settings", "path_markers", "prediction_message"]
