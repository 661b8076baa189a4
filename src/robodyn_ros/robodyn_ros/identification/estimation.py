"""Estimates of a robot's parameters from the normal equations of a recorded run.

1. Weighted least squares on the base parameters (Gautier & Poignet 2001's two steps):
   ordinary least squares gives each joint's residual σ_j; weighting joint j's rows by 1/σ_j²
   gives π̂_b = (W_bᵀ Σ⁻¹ W_b)⁻¹ W_bᵀ Σ⁻¹ τ with covariance (W_bᵀ Σ⁻¹ W_b)⁻¹, whose diagonal
   gives the standard errors.
2. A physically consistent π (every body a rigid body, armature and friction ≥ 0): the same
   weighted residual plus a prior that pulls π towards the description's values, minimised
   over the log-Cholesky parameters of the bodies (log_cholesky) by scipy's least squares
   (MINPACK's Levenberg–Marquardt), from the description's values, armature and friction
   ≥ 0 kept by an active set around it. Least squares in the smooth, unconstrained θ rather
   than the LMI form (Wensing, Kim & Slotine 2017) needs no semidefinite solver, keeps the
   prior as plain residuals, and lands on the same set of bodies. The prior decides what the
   data cannot: the directions of π outside the base parameters and those the run did not
   excite; `prior_weight` is how many samples' worth of evidence the description's values
   count as. A body's prior is its log-det divergence from the description's body
   (log_cholesky), which grows without bound towards the boundary of the rigid bodies: the
   minimum lies at finite θ, where a Euclidean prior let a body the data pulls towards a flat
   one sit on that boundary, at θ → −∞, which the solver chased for thousands of iterations
   without converging. A joint's prior is Euclidean, on the scale JOINT_PRIOR_SCALE; the joint
   parameters a run does not inform are held at their prior values (`held`;
   identification.informed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize

from robodyn_ros.identification.base_parameters import BaseParameters
from robodyn_ros.identification.errors import IdentificationError
from robodyn_ros.identification.log_cholesky import (
    divergence_residual,
    divergence_residual_jacobian,
    parameters_of_theta,
    parameters_of_theta_jacobian,
    pseudo_inertia,
    theta_of_parameters,
)
from robodyn_ros.identification.normal_equations import NormalEquations
from robodyn_ros.model.inertial_parameters import (
    ARMATURE,
    COULOMB,
    PARAMETERS_PER_BODY,
    PARAMETERS_PER_JOINT,
    VISCOUS,
)

PRIOR_WEIGHT = 1.0
"""The prior's default weight: the description's values count as one sample's worth."""
JOINT_PRIOR_SCALE = 0.1
"""A unit of a joint parameter's prior residual (SI): of its armature, friction and offset."""
REFERENCE_BALL = (0.1, 0.1)
"""Mass (kg) and radius of gyration (m) of the ball added at the frame origin to a
description's body that is no rigid body (massless, a point mass, a rod: a pseudo-inertia
that is not positive definite), to give its divergence a reference; a load's prior, no load,
is this ball alone."""
RIGID_REFERENCE = 1e-9
"""A description's body is a rigid body for the prior when its pseudo-inertia's smallest
eigenvalue is above this times its largest."""
LEAST_NORM_RCOND = 1e-11
"""Singular values of the normal matrix below this times its largest are taken for zero by
residual_sigma's least-norm solution: well below the conditioning of any run that identifies
(a base regressor's condition number of 10⁵ squares to 10¹⁰), well above rounding."""
ZERO_RELATIVE_ERROR = 1.0
"""A base parameter whose standard error exceeds this times its magnitude: the run could not
tell it from zero."""


@dataclass(frozen=True, eq=False)
class BaseEstimate:
    """Weighted least squares on the base parameters.

    Attributes:
        base: the base parameters estimated.
        values: π̂_b, (r,).
        covariance: of π̂_b, (r, r).
        sigma: each joint's residual standard deviation under ordinary least squares, (n,).
        condition: the condition number of the weighted base regressor Σ^-½ W_b.
    """

    base: BaseParameters
    values: np.ndarray
    covariance: np.ndarray
    sigma: np.ndarray
    condition: float

    @property
    def standard_errors(self) -> np.ndarray:
        """√ of the covariance's diagonal, (r,)."""
        return np.sqrt(np.diag(self.covariance))

    @property
    def indistinct_from_zero(self) -> np.ndarray:
        """The indices of the base parameters the run could not tell from zero
        (ZERO_RELATIVE_ERROR)."""
        return np.flatnonzero(self.standard_errors > ZERO_RELATIVE_ERROR
                              * np.abs(self.values))


