"""MimicRobot: a robot whose mimic joints follow their leaders, in independent coordinates.

The tree keeps every joint; the coordinates are the independent ones, and the mimic joints
follow, q_all = G q + q₀ (G holds each rule's multiplier, q₀ its offset; a free flyer or
planar joint, which neither leads nor follows, passes through). Every quantity is the tree's
seen through G, as for any constraint that is linear in q (Pinocchio 4's mimic joints):

    τ = Gᵀ τ_all,   M = Gᵀ M_all G,   C = Gᵀ C_all G,   g = Gᵀ g_all,   J = J_all G,

and q̈, M⁻¹ and Λ come from the Cholesky factor of that M.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import cho_solve

from robodyn_ros.dynamics.arrays import FloatArray
from robodyn_ros.dynamics.task_space import damped_task_inertia
from robodyn_ros.errors import SingularMassMatrixError
from robodyn_ros.model import Model, URDFWarning
from robodyn_ros.model.model import FRICTION_VELOCITY
from robodyn_ros.robot.answers import PIVOT_RTOL, sample_states
from robodyn_ros.robot.coupling import Coupling, has_mimic_joints
from robodyn_ros.robot.derivatives import ForwardDynamicsDerivatives, InverseDynamicsDerivatives
from robodyn_ros.robot.external_wrenches import ExternalWrenches, wrench_forces
from robodyn_ros.robot.operational_space import (
    SINGULAR_THRESHOLD,
    OperationalSpaceDynamics,
    stacked_task_rows,
    task_axes,
)
from robodyn_ros.robot.robot import Robot, Task, TaskAxes

# The methods a robot with mimic joints answers: the others work on the tree's own recursions,
# in which every joint is free.
_FACTORED = {
    "forward_dynamics": ("aba", "cholesky"),
    "mass_matrix_inverse": ("aba", "ltdl"),
    "operational_space_inertia": ("dense", "recursive"),
    "operational_space": ("dense", "recursive"),
}


class MimicRobot(Robot, serves=has_mimic_joints):
    """A Robot whose coordinates are the independent joints (`joint_names`); the joints in
    `mimic_joints` follow their leaders (model.mimic). `Robot(model)` is one when the model
    has mimic joints.

    Every function takes and returns independent coordinates. Forward dynamics, M⁻¹ and the
    operational-space quantities factor M = Gᵀ M_all G: methods "aba"/"cholesky", "aba"/"ltdl"
    and "dense"/"recursive" name that route, the others raise ValueError. `f_ext` has a row
    per body of the tree (model.joint_names order).
    """

    coupling: Coupling  # a MimicRobot always has one
    _tree_robot: Robot  # every joint of the tree free

    def __init__(self, model: Model, *, threads: int = 1) -> None:
        self.model = model
        with warnings.catch_warnings():  # a follower's body may be light; the coupled M judges
            warnings.simplefilter("ignore", URDFWarning)
            self._tree_robot = Robot(dataclasses.replace(model, mimic=()), threads=threads)
        self.coupling = Coupling.of(model)
        self.threads = threads
        self.joint_names = self.coupling.joint_names
        self.mimic_joints = self.coupling.mimic_joints
        self.configuration_joints = self.coupling.configuration_joints
        self.nq, self.nv = self.coupling.G_q.shape[1], len(self.joint_names)
        self._coordinate_joints = [model.joint_names.index(name) for name in self.joint_names]
        self.frame_names = model.frame_names
        self.massless_joints = self._joints_moving_no_mass()
        if self.massless_joints:
            self._warn_massless(stacklevel=4)  # the caller of Robot.from_urdf*

    def with_threads(self, threads: int) -> Robot:
        view = cast(MimicRobot, super().with_threads(threads))
        view._tree_robot = self._tree_robot.with_threads(threads)
        return view

    def per_coordinate(self, per_joint: ArrayLike) -> np.ndarray:
        return np.asarray(per_joint)[self._coordinate_joints]

    @property
    def kernel_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        raise ValueError(
            f"robot '{self.model.name}' has mimic joints ({', '.join(self.mimic_joints)}): the "
            "compiled rollout takes every joint as free, so it cannot simulate them; load the "
            "URDF with mimic=False, or lock them (locked_joints=)"
        )

    # -- through the tree -------------------------------------------------------------------

    def inverse_dynamics(
        self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, f_ext: ArrayLike | None = None, *,
        external_wrenches: ExternalWrenches | None = None,
    ) -> FloatArray:
        q, qd, qdd = self._inputs(("q", "qd", "qdd"), q, qd, qdd)
        c = self.coupling
        tau = c.forces(self._tree_robot.inverse_dynamics(
            c.positions(q), c.rates(qd), c.rates(qdd), f_ext))
        if external_wrenches:
            tau -= wrench_forces(self, q, external_wrenches)
        return tau

    def inverse_dynamics_derivatives(
        self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, f_ext: ArrayLike | None = None,
    ) -> InverseDynamicsDerivatives:
        """Gᵀ (∂τ_all/∂x) G: the tree's derivatives on the independent coordinates."""
        q, qd, qdd = self._inputs(("q", "qd", "qdd"), q, qd, qdd)
        c = self.coupling
        tree_derivatives = self._tree_robot.inverse_dynamics_derivatives(
            c.positions(q), c.rates(qd), c.rates(qdd), f_ext)
        return InverseDynamicsDerivatives(*(c.matrix(d) for d in tree_derivatives))

    def centroidal_momentum_matrix(self, q: ArrayLike) -> FloatArray:
        (q,) = self._inputs(("q",), q)
        A: FloatArray = self._tree_robot.centroidal_momentum_matrix(
            self.coupling.positions(q)) @ self.coupling.G
        return A

    def centre_of_mass(self, q: ArrayLike) -> FloatArray:
        (q,) = self._inputs(("q",), q)
        return self._tree_robot.centre_of_mass(self.coupling.positions(q))

    def inverse_dynamics_regressor(
        self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, *,
        friction_velocity: float = FRICTION_VELOCITY,
    ) -> FloatArray:
        """Gᵀ Y_all: π holds every body and joint of the tree, the mimic joints' included."""
        q, qd, qdd = self._inputs(("q", "qd", "qdd"), q, qd, qdd)
        c = self.coupling
        return c.G.T @ self._tree_robot.inverse_dynamics_regressor(
            c.positions(q), c.rates(qd), c.rates(qdd), friction_velocity=friction_velocity)

    def bias_forces(self, q: ArrayLike, qd: ArrayLike) -> FloatArray:
        q, qd = self._inputs(("q", "qd"), q, qd)
        c = self.coupling
        return c.forces(self._tree_robot.bias_forces(c.positions(q), c.rates(qd)))

    def gravity_torques(self, q: ArrayLike) -> FloatArray:
        (q,) = self._inputs(("q",), q)
        return self.coupling.forces(self._tree_robot.gravity_torques(self.coupling.positions(q)))

    def mass_matrix(self, q: ArrayLike, method: str = "crba") -> FloatArray:
        (q,) = self._inputs(("q",), q)
        return self.coupling.matrix(
            self._tree_robot.mass_matrix(self.coupling.positions(q), method))

    def coriolis_matrix(self, q: ArrayLike, qd: ArrayLike) -> FloatArray:
        q, qd = self._inputs(("q", "qd"), q, qd)
        c = self.coupling
        return c.matrix(self._tree_robot.coriolis_matrix(c.positions(q), c.rates(qd)))

    def mass_matrix_diagonal(self, q: ArrayLike) -> FloatArray:
        return np.diagonal(self.mass_matrix(q), axis1=-2, axis2=-1).copy()

    def kinetic_energy(self, q: ArrayLike, qd: ArrayLike) -> FloatArray:
        q, qd = self._inputs(("q", "qd"), q, qd)
        c = self.coupling
        return self._tree_robot.kinetic_energy(c.positions(q), c.rates(qd))

    def potential_energy(self, q: ArrayLike) -> FloatArray:
        (q,) = self._inputs(("q",), q)
        return self._tree_robot.potential_energy(self.coupling.positions(q))

    def frame_pose(self, q: ArrayLike, frame: str) -> FloatArray:
        (q,) = self._inputs(("q",), q)
        return self._tree_robot.frame_pose(self.coupling.positions(q), frame)

    def frame_poses(self, q: ArrayLike) -> FloatArray:
        (q,) = self._inputs(("q",), q)
        return self._tree_robot.frame_poses(self.coupling.positions(q))

    def jacobian(self, q: ArrayLike, frame: str) -> FloatArray:
        (q,) = self._inputs(("q",), q)
        J: FloatArray = self._tree_robot.jacobian(self.coupling.positions(q), frame) \
            @ self.coupling.G
        return J

    def frame_jacobian_time_variation(self, q: ArrayLike, qd: ArrayLike, frame: str
                                      ) -> FloatArray:
        q, qd = self._inputs(("q", "qd"), q, qd)
        c = self.coupling
        J_dot: FloatArray = self._tree_robot.frame_jacobian_time_variation(
            c.positions(q), c.rates(qd), frame) @ c.G
        return J_dot

    def classical_acceleration(
        self, q: ArrayLike, qd: ArrayLike, frames: Task, *, axes: TaskAxes = None
    ) -> FloatArray:
        q, qd = self._inputs(("q", "qd"), q, qd)
        c = self.coupling
        return self._tree_robot.classical_acceleration(c.positions(q), c.rates(qd), frames,
                                                       axes=axes)

    # -- through the Cholesky factor of M ---------------------------------------------------

    def mass_matrix_inverse(self, q: ArrayLike, method: str = "aba") -> FloatArray:
        self._factored_method(method, "mass_matrix_inverse")
        (q,) = self._inputs(("q",), q)
        factor = self._cholesky(q, "mass_matrix_inverse")
        identity = np.broadcast_to(np.eye(self.nv), factor.shape)
        return _cholesky_solve(factor, identity)

    def forward_dynamics_derivatives(
        self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, f_ext: ArrayLike | None = None,
    ) -> ForwardDynamicsDerivatives:
        """−M⁻¹ ∂τ/∂x at q̈ = forward_dynamics(q, q̇, τ), M⁻¹ of the coupled M."""
        q, qd, tau = self._inputs(("q", "qd", "tau"), q, qd, tau)
        qdd = self.forward_dynamics(q, qd, tau, f_ext=f_ext)
        at_qdd = self.inverse_dynamics_derivatives(q, qd, qdd, f_ext)
        Minv = self.mass_matrix_inverse(q)
        return ForwardDynamicsDerivatives(-Minv @ at_qdd.dtau_dq, -Minv @ at_qdd.dtau_dv, Minv)

    def forward_dynamics(  # type: ignore[override]  # direct methods only: no IterationInfo
        self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, method: str = "aba",
        f_ext: ArrayLike | None = None, *, external_wrenches: ExternalWrenches | None = None,
        **options: Any,
    ) -> FloatArray:
        self._factored_method(method, "forward_dynamics")
        if options:
            raise ValueError(f"forward_dynamics: method '{method}' is direct and takes no "
                             f"options; got {', '.join(options)}")
        q, qd, tau = self._inputs(("q", "qd", "tau"), q, qd, tau)
        bias = self.inverse_dynamics(q, qd, np.zeros_like(qd), f_ext,
                                     external_wrenches=external_wrenches)
        factor = self._cholesky(q, "forward_dynamics")
        return _cholesky_solve(factor, (tau - bias)[..., None])[..., 0]

    def operational_space_inertia(
        self, q: ArrayLike, frame: Task, method: str = "recursive", inverse: bool = False, *,
        axes: TaskAxes = None,
    ) -> FloatArray:
        self._factored_method(method, "operational_space_inertia")
        (q,) = self._inputs(("q",), q)
        J = self._task_jacobian(q, frame, axes)
        MinvJT = _cholesky_solve(self._cholesky(q, "operational_space_inertia"),
                                 np.swapaxes(J, -1, -2))
        Lambda_inv = J @ MinvJT
        return Lambda_inv if inverse else np.linalg.inv(Lambda_inv)

    def operational_space_inertia_inverse_times(
        self, q: ArrayLike, frame: Task, force: ArrayLike, *, axes: TaskAxes = None
    ) -> FloatArray:
        Lambda_inv = self.operational_space_inertia(q, frame, inverse=True, axes=axes)
        return _times(Lambda_inv, np.asarray(force, dtype=float))

    def operational_space(
        self, q: ArrayLike, qd: ArrayLike, frames: Task, method: str = "dense", *,
        axes: TaskAxes = None, singular_threshold: float = SINGULAR_THRESHOLD,
        singular_damping: float | None = None,
    ) -> OperationalSpaceDynamics:
        self._factored_method(method, "operational_space")
        q, qd = self._inputs(("q", "qd"), q, qd)
        names = (frames,) if isinstance(frames, str) else tuple(frames)
        J = self._task_jacobian(q, names, axes)
        Jdot_qd = self.classical_acceleration(q, qd, names, axes=axes)
        MinvJT = _cholesky_solve(self._cholesky(q, "operational_space"), np.swapaxes(J, -1, -2))
        Lambda_inv = J @ MinvJT
        damping = singular_threshold if singular_damping is None else singular_damping
        batch, m = q.shape[:-1], J.shape[-2]
        Lambda, info = np.empty((*batch, m, m)), np.empty((*batch, 2))
        for index in np.ndindex(batch):
            damped_task_inertia(Lambda_inv[index], singular_threshold, damping, Lambda[index],
                                info[index])
        Jbar = MinvJT @ Lambda
        g = self.gravity_torques(q)
        coriolis = self.bias_forces(q, qd) - g
        transposed = np.swapaxes(Jbar, -1, -2)
        mu = _times(transposed, coriolis) - _times(Lambda, Jdot_qd)
        p = _times(transposed, g)
        return OperationalSpaceDynamics(
            names, J, Lambda_inv, Lambda, Jbar, mu, p, Jdot_qd, info[..., 0].astype(np.int64),
            info[..., 1], task_axes(axes))

    # -- helpers ----------------------------------------------------------------------------

    def _joints_moving_no_mass(self) -> tuple[str, ...]:
        """The independent joints whose diagonal entry of M vanishes (with those of all their
        followers) at every sampled configuration: M is singular through them everywhere."""
        diagonal = self.mass_matrix_diagonal(self.coupling.coordinates(sample_states(self.model)))
        vanishing = diagonal <= PIVOT_RTOL * diagonal.max(axis=1, keepdims=True)
        return tuple(name for name, massless in zip(self.joint_names, vanishing.all(axis=0),
                                                    strict=True) if massless)

    def _factored_method(self, method: str, function: str) -> None:
        known = _FACTORED[function]
        if method not in known:
            raise ValueError(
                f"{function}: robot '{self.model.name}' has mimic joints "
                f"({', '.join(self.mimic_joints)}), answered through the Cholesky factor of "
                f"M = Gᵀ M_all G; method '{method}' works on free joints only; use "
                f"{' or '.join(map(repr, known))}"
            )

    def _cholesky(self, q: np.ndarray, function: str) -> np.ndarray:
        """The lower Cholesky factor of M at q, or SingularMassMatrixError."""
        M = self.mass_matrix(q)
        try:
            return np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            diagonal = np.diagonal(M, axis1=-2, axis2=-1).reshape(-1, self.nv)
            scale = np.abs(diagonal).max()
            light = np.flatnonzero((diagonal <= 1e-12 * scale).any(axis=0))
            raise SingularMassMatrixError(
                function, [self.joint_names[i] for i in light], "with the mimic joints following"
            ) from None

    def _task_jacobian(self, q: np.ndarray, frames: Task, axes: TaskAxes) -> np.ndarray:
        return stacked_task_rows(lambda name: self.jacobian(q, name), frames, axes)


def _times(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A x for matrices (..., m, n) and vectors (..., n)."""
    product: np.ndarray = (A @ x[..., None])[..., 0]
    return product


def _cholesky_solve(factor: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """X with L Lᵀ X = rhs for the factors L (..., n, n) and right-hand sides (..., n, k)."""
    out = np.empty(rhs.shape)
    for index in np.ndindex(rhs.shape[:-2]):
        out[index] = cho_solve((factor[index], True), rhs[index])
    return out


__all__ = ["MimicRobot"]
