"""The base parameters of a robot: the combinations of its dynamic parameters π that joint
torques can tell apart (Gautier, "Numerical calculation of the base inertial parameters of
robots", J. Robotic Systems 8(4), 1991).

Torques see π only through Y π. Stacking Y at many random states gives W, whose column-pivoted
QR factorization W P = Q [R₁ R₂] splits π into r independent entries π₁ (the columns of R₁, r
the numerical rank of W) and the rest π₂, with W₂ = W₁ β, β = R₁⁻¹ R₂. Then W π = W₁ π_b with
π_b = π₁ + β π₂: the base parameters, one per independent column, each that column's parameter
plus the dependent ones it absorbs. Parameters whose column of W is zero never affect τ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from robodyn_ros.robot import Robot

RANK_TOLERANCE = 1e-9
"""Relative to W's scale, what counts as zero: a pivot |R_kk| below this times the first ends
the numerical rank, a column below this times W's largest entry never affects τ, and an entry
of β below this times β's largest is the rounding noise of an exact zero."""


@dataclass(frozen=True, eq=False)
class BaseParameters:
    """The identifiable combinations of a robot's π (its parameter_names).

    Attributes:
        parameter_names: the names of π's entries, (p,).
        independent: (r,) the entries of π that stand for the r base parameters, in the order
            of the base parameters.
        combination: (r, p) K with π_b = K π; K[:, independent] is the identity.
        unidentifiable: the entries of π that never affect τ, (u,).
    """

    parameter_names: tuple[str, ...]
    independent: np.ndarray
    combination: np.ndarray
    unidentifiable: np.ndarray

    def __len__(self) -> int:
        return len(self.independent)

    @property
    def names(self) -> tuple[str, ...]:
        """Each base parameter in words: its own entry plus the multiples of the others it
        absorbs, e.g. "link4.Izz + 0.0985·link5.m + link5.Iyy"."""
        return tuple(_combination_name(row, index, self.parameter_names)
                     for row, index in zip(self.combination, self.independent, strict=True))

    def of(self, parameters: np.ndarray) -> np.ndarray:
        """π_b = K π, (..., r) of (..., p)."""
        base: np.ndarray = np.asarray(parameters) @ self.combination.T
        return base

    def regressor(self, Y: np.ndarray) -> np.ndarray:
        """The base regressor W_b, Y's independent columns: τ = W_b π_b, (..., n, r)."""
        return Y[..., self.independent]


def base_parameters(
    robot: Robot,
    *,
    states: int | None = None,
    seed: int = 0,
    columns: np.ndarray | None = None,
    names: tuple[str, ...] | None = None,
) -> BaseParameters:
    """The base parameters of `robot`, found numerically from its regressor at random states.

    Args:
        robot: the robot; its parameters' layout is robot.parameter_names.
        states: how many random states to stack, at least enough for p rows (4 p / n by
            default, p = len(π), n = robot.nv): positions uniform within the limits (±π where
            there are none), velocities and accelerations uniform in [−2, 2].
        seed: of the random states.
        columns: (len(π), k): the base parameters of the k unknowns x of τ = (Y A) x instead
            of π's (a load's, payload.payload_columns), named by `names`.
        names: the unknowns' names, with `columns`.

    Returns:
        The BaseParameters.

    Raises:
        ValueError: `states` too few to have p rows; `columns` without one name each.
    """
    if columns is None:
        names = robot.parameter_names
    elif names is None or len(names) != columns.shape[1]:
        raise ValueError(f"base_parameters: {columns.shape[1]} columns need as many names")
    p, n = len(names), robot.nv
    count = states if states is not None else max(4 * p // n, 50)
    if count * n < p:
        raise ValueError(f"base_parameters: {count} states give {count * n} rows, fewer than "
                         f"the {p} parameters; take at least {-(-p // n)}")
    W = _stacked_regressor(robot, count, seed)
    if columns is not None:
        W = W @ columns
    _, R, order = scipy.linalg.qr(W, mode="economic", pivoting=True)
    pivots = np.abs(np.diag(R))
    rank = int(np.sum(pivots > RANK_TOLERANCE * pivots[0])) if pivots[0] > 0.0 else 0
    beta = scipy.linalg.solve_triangular(R[:rank, :rank], R[:rank, rank:])
    combination = np.zeros((rank, p))
    combination[:, order[:rank]] = np.eye(rank)
    combination[:, order[rank:]] = beta
    combination[np.abs(combination) < RANK_TOLERANCE * np.abs(combination).max()] = 0.0
    column_size = np.abs(W).max(axis=0)
    unidentifiable = np.flatnonzero(column_size <= RANK_TOLERANCE * column_size.max())
    return BaseParameters(names, order[:rank].copy(), combination, unidentifiable)


def _stacked_regressor(robot: Robot, count: int, seed: int) -> np.ndarray:
    """W: the regressors of `count` random states stacked, (count n, p): each joint of one
    degree of freedom anywhere within its limits (cut to ±π), a free flyer or planar joint
    moved from its neutral by a displacement of up to π (rad, or m) along each of its rows."""
    rng = np.random.default_rng(seed)
    lower = np.maximum(robot.per_coordinate(robot.model.lower), -np.pi)
    upper = np.minimum(robot.per_coordinate(robot.model.upper), np.pi)
    displacement = rng.uniform(lower, upper, (count, robot.nv))
    q = displacement if robot.nq == robot.nv else robot.integrate(robot.neutral(), displacement)
    qd, qdd = rng.uniform(-2.0, 2.0, (2, count, robot.nv))
    Y = robot.inverse_dynamics_regressor(q, qd, qdd)
    return Y.reshape(count * robot.nv, -1)


def _combination_name(row: np.ndarray, index: int, names: tuple[str, ...]) -> str:
    """"names[index] + c·names[j] − …" for the nonzero entries of a row of K."""
    text = names[index]
    for j in np.flatnonzero(row):
        if j == index:
            continue
        coefficient = row[j]
        sign = "-" if coefficient < 0 else "+"
        magnitude = abs(coefficient)
        factor = "" if np.isclose(magnitude, 1.0, rtol=1e-9, atol=0.0) else f"{magnitude:.4g}·"
        text += f" {sign} {factor}{names[j]}"
    return text
