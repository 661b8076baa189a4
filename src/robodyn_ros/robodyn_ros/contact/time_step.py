"""One time step of a robot in a world, its contacts unilateral with Coulomb friction.

The step is velocity-level and semi-implicit (the time stepping of Stewart & Trinkle 1996,
as MuJoCo and Pinocchio's contact solvers take it):

    v⁺ = v + dt M⁻¹(τ − b) + M⁻¹ Jᵀ λ,    q⁺ = q ⊕ v⁺ dt,

λ the contact impulses of solver.projected_gauss_seidel on G = J M⁻¹ Jᵀ, J the linear
Jacobians of the contact points in their contact frames. The contacts are the candidate points
of the collision shapes closer to a plane than `margin`, at most five of a shape on a plane
(compiled_step's detection). Its normal velocity after the step must close at most its gap
(u_n ≥ −h/dt), and a point inside the plane is pushed out at a fraction `baumgarte` of its depth
per step (u_n ≥ −baumgarte h/dt): a resting body neither sinks nor bounces. The step runs
compiled (compiled_step.world_step), as the preview's contact rollout steps it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn_ros.contact.compiled_step import (
    NOT_CONVERGED,
    NOT_POSITIVE_DEFINITE,
    Contacts,
    StepSettings,
    contact_step_kernel,
    contacts_of,
)
from robodyn_ros.contact.detection import ContactScene, contact_scene, moving
from robodyn_ros.contact.geometry import CollisionShape
from robodyn_ros.contact.world import World
from robodyn_ros.errors import RobodynError, SingularMassMatrixError
from robodyn_ros.robot import Robot


class ContactError(RobodynError, RuntimeError):
    """The contact solver did not converge: the message names the contacts."""


@dataclass(frozen=True)
class ContactSettings:
    """How contacts are found and solved.

    Attributes:
        margin: m; a candidate point closer to a plane than this is a contact.
        baumgarte: the fraction of a penetration removed per step, in (0, 1].
        tolerance: m/s, the change of the contact velocities in a sweep at which the solver
            stops (solver.projected_gauss_seidel).
        max_iterations: the solver's sweeps allowed.
        relaxation: how far a sweep moves each impulse to its new value, in (0, 1]
            (solver.projected_gauss_seidel).
    """

    margin: float = 1e-3
    baumgarte: float = 0.2
    tolerance: float = 1e-6
    max_iterations: int = 2000
    relaxation: float = 0.8


@dataclass(frozen=True, eq=False)
class ContactForce:
    """The force of one contact over a step.

    Attributes:
        link: the robot's link that touches.
        point: (3,) where, in the world, m.
        normal: (3,) the plane's normal.
        force: (3,) the world's force on the link there (its impulse / dt), world axes, N.
        velocity: (3,) the link's point there after the step, world axes, m/s: along the
            plane, its slip.
        depth: m, how far the point is inside the plane (negative: the gap).
    """

    link: str
    point: np.ndarray
    normal: np.ndarray
    force: np.ndarray
    velocity: np.ndarray
    depth: float


@dataclass(frozen=True, eq=False)
class ContactStep:
    """A step's result: the state after it and its contact forces."""

    q: np.ndarray
    v: np.ndarray
    contacts: tuple[ContactForce, ...]
    iterations: int