def residual_sigma(equations: NormalEquations) -> np.ndarray:
    """Each joint's residual standard deviation under ordinary least squares on the
    equations' columns (the least-norm solution where the run leaves some combinations of
    them unexcited), (n,).

    Raises:
        IdentificationError: fewer samples than the columns' rank, or torques fitted exactly.
    """
    matrix, rhs = equations.weighted(np.ones(equations.counts.size))
    ordinary, _, rank, _ = np.linalg.lstsq(matrix, rhs, rcond=LEAST_NORM_RCOND)
    total = equations.counts.sum()
    if equations.counts.min() * equations.counts.size <= rank:
        raise IdentificationError(
            f"{int(total)} torque samples cannot fit {rank} base parameters")
    degrees_of_freedom = equations.counts * (1.0 - rank / total)
    sigma: np.ndarray = np.sqrt(equations.squared_residuals(ordinary) / degrees_of_freedom)
    if not np.all(sigma > 0.0):
        raise IdentificationError(
            "the torques are fitted exactly (zero residual on joint(s) "
            f"{np.flatnonzero(sigma == 0.0).tolist()}): no noise to weigh them by")
    return sigma


def weighted_least_squares(equations: NormalEquations, base: BaseParameters) -> BaseEstimate:
    """π̂_b by weighted least squares (the module docstring's step 1).

    Raises:
        IdentificationError: fewer samples of a joint than base parameters, torques fitted
            exactly, or a run that does not excite every base parameter (its weighted normal
            matrix is singular).
    """
    restricted = equations.restricted(base.independent)
    sigma = residual_sigma(restricted)
    matrix, rhs = restricted.weighted(sigma**-2.0)
    values, covariance = _solve(matrix, rhs, base)
    eigenvalues = np.linalg.eigvalsh(matrix)
    condition = float(np.sqrt(eigenvalues[-1] / eigenvalues[0]))
    return BaseEstimate(base, values, covariance, sigma, condition)


def _solve(matrix: np.ndarray, rhs: np.ndarray,
           base: BaseParameters) -> tuple[np.ndarray, np.ndarray]:
    """x = A⁻¹ b and A⁻¹ for a symmetric positive definite normal matrix A.

    Raises:
        IdentificationError: A is singular: names the base parameters of its null space.
    """
    try:
        factor = np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        factor = None
    if factor is not None:
        inverse_factor = np.linalg.inv(factor)
        inverse = inverse_factor.T @ inverse_factor
        if np.all(np.isfinite(inverse)):
            return inverse @ rhs, inverse
    values, vectors = np.linalg.eigh(matrix)
    null = vectors[:, values <= 1e-12 * max(values[-1], 1e-300)]
    unexcited = np.flatnonzero(np.abs(null).max(axis=1) > 0.1) if null.size else np.arange(0)
    raise IdentificationError(
        "the run does not excite every base parameter (singular normal matrix); not "
        "excited: " + "; ".join(base.names[k] for k in unexcited[:8])
        + (" …" if unexcited.size > 8 else "") + ". Record a richer motion (robodyn excite)")


@dataclass(frozen=True, eq=False)
class ConsistentEstimate:
    """A physically consistent π.

    Attributes:
        parameters: π, (p,): every body a rigid body, armature and friction ≥ 0.
        prior: the description's π it was pulled towards, (p,).
        prior_weight: the prior's weight.
        held: (p,) the entries of π held at the prior's values, not fitted.
        converged: whether the least-squares solver met its tolerance.
        evaluations: how many times the solver evaluated the residual.
    """

    parameters: np.ndarray
    prior: np.ndarray
    prior_weight: float
    held: np.ndarray
    converged: bool
    evaluations: int


MAX_EVALUATIONS = 3000
"""The consistent fit's budget of residual evaluations over all its rounds; a fit that needs
more is reported as not converged."""


