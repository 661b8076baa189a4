"""Which joint parameters (armature, viscous and Coulomb friction, offset) a run informs.

A joint parameter's column of the regressor lives on its joint's rows. When the run makes it
nearly a combination of the bodies' columns (an offset on a joint whose gravity load barely
changes, an armature whose joint barely accelerates), the fit can trade the one for the other
at little cost: the offset takes gravity load the bodies should carry, and the identified
URDF, which holds no offsets, predicts that joint's effort as far off. Such a parameter is
held at its prior value (the description's; zero for an offset) and the bodies carry the load.

The test, per joint parameter: fitted beside every body (and no other joint parameter), with
joint j's rows weighted by 1/σ_j², its standard error times its column's RMS is the effort it
can move on its joint, in units of σ_j: 1/√(N_j (1 − R²)), R² the share of its weighted
column the bodies' columns explain, N_j its joint's samples. The parameter is informed when
that is at most INFORMED_SPREAD: whatever it then takes from the bodies moves its joint's
effort by a small fraction of the noise; a joint that never moves gives an infinite spread.

A joint parameter that no run can tell from the bodies' (joint 1's armature is the first
body's inertia about the same axis: the same column) is not held but fitted in their sum, a
base parameter, which the prior splits: held at zero, the armature would have to be carried
by a body that cannot hold it (a rigid body's inertia about one axis is bounded by the other
two).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from robodyn_ros.identification.base_parameters import BaseParameters
from robodyn_ros.identification.normal_equations import NormalEquations
from robodyn_ros.model import inertial_parameters as layout

INFORMED_SPREAD = 0.1
"""The largest effort (in units of its joint's sigma) a joint parameter's standard error may
stand for and the parameter still count as informed."""
JOINT_PARAMETER_KINDS = {"armature": (layout.ARMATURE,),
                         "friction": (layout.VISCOUS, layout.COULOMB),
                         "offsets": (layout.OFFSET,)}
"""The kinds of joint parameter `--fit` names, and their places among a joint's four."""
_EXPLAINED_RANK = 1e-12
"""The bodies' weighted normal matrix's eigenvalues below this times its largest are its null
space (parameters the torques never see apart)."""


def joint_parameter_spread(
    equations: NormalEquations, sigma: np.ndarray, bodies: int
) -> np.ndarray:
    """Each joint parameter's spread (the module docstring), (n, 4) in JOINT_PARAMETER_NAMES'
    order.

    Args:
        equations: a run's normal equations over a robot's π.
        sigma: each joint's residual σ (estimation.residual_sigma), (n,).
        bodies: how many bodies π holds before its joints' parameters.
    """
    matrix, _ = equations.weighted(sigma**-2.0)
    split = layout.PARAMETERS_PER_BODY * bodies
    values, vectors = np.linalg.eigh(matrix[:split, :split])
    kept = values > _EXPLAINED_RANK * max(values[-1], 1e-300)
    whitened = matrix[split:, :split] @ (vectors[:, kept] / np.sqrt(values[kept]))
    own = np.diag(matrix)[split:]
    with np.errstate(divide="ignore", invalid="ignore"):
        unexplained = np.where(own > 0.0, 1.0 - np.sum(whitened**2, axis=1) / own, 0.0)
    samples = np.repeat(equations.counts, layout.PARAMETERS_PER_JOINT)
    with np.errstate(divide="ignore"):
        spread = 1.0 / np.sqrt(samples * np.maximum(unexplained, 0.0))
    per_joint: np.ndarray = spread.reshape(-1, layout.PARAMETERS_PER_JOINT)
    return per_joint


def tied_to_bodies(base: BaseParameters, bodies: int) -> np.ndarray:
    """(n, 4) bool: the joint parameters that share a base parameter with a body's."""
    split = layout.PARAMETERS_PER_BODY * bodies
    combination = base.combination != 0.0
    with_bodies = combination[:, :split].any(axis=1)
    tied: np.ndarray = (combination[:, split:] & with_bodies[:, None]).any(axis=0).reshape(
        -1, layout.PARAMETERS_PER_JOINT)
    return tied


def held_joint_parameters(
    spread: np.ndarray, tied: np.ndarray, fit: Collection[str] = ()
) -> np.ndarray:
    """(n, 4) bool: the joint parameters held at the prior: those not informed
    (INFORMED_SPREAD) and not tied to a body's (tied_to_bodies), unless their kind is in
    `fit` (JOINT_PARAMETER_KINDS' keys).

    Raises:
        ValueError: an unknown kind in `fit`.
    """
    held: np.ndarray = ~(spread <= INFORMED_SPREAD) & ~tied
    for kind in checked_kinds(fit):
        held[:, list(JOINT_PARAMETER_KINDS[kind])] = False
    return held


def checked_kinds(fit: Collection[str]) -> frozenset[str]:
    """The kinds of joint parameter in `fit`, each one of JOINT_PARAMETER_KINDS.

    Raises:
        ValueError: an unknown kind, named with the known ones.
    """
    unknown = sorted(set(fit) - set(JOINT_PARAMETER_KINDS))
    if unknown:
        raise ValueError(f"unknown kind(s) of joint parameter to fit: {', '.join(unknown)}; "
                         f"the kinds are {', '.join(JOINT_PARAMETER_KINDS)}")
    return frozenset(fit)
