"""Whether an answer exists and is finite: the checks between the kernels and the caller.

The kernels never raise for arithmetic (dynamics.jit); what they return is checked here. Where
finite inputs gave NaN or inf, the articulated pivots at that state (dynamics.pivots) tell a
singular mass matrix, naming its joints, from an overflow. A robot whose mass matrix is
singular at every configuration (a joint that moves no mass) is found once, at load, from the
pivots at a few configurations.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robodyn_ros._state_call import all_finite
from robodyn_ros.dynamics.inertia_diagonal import mass_matrix_diagonal
from robodyn_ros.dynamics.pivots import articulated_pivots
from robodyn_ros.dynamics.tree import pack_tree
from robodyn_ros.errors import NonFiniteResultError, SingularMassMatrixError
from robodyn_ros.model import Model, load_urdf_string
from robodyn_ros.model.model import MULTI_DOF_JOINTS
from robodyn_ros.robot.configuration import neutral

PIVOT_RTOL = 1e-12
"""A pivot D_i at or below this times the largest diagonal entry of M counts as zero. A joint
that moves no mass leaves a pivot of rounding size, about 1e-16 of M's scale; the lightest
real links (a finger of a few grams against a humanoid's hip) stay above 1e-9 of it."""

SAMPLE_STATES = 4
"""Configurations a robot's pivots are computed at when it loads: q = 0 and random ones."""


def sample_states(model: Model, count: int = SAMPLE_STATES) -> np.ndarray:
    """(count, nq): the neutral configuration, then each joint of one degree of freedom
    uniform in its limits (±π where it has none), from a fixed seed so that a load always finds
    the same. A free flyer or planar joint stays at its neutral: a vanishing pivot does not
    depend on where it is."""
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    random = np.random.default_rng(0).uniform(lower, upper, (count - 1, model.nv))
    states = np.tile(neutral(model.configuration_joints), (count, 1))
    for joint in model.configuration_joints:
        if joint.kind not in MULTI_DOF_JOINTS:
            states[1:, joint.q] = random[:, joint.v]
    return states


def singular_joints(tree: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """(B, n) bool: whether each joint's articulated pivot vanishes at each state of Q
    (B, nq)."""
    diagonal = np.empty((Q.shape[0], tree.shape[0]))
    mass_matrix_diagonal(tree, Q, diagonal)
    floor = PIVOT_RTOL * diagonal.max(axis=1)
    pivots = np.empty(diagonal.shape)
    articulated_pivots(tree, Q, floor, pivots)
    singular: np.ndarray = pivots <= floor[:, None]
    return singular


def joints_moving_no_mass(model: Model, tree: np.ndarray) -> tuple[str, ...]:
    """The joints whose pivot vanishes at every sampled configuration: M is singular through
    them everywhere."""
    everywhere = np.flatnonzero(singular_joints(tree, sample_states(model)).all(axis=0))
    return tuple(model.joint_names[int(i)] for i in everywhere)


def load_checks_pivots_first(urdf: str) -> None:
    """Load, on a new machine compile, the kernels joints_moving_no_mass calls at a robot's
    load, in the other order (the pivots first): a helper that compiles ahead
    (compile_ahead) does this while its caller loads the robot of `urdf`."""
    model = load_urdf_string(urdf)
    tree, states = pack_tree(model), sample_states(model)
    per_row = np.empty((len(states), model.nv))
    articulated_pivots(tree, states, np.zeros(len(states)), per_row)
    mass_matrix_diagonal(tree, states, per_row)


def check_finite(
    function: str,
    quantities: Sequence[tuple[str, np.ndarray]],
    inputs: Sequence[object],
    tree: np.ndarray,
    joint_names: Sequence[str],
    inverts_mass_matrix: bool,
) -> None:
    """Raise when finite inputs gave a non-finite result.

    Args:
        function: the Robot function, for the message.
        quantities: (name, result) pairs, each with the batch shape of q in front.
        inputs: q first, (n,) or (B, n), then the other per-state inputs (anything but an
            array, such as None for an absent input or a flag, is skipped).
        tree: the packed model, for the pivots.
        joint_names: to name singular joints.
        inverts_mass_matrix: whether the function needs M⁻¹, so that a singular M explains it.

    Raises:
        SingularMassMatrixError: M is singular at the first such state.
        NonFiniteResultError: anything else (an overflow), naming the quantity.
    """
    if all_finite(*(result for _, result in quantities)):
        return
    q = inputs[0]
    assert isinstance(q, np.ndarray)  # q is never absent
    batch = q.shape[:-1]
    for name, result in quantities:
        bad = ~np.isfinite(result.reshape(*batch, -1)).all(axis=-1)
        if not bad.any():
            continue
        for x in inputs:
            if isinstance(x, np.ndarray):
                bad &= np.isfinite(x.reshape(*batch, -1)).all(axis=-1)
        if not bad.any():
            continue  # NaN in, NaN out
        state = int(np.flatnonzero(bad.reshape(-1))[0])
        where = f"at state {state} of the batch" if batch else "at this state"
        if inverts_mass_matrix:
            check_mass_matrix(function, tree, joint_names, q.reshape(-1, q.shape[-1])[state],
                              where)
        raise NonFiniteResultError(function, name, where)


def check_mass_matrix(
    function: str, tree: np.ndarray, joint_names: Sequence[str], q: np.ndarray, where: str = ""
) -> None:
    """Raise SingularMassMatrixError naming the joints if M is singular at the first state of
    q (n,) or (B, n) where it is.

    Args:
        function: the Robot function, for the message.
        tree: the packed model.
        joint_names: to name the joints.
        q: the states.
        where: the state, for the message (default: found here).
    """
    Q = np.ascontiguousarray(q.reshape(-1, q.shape[-1]))
    singular = singular_joints(tree, Q)
    states = np.flatnonzero(singular.any(axis=1))
    if states.size:
        first = int(states[0])
        where = where or (f"at state {first} of the batch" if q.ndim == 2 else "at this state")
        raise SingularMassMatrixError(
            function, [joint_names[int(i)] for i in np.flatnonzero(singular[first])], where
        )
