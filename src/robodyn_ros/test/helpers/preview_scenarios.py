"""The preview scenarios that the sim and control tests share: on the bundled panda from Q0, a
pose target (the operational-space controller), a joint trajectory (joint impedance with
feed-forward) and a torque profile, over HORIZON."""

from __future__ import annotations

import numpy as np

from robodyn_ros import Robot
from robodyn_ros.sim.scenarios import Scenario, scenario_from_mapping

FRAME = "panda_hand_tcp"
Q0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8])
HORIZON = 0.3


def specs(robot: Robot) -> list[dict]:
    start = robot.frame_pose(Q0, FRAME)[:3, 3]
    return [
        {"name": "reach", "pose_target": {
            "frame": FRAME, "position": (start + np.array([0.1, 0.05, -0.1])).tolist(),
            "orientation": [1.0, 0.0, 0.0, 0.0], "kp": 100.0, "kd": 20.0}},
        {"name": "wave", "joint_trajectory": {
            "frame": FRAME, "times": [0.15, 0.3], "positions": [(Q0 + 0.1).tolist(), Q0.tolist()],
            "stiffness": 100.0, "damping": 5.0}},
        {"name": "push", "torque_profile": {
            "frame": FRAME, "times": [0.0, 0.3], "efforts": [[0.0] * 7, [5.0, 5, 5, 5, 1, 1, 1]]}},
    ]


def scenarios(robot: Robot) -> list[Scenario]:
    return [scenario_from_mapping(robot, spec, k) for k, spec in enumerate(specs(robot))]
