"""SimulatedRobot: a Robot's forward dynamics integrated in time, with the URDF's joint
damping, Coulomb friction and limits.

Each `step(tau)`:

1. clips the commanded effort to ``±effort_limit`` (this is the effort "applied", `effort`);
2. integrates q̈ = FD(q, q̇, τ − d·q̇ − f·tanh(q̇/ε)) over ``dt`` with the chosen integrator,
   where d, f are the URDF ``<dynamics damping friction>`` values. Coulomb friction −f·sign(q̇)
   is smoothed to −f·tanh(q̇/ε) so the right-hand side stays continuous and an explicit
   integrator can take it; ε (`friction_velocity`, rad/s or m/s, default `FRICTION_VELOCITY`)
   is the speed under which friction acts like a viscous damper of f/ε. Explicit integration
   is stable while (f/ε)·dt·(M⁻¹)ᵢᵢ stays below about 2, which sets how small ε may be for a
   given dt and the lightest joint; the smoothing means a resting joint creeps instead of
   sticking (no static friction).
3. enforces the limits: velocities are clipped to ``±velocity_limit``; a joint that ends the
   step beyond a position limit is put back on the limit and the part of its velocity that
   points out of the range is zeroed (a perfectly inelastic stop, which removes energy; the
   velocity back into the range is kept). Intermediate integrator stages are not clamped.

A robot with free flyer or planar joints (a floating or mobile base) steps on its
configuration's group (sim.lie_integrators.LIE_INTEGRATORS, fixed-step only); the
limits and stops are its joints' of one degree of freedom. Contacts (contact_dynamics.Contact)
hold frames in the world where they are at the reset, Baumgarte-stabilised: q̈ is then the
constrained forward dynamics', whose forces `contact_forces` gives for the last step.
External wrenches (`apply_wrench`: a push, a tool's force) act on frames from the next step
until replaced, as J(q)ᵀ w at every stage (Robot.forward_dynamics' external_wrenches).

A world with planes (contact.World, with the robot's collision shapes from its URDF) makes
every step contact.time_step's: semi-implicit, contacts unilateral with Coulomb friction,
their forces in `world_contacts`. Its integrator is then "semi_implicit_euler".

An iterative forward-dynamics method under a fixed-step integrator runs through
`WarmStartedForwardDynamics` (`solver`): each integrator stage starts from the cubic
extrapolation of its q̈ over the previous steps (Sharf & D'Eleuterio §5), and its iteration
counts are there to read. Under an adaptive integrator, whose stages fall at times of its own
choosing, it solves to the integrator's tolerance / 10 from a cold start.

Bad commands (wrong length, NaN or ±inf) raise ValueError naming the problem, an iterative
method that does not converge ConvergenceError (its solver then starts cold), a step whose
state overflows NonFiniteResultError; the state is not changed. Time is ``steps · dt`` since
the last reset, so it does not drift by rounding.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros.contact.geometry import CollisionShape
from robodyn_ros.contact.time_step import ContactForce, ContactSettings, contact_step
from robodyn_ros.contact.world import World
from robodyn_ros.errors import NonFiniteResultError
from robodyn_ros.model.model import FRICTION_VELOCITY, MULTI_DOF_JOINTS
from robodyn_ros.robot import Robot
from robodyn_ros.robot.configuration import check_configuration, configuration_description
from robodyn_ros.robot.contact_dynamics import Contact, ContactDynamics, held_where_they_are
from robodyn_ros.robot.external_wrenches import wrench_forces
from robodyn_ros.robot.iteration import ConvergenceError
from robodyn_ros.sim.integrators import (
    ADAPTIVE_INTEGRATORS,
    INTEGRATORS,
    Acceleration,
    Integrator,
    adaptive_integrator,
)
from robodyn_ros.sim.lie_integrators import LIE_INTEGRATORS
from robodyn_ros.sim.linearization import (
    LINEARIZED_INTEGRATORS,
    JointLosses,
    StepJacobians,
    step_jacobians,
)
from robodyn_ros.sim.warm_start import WarmStartedForwardDynamics

WORLD_INTEGRATOR = "semi_implicit_euler"  # the step of a world with planes (contact.time_step)

TOLERANCE = 1e-8  # of the adaptive integrators, relative and absolute


class SimulatedRobot:
    """A robot's state (q, q̇, time) advanced by `step(tau)`.

    Args:
        robot: the Robot whose forward dynamics drive the simulation.
        integrator: a name in `INTEGRATORS` ("rk4" or "semi_implicit_euler") or in
            `ADAPTIVE_INTEGRATORS` ("rk45", "lsoda").
        forward_dynamics_method: a `Robot.FORWARD_DYNAMICS_METHODS` name (default "aba").
        forward_dynamics_options: for an iterative method under a fixed-step integrator, the
            options of `WarmStartedForwardDynamics` (`tol`, `max_iterations`, `history`, …).
        tolerance: of an adaptive integrator; an iterative forward-dynamics method then solves
            to tolerance / 10 (Sharf & D'Eleuterio: the solver's error below the integrator's).
        dt: time step, s.
        friction_velocity: ε of the friction smoothing (see the module docstring).
        q, qd: initial state; default q = 0 moved inside the position limits, q̇ = 0.
        contacts: frames held in the world where they are at each reset (or at their
            placement), with the Baumgarte gains contact_gains (kp 1/s², kd 1/s).
        world: planes the robot's `collision_shapes` touch (contact.time_step), with
            `contact_settings`; none by default.
    """

    def __init__(
        self,
        robot: Robot,
        integrator: str = "rk4",
        dt: float = 1e-3,
        *,
        forward_dynamics_method: str = "aba",
        forward_dynamics_options: Mapping[str, Any] | None = None,
        friction_velocity: float = FRICTION_VELOCITY,
        tolerance: float = TOLERANCE,
        q: ArrayLike | None = None,
        qd: ArrayLike | None = None,
        contacts: tuple[Contact, ...] = (),
        contact_gains: tuple[float, float] = (100.0, 20.0),
        world: World | None = None,
        collision_shapes: tuple[CollisionShape, ...] = (),
        contact_settings: ContactSettings | None = None,
    ) -> None:
        if forward_dynamics_method not in robot.FORWARD_DYNAMICS_METHODS:
            raise ValueError(
                f"unknown forward_dynamics_method '{forward_dynamics_method}'; choose one of "
                f"{', '.join(robot.FORWARD_DYNAMICS_METHODS)}"
            )
        if integrator not in (*INTEGRATORS, *ADAPTIVE_INTEGRATORS):
            raise ValueError(
                f"unknown integrator '{integrator}'; choose one of "
                f"{', '.join((*INTEGRATORS, *ADAPTIVE_INTEGRATORS))}"
            )
        adaptive = integrator in ADAPTIVE_INTEGRATORS
        iterative = forward_dynamics_method in robot.ITERATIVE_FORWARD_DYNAMICS_METHODS
        if forward_dynamics_options and (adaptive or not iterative):
            raise ValueError(
                "forward_dynamics_options apply to an iterative method under a fixed-step "
                f"integrator only; got '{forward_dynamics_method}' under '{integrator}'"
            )
        if not (np.isfinite(tolerance) and tolerance > 0.0):
            raise ValueError(f"tolerance must be positive; got {tolerance}")
        if not (np.isfinite(dt) and dt > 0.0):
            raise ValueError(f"dt must be a positive number of seconds; got {dt}")
        if not (np.isfinite(friction_velocity) and friction_velocity > 0.0):
            raise ValueError(f"friction_velocity must be positive; got {friction_velocity}")
        on_group = robot.nq != robot.nv
        if on_group and adaptive:
            raise ValueError(
                f"robot '{robot.model.name}' has free flyer or planar joints, which the "
                f"adaptive integrator '{integrator}' cannot keep on their group; choose one of "
                f"{', '.join(INTEGRATORS)}")
        if contacts and (adaptive or iterative):
            raise ValueError("contacts take a fixed-step integrator and a direct forward "
                             f"dynamics method; got '{integrator}' and "
                             f"'{forward_dynamics_method}'")
        world = world or World()
        if world.planes and (integrator != WORLD_INTEGRATOR or iterative or contacts):
            raise ValueError("a world with planes steps semi-implicitly with its contacts "
                             "(contact.time_step): choose integrator 'semi_implicit_euler', a "
                             "direct forward dynamics method and no held contacts; got "
                             f"'{integrator}', '{forward_dynamics_method}' and "
                             f"{len(contacts)} held contact(s)")
        if world.planes and robot.coupling is not None:
            raise ValueError(
                f"a world with planes: robot '{robot.model.name}' has mimic joints "
                f"({', '.join(robot.coupling.mimic_joints)}), which the compiled contact step "
                "takes as free; load the URDF with mimic=False, or lock them (locked_joints=)")
        unknown = sorted({shape.link for shape in collision_shapes} - set(robot.frame_names))
        if unknown:
            raise ValueError(f"collision_shapes: robot '{robot.model.name}' has no link "
                             f"{', '.join(unknown)}")
        gains = np.asarray(contact_gains, dtype=float)
        if gains.shape != (2,) or not (np.all(np.isfinite(gains)) and np.all(gains >= 0.0)):
            raise ValueError(f"contact_gains must be two finite numbers ≥ 0; got "
                             f"{contact_gains!r}")
        kp, kd = float(gains[0]), float(gains[1])
        self.robot = robot
        self.integrator = integrator
        self.forward_dynamics_method = forward_dynamics_method
        self.solver = (
            WarmStartedForwardDynamics(robot, forward_dynamics_method,
                                       **(forward_dynamics_options or {}))
            if iterative and not adaptive
            else None
        )
        self.dt = float(dt)
        self.friction_velocity = float(friction_velocity)
        model = robot.model
        if on_group:
            lie_step = LIE_INTEGRATORS[integrator]
            self._integrate: Integrator = lambda state, dt, acceleration: lie_step(
                state, dt, acceleration, robot)
        else:
            self._integrate = (adaptive_integrator(integrator, tolerance) if adaptive
                               else INTEGRATORS[integrator])
        self.contacts, self.contact_gains = tuple(contacts), (kp, kd)
        self.world, self.collision_shapes = world, tuple(collision_shapes)
        self.contact_settings = contact_settings or ContactSettings()
        self._world_contacts: tuple[ContactForce, ...] = ()
        self._held: tuple[Contact, ...] = ()
        self._contact_forces: tuple[np.ndarray, ...] = ()
        self._external_wrenches: dict[str, np.ndarray] = {}
        # the joints of one degree of freedom: their rows and their entries in q
        single = [joint for joint in robot.configuration_joints
                  if joint.kind not in MULTI_DOF_JOINTS]
        self._limited_rows = np.array([joint.v.start for joint in single], dtype=np.int64)
        self._limited_q = np.array([joint.q.start for joint in single], dtype=np.int64)
        self._options: dict[str, Any] = {"tol": tolerance / 10.0} if adaptive and iterative else {}
        self._lower = np.array(robot.per_coordinate(model.lower), dtype=float)[self._limited_rows]
        self._upper = np.array(robot.per_coordinate(model.upper), dtype=float)[self._limited_rows]
        self._velocity_limit = np.array(robot.per_coordinate(model.velocity_limit), dtype=float)
        self._effort_limit = np.array(robot.per_coordinate(model.effort_limit), dtype=float)
        self._losses = JointLosses.of(model, self.friction_velocity)  # every joint of the tree
        self._effort = np.zeros(robot.nv)
        self.reset(q, qd)

    # -- state ------------------------------------------------------------------------------

    @property
    def q(self) -> np.ndarray:
        return self._q.copy()

    @property
    def qd(self) -> np.ndarray:
        return self._qd.copy()

    @property
    def effort(self) -> np.ndarray:
        """The effort applied in the last step: the command clipped to the effort limits."""
        return self._effort.copy()

    @property
    def contact_forces(self) -> tuple[np.ndarray, ...]:
        """What the world exerted on each contact at the start of the last step, [force] or
        [force; torque] at its frame's origin, world axes; () before a step or without
        contacts."""
        return self._contact_forces

    @property
    def world_contacts(self) -> tuple[ContactForce, ...]:
        """The contacts with the world's planes in the last step, each with its force; ()
        before a step or without a world."""
        return self._world_contacts

    @property
    def external_wrenches(self) -> dict[str, np.ndarray]:
        """Frame → the wrench applied on it (apply_wrench), [fx fy fz tx ty tz]."""
        return {frame: wrench.copy() for frame, wrench in self._external_wrenches.items()}

    def apply_wrench(self, frame: str, wrench: ArrayLike) -> None:
        """Push the robot with `wrench` [fx fy fz tx ty tz] (N, N·m) at `frame`'s origin, in
        world-aligned axes (Robot.jacobian's), from the next step until another wrench on
        the frame replaces it; all zeros removes it. A reset keeps the wrenches.

        Raises:
            ValueError: a frame the robot lacks, or not 6 finite numbers.
        """
        if frame not in self.robot.frame_names:
            raise ValueError(f"apply_wrench: robot '{self.robot.model.name}' has no frame "
                             f"'{frame}'")
        try:
            w = np.array(wrench, dtype=float)
        except (TypeError, ValueError):
            w = np.empty(0)
        if w.shape != (6,) or not np.isfinite(w).all():
            raise ValueError(f"apply_wrench: the wrench on '{frame}' must be 6 finite numbers "
                             f"[fx fy fz tx ty tz]; got {wrench!r}")
        wrenches = dict(self._external_wrenches)  # a new dict: a step running keeps its own
        if w.any():
            wrenches[frame] = w
        else:
            wrenches.pop(frame, None)
        self._external_wrenches = wrenches

    @property
    def held_contacts(self) -> tuple[Contact, ...]:
        """The contacts with the placements they are held at (since the last reset)."""
        return self._held

    @property
    def time(self) -> float:
        """Simulated seconds since the last reset (carried over by `resume`)."""
        return self._resumed_at + self._steps * self.dt

    @property
    def steps(self) -> int:
        return self._steps

    def default_positions(self) -> np.ndarray:
        """q = 0 moved to the nearest point inside the position limits."""
        return self.robot.default_positions()

    def reset(self, q: ArrayLike | None = None, qd: ArrayLike | None = None) -> None:
        """Set the state (defaults: `default_positions()`, rest) and time to 0, the contacts
        held where their frames are now. Positions outside their limits, wrong lengths,
        non-finite values and a free flyer's quaternion off unit norm raise ValueError."""
        q = self.default_positions() if q is None else self._vector(q, "q", self.robot.nq)
        qd = np.zeros(self.robot.nv) if qd is None else self._vector(qd, "qd")
        check_configuration(self.robot.configuration_joints, q, "q")
        positions = q[self._limited_q]
        outside = (positions < self._lower) | (positions > self._upper)
        if outside.any():
            bad = [
                f"{self.robot.joint_names[self._limited_rows[i]]}={positions[i]:g} not in "
                f"[{self._lower[i]:g}, {self._upper[i]:g}]"
                for i in np.flatnonzero(outside)
            ]
            raise ValueError(f"q outside the joint limits: {'; '.join(bad)}")
        self._held = held_where_they_are(self.robot, q, self.contacts)
        self._contact_forces, self._world_contacts = (), ()
        self._q, self._qd = q, qd
        self._effort = np.zeros(self.robot.nv)
        self._steps = 0
        self._resumed_at = 0.0  # s: the time `resume` carried over, steps counted from it
        if self.solver is not None:
            self.solver.reset()

    def resume(self, previous: SimulatedRobot) -> None:
        """Carry on from where `previous` is: its state, time, last effort and wrenches. For the
        same arm changed while it runs (a payload picked up, gravity, armature, or the step
        and integrator), so the motion goes on under the new dynamics.

        Raises:
            ValueError: `previous` simulates other joints.
        """
        if previous.robot.joint_names != self.robot.joint_names:
            raise ValueError(
                "resume: the previous simulation has joints "
                f"{', '.join(previous.robot.joint_names)}, this one "
                f"{', '.join(self.robot.joint_names)}"
            )
        self._q, self._qd, self._effort = previous.q, previous.qd, previous.effort
        self._resumed_at, self._steps = previous.time, 0
        self._external_wrenches = {frame: wrench for frame, wrench
                                   in previous.external_wrenches.items()
                                   if frame in self.robot.frame_names}
        if self.contacts == previous.contacts:
            self._held = previous.held_contacts
        if self.solver is not None:
            self.solver.reset()

    # -- stepping ---------------------------------------------------------------------------

    def step(self, tau: ArrayLike) -> None:
        """Advance by dt under the commanded joint effort `tau` (one value per joint)."""
        applied = np.clip(self._vector(tau, "tau"), -self._effort_limit, self._effort_limit)
        held: list[ContactDynamics] = []
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # an overflow is raised below
                if self.world.planes:
                    q, qd = self._world_step(applied)
                else:
                    q, qd = self._integrate((self._q, self._qd), self.dt,
                                            self._acceleration(applied, held))
        except ConvergenceError:
            if self.solver is not None:  # an adaptive integrator's method raises with none
                self.solver.forget_history()  # it holds the failed step's first stages
            raise
        if not (np.isfinite(q).all() and np.isfinite(qd).all()):
            raise NonFiniteResultError(
                "step", "the state", f"after step {self._steps + 1} (t = "
                f"{self.time + self.dt:g} s); the state stays as it was: a step too long for "
                "the efforts on the lightest bodies")
        np.clip(qd, -self._velocity_limit, self._velocity_limit, out=qd)
        positions = q[self._limited_q]
        above, below = positions > self._upper, positions < self._lower
        if above.any() or below.any():
            q[self._limited_q] = np.clip(positions, self._lower, self._upper)
            rows = self._limited_rows
            qd[rows[above]] = np.minimum(qd[rows[above]], 0.0)
            qd[rows[below]] = np.maximum(qd[rows[below]], 0.0)
        self._q, self._qd, self._effort = q, qd, applied
        self._contact_forces = held[0].forces if held else ()  # each stage starts at (q, q̇)
        self._steps += 1

    def linearize(self, tau: ArrayLike) -> StepJacobians:
        """A = ∂x⁺/∂x and B = ∂x⁺/∂τ of one step from the current state under the command
        `tau` (sim.linearization.step_jacobians), x = (q, q̇) in the tangent space: the step
        as `step` takes it, its damping, friction and effort limits included, before the
        joint and velocity limits stop it.

        Raises:
            ValueError: an adaptive integrator, held contacts, a world of planes or applied
                wrenches, steps it does not linearise; a tau of the wrong shape.
        """
        refused = [why for why, present in (
            (f"the adaptive integrator '{self.integrator}'",
             self.integrator not in LINEARIZED_INTEGRATORS),
            ("held contacts", bool(self._held)),
            ("a world of planes", bool(self.world.planes)),
            ("applied wrenches", bool(self._external_wrenches))) if present]
        if refused:
            raise ValueError(f"linearize: a step with {' and '.join(refused)} has no "
                             "linearisation here; linearise the free robot's step, under "
                             f"{', '.join(LINEARIZED_INTEGRATORS)}")
        return step_jacobians(
            self.robot, self._q, self._qd, self._vector(tau, "tau"), self.dt, self.integrator,
            losses=self._losses,
            effort_limit=self._effort_limit)

    def _world_step(self, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q, q̇) after a contact.time_step under the forces at the step's start."""
        step = contact_step(self.robot, self.collision_shapes, self.world, self._q, self._qd,
                            self._forces(tau)(self._q, self._qd), self.dt,
                            self.contact_settings)
        self._world_contacts = step.contacts
        return step.q, step.v

    def joint_torques(self, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """τ − d·q̇ − f·tanh(q̇/ε): the applied effort with damping and smoothed friction; with
        mimic joints, those of every joint of the tree through the rule, τ − Gᵀ(d·G q̇ + ...)."""
        torques: np.ndarray = tau - self._losses.torques(self.robot, qd)
        return torques

    def _forces(self, tau: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """forces(q, q̇) of this step: joint_torques and Σ J_k(q)ᵀ w_k of the external wrenches
        applied when the step began."""
        wrenches, robot = self._external_wrenches, self.robot  # replaced, never changed
        if not wrenches:
            return lambda _, qd: self.joint_torques(qd, tau)
        return lambda q, qd: self.joint_torques(qd, tau) + wrench_forces(robot, q, wrenches)

    def _acceleration(self, tau: np.ndarray, held: list[ContactDynamics]) -> Acceleration:
        """The integrator's a(q, q̇) for this step, each stage's constrained dynamics appended
        to `held` where contacts hold the robot; an iterative method's solver is told which
        stage of the step each call is."""
        forces = self._forces(tau)
        if self._held:
            contacts, (kp, kd) = self._held, self.contact_gains

            def constrained(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
                dynamics = self.robot.constrained_forward_dynamics(
                    q, qd, forces(q, qd), contacts, kp, kd)
                held.append(dynamics)
                return dynamics.vdot

            return constrained
        if self.solver is None:
            forward_dynamics, method = self.robot.forward_dynamics, self.forward_dynamics_method
            options = self._options

            def acceleration(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
                qdd: np.ndarray = forward_dynamics(
                    q, qd, forces(q, qd), method=method, **options
                )
                return qdd

            return acceleration
        solver, stages = self.solver, itertools.count()

        def warm_started(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
            return solver(q, qd, forces(q, qd), next(stages))

        return warm_started

    def _vector(self, x: ArrayLike, name: str, size: int | None = None) -> np.ndarray:
        """x as a fresh float64 (size,) array (default nv) with finite values, or a ValueError
        naming it."""
        n = self.robot.nv if size is None else size
        velocity = n == self.robot.nv  # else a configuration of nq values

        def what() -> str:  # written only for an error: a configuration's takes a while
            if velocity:
                return "one per joint"
            return f"a configuration: {configuration_description(self.robot.configuration_joints)}"

        try:
            array = np.array(x, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be {n} numbers, {what()}; got {x!r}") from None
        if array.shape != (n,):
            names = ", ".join(self.robot.joint_names[:8]) + (", ..." if n > 8 else "")
            raise ValueError(
                f"{name} must have {n} values, "
                f"{what() if not velocity else f'{what()} ({names})'}; got shape {array.shape}"
            )
        bad = ~np.isfinite(array)
        if bad.any():
            where = [self.robot.joint_names[i] if velocity else f"index {i}"
                     for i in np.flatnonzero(bad)]
            raise ValueError(f"{name} has non-finite values (NaN or inf) for {', '.join(where)}")
        return array


__all__ = ["FRICTION_VELOCITY", "TOLERANCE", "WORLD_INTEGRATOR", "SimulatedRobot"]