def physically_consistent(
    equations: NormalEquations,
    sigma: np.ndarray,
    prior: np.ndarray,
    prior_weight: float = PRIOR_WEIGHT,
    *,
    bodies: int | None = None,
    held: np.ndarray | None = None,
) -> ConsistentEstimate:
    """The physically consistent π closest to the data (the module docstring's step 2),
    searched from the prior.

    Armature and friction ≥ 0 are kept by an active set (Lawson & Hanson's, as in NNLS)
    around unbounded searches: one that comes out negative is held at zero and the search
    resumed, one held at zero whose gradient pulls it up is released, until neither happens.
    On the runs the tests make, scipy's bounded search (the reflective trust region) crept
    along such bounds for its whole budget from some starts; the unbounded one converges.
    The search is MINPACK's Levenberg–Marquardt, whose own QR needs no threaded BLAS: the
    trust-region searches decompose their small Jacobian once per step with LAPACK, whose
    threads wait on each other for a core on a busy machine.

    Args:
        equations: the run's normal equations, over all of π's columns.
        sigma: each joint's residual σ (weighted_least_squares'): joint j's rows weigh 1/σ_j².
        prior: the description's π (Robot.inertial_parameters).
        prior_weight: ≥ 0; the prior's weight in samples.
        bodies: how many bodies π holds before its joints' parameters; None for a robot's
            π, one body per joint.
        held: (p,) bool, the parameters held at the prior's values: joint parameters, and
            whole bodies (all ten of a body's; a multi-DOF joint's massless inner rows);
            None for none.

    Returns:
        The ConsistentEstimate.

    Raises:
        ValueError: a negative or non-finite prior_weight; `held` marking some of a body's
            parameters but not all.
    """
    if not (np.isfinite(prior_weight) and prior_weight >= 0.0):
        raise ValueError(f"prior_weight must be a number ≥ 0; got {prior_weight!r}")
    held = np.zeros(prior.size, dtype=bool) if held is None else np.asarray(held, dtype=bool)
    if bodies is None:
        bodies = prior.size // (PARAMETERS_PER_BODY + PARAMETERS_PER_JOINT)
    held_bodies = held[: PARAMETERS_PER_BODY * bodies].reshape(bodies, PARAMETERS_PER_BODY)
    if (held_bodies.any(axis=1) != held_bodies.all(axis=1)).any():
        raise ValueError("physically_consistent: a body is held whole or not at all")
    fit = _ConsistentFit(equations, sigma, prior, prior_weight, ~held_bodies[:, 0])
    nonnegative = fit.nonnegative & ~held
    at_zero = np.zeros(prior.size, dtype=bool)
    pi, evaluations, converged = prior.copy(), 0, False
    pi[fit.fitted] = fit.reference_parameters
    while evaluations < MAX_EVALUATIONS:
        fixed = held | at_zero
        solution = scipy.optimize.least_squares(
            fit.residual, fit.coordinates(pi, fixed), jac=fit.jacobian, args=(fixed,),
            x_scale=1.0, method="lm", max_nfev=MAX_EVALUATIONS - evaluations)
        evaluations += int(solution.nfev)
        pi = fit.parameters(solution.x, fixed)
        negative = nonnegative & ~fixed & (pi < 0.0)
        pulled_up = at_zero & (fit.gradient(pi) < 0.0)
        converged = bool(solution.success) and not (negative.any() or pulled_up.any())
        if converged or not solution.success:
            break
        at_zero = (at_zero | negative) & ~pulled_up
        pi[at_zero] = 0.0
    return ConsistentEstimate(pi, prior, float(prior_weight), held, converged, evaluations)


