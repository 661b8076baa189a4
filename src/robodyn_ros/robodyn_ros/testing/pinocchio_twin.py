"""A URDF as robodyn's Robot and as Pinocchio's model parsed from the same text (Pinocchio reads
its floating and planar joints itself), with the maps between their coordinates: joints matched
by name, a continuous joint's (cos θ, sin θ) to our angle, a free flyer's and a planar joint's
configurations alike on both sides. Needs Pinocchio, a test and benchmark dependency."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pinocchio as pin  # type: ignore[import-untyped]

from robodyn_ros.robot import Robot


@dataclass(frozen=True)
class Twin:
    """One URDF as robodyn's Robot and as Pinocchio's model, with the maps between their
    coordinates."""

    robot: Robot
    model: pin.Model
    q_rows: list[tuple[slice, slice, bool]]  # ours in q, theirs in q, continuous
    v_order: np.ndarray  # v_theirs = v_ours[v_order]

    def q_ours(self, q_pin: np.ndarray) -> np.ndarray:
        q = np.empty(self.robot.nq)
        for ours, theirs, continuous in self.q_rows:
            q[ours] = np.arctan2(q_pin[theirs][1], q_pin[theirs][0]) if continuous \
                else q_pin[theirs]
        return q

    def q_pin(self, q_ours: np.ndarray) -> np.ndarray:
        q = np.empty(self.model.nq)
        for ours, theirs, continuous in self.q_rows:
            angle = q_ours[ours]
            q[theirs] = (np.cos(angle[0]), np.sin(angle[0])) if continuous else angle
        return q

    def v_ours(self, v_pin: np.ndarray) -> np.ndarray:
        v = np.empty(self.robot.nv)
        v[self.v_order] = v_pin
        return v

    def matrix_ours(self, m_pin: np.ndarray) -> np.ndarray:
        inverse = np.argsort(self.v_order)
        return m_pin[np.ix_(inverse, inverse)]

    def data(self) -> pin.Data:
        return self.model.createData()

    def state(self, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A random state (q_pin, v, a, τ in Pinocchio's order): q the neutral moved by a
        random velocity, so every free joint's rotation is random and of unit norm."""
        rng = np.random.default_rng(seed)
        step, v, a, tau = rng.uniform(-1.0, 1.0, (4, self.model.nv))
        return pin.integrate(self.model, pin.neutral(self.model), 2.0 * step), v, a, tau


def twin_of(text: str) -> Twin:
    """The Twin of a URDF text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the loader's notes about the URDFs' inertias
        robot = Robot.from_urdf_string(text)
    model = pin.buildModelFromXML(text)
    ours = {joint.name: joint for joint in robot.model.configuration_joints}
    q_rows, v_order = [], np.empty(model.nv, dtype=int)
    for i in range(1, model.njoints):
        joint, name = model.joints[i], model.names[i]
        mine = ours[name]
        q_rows.append((mine.q, slice(joint.idx_q, joint.idx_q + joint.nq),
                       joint.nq == 2 and joint.nv == 1))
        v_order[joint.idx_v:joint.idx_v + joint.nv] = np.arange(mine.v.start, mine.v.stop)
    return Twin(robot, model, q_rows, v_order)


def external_forces(model: pin.Model, data: pin.Data, q: np.ndarray,
                    wrenches: dict[str, np.ndarray]) -> pin.StdVec_Force:
    """Pinocchio's per-joint fext (each in its joint's frame) of wrenches [force; torque] at
    frames' origins in world-aligned axes."""
    pin.framesForwardKinematics(model, data, q)
    forces = pin.StdVec_Force()
    forces.extend(pin.Force.Zero() for _ in range(model.njoints))
    for frame, wrench in wrenches.items():
        frame_id = model.getFrameId(frame, pin.BODY)
        joint = model.frames[frame_id].parentJoint
        origin = data.oMf[frame_id].translation
        about_world_origin = pin.Force(wrench[:3], wrench[3:] + np.cross(origin, wrench[:3]))
        forces[joint] = forces[joint] + data.oMi[joint].actInv(about_world_origin)
    return forces