def contact_step(robot: Robot, shapes: tuple[CollisionShape, ...], world: World,
                 q: np.ndarray, v: np.ndarray, tau: np.ndarray, dt: float,
                 settings: ContactSettings = ContactSettings()) -> ContactStep:
    """The state after `dt` from (q, v) under the joint efforts `tau`.

    Raises:
        ValueError: q, v or tau not of the robot's sizes or not finite, dt not > 0, or a
            robot with mimic joints (the compiled step takes every joint as free).
        ContactError: the solver did not converge, naming the contacts.
        SingularMassMatrixError: M is singular at q, with contacts to solve.
    """
    _check_state(robot, q, v, tau, dt)
    tree, gravity = robot.kernel_arrays
    scene = contact_scene(robot.model, tuple(shapes), world)
    q_next, v_next = np.empty(robot.nq), np.empty(robot.nv)
    found = contacts_of(scene.capacity)
    count, status, sweeps, change = contact_step_kernel(
        tree, gravity, scene.arrays, step_settings(dt, settings),
        np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(v, dtype=float),
        np.ascontiguousarray(tau, dtype=float), q_next, v_next, found)
    contacts = contact_forces(scene, found, count)
    if status == NOT_POSITIVE_DEFINITE:
        robot.mass_matrix_inverse(q)  # raises SingularMassMatrixError naming the joints
        raise SingularMassMatrixError(
            "contact_step", (), f"at the step's start, with contacts on {_links(contacts)}")
    if status == NOT_CONVERGED:
        raise ContactError(
            f"robot '{robot.model.name}': the contact solver did not converge in "
            f"{sweeps} sweeps (velocity change {change:.3g} m/s) on the contacts of "
            f"{_links(contacts)}")
    return ContactStep(q_next, v_next, contacts, int(sweeps))


def step_settings(dt: float, settings: ContactSettings) -> StepSettings:
    """The compiled step's settings: the step and the ContactSettings' numbers."""
    return StepSettings(float(dt), float(settings.margin), float(settings.baumgarte),
                        float(settings.tolerance), int(settings.max_iterations),
                        float(settings.relaxation))


def contact_forces(scene: ContactScene, found: Contacts, count: int
                   ) -> tuple[ContactForce, ...]:
    """The first `count` contacts the compiled step found, as ContactForce records."""
    return tuple(ContactForce(scene.shapes[found.shape[k]].link, found.point[k].copy(),
                              scene.arrays.planes[found.plane[k], 0].copy(),
                              found.force[k].copy(), found.velocity[k].copy(),
                              -float(found.height[k]))
                 for k in range(count))


def _links(contacts: tuple[ContactForce, ...]) -> str:
    """The links of the contacts, sorted, once each."""
    return ", ".join(sorted({contact.link for contact in contacts}))


def wrench_about(contacts: tuple[ContactForce, ...], origin: np.ndarray) -> np.ndarray:
    """(6,) the contacts' wrench [force; torque] on the robot about `origin`, world axes, N
    and N·m: what a force/torque sensor there reads of them."""
    wrench = np.zeros(6)
    for contact in contacts:
        wrench[:3] += contact.force
        wrench[3:] += np.cross(contact.point - origin, contact.force)
    return wrench


def _check_state(robot: Robot, q: np.ndarray, v: np.ndarray, tau: np.ndarray, dt: float
                 ) -> None:
    """A ValueError naming the first of q, v, tau and dt that a step cannot take."""
    for name, values, size in (("q", q, robot.nq), ("v", v, robot.nv), ("tau", tau, robot.nv)):
        values = np.asarray(values)
        if values.shape != (size,):
            raise ValueError(f"contact_step: {name} must have {size} values for robot "
                             f"'{robot.model.name}', not shape {values.shape}")
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise ValueError(f"contact_step: {name} is not finite at index(es) "
                             f"{bad.tolist()}: {values[bad].tolist()}")
    if not (np.isfinite(dt) and dt > 0.0):
        raise ValueError(f"contact_step: dt must be a positive number of seconds, not {dt!r}")


def moving_shapes(robot: Robot, shapes: tuple[CollisionShape, ...]
                  ) -> tuple[CollisionShape, ...]:
    """The shapes on links the joints move: a fixed base's own links are held by their mount
    whatever they touch, and a contact there has no motion to give (its Delassus rows are
    zero)."""
    return moving(robot.model, tuple(shapes))


__all__ = ["ContactError", "ContactForce", "ContactSettings", "ContactStep", "contact_forces",
           "contact_step", "moving_shapes", "step_settings", "wrench_about"]
