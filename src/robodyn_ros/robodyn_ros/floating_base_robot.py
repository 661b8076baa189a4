"""FloatingBaseRobot: the dynamics of a robot whose base floats (humanoids, quadrupeds, mobile
manipulators, robots in space), in Pinocchio's FreeFlyer convention.

    q = [x y z, qx qy qz qw, joint positions]   (nq = nv + 1): base position in the world,
        base orientation as a unit quaternion, then the joints in `joint_names` order;
    v = [base linear; base angular; joint velocities]   (nv): the base's in the base frame.

Every nv-sized vector and matrix (τ, v̇, M, J columns) is in v's order; the first six entries
of τ are the wrench on the base, [force; torque] in the base frame. Frame poses, Jacobians and
Λ are in the world, Jacobians and Λ about the frame origin in world-aligned axes.

The kernels compute in the base frame with the six free-flyer joints at q = 0
(robodyn_ros.dynamics.floating_base): a fixed-base Robot of the same tree (`tree_robot`) answers,
and this class turns states in and answers out.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NamedTuple, Unpack

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros import free_flyer
from robodyn_ros._state_call import StateCall
from robodyn_ros.answers import check_mass_matrix
from robodyn_ros.contact_dynamics import (
    CONTACT_ROWS,
    Contact,
    ContactDynamics,
    contact_inverse_dynamics,
    contact_task,
    placement_error,
    split_forces,
)
from robodyn_ros.dynamics import (
    constrained_dynamics,
    contact_state_entries,
    floating_base,
    floating_state_entries,
)
from robodyn_ros.errors import SingularMassMatrixError
from robodyn_ros.external_wrenches import ExternalWrenches, wrench_forces
from robodyn_ros.model import Model
from robodyn_ros.model.model import FREE_FLYER_DOF, FREE_FLYER_JOINTS, checked_gravity
from robodyn_ros.model.payload import checked_payload, with_payload
from robodyn_ros.operational_space import (
    SINGULAR_THRESHOLD,
    OperationalSpaceDynamics,
    task_axes,
)
from robodyn_ros.robot import (
    BoundOnUse,
    EntryCall,
    FloatArray,
    LoadOptions,
    Robot,
    Task,
    TaskAxes,
    _as_float_array,
)

_LINEAR, _ANGULAR = slice(0, 3), slice(3, 6)


class BaseFrameStates(NamedTuple):
    """Floating-base states as the tree_robot takes them (dynamics.floating_base)."""

    q: FloatArray  # (..., nv): 0 for the free-flyer joints, then the joints
    rotation: FloatArray  # (..., 3, 3): the base orientation R, world from base
    shift: FloatArray | None  # (..., nv): v̇ − the free-flyer joints' q̈; None without v


class _ContactTask(NamedTuple):
    """Contacts as dynamics.constrained_dynamics takes them."""

    frames: tuple[str, ...]
    frame_rows: np.ndarray  # (F, FRAME_WIDTH) the frames' packed rows
    rows: np.ndarray  # (m,) the held rows 6 k + axis
    spatial: np.ndarray  # (F,) bool: held whole ("6d")


class _HeldCall(NamedTuple):
    """Constrained dynamics on contacts held where they are, compiled for one state."""

    call: StateCall  # (q, v, τ) → [v̇; the stacked contact forces], or None
    forces: tuple[slice, ...]  # each contact's forces in the answer


class _OneFloatingState(BoundOnUse):
    """The single-state calls that enter the compiled kernels directly (dynamics.state_entry,
    robot._OneState): each answers one state of C-contiguous float64 vectors, or None for
    anything else, which the general path then converts, checks or batches. inverse_dynamics
    gives the bias forces and gravity too, at v̇ = 0 and v = v̇ = 0. Its constants are the
    gravity."""

    CALLS: ClassVar[dict[str, EntryCall]] = {
        "inverse_dynamics": ("inverse_dynamics", 3, lambda n: (n,)),
        "mass_matrix": ("mass_matrix", 1, lambda n: (n, n)),
        "forward_dynamics": ("forward_dynamics", 3, lambda n: (n,)),
    }

    def _state_call(self, function: str, inputs: int, out_shape: tuple[int, ...]) -> StateCall:
        entries = floating_state_entries()
        return StateCall(entries.ENTRIES[function].address, self._tree, self._constants, inputs,
                         out_shape, 1, symmetric=function in entries.SYMMETRIC_ANSWERS)


class _OneFloatingFrame(_OneFloatingState):
    """A frame's single-state calls, as _OneFloatingState's: its pose and its Jacobian. Its
    constants are the frame's packed row."""

    CALLS: ClassVar[dict[str, EntryCall]] = {
        "pose": ("frame_pose", 1, lambda n: (4, 4)),
        "jacobian": ("jacobian", 1, lambda n: (6, n)),
    }


