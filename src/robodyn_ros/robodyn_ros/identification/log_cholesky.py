"""The log-Cholesky parametrization of rigid-body inertia (Rucker & Wensing, "Smooth
Parameterization of Rigid-Body Inertia", IEEE RA-L 7(2), 2022): ten unconstrained numbers θ
for every physically consistent body and only those.

A body's ten parameters (m, h = m c, I_O about its frame origin;
robodyn_ros.model.inertial_parameters) are its pseudo-inertia J = [[Σ, h], [hᵀ, m]],
Σ = ½ tr(I_O) 1 − I_O (the second moment of its mass distribution). A body is physically
consistent (a density exists: mass > 0 and the triangle inequalities of its principal moments)
exactly when J is positive definite (Wensing, Kim & Slotine, RA-L 3(1), 2017, eq. 8). Then
J = U Uᵀ with U upper triangular,

    U = e^α [[e^d₁, s₁₂, s₁₃, t₁], [0, e^d₂, s₂₃, t₂], [0, 0, e^d₃, t₃], [0, 0, 0, 1]],

θ = (α, d₁, d₂, d₃, s₁₂, s₂₃, s₁₃, t₁, t₂, t₃) (their eq. 12). Every function here takes a
stack of bodies: arrays (..., 10) and (..., 4, 4).

The log-det divergence D(J‖J₀) = tr(J₀⁻¹ J) − log det(J₀⁻¹ J) − 4 measures how far a body is
from a reference body (Lee, Wensing & Park, "Geometric Robot Dynamic Identification: A Convex
Programming Approach", IEEE T-RO 36(2), 2020): zero at J₀ and infinite at the boundary of the
rigid bodies, so a fit pulled towards J₀ by it has its minimum at finite θ. With J₀ = U₀ U₀ᵀ
(U₀ upper triangular too) and M = U₀⁻¹ U, upper triangular,
D = Σ_k (m_kk² − 1 − 2 log m_kk) + Σ_{k<l} m_kl², where log m_kk is linear in θ: a sum of ten
squares, divergence_residual.
"""

from __future__ import annotations

import numpy as np

_EXCHANGE = np.eye(4)[::-1]


def pseudo_inertia(parameters: np.ndarray) -> np.ndarray:
    """(..., 10) body parameters → (..., 4, 4) pseudo-inertias J."""
    m, h = parameters[..., 0], parameters[..., 1:4]
    ixx, ixy, iyy, ixz, iyz, izz = np.moveaxis(parameters[..., 4:10], -1, 0)
    inertia = np.stack([np.stack([ixx, ixy, ixz], -1), np.stack([ixy, iyy, iyz], -1),
                        np.stack([ixz, iyz, izz], -1)], -2)
    trace = ixx + iyy + izz
    J = np.zeros((*parameters.shape[:-1], 4, 4))
    J[..., :3, :3] = 0.5 * trace[..., None, None] * np.eye(3) - inertia
    J[..., :3, 3] = h
    J[..., 3, :3] = h
    J[..., 3, 3] = m
    return J


def parameters_of_pseudo_inertia(J: np.ndarray) -> np.ndarray:
    """(..., 4, 4) pseudo-inertias → (..., 10) body parameters: I_O = tr(Σ) 1 − Σ."""
    sigma = J[..., :3, :3]
    inertia = np.trace(sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - sigma
    return np.concatenate([
        J[..., 3, 3, None], J[..., :3, 3],
        np.stack([inertia[..., 0, 0], inertia[..., 0, 1], inertia[..., 1, 1],
                  inertia[..., 0, 2], inertia[..., 1, 2], inertia[..., 2, 2]], -1),
    ], -1)


# the entries of U (over e^α) that θ[1:] sets, in θ's order: e^d₁, e^d₂, e^d₃, s₁₂, s₂₃,
# s₁₃, t₁, t₂, t₃
_ENTRIES = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))


