"""Estimates of a robot's parameters from the normal equations of a recorded run.

1. Weighted least squares on the base parameters (Gautier & Poignet 2001's two steps):
   ordinary least squares gives each joint's residual σ_j; weighting joint j's rows by 1/σ_j²
   gives π̂_b = (W_bᵀ Σ⁻¹ W_b)⁻¹ W_bᵀ Σ⁻¹ τ with covariance (W_bᵀ Σ⁻¹ W_b)⁻¹, whose diagonal
   gives the standard errors.
2. A physically consistent π (every body a rigid body, armature and friction ≥ 0): the same
   weighted residual plus a prior that pulls π towards the description's values, minimised
   over the log-Cholesky parameters of the bodies (log_cholesky) by scipy's trust-region
   least squares. Least squares in the smooth, unconstrained θ rather than the LMI form
   (Wensing, Kim & Slotine 2017) needs no semidefinite solver, keeps the prior and the
   nonnegative friction as plain residuals and bounds, and lands on the same set of bodies.
   The prior decides what the data cannot: the directions of π outside the base parameters
   and those the run did not excite; `prior_weight` is how many samples' worth of evidence
   the description's values count as, on the scales of PRIOR_SCALES.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize

from robodyn_ros.identification.base_parameters import BaseParameters
from robodyn_ros.identification.errors import IdentificationError
from robodyn_ros.identification.log_cholesky import (
    nearest_consistent,
    parameters_of_theta,
    parameters_of_theta_jacobian,
    theta_of_parameters,
)
from robodyn_ros.identification.normal_equations import NormalEquations
from robodyn_ros.inertial_parameters import (
    ARMATURE,
    COULOMB,
    PARAMETERS_PER_BODY,
    PARAMETERS_PER_JOINT,
    VISCOUS,
)

PRIOR_WEIGHT = 1.0
"""The prior's default weight: the description's values count as one sample's worth."""
PRIOR_SCALES = {"mass": 0.1, "length": 0.1, "joint": 0.1}
"""A unit of prior residual: for a body, its own mass in the description (at least 0.1 kg)
for its mass, that mass times 0.1 m for its first moment and times (0.1 m)² for its inertia;
0.1 (SI) for a joint's armature, friction and offset."""
UNINFORMED_RELATIVE_ERROR = 1.0
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
    def uninformed(self) -> np.ndarray:
        """The indices of the base parameters the run could not tell from zero
        (UNINFORMED_RELATIVE_ERROR)."""
        return np.flatnonzero(self.standard_errors > UNINFORMED_RELATIVE_ERROR
                              * np.abs(self.values))


