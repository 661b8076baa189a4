"""Normal equations of τ = Y π accumulated over samples, per joint: what identification keeps
of a recorded run, O(p²) in memory whatever its length. Two runs' (or two chunks') sums add.

For joint j over its samples s: products Σ Y_sjᵀ Y_sj (p x p), moments Σ Y_sjᵀ τ_sj (p),
squares Σ τ_sj² and the count. With them the residual of any π is known without the samples:
Σ (τ_sj − Y_sj π)² = πᵀ products π − 2 πᵀ moments + squares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class NormalEquations:
    """Per joint j (n of them) of a run: products (n, p, p), moments (n, p), squares (n,) and
    counts (n,) as the module docstring defines them."""

    products: np.ndarray
    moments: np.ndarray
    squares: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(cls, Y: np.ndarray, tau: np.ndarray) -> NormalEquations:
        """The sums over a batch: Y (B, n, p), τ (B, n); a joint's samples whose τ is NaN (a
        message without efforts) are left out of that joint's sums."""
        measured = ~np.isnan(tau)
        if not measured.all():  # a left-out row adds nothing once zero
            Y, tau = np.where(measured[..., None], Y, 0.0), np.where(measured, tau, 0.0)
        by_joint = Y.transpose(1, 0, 2)  # (n, B, p): each joint's rows
        return cls(
            products=np.matmul(by_joint.transpose(0, 2, 1), by_joint),
            moments=np.matmul(by_joint.transpose(0, 2, 1), tau.T[..., None])[..., 0],
            squares=np.einsum("bj,bj->j", tau, tau),
            counts=measured.sum(axis=0).astype(float),
        )

    def __add__(self, other: NormalEquations) -> NormalEquations:
        return NormalEquations(self.products + other.products, self.moments + other.moments,
                               self.squares + other.squares, self.counts + other.counts)

    def squared_residuals(self, parameters: np.ndarray) -> np.ndarray:
        """Σ (τ − Y π)² per joint (n,), never below zero (rounding)."""
        pi = np.asarray(parameters)
        value = (np.einsum("p,jpq,q->j", pi, self.products, pi)
                 - 2.0 * self.moments @ pi + self.squares)
        squared: np.ndarray = np.maximum(value, 0.0)
        return squared

    def rms_residual(self, parameters: np.ndarray) -> np.ndarray:
        """The root mean square of τ − Y π per joint (n,)."""
        rms: np.ndarray = np.sqrt(self.squared_residuals(parameters) / self.counts)
        return rms

    def restricted(self, columns: np.ndarray) -> NormalEquations:
        """The equations of the regressor's `columns` alone (a base regressor's)."""
        return NormalEquations(self.products[:, columns][:, :, columns],
                               self.moments[:, columns], self.squares, self.counts)

    def with_known(self, known: np.ndarray, values: np.ndarray) -> NormalEquations:
        """The equations of the other columns once the parameters of the `known` columns (a
        bool mask over π) are set to `values` (p,): τ − Y_k π_k = Y_u π_u."""
        unknown = ~np.asarray(known, dtype=bool)
        fixed = np.where(unknown, 0.0, values)
        explained = self.products @ fixed  # (n, p): Σ Yᵀ Y_k π_k per joint
        return NormalEquations(
            self.products[:, unknown][:, :, unknown],
            self.moments[:, unknown] - explained[:, unknown],
            self.squares - 2.0 * self.moments @ fixed + explained @ fixed,
            self.counts,
        )

    def weighted(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Σ_j w_j products_j and Σ_j w_j moments_j: the normal matrix and right-hand side of
        weighted least squares with weight w_j (n,) on joint j's rows."""
        return (np.einsum("j,jpq->pq", weights, self.products),
                np.einsum("j,jp->p", weights, self.moments))
