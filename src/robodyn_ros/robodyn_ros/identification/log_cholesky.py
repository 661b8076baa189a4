"""The log-Cholesky parametrization of rigid-body inertia (Rucker & Wensing, "Smooth
Parameterization of Rigid-Body Inertia", IEEE RA-L 7(2), 2022): ten unconstrained numbers θ
for every physically consistent body and only those.

A body's ten parameters (m, h = m c, I_O about its frame origin; robodyn_ros.inertial_parameters)
are its pseudo-inertia J = [[Σ, h], [hᵀ, m]], Σ = ½ tr(I_O) 1 − I_O (the second moment of its
mass distribution). A body is physically consistent (a density exists: mass > 0 and the
triangle inequalities of its principal moments) exactly when J is positive definite (Wensing,
Kim & Slotine, RA-L 3(1), 2017, eq. 8). Then J = U Uᵀ with U upper triangular,

    U = e^α [[e^d₁, s₁₂, s₁₃, t₁], [0, e^d₂, s₂₃, t₂], [0, 0, e^d₃, t₃], [0, 0, 0, 1]],

θ = (α, d₁, d₂, d₃, s₁₂, s₂₃, s₁₃, t₁, t₂, t₃) (their eq. 12). Every function here takes a
stack of bodies: arrays (..., 10) and (..., 4, 4).
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


def parameters_of_theta_jacobian(theta: np.ndarray) -> np.ndarray:
    """(..., 10, 10) ∂π/∂θ: with ∂U/∂θ_k (U itself for α, one entry of it for the others),
    ∂J = ∂U Uᵀ + U ∂Uᵀ, mapped to π as J is (linearly)."""
    scale, unit = _factor(theta)
    U = scale[..., None, None] * unit
    dU = np.zeros((*theta.shape[:-1], 10, 4, 4))
    dU[..., 0, :, :] = U
    for k, (row, column) in enumerate(_ENTRIES):
        dU[..., 1 + k, row, column] = scale * (unit[..., row, column] if k < 3 else 1.0)
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


def nearest_consistent(parameters: np.ndarray, margin: float = 1e-6) -> np.ndarray:
    """(..., 10) body parameters made physically consistent where they are not (a massless
    link, a flat or impossible inertia): J's eigenvalues raised to at least `margin` times its
    largest (or to `margin` kg·m² where J is zero)."""
    J = pseudo_inertia(parameters)
    values, vectors = np.linalg.eigh(J)
    floor = np.maximum(margin * values[..., -1:], margin)
    values = np.maximum(values, floor)
    return parameters_of_pseudo_inertia((vectors * values[..., None, :])
                                        @ np.swapaxes(vectors, -1, -2))