def weighted_least_squares(equations: NormalEquations, base: BaseParameters) -> BaseEstimate:
    """π̂_b by weighted least squares (the module docstring's step 1).

    Raises:
        IdentificationError: fewer samples of a joint than base parameters, or a run that
            does not excite every base parameter (its weighted normal matrix is singular).
    """
    r = len(base)
    if equations.counts.min() * equations.counts.size <= r:
        raise IdentificationError(
            f"{int(equations.counts.sum())} torque samples cannot fit {r} base parameters")
    restricted = equations.restricted(base.independent)
    ordinary, _ = _solve(*restricted.weighted(np.ones(equations.counts.size)), base)
    degrees_of_freedom = equations.counts * (1.0 - r / equations.counts.sum())
    sigma = np.sqrt(restricted.squared_residuals(ordinary) / degrees_of_freedom)
    if not np.all(sigma > 0.0):
        raise IdentificationError(
            "the torques are fitted exactly (zero residual on joint(s) "
            f"{np.flatnonzero(sigma == 0.0).tolist()}): no noise to weigh them by")
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
        converged: whether the least-squares solver met its tolerance.
    """

    parameters: np.ndarray
    prior: np.ndarray
    prior_weight: float
    converged: bool


def physically_consistent(
    equations: NormalEquations,
    estimate: BaseEstimate,
    prior: np.ndarray,
    prior_weight: float = PRIOR_WEIGHT,
    *,
    bodies: int | None = None,
) -> ConsistentEstimate:
    """The physically consistent π closest to the data (the module docstring's step 2).

    The search starts from the π nearest the prior (on PRIOR_SCALES) with the base
    parameters of `estimate`, each body then made a rigid body and each friction ≥ 0.

    Args:
        equations: the run's normal equations, over all of π's columns.
        estimate: the run's weighted least squares: its σ weigh joint j's rows by 1/σ_j².
        prior: the description's π (Robot.inertial_parameters).
        prior_weight: ≥ 0; the prior's weight in samples.
        bodies: how many bodies π holds before its joints' parameters; None for a robot's
            π, one body per joint.

    Returns:
        The ConsistentEstimate.

    Raises:
        ValueError: a negative or non-finite prior_weight.
    """
    if not (np.isfinite(prior_weight) and prior_weight >= 0.0):
        raise ValueError(f"prior_weight must be a number ≥ 0; got {prior_weight!r}")
    fit = _ConsistentFit(equations, estimate.sigma, prior, prior_weight, bodies)
    start = fit.coordinates(_nearest_prior(estimate, prior, fit.scales))
    solution = scipy.optimize.least_squares(fit.residual, start, jac=fit.jacobian,
                                            bounds=(fit.lower, np.inf), x_scale="jac",
                                            method="trf", max_nfev=2000)
    return ConsistentEstimate(fit.parameters(solution.x), prior, float(prior_weight),
                              bool(solution.success))


class _ConsistentFit:
    """The residual of the consistent fit over x = (θ of each body, the joints' parameters):
    [F π(x) − y; √w (π(x) − π₀) / scales], and its Jacobian."""

    def __init__(self, equations: NormalEquations, sigma: np.ndarray, prior: np.ndarray,
                 prior_weight: float, bodies: int | None) -> None:
        p = prior.size
        if bodies is None:
            bodies = p // (PARAMETERS_PER_BODY + PARAMETERS_PER_JOINT)
        self.split = PARAMETERS_PER_BODY * bodies
        self.prior, self.scales = prior, _prior_scales(prior, bodies)
        self.data_factor, self.data_target = _least_squares_form(
            *equations.weighted(sigma**-2.0))
        self.prior_rows = np.sqrt(prior_weight) / self.scales
        self.rows = np.vstack([self.data_factor, np.diag(self.prior_rows)])
        self.lower = np.full(p, -np.inf)
        joints = self.lower[self.split :].reshape(-1, PARAMETERS_PER_JOINT)
        joints[:, [ARMATURE, VISCOUS, COULOMB]] = 0.0

    def parameters(self, x: np.ndarray) -> np.ndarray:
        """π of x."""
        bodies = parameters_of_theta(x[: self.split].reshape(-1, PARAMETERS_PER_BODY))
        return np.concatenate([bodies.ravel(), x[self.split :]])

    def coordinates(self, parameters: np.ndarray) -> np.ndarray:
        """x of the π nearest `parameters` that the fit can reach: bodies made rigid bodies
        (log_cholesky.nearest_consistent), frictions raised to their bounds."""
        bodies = nearest_consistent(parameters[: self.split].reshape(-1, PARAMETERS_PER_BODY))
        joints = np.maximum(parameters[self.split :], self.lower[self.split :])
        return np.concatenate([theta_of_parameters(bodies).ravel(), joints])

    def residual(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):  # a trial step too far: inf, refused
            pi = self.parameters(x)
            return np.concatenate([self.data_factor @ pi - self.data_target,
                                   self.prior_rows * (pi - self.prior)])

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        blocks = parameters_of_theta_jacobian(x[: self.split].reshape(-1, PARAMETERS_PER_BODY))
        d_parameters = np.eye(self.prior.size)
        d_parameters[: self.split, : self.split] = scipy.linalg.block_diag(*blocks)
        return self.rows @ d_parameters


def _nearest_prior(estimate: BaseEstimate, prior: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """The π with the estimate's base parameters (K π = π̂_b) nearest the prior in the norm
    ‖(π − π₀) / scales‖: π₀ + S² Kᵀ (K S² Kᵀ)⁻¹ (π̂_b − K π₀), S = diag(scales)."""
    K = estimate.base.combination
    weighted = K * scales**2
    correction = np.linalg.lstsq(weighted @ K.T, estimate.values - K @ prior, rcond=None)[0]
    return prior + weighted.T @ correction


def _least_squares_form(matrix: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """F, y with ‖F π − y‖² = πᵀ A π − 2 πᵀ b + const for a positive semi-definite A: F =
    diag(√s) Vᵀ over A's eigenvalues s above rounding, y = diag(1/√s) Vᵀ b."""
    values, vectors = np.linalg.eigh(matrix)
    kept = values > 1e-13 * max(values[-1], 1e-300)
    root = np.sqrt(values[kept])
    return root[:, None] * vectors[:, kept].T, (vectors[:, kept].T @ rhs) / root


def _prior_scales(prior: np.ndarray, n: int) -> np.ndarray:
    """Each entry of π's prior unit (PRIOR_SCALES), (p,)."""
    split = PARAMETERS_PER_BODY * n
    mass = np.maximum(np.abs(prior[:split:PARAMETERS_PER_BODY]), PRIOR_SCALES["mass"])
    length = PRIOR_SCALES["length"]
    bodies = mass[:, None] * np.array([1.0, *[length] * 3, *[length**2] * 6])
    joints = np.full(prior.size - split, PRIOR_SCALES["joint"])
    return np.concatenate([bodies.ravel(), joints])
