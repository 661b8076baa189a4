"""A "true" robot that differs from its URDF as a real one does: for the identification tests
and benchmarks, which must find it again from its torques."""

from __future__ import annotations

import numpy as np

from robodyn_ros.model.inertia import inertia_about_com, spatial_inertia
from robodyn_ros.model.inertial_parameters import (
    PARAMETERS_PER_BODY,
    body_parameters,
    parameters_of,
)
from robodyn_ros.robot import Robot


def perturbed_parameters(
    robot: Robot,
    seed: int,
    *,
    mass_scale: tuple[float, float] = (0.8, 1.25),
    com_shift: float = 0.02,
    inertia_scale: tuple[float, float] = (0.8, 1.25),
    armature: float = 0.2,
    viscous: float = 0.5,
    coulomb: float = 0.5,
    offset: float = 0.3,
) -> np.ndarray:
    """π of the robot with every massive body's mass scaled by a factor drawn from
    `mass_scale`, its centre of mass moved by up to `com_shift` m along each axis and its
    inertia about the centre of mass scaled by a factor from `inertia_scale` (so still a rigid
    body); each joint gets armature, viscous and Coulomb friction drawn from [0, the bound] and
    an offset from [−offset, offset]. Massless bodies stay massless."""
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
            mass * rng.uniform(*mass_scale),
            com + rng.uniform(-com_shift, com_shift, 3),
            inertia_about_com(inertia) * rng.uniform(*inertia_scale),
        ))
    joints = np.column_stack([
        rng.uniform(0.0, armature, model.nv),
        rng.uniform(0.0, viscous, model.nv),
        rng.uniform(0.0, coulomb, model.nv),
        rng.uniform(-offset, offset, model.nv),
    ])
    parameters = parameters_of(model)
    split = PARAMETERS_PER_BODY * model.nv
    parameters[:split] = body_parameters(np.array(bodies)).ravel()
    parameters[split:] = joints.ravel()
    return parameters
