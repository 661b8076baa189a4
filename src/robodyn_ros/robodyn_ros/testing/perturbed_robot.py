"""A "true" robot that differs from its URDF as a real one does: for the identification tests
and benchmarks, which must find it again from its torques."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn_ros.model.inertia import inertia_about_com, spatial_inertia
from robodyn_ros.model.inertial_parameters import (
    PARAMETERS_PER_BODY,
    body_parameters,
    parameters_of,
)
from robodyn_ros.robot import Robot


@dataclass(frozen=True)
class Perturbation:
    """How far a perturbed robot strays from its description.

    Attributes:
        mass_scale: the range of the factor each massive body's mass is scaled by.
        com_shift: m, the most each body's centre of mass moves along each axis.
        inertia_scale: the range of the factor each body's inertia about its centre of mass is
            scaled by (so it stays a rigid body's).
        armature, viscous, coulomb: the most of each joint's armature, viscous and Coulomb
            friction, drawn from [0, the bound].
        offset: the most of each joint's torque offset, drawn from [−offset, offset].
    """

    mass_scale: tuple[float, float] = (0.8, 1.25)
    com_shift: float = 0.02
    inertia_scale: tuple[float, float] = (0.8, 1.25)
    armature: float = 0.2
    viscous: float = 0.5
    coulomb: float = 0.5
    offset: float = 0.3


def perturbed_parameters(
    robot: Robot, seed: int, perturbation: Perturbation = Perturbation()
) -> np.ndarray:
    """π of the robot with each massive body and each joint drawn within `perturbation` of
    its description; massless bodies stay massless.

    Args:
        robot: the described robot.
        seed: seed of ``numpy.random.default_rng``; π is a function of the arguments.
        perturbation: how far each parameter may move.

    Returns:
        π, in the layout of robodyn_ros.model.inertial_parameters.
    """
    rng = np.random.default_rng(seed)
    model = robot.model
    bodies = []
    for inertia in model.spatial_inertia:
        mass = inertia[0, 0]
        if mass <= 0.0:
            bodies.append(inertia)
            continue
        com = body_parameters(inertia)[1:4] / mass
        bodies.append(spatial_inertia(
            mass * rng.uniform(*perturbation.mass_scale),
            com + rng.uniform(-perturbation.com_shift, perturbation.com_shift, 3),
            inertia_about_com(inertia) * rng.uniform(*perturbation.inertia_scale),
        ))
    joints = np.column_stack([
        rng.uniform(0.0, perturbation.armature, model.nv),
        rng.uniform(0.0, perturbation.viscous, model.nv),
        rng.uniform(0.0, perturbation.coulomb, model.nv),
        rng.uniform(-perturbation.offset, perturbation.offset, model.nv),
    ])
    parameters = parameters_of(model)
    split = PARAMETERS_PER_BODY * model.nv
    parameters[:split] = body_parameters(np.array(bodies)).ravel()
    parameters[split:] = joints.ravel()
    return parameters