_RECURSIVE_DELASSUS = np.empty((0, 0))  # the constrained kernel computes Λ⁻¹ itself
_HELD_CALLS = 64  # the compiled constrained-dynamics calls a robot keeps, by contacts and gains


def _general_path(*_states: object) -> None:
    """The stand-in for a StateCall that this robot cannot take (see _bind_one_state)."""


class FloatingBaseRobot:
    """Dynamics of a floating-base robot for one state or a batch (a leading B).

    Attributes:
        model: the Model (floating_base), its gravity in the world.
        tree_robot: the fixed-base Robot of the same tree without gravity, which computes in
            the base frame (module doc); its joint_names start with FREE_FLYER_JOINTS.
        nq, nv: configuration (nv + 1) and velocity sizes.
        joint_names: the joints after the base, in q[7:] and v[6:] order.
        velocity_names: FREE_FLYER_JOINTS then joint_names: what each entry of v, τ is.
        frame_names: every URDF link.
        mass: the total mass, kg.

    Besides what each function names, each raises ValueError for a state of the wrong shape
    or a base orientation that is not a unit quaternion, and what the fixed-base Robot raises
    for the same question (robodyn_ros.robot.Robot).
    """

    def __init__(self, model: Model, *, threads: int = 1) -> None:
        """The robot of a floating-base `model`; batches run on `threads` threads."""
        if not model.floating_base:
            raise ValueError(f"robot '{model.name}': the model has a fixed base; use Robot")
        self.model = model
        self.tree_robot = Robot(dataclasses.replace(model, gravity=np.zeros(3)), threads=threads)
        self.nv = self.tree_robot.nv
        self.nq = self.nv + 1
        self.velocity_names = self.tree_robot.joint_names
        self.joint_names = self.velocity_names[FREE_FLYER_DOF:]
        self.frame_names = model.frame_names
        self.mass = model.total_mass
        self._gravity = np.array(model.gravity, dtype=float)
        kinds = self.tree_robot.per_coordinate(np.array(model.joint_kinds))[FREE_FLYER_DOF:]
        self._continuous = kinds == "continuous"
        self._one_state = self._bind_one_state()
        self._at_rest = np.zeros(self.nv)  # v or v̇ = 0, for the compiled calls
        self._at_rest.flags.writeable = False
        self._one_frame: dict[str, _OneFloatingFrame] = {}
        if self.tree_robot.coupling is None:
            tree, _ = self.tree_robot.kernel_arrays
            self._one_frame = {name: _OneFloatingFrame(tree, self.tree_robot.frame_row(name))
                               for name in self.frame_names}
        self._contact_tasks: dict[tuple, _ContactTask] = {}
        # (contacts, kp, kd) → the compiled call of constrained dynamics on them, held where
        # they are; None where every call takes the general path, which maps or raises
        self._contact_calls: dict[tuple, _HeldCall] | None = None
        if self.tree_robot.coupling is None and not self.tree_robot.massless_joints:
            self._contact_calls = {}

    def _bind_one_state(self) -> _OneFloatingState:
        """The compiled single-state calls on the tree_robot's tree; for a robot with mimic
        joints (whose coordinates are not the tree's joints) or massless joints (where q̈ does
        not exist), every call takes the general path, which maps or raises."""
        if self.tree_robot.coupling is not None:
            unbound = _OneFloatingState(np.empty((0, 0)), self._gravity)
            return unbound.replaced(**dict.fromkeys(_OneFloatingState.CALLS, _general_path))
        tree, _ = self.tree_robot.kernel_arrays
        calls = _OneFloatingState(tree, self._gravity)
        if self.tree_robot.massless_joints:
            return calls.replaced(forward_dynamics=_general_path)
        return calls

    @classmethod
    def from_urdf(cls, path: str | os.PathLike, **options: Unpack[LoadOptions]
                  ) -> FloatingBaseRobot:
        """Robot.from_urdf(path, floating_base=True, **options): gravity in the world."""
        return Robot.from_urdf(path, floating_base=True, **options)

    @classmethod
    def from_urdf_string(cls, xml: str | bytes, *, source: str = "<string>",
                         **options: Unpack[LoadOptions]) -> FloatingBaseRobot:
        """Robot.from_urdf_string(xml, source=source, floating_base=True, **options)."""
        return Robot.from_urdf_string(xml, source=source, floating_base=True, **options)

    @classmethod
    def from_xacro(cls, path: str | os.PathLike, mappings: Mapping[str, str] | None = None,
                   **options: Unpack[LoadOptions]) -> FloatingBaseRobot:
        """Robot.from_xacro(path, mappings, floating_base=True, **options)."""
        return Robot.from_xacro(path, mappings, floating_base=True, **options)

    def with_gravity(self, gravity: Sequence[float] | np.ndarray) -> FloatingBaseRobot:
        """This robot under another gravity, in the world (e.g. zeros for a robot in orbit)."""
        return type(self)(_with_gravity(self.model, gravity), threads=self.tree_robot.threads)

    def with_payload(
        self,
        frame: str,
        mass: float,
        com: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0),
        inertia: Sequence[Sequence[float]] | np.ndarray | None = None,
    ) -> FloatingBaseRobot:
        """This robot carrying a rigid load on `frame`, as Robot.with_payload."""
        payload = checked_payload(self.model, frame, mass, com, inertia)
        return type(self)(with_payload(self.model, frame, payload),
                          threads=self.tree_robot.threads)

    def __reduce__(self) -> tuple:
        """Pickled as its Model (for the process and Dask backends), as Robot is."""
        return (type(self), (self.model,))

    def __repr__(self) -> str:
        return (f"FloatingBaseRobot('{self.model.name}', nq={self.nq}, nv={self.nv}, "
                f"frames={len(self.frame_names)})")

    # -- configurations ---------------------------------------------------------------------

    def neutral(self) -> FloatArray:
        """The configuration with the base at the world origin, unrotated, and every joint at 0."""
        q = np.zeros(self.nq)
        q[: floating_base.CONFIGURATION] = free_flyer.NEUTRAL
        return q

    def standing(self, feet: Sequence[str], q: ArrayLike | None = None) -> FloatArray:
        """q (default: neutral) with the base moved along the world's z so that the lowest
        origin of the frames `feet` is at z = 0: the robot on level ground at z = 0.

        Args:
            feet: the frames on the ground (soles, point feet).
            q: the configuration to move; its joints and base orientation are kept.

        Returns:
            The configuration, (nq,).

        Raises:
            ValueError: no frame given, or q not one finite configuration of this robot.
            ModelError: a frame the robot lacks, named.
        """
        if not feet:
            raise ValueError("standing: name at least one frame on the ground")
        standing = self.neutral() if q is None else np.array(q, dtype=float)
        if standing.shape != (self.nq,):
            raise ValueError(f"standing: q has shape {standing.shape}, not ({self.nq},)")
        if not np.isfinite(standing).all():
            raise ValueError(f"standing: q is not finite at index(es) "
                             f"{np.flatnonzero(~np.isfinite(standing)).tolist()}")
        lowest = min(self.frame_pose(standing, frame)[2, 3] for frame in feet)
        standing[2] -= lowest  # q[:3] is the base's position in the world
        return standing

    def integrate(self, q: ArrayLike, v: ArrayLike, dt: float = 1.0) -> FloatArray:
        """q ⊕ v dt: where the robot is after moving at the constant velocity v for dt seconds
        (the base along the screw motion exp(v dt) in its own frame, as Pinocchio's integrate).

        Returns:
            The configuration, shaped like q.

        Raises:
            ValueError: a state of the wrong shape, or a base quaternion that is not of unit
                norm (to UNIT_TOLERANCE), naming the state.
        """
        q, v = self._states(("q", "v"), q, v)
        self._check_base_orientation("q", q)
        out = np.empty_like(q)
        base = floating_base.CONFIGURATION
        out[..., :base] = free_flyer.integrate(q[..., :base], v[..., :FREE_FLYER_DOF] * dt)
        out[..., base:] = q[..., base:] + v[..., FREE_FLYER_DOF:] * dt
        return out

    def difference(self, q0: ArrayLike, q1: ArrayLike) -> FloatArray:
        """q1 ⊖ q0: the velocity v with integrate(q0, v) = q1 (Pinocchio's difference); a
        continuous joint turns the shorter way, by at most π.

        Returns:
            v, shape (..., nv).

        Raises:
            ValueError: a state of the wrong shape, or a base quaternion that is not of unit
                norm (to UNIT_TOLERANCE), naming the configuration and the state.
        """
        q0, q1 = self._states(("q0", "q1"), q0, q1)
        self._check_base_orientation("q0", q0)
        self._check_base_orientation("q1", q1)
        base = floating_base.CONFIGURATION
        out = np.empty((*q0.shape[:-1], self.nv))
        out[..., :FREE_FLYER_DOF] = free_flyer.difference(q0[..., :base], q1[..., :base])
        turn = q1[..., base:] - q0[..., base:]
        # a continuous joint's angles a turn apart are one configuration: the shorter way
        out[..., FREE_FLYER_DOF:] = np.where(self._continuous, np.remainder(turn + np.pi,
                                                                           2 * np.pi) - np.pi,
                                             turn)
        return out

    def base_frame_states(self, q: ArrayLike, v: ArrayLike | None = None) -> BaseFrameStates:
        """The states the tree_robot takes for q (and v): see the module doc.

        Raises:
            ValueError: a state of the wrong shape, or a base quaternion that is not of unit
                norm (to UNIT_TOLERANCE), naming the state.
        """
        if v is None:
            (q,) = self._states(("q",), q)
        else:
            q, v = self._states(("q", "v"), q, v)
        q_tree = np.empty((*q.shape[:-1], self.nv))
        rotation = np.empty((*q.shape[:-1], 3, 3))
        shift = None if v is None else np.empty_like(q_tree)
        bad = floating_base.base_frame_states(self._gravity, q, v, q_tree, rotation, shift)
        if bad >= 0:
            raise _base_orientation_error("q", q, bad)
        return BaseFrameStates(q_tree, rotation, shift)

    # -- dynamics -----------------------------------------------------------------------------

    def inverse_dynamics(self, q: ArrayLike, v: ArrayLike, vdot: ArrayLike, *,
                         external_wrenches: ExternalWrenches | None = None) -> FloatArray:
        """τ = M(q) v̇ + C(q, v) v + g(q) − Σ J_kᵀ w_k by the recursive Newton–Euler algorithm;
        τ[:6] is the wrench [force; torque] the base needs, in the base frame.

        Args:
            q, v, vdot: the state and its acceleration.
            external_wrenches: as in Robot.inverse_dynamics: frame → [fx fy fz tx ty tz] at the
                frame's origin, world-aligned axes.

        Returns:
            τ, shape (..., nv).
        """
        if external_wrenches:
            return self.inverse_dynamics(q, v, vdot) - wrench_forces(self, q, external_wrenches)
        tau = self._one_state.inverse_dynamics(q, v, vdot)
        if tau is not None:
            return tau
        states = self.base_frame_states(q, v)
        (vdot,) = self._velocities(("vdot",), states.q, vdot)
        assert states.shift is not None
        return self.tree_robot.inverse_dynamics(states.q, _as_array(v), vdot - states.shift)

    def bias_forces(self, q: ArrayLike, v: ArrayLike) -> FloatArray:
        """C(q, v) v + g(q): τ at v̇ = 0."""
        tau = self._one_state.inverse_dynamics(q, v, self._at_rest)
        if tau is not None:
            return tau
        states = self.base_frame_states(q, v)
        assert states.shift is not None
        return self.tree_robot.inverse_dynamics(states.q, _as_array(v), -states.shift)

    def gravity_torques(self, q: ArrayLike) -> FloatArray:
        """g(q): τ at v = 0, v̇ = 0; its first six entries hold the robot's weight on the base."""
        tau = self._one_state.inverse_dynamics(q, self._at_rest, self._at_rest)
        if tau is not None:
            return tau
        rest = self._rest(q)
        states = self.base_frame_states(q, rest)
        assert states.shift is not None
        return self.tree_robot.inverse_dynamics(states.q, rest, -states.shift)

    def mass_matrix(self, q: ArrayLike, method: str = "crba") -> FloatArray:
        """M(q), nv x nv, by one of Robot.MASS_MATRIX_METHODS."""
        if method == "crba":
            M = self._one_state.mass_matrix(q)
            if M is not None:
                return M
        return self.tree_robot.mass_matrix(self.base_frame_states(q).q, method)

    def mass_matrix_inverse(self, q: ArrayLike, method: str = "aba") -> FloatArray:
        """M(q)⁻¹ by one of Robot.MASS_MATRIX_INVERSE_METHODS."""
        return self.tree_robot.mass_matrix_inverse(self.base_frame_states(q).q, method)

    def forward_dynamics(
        self, q: ArrayLike, v: ArrayLike, tau: ArrayLike, method: str = "aba", *,
        external_wrenches: ExternalWrenches | None = None, **options: Any
    ) -> Any:
        """v̇ = M⁻¹(τ − C v − g + Σ J_kᵀ w_k), τ[:6] a wrench on the base in the base frame
        (zero for a robot that floats free).

        Args:
            q, v, tau: the state and the efforts.
            method, options: as in Robot.forward_dynamics.
            external_wrenches: as in Robot.forward_dynamics.

        Returns:
            v̇, shape (..., nv); ``(v̇, IterationInfo)`` when `info` is set.
        """
        if external_wrenches:
            (q,) = self._states(("q",), q)
            tau = np.asarray(tau, dtype=float) + wrench_forces(self, q, external_wrenches)
        if method == "aba" and not options:
            vdot = self._one_state.forward_dynamics(q, v, tau)
            if vdot is not None:
                return vdot
        states = self.base_frame_states(q, v)
        (tau,) = self._velocities(("tau",), states.q, tau)
        assert states.shift is not None
        answer = self.tree_robot.forward_dynamics(states.q, _as_array(v), tau, method, **options)
        if isinstance(answer, tuple):
            return answer[0] + states.shift, answer[1]
        return answer + states.shift

    # -- energy and momentum ------------------------------------------------------------------

    def kinetic_energy(self, q: ArrayLike, v: ArrayLike) -> FloatArray:
        """½ vᵀ M(q) v, J."""
        states = self.base_frame_states(q)
        (v,) = self._velocities(("v",), states.q, v)
        return self.tree_robot.kinetic_energy(states.q, v)

    def potential_energy(self, q: ArrayLike) -> FloatArray:
        """−m gᵀ c: the gravitational potential energy in J, zero with the centre of mass at
        the height of the world origin."""
        return -self.mass * (self.centre_of_mass(q) @ self._gravity)

    def centre_of_mass(self, q: ArrayLike) -> FloatArray:
        """The centre of mass in the world, (..., 3)."""
        states = self.base_frame_states(q)
        return _position(q) + _rotate(states.rotation,
                                      self.tree_robot.centre_of_mass(states.q))

    def com_jacobian(self, q: ArrayLike) -> FloatArray:
        """J_c, (..., 3, nv): the velocity of the centre of mass in the world, J_c v."""
        return self.centroidal_momentum_matrix(q)[..., _LINEAR, :] / self.mass

    def centroidal_momentum_matrix(self, q: ArrayLike) -> FloatArray:
        """A_g, (..., 6, nv): the momentum [linear; angular about the centre of mass] in world
        axes, A_g v (Orin & Goswami; Pinocchio's computeCentroidalMap): the tree_robot's, in
        the base frame, turned to world axes."""
        states = self.base_frame_states(q)
        return _rotate_rows(states.rotation,
                            self.tree_robot.centroidal_momentum_matrix(states.q))

    # -- frames -------------------------------------------------------------------------------

    def frame_pose(self, q: ArrayLike, frame: str) -> FloatArray:
        """The pose of a frame in the world, (..., 4, 4)."""
        calls = self._one_frame.get(frame)
        if calls is not None:
            pose = calls.pose(q)
            if pose is not None:
                return pose
        states = self.base_frame_states(q)
        return _base_pose(q, states.rotation) @ self.tree_robot.frame_pose(states.q, frame)

    def jacobian(self, q: ArrayLike, frame: str) -> FloatArray:
        """J, (..., 6, nv): the [linear; angular] velocity of the frame origin in world-aligned
        axes, J v."""
        calls = self._one_frame.get(frame)
        if calls is not None:
            J = calls.jacobian(q)
            if J is not None:
                return J
        states = self.base_frame_states(q)
        return _rotate_rows(states.rotation, self.tree_robot.jacobian(states.q, frame))

    def classical_acceleration(self, q: ArrayLike, v: ArrayLike, frame: str) -> FloatArray:
        """J̇ v: the classical acceleration [a; α] of the frame origin at v̇ = 0, world axes."""
        states = self.base_frame_states(q, v)
        assert states.shift is not None
        velocity_product = states.shift.copy()
        velocity_product[..., :3] -= _rotate_back(states.rotation, self._gravity)
        # at the kernels' q̈ = 0 the base accelerates at e(v) (module doc of dynamics.floating_base)
        drift = self.tree_robot.classical_acceleration(states.q, _as_array(v), frame)
        J = self.tree_robot.jacobian(states.q, frame)
        return _rotate_vector6(states.rotation, drift - (J @ velocity_product[..., None])[..., 0])

    def operational_space_inertia(
        self,
        q: ArrayLike,
        frame: Task,
        method: str = "recursive",
        inverse: bool = False,
        *,
        axes: TaskAxes = None,
    ) -> FloatArray:
        """Λ of a task, or Λ⁻¹ = J M⁻¹ Jᵀ (the Delassus matrix of contacts on the frames), about
        each frame origin in world-aligned axes; the arguments are Robot's.

        Returns:
            Λ or Λ⁻¹, (..., m, m).

        Raises:
            LinAlgError: Λ does not exist at this state.
        """
        states = self.base_frame_states(q)
        frames = (frame,) if isinstance(frame, str) else tuple(frame)
        if axes is None:
            in_base = self.tree_robot.operational_space_inertia(states.q, frames, method, inverse)
            return _rotate_task(states.rotation, in_base, len(frames))
        in_base = self.tree_robot.operational_space_inertia(states.q, frames, method, True)
        rows = np.array([6 * k + axis for k in range(len(frames)) for axis in task_axes(axes)])
        Lambda_inv = _rotate_task(states.rotation, in_base, len(frames))[..., rows[:, None], rows]
        return Lambda_inv if inverse else _inverse_task(Lambda_inv, frames)

    def operational_space(
        self,
        q: ArrayLike,
        v: ArrayLike,
        frames: Task,
        method: str = "dense",
        *,
        singular_threshold: float = SINGULAR_THRESHOLD,
        singular_damping: float | None = None,
    ) -> OperationalSpaceDynamics:
        """J, Λ⁻¹, Λ, J̄, μ, p and J̇ v of a task of whole frames (all six axes), world axes,
        as Robot.operational_space (whose arguments these are) gives them for a fixed base.

        The tree_robot answers in the base frame: rotations turn J, Λ, J̄, μ and J̇ v (the
        damping of Λ, its rank and condition do not change); μ is the same whichever frame
        of the base's velocity products the kernels see, J̇ v loses theirs (J e(v)), and p =
        J̄ᵀ g(q) comes from this robot's gravity, which the tree_robot has not.
        """
        states = self.base_frame_states(q, v)
        assert states.shift is not None
        v = _as_array(v)
        names = (frames,) if isinstance(frames, str) else tuple(frames)
        in_base = self.tree_robot.operational_space(
            states.q, v, names, method, singular_threshold=singular_threshold,
            singular_damping=singular_damping)
        blocks = _task_rotation(states.rotation, len(names))
        blocks_t = np.swapaxes(blocks, -1, -2)
        velocity_product = states.shift.copy()
        velocity_product[..., :3] -= _rotate_back(states.rotation, self._gravity)
        Jdot_v = in_base.Jdot_qd - (in_base.J @ velocity_product[..., None])[..., 0]
        gravity = self.gravity_torques(q)
        return OperationalSpaceDynamics(
            in_base.frames, blocks @ in_base.J, blocks @ in_base.Lambda_inv @ blocks_t,
            blocks @ in_base.Lambda @ blocks_t, in_base.Jbar @ blocks_t,
            (blocks @ in_base.mu[..., None])[..., 0],
            (blocks @ (np.swapaxes(in_base.Jbar, -1, -2) @ gravity[..., None]))[..., 0],
            (blocks @ Jdot_v[..., None])[..., 0], in_base.rank, in_base.condition,
        )

    # -- contacts -----------------------------------------------------------------------------

    def constrained_forward_dynamics(
        self,
        q: ArrayLike,
        v: ArrayLike,
        tau: ArrayLike,
        contacts: Sequence[Contact],
        kp: float = 0.0,
        kd: float = 0.0,
        method: str = "recursive",
    ) -> ContactDynamics:
        """v̇ and the contact forces with the contact frames held in the world
        (robodyn_ros.contact_dynamics; dynamics.constrained_dynamics solves it).

        Args:
            q, v, tau: the state and the generalised forces (τ[:6] zero unless something
                pushes on the base).
            contacts: the contacts, independent (J_c of full row rank).
            kp, kd: Baumgarte gains, 1/s² and 1/s, ≥ 0.
            method: the route to the Delassus matrix J_c M⁻¹ J_cᵀ, one of
                Robot.OPERATIONAL_SPACE_METHODS: "recursive" (O(n), the default) is computed
                with the rest in one compiled pass, the others beside it.

        Returns:
            The ContactDynamics, tau as given.

        Raises:
            ValueError: no contact, a gain < 0 or an unknown frame.
            LinAlgError: the contacts are not independent at this state, so their forces are
                not determined; SingularMassMatrixError where M is singular.
        """
        if not (kp >= 0.0 and kd >= 0.0):
            raise ValueError(f"constrained_forward_dynamics: kp and kd must be ≥ 0; got {kp}, "
                             f"{kd}")
        held = self._held_where_they_are(contacts, kp, kd) if method == "recursive" else None
        if held is not None:
            answer = held.call(q, v, tau)
            if answer is not None:
                return ContactDynamics(answer[: self.nv], np.asarray(tau),
                                       tuple([answer[rows] for rows in held.forces]))
        task = self._contact_task(contacts)
        q, v = self._states(("q", "v"), q, v)
        (tau,) = self._velocities(("tau",), v, tau)
        frames = task.frames
        error = placement_error(self, q, contacts)
        given = _RECURSIVE_DELASSUS
        if method != "recursive":
            given = self.tree_robot.operational_space_inertia(
                self.base_frame_states(q).q, frames, method, inverse=True)
        if self.tree_robot.coupling is not None:
            raise ValueError("constrained_forward_dynamics does not take mimic joints yet: "
                             "load the robot with mimic=False or lock them (locked_joints=)")
        if self.tree_robot.massless_joints:
            raise SingularMassMatrixError("constrained_forward_dynamics",
                                          self.tree_robot.massless_joints,
                                          "at every configuration")
        vdot, forces = np.empty_like(v), np.empty_like(error)
        constrained_dynamics.constrained_forward_dynamics(
            self.tree_robot.kernel_arrays[0], self._gravity, task.frame_rows, task.rows,
            task.spatial, np.array([kp, kd], dtype=float), q, v, tau, error, given, vdot, forces)
        if not np.isfinite(vdot).all() and np.isfinite(q).all() and np.isfinite(v).all():
            self._explain_no_answer(q, frames)
        return ContactDynamics(vdot, tau, split_forces(forces, contacts))

    def _held_where_they_are(self, contacts: Sequence[Contact], kp: float, kd: float
                             ) -> _HeldCall | None:
        """The compiled single-state call of constrained dynamics on contacts without a
        placement (no placement error); None where that does not apply."""
        if self._contact_calls is None:
            return None
        for contact in contacts:
            if contact.placement is not None:
                return None
        key = (*contacts, kp, kd)
        held = self._contact_calls.get(key)
        if held is None:
            if len(self._contact_calls) == _HELD_CALLS:  # gains that keep changing
                self._contact_calls.clear()
            task = self._contact_task(contacts)
            constants = constrained_dynamics.pack_contact_task(
                self._gravity, task.frame_rows, task.rows, task.spatial, kp, kd)
            address = contact_state_entries().constrained_forward_dynamics_entry.address
            tree, _ = self.tree_robot.kernel_arrays
            ends = self.nv + np.cumsum([CONTACT_ROWS[contact.kind] for contact in contacts])
            held = self._contact_calls[key] = _HeldCall(
                StateCall(address, tree, constants, 3, (int(ends[-1]),), 1),
                tuple(slice(end - CONTACT_ROWS[contact.kind], end)
                      for contact, end in zip(contacts, ends, strict=True)))
        return held

    def _contact_task(self, contacts: Sequence[Contact]) -> _ContactTask:
        """The contacts as the kernel takes them, remembered by their frames and kinds."""
        key = tuple((contact.frame, contact.kind) for contact in contacts)
        task = self._contact_tasks.get(key)
        if task is None:
            frames, rows = contact_task(contacts)
            task = self._contact_tasks[key] = _ContactTask(
                frames, np.stack([self.tree_robot.frame_row(frame) for frame in frames]), rows,
                np.array([kind == "6d" for _, kind in key]))
        return task

    def _explain_no_answer(self, q: np.ndarray, frames: tuple[str, ...]) -> None:
        """Raise why constrained dynamics answered NaN for finite states: a base quaternion of
        other norm, a singular M, or contacts that are not independent."""
        states = self.base_frame_states(q)  # raises for the quaternion
        check_mass_matrix("constrained_forward_dynamics", self.tree_robot.kernel_arrays[0],
                          self.velocity_names, states.q)
        raise np.linalg.LinAlgError(
            f"constrained_forward_dynamics: contacts {', '.join(map(repr, frames))} are not "
            "independent at this state (their Delassus matrix J_c M⁻¹ J_cᵀ is singular), so "
            "their forces are not determined; hold fewer rows (a '3d' contact instead of a "
            "'6d' one)"
        )

    def contact_inverse_dynamics(
        self, q: ArrayLike, v: ArrayLike, vdot: ArrayLike, contacts: Sequence[Contact]
    ) -> ContactDynamics:
        """The joint efforts (τ[:6] = 0) and contact forces that give v̇, where the motion
        determines the forces (contact_dynamics.contact_inverse_dynamics).

        Raises:
            ValueError: the forces are not determined, or v̇ is not a motion the contacts allow.
        """
        return contact_inverse_dynamics(self, q, v, vdot, contacts)

    # -- argument checks ----------------------------------------------------------------------

    @staticmethod
    def _check_base_orientation(name: str, q: np.ndarray) -> None:
        """Raise for a state of `q` whose base quaternion is off unit norm by more than
        UNIT_TOLERANCE, as base_frame_states does (a NaN quaternion gives NaN, no error)."""
        norm = np.linalg.norm(q[..., 3:7], axis=-1)
        off = np.flatnonzero(np.abs(np.atleast_1d(norm) - 1.0) > floating_base.UNIT_TOLERANCE)
        if off.size:
            raise _base_orientation_error(name, q, int(off[0]))

    def _states(self, names: tuple[str, ...], *states: ArrayLike) -> tuple[np.ndarray, ...]:
        """Configurations called `names`, checked: float64 arrays of one shape (nq,)/(B, nq)."""
        arrays = tuple(_as_float_array(x, name) for name, x in zip(names, states, strict=True))
        q = arrays[0]
        if q.ndim not in (1, 2) or q.shape[-1] != self.nq:
            raise ValueError(
                f"{names[0]} must have shape ({self.nq},) or (B, {self.nq}): the base position "
                f"(3), its orientation quaternion (x, y, z, w) and the {len(self.joint_names)} "
                f"joints; got shape {q.shape}"
            )
        for name, x in zip(names[1:], arrays[1:], strict=True):
            expected = (*q.shape[:-1], self.nv if name != "q1" else self.nq)
            if x.shape != expected:
                raise ValueError(
                    f"{name} must have shape {expected}: "
                    + ("a configuration like q0" if name == "q1" else
                       "the base velocity [linear; angular] in the base frame (6) and the "
                       f"{len(self.joint_names)} joints")
                    + f"; got {x.shape}"
                )
        return arrays

    def _velocities(
        self, names: tuple[str, ...], q_tree: np.ndarray, *vectors: ArrayLike
    ) -> tuple[np.ndarray, ...]:
        """nv-sized vectors called `names`, checked to have the shape of q_tree."""
        arrays = tuple(_as_float_array(x, name) for name, x in zip(names, vectors, strict=True))
        for name, x in zip(names, arrays, strict=True):
            if x.shape != q_tree.shape:
                raise ValueError(f"{name} must have shape {q_tree.shape}; got {x.shape}")
        return arrays

    def _rest(self, q: ArrayLike) -> np.ndarray:
        """v = 0 for the states of q."""
        shape = np.shape(q)[:-1]
        return np.zeros((*shape, self.nv))


