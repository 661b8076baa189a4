"""Identification from the normal equations of a run: the robot's parameters, or a load's.

    equations = accumulate(robot, RunSamples(q, qd, qdd, tau), pool=pool)
    found = identify_robot(robot, equations)
    found.estimate.values, found.estimate.standard_errors  # the base parameters
    found.identified_robot()                               # physically consistent
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from robodyn_ros.identification.accumulation import Unknowns
from robodyn_ros.identification.base_parameters import base_parameters
from robodyn_ros.identification.estimation import (
    PRIOR_WEIGHT,
    BaseEstimate,
    ConsistentEstimate,
    physically_consistent,
    residual_sigma,
    weighted_least_squares,
)
from robodyn_ros.identification.informed import (
    held_joint_parameters,
    joint_parameter_spread,
    tied_to_bodies,
)
from robodyn_ros.identification.normal_equations import NormalEquations
from robodyn_ros.identification.payload import PayloadEstimate, payload_columns
from robodyn_ros.model.inertial_parameters import (
    ARMATURE,
    BODY_PARAMETER_NAMES,
    OFFSET,
    PARAMETERS_PER_BODY,
    PARAMETERS_PER_JOINT,
)
from robodyn_ros.model.model import MULTI_DOF_JOINTS
from robodyn_ros.robot import Robot


@dataclass(frozen=True, eq=False)
class RobotIdentification:
    """A robot's parameters identified from a run.

    Attributes:
        robot: the description it started from (its π the prior).
        spread: (n, 4) each joint parameter's spread (identification.informed): what the run
            tells of it.
        estimate: the base parameters by weighted least squares, with standard errors, of
            every parameter but the held ones.
        consistent: a physically consistent π (every body a rigid body); its `held` entries
            are the joint parameters kept at the description's values.
    """

    robot: Robot
    spread: np.ndarray
    estimate: BaseEstimate
    consistent: ConsistentEstimate

    @property
    def parameters(self) -> np.ndarray:
        """The identified π, physically consistent (p,)."""
        return self.consistent.parameters

    @property
    def urdf_parameters(self) -> np.ndarray:
        """π of the identified URDF read alone (p,): armature and offsets, which a URDF does
        not hold, zero."""
        pi = self.parameters.copy()
        joints = pi[PARAMETERS_PER_BODY * self.robot.nv :].reshape(-1, PARAMETERS_PER_JOINT)
        joints[:, [ARMATURE, OFFSET]] = 0.0
        return pi

    def identified_robot(self) -> Robot:
        """The description with the identified bodies, armature and friction (the offsets are
        the torque sensors', not the robot's: they stay in `parameters`)."""
        return self.robot.with_inertial_parameters(self.parameters)


def identify_robot(
    robot: Robot,
    equations: NormalEquations,
    prior_weight: float = PRIOR_WEIGHT,
    fit: Collection[str] = (),
) -> RobotIdentification:
    """The robot's base parameters and a physically consistent π from a run's equations
    (accumulated for π itself). The joint parameters the run does not inform are held at the
    description's values (identification.informed), unless their kind is in `fit`; so are
    those of the rows no motor drives (unactuated_rows), and the massless bodies of a
    multi-DOF joint's inner rows (Model.inner_rows).

    Raises:
        IdentificationError: a run that cannot identify them (estimation.weighted_least_squares).
        ValueError: a bad prior_weight, an unknown kind in `fit`.
    """
    prior = robot.inertial_parameters()
    everything = base_parameters(robot)
    spread = joint_parameter_spread(equations, residual_sigma(equations), robot.nv)
    joints_held = held_joint_parameters(spread, tied_to_bodies(everything, robot.nv), fit)
    joints_held[unactuated_rows(robot)] = True
    bodies_held = np.zeros((robot.nv, PARAMETERS_PER_BODY), dtype=bool)
    bodies_held[robot.model.inner_rows] = True
    held = np.concatenate([bodies_held.ravel(), joints_held.ravel()])
    base = everything if not held.any() else base_parameters(
        robot, columns=np.eye(prior.size)[:, ~held],
        names=tuple(name for name, kept in zip(robot.parameter_names, ~held, strict=True)
                    if kept))
    estimate = weighted_least_squares(equations.with_known(held, prior), base)
    consistent = physically_consistent(equations, estimate.sigma, prior, prior_weight,
                                       held=held)
    return RobotIdentification(robot, spread, estimate, consistent)


def unactuated_rows(robot: Robot) -> np.ndarray:
    """(nv,) bool: the rows of a free flyer or planar joint, which no motor drives: their
    joint parameters (friction, armature, torque offset) are held at the description's."""
    return np.isin(robot.model.joint_kinds, tuple(MULTI_DOF_JOINTS))


@dataclass(frozen=True, eq=False)
class PayloadIdentification:
    """A load identified on a frame.

    Attributes:
        estimate: its parameters by weighted least squares, with standard errors.
        consistent: the physically consistent fit of its ten parameters.
        payload: the load as Robot.with_payload takes it.
    """

    estimate: BaseEstimate
    consistent: ConsistentEstimate
    payload: PayloadEstimate


def payload_unknowns(robot: Robot, frame: str, known: np.ndarray | None = None) -> Unknowns:
    """What to accumulate for a load on `frame`: its ten parameters, the robot's own torques
    (π `known`, its inertial_parameters by default) taken off.

    Raises:
        ModelError, IdentificationError: as payload.payload_columns.
    """
    return Unknowns(payload_columns(robot.model, frame),
                    robot.inertial_parameters() if known is None else known)


def identify_payload(
    robot: Robot, frame: str, equations: NormalEquations, prior_weight: float = PRIOR_WEIGHT
) -> PayloadIdentification:
    """A load's parameters from a run's equations accumulated for payload_unknowns; the prior
    is no load.

    Raises:
        IdentificationError: a run that cannot identify them.
        ModelError: an unknown frame.
        ValueError: a bad prior_weight.
    """
    names = tuple(f"payload.{name}" for name in BODY_PARAMETER_NAMES)
    base = base_parameters(robot, columns=payload_columns(robot.model, frame), names=names)
    estimate = weighted_least_squares(equations, base)
    consistent = physically_consistent(equations, estimate.sigma,
                                       np.zeros(PARAMETERS_PER_BODY), prior_weight, bodies=1)
    return PayloadIdentification(estimate, consistent,
                                 PayloadEstimate.of(frame, consistent.parameters))