class _ConsistentFit:
    """The residual of the consistent fit over x = (θ of each fitted body, the joint parameters
    not `fixed`): [F π(x) − y; √w r_D(θ, θ₀); √w (π_free − π₀_free) / JOINT_PRIOR_SCALE], r_D
    the divergence residual of each fitted body from its reference (log_cholesky), and its
    Jacobian. A body not fitted, and a fixed joint parameter, keep the value x was made with
    (coordinates)."""

    def __init__(self, equations: NormalEquations, sigma: np.ndarray, prior: np.ndarray,
                 prior_weight: float, fitted_bodies: np.ndarray) -> None:
        self.bodies = int(np.count_nonzero(fitted_bodies))
        self.split = PARAMETERS_PER_BODY * len(fitted_bodies)  # where π's joints start
        self.size = PARAMETERS_PER_BODY * self.bodies  # where x's joints start
        self.fitted = np.flatnonzero(np.repeat(fitted_bodies, PARAMETERS_PER_BODY))
        self.prior = prior
        self.reference_parameters = reference_bodies(
            prior[self.fitted].reshape(self.bodies, PARAMETERS_PER_BODY)).ravel()
        self.reference = theta_of_parameters(
            self.reference_parameters.reshape(self.bodies, PARAMETERS_PER_BODY))
        self.data_factor, self.data_target = _least_squares_form(
            *equations.weighted(sigma**-2.0))
        self.root_weight = np.sqrt(prior_weight)
        self.nonnegative = np.zeros(prior.size, dtype=bool)
        joints = self.nonnegative[self.split :].reshape(-1, PARAMETERS_PER_JOINT)
        joints[:, [ARMATURE, VISCOUS, COULOMB]] = True
        self.values = prior.copy()

    def coordinates(self, parameters: np.ndarray, fixed: np.ndarray) -> np.ndarray:
        """x of `parameters` (rigid bodies); the fixed joint parameters keep their values."""
        self.values = parameters.copy()
        free = self._free(fixed)
        return np.concatenate([
            theta_of_parameters(parameters[self.fitted].reshape(-1, PARAMETERS_PER_BODY))
            .ravel(), parameters[free]])

    def parameters(self, x: np.ndarray, fixed: np.ndarray) -> np.ndarray:
        """π of x."""
        pi = self.values.copy()
        pi[self.fitted] = parameters_of_theta(self._theta(x)).ravel()
        pi[self._free(fixed)] = x[self.size :]
        return pi

    def residual(self, x: np.ndarray, fixed: np.ndarray) -> np.ndarray:
        free = self._free(fixed)
        with np.errstate(over="ignore", invalid="ignore"):  # a trial step too far: inf, refused
            pi = self.parameters(x, fixed)
            return np.concatenate([
                self.data_factor @ pi - self.data_target,
                self.root_weight * divergence_residual(self._theta(x), self.reference).ravel(),
                self.root_weight * (x[self.size :] - self.prior[free]) / JOINT_PRIOR_SCALE,
            ])

    def jacobian(self, x: np.ndarray, fixed: np.ndarray) -> np.ndarray:
        theta, free = self._theta(x), self._free(fixed)
        d_bodies = parameters_of_theta_jacobian(theta)  # (bodies, 10, 10)
        data_bodies = np.einsum("rbk,bkl->rbl", self.data_factor[:, self.fitted].reshape(
            -1, self.bodies, PARAMETERS_PER_BODY), d_bodies).reshape(-1, self.size)
        prior_bodies = scipy.linalg.block_diag(
            *divergence_residual_jacobian(theta, self.reference))
        return np.block([
            [data_bodies, self.data_factor[:, free]],
            [self.root_weight * prior_bodies, np.zeros((self.size, free.size))],
            [np.zeros((free.size, self.size)),
             np.eye(free.size) * (self.root_weight / JOINT_PRIOR_SCALE)],
        ])

    def gradient(self, parameters: np.ndarray) -> np.ndarray:
        """∂ cost / ∂π of the data and the joints' prior at π (p,); the bodies' entries
        without their prior."""
        data = self.data_factor.T @ (self.data_factor @ parameters - self.data_target)
        joints = np.zeros_like(parameters)
        joints[self.split :] = (self.root_weight / JOINT_PRIOR_SCALE) ** 2 * (
            parameters[self.split :] - self.prior[self.split :])
        gradient: np.ndarray = data + joints
        return gradient

    def _free(self, fixed: np.ndarray) -> np.ndarray:
        return self.split + np.flatnonzero(~fixed[self.split :])

    def _theta(self, x: np.ndarray) -> np.ndarray:
        return x[: self.size].reshape(self.bodies, PARAMETERS_PER_BODY)


def reference_bodies(bodies: np.ndarray) -> np.ndarray:
    """(b, 10) the bodies a fit's divergence prior measures from: the description's, with
    REFERENCE_BALL added to those that are no rigid body (RIGID_REFERENCE)."""
    values = np.linalg.eigvalsh(pseudo_inertia(bodies))
    rigid = values[:, 0] > RIGID_REFERENCE * np.maximum(values[:, -1], 0.0)
    mass, radius = REFERENCE_BALL
    moment = 2.0 * mass * radius**2  # each axis of a ball whose Σ is m r² 1
    ball = np.array([mass, 0.0, 0.0, 0.0, moment, 0.0, moment, 0.0, 0.0, moment])
    return np.where(rigid[:, None], bodies, bodies + ball)


def _least_squares_form(matrix: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """F, y with ‖F π − y‖² = πᵀ A π − 2 πᵀ b + const for a positive semi-definite A: F =
    diag(√s) Vᵀ over A's eigenvalues s above rounding, y = diag(1/√s) Vᵀ b."""
    values, vectors = np.linalg.eigh(matrix)
    kept = values > 1e-13 * max(values[-1], 1e-300)
    root = np.sqrt(values[kept])
    return root[:, None] * vectors[:, kept].T, (vectors[:, kept].T @ rhs) / root