def _with_gravity(model: Model, gravity: Sequence[float] | np.ndarray | None) -> Model:
    """The model under `gravity` (its own when None)."""
    if gravity is None:
        return model
    return dataclasses.replace(model, gravity=checked_gravity(gravity, f"robot '{model.name}'"))


def _as_array(x: ArrayLike) -> np.ndarray:
    """x as the float64 array the checks above already accepted."""
    return np.ascontiguousarray(x, dtype=float)


def _position(q: ArrayLike) -> np.ndarray:
    """The base position q[..., :3]."""
    return np.asarray(q, dtype=float)[..., :3]


def _base_pose(q: ArrayLike, rotation: np.ndarray) -> np.ndarray:
    """The base pose (..., 4, 4) in the world."""
    pose = np.zeros((*rotation.shape[:-2], 4, 4))
    pose[..., :3, :3] = rotation
    pose[..., :3, 3] = _position(q)
    pose[..., 3, 3] = 1.0
    return pose


def _rotate(rotation: np.ndarray, x: np.ndarray) -> np.ndarray:
    """R x for 3-vectors x (...)."""
    return (rotation @ x[..., None])[..., 0]


def _rotate_back(rotation: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Rᵀ x: a world vector in the base frame."""
    return (np.swapaxes(rotation, -1, -2) @ x[..., None])[..., 0]


def _rotate_vector6(rotation: np.ndarray, x: np.ndarray) -> np.ndarray:
    """[R x_linear; R x_angular] for 6-vectors x."""
    return np.concatenate([_rotate(rotation, x[..., _LINEAR]), _rotate(rotation, x[..., _ANGULAR])],
                          axis=-1)


def _rotate_rows(rotation: np.ndarray, J: np.ndarray) -> np.ndarray:
    """[R J_linear; R J_angular] for (..., 6, n) J."""
    return np.concatenate([rotation @ J[..., _LINEAR, :], rotation @ J[..., _ANGULAR, :]], axis=-2)


def _task_rotation(rotation: np.ndarray, frames: int) -> np.ndarray:
    """diag(R, R, ...) over the 2·frames 3-row blocks of a task: base axes to world axes."""
    blocks = np.zeros((*rotation.shape[:-2], 6 * frames, 6 * frames))
    for k in range(2 * frames):
        blocks[..., 3 * k : 3 * k + 3, 3 * k : 3 * k + 3] = rotation
    return blocks


def _rotate_task(rotation: np.ndarray, A: np.ndarray, frames: int) -> np.ndarray:
    """Rot A Rotᵀ of a (..., 6F, 6F) task matrix, Rot = _task_rotation."""
    blocks = _task_rotation(rotation, frames)
    return blocks @ A @ np.swapaxes(blocks, -1, -2)


def _inverse_task(Lambda_inv: np.ndarray, frames: tuple[str, ...]) -> np.ndarray:
    """Λ from Λ⁻¹, or the LinAlgError naming the frames where Λ⁻¹ is singular."""
    try:
        lower_inverse = np.linalg.inv(np.linalg.cholesky(Lambda_inv))
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(
            f"operational_space_inertia: Λ of frame(s) {', '.join(map(repr, frames))} does not "
            "exist at this configuration: J M⁻¹ Jᵀ is singular (the task Jacobian has lost "
            "rank); Λ⁻¹ (inverse=True) is defined everywhere"
        ) from None
    return np.swapaxes(lower_inverse, -1, -2) @ lower_inverse


def _base_orientation_error(name: str, q: np.ndarray, bad: int) -> ValueError:
    """The error for state `bad` of configurations `name` (one state or a batch), whose base
    quaternion is not of unit norm."""
    state, which = (q, "") if q.ndim == 1 else (q[bad], f" of state {bad}")
    return ValueError(
        f"{name}[3:7], the base orientation quaternion (x, y, z, w){which}, must have unit "
        f"norm (to {floating_base.UNIT_TOLERANCE:g}); got norm {np.linalg.norm(state[3:7]):.9g}"
    )


__all__ = ["FREE_FLYER_JOINTS", "BaseFrameStates", "FloatingBaseRobot"]