def _factor(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """e^α (...,) and U / e^α (..., 4, 4) of θ."""
    values = np.moveaxis(theta, -1, 0)
    unit = np.zeros((*theta.shape[:-1], 4, 4))
    unit[..., 3, 3] = 1.0
    for k, (row, column) in enumerate(_ENTRIES):
        unit[..., row, column] = np.exp(values[1 + k]) if k < 3 else values[1 + k]
    return np.exp(values[0]), unit


def parameters_of_theta(theta: np.ndarray) -> np.ndarray:
    """(..., 10) θ → (..., 10) body parameters, through J = U Uᵀ."""
    scale, unit = _factor(theta)
    U = scale[..., None, None] * unit
    return parameters_of_pseudo_inertia(U @ np.swapaxes(U, -1, -2))


def _factor_derivatives(scale: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """(..., 10, 4, 4) ∂U/∂θ_k of U = e^α unit: U itself for α, one entry of it for the
    others."""
    dU = np.zeros((*scale.shape, 10, 4, 4))
    dU[..., 0, :, :] = scale[..., None, None] * unit
    for k, (row, column) in enumerate(_ENTRIES):
        dU[..., 1 + k, row, column] = scale * (unit[..., row, column] if k < 3 else 1.0)
    return dU


def parameters_of_theta_jacobian(theta: np.ndarray) -> np.ndarray:
    """(..., 10, 10) ∂π/∂θ: with ∂U/∂θ_k, ∂J = ∂U Uᵀ + U ∂Uᵀ, mapped to π as J is
    (linearly)."""
    scale, unit = _factor(theta)
    U = scale[..., None, None] * unit
    dU = _factor_derivatives(scale, unit)
    dJ = dU @ np.swapaxes(U, -1, -2)[..., None, :, :]
    dJ = dJ + np.swapaxes(dJ, -1, -2)
    return np.swapaxes(parameters_of_pseudo_inertia(dJ), -1, -2)


def theta_of_parameters(parameters: np.ndarray) -> np.ndarray:
    """(..., 10) body parameters of physically consistent bodies → (..., 10) θ.

    Raises:
        numpy.linalg.LinAlgError: a body's J is not positive definite.
    """
    J = pseudo_inertia(parameters)
    U = _EXCHANGE @ np.linalg.cholesky(_EXCHANGE @ J @ _EXCHANGE) @ _EXCHANGE  # J = U Uᵀ
    scale = U[..., 3, 3]
    U = U / scale[..., None, None]
    return np.stack([
        np.log(scale),
        np.log(U[..., 0, 0]), np.log(U[..., 1, 1]), np.log(U[..., 2, 2]),
        U[..., 0, 1], U[..., 1, 2], U[..., 0, 2],
        U[..., 0, 3], U[..., 1, 3], U[..., 2, 3],
    ], -1)


# the strict upper triangle of M, row by row
_ABOVE = np.triu_indices(4, 1)
_SERIES_BELOW = 1e-4
"""|log m_kk| under which the diagonal terms take their series (where e^2u - 1 - 2u cancels)."""


def divergence_residual(theta: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """(..., 10) r with ½‖r‖² = D(J‖J₀), J of θ and J₀ of θ₀ = `reference` (the module
    docstring): √2 sign(u) √(e^2u − 1 − 2u) for u = log m_kk (k = 1 … 4), then √2 m_kl above
    the diagonal."""
    diagonal, _ = _diagonal_terms(theta, reference)
    return np.concatenate([diagonal, np.sqrt(2.0) * _relative_factor(theta, reference)], -1)


def divergence_residual_jacobian(theta: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """(..., 10, 10) ∂r/∂θ of divergence_residual."""
    _, slope = _diagonal_terms(theta, reference)
    jacobian = np.zeros((*theta.shape, 10))
    jacobian[..., :4, 0] = slope
    for k in range(3):
        jacobian[..., k, 1 + k] = slope[..., k]
    scale, unit = _factor(theta)
    reference_scale, reference_unit = _factor(reference)
    inverse = np.linalg.inv(reference_scale[..., None, None] * reference_unit)
    dM = inverse[..., None, :, :] @ _factor_derivatives(scale, unit)
    jacobian[..., 4:, :] = np.sqrt(2.0) * np.swapaxes(dM[..., _ABOVE[0], _ABOVE[1]], -1, -2)
    return jacobian


def _diagonal_terms(theta: np.ndarray, reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The four diagonal terms of divergence_residual (..., 4) and their slopes in u."""
    difference = theta - reference
    u = np.concatenate([difference[..., :1] + difference[..., 1:4], difference[..., :1]], -1)
    small = np.abs(u) < _SERIES_BELOW
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        excess = np.expm1(2.0 * u)
        term = np.where(small, u * (1.0 + u / 3.0 + u * u / 9.0),
                        np.sign(u) * np.sqrt(np.maximum(0.5 * (excess - 2.0 * u), 0.0)))
        slope = np.where(small, 1.0 + 2.0 * u / 3.0 + u * u / 3.0,
                         0.5 * excess / np.where(small, 1.0, term))
    return 2.0 * term, 2.0 * slope


def _relative_factor(theta: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """(..., 6) the entries of M = U₀⁻¹ U above its diagonal."""
    scale, unit = _factor(theta)
    reference_scale, reference_unit = _factor(reference)
    M = np.linalg.solve(reference_scale[..., None, None] * reference_unit,
                        scale[..., None, None] * unit)
    return M[..., _ABOVE[0], _ABOVE[1]]
