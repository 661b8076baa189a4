"""Forward dynamics q̈ = M⁻¹(τ − C q̇ − g): the articulated-body algorithm (ABA) in world
coordinates (Featherstone, RBDA, Table 7.1), and the factored route through CRBA and LᵀDL.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.factorization import factor_mass_matrix, ltdl_solve
from robodyn_ros.dynamics.inertia_matrix import crba_workspace
from robodyn_ros.dynamics.inverse_dynamics import inverse_dynamics
from robodyn_ros.dynamics.jit import kernel, kernel_helper, routine
from robodyn_ros.dynamics.kinematics import body_kinematics, joint_velocity_less_before
from robodyn_ros.dynamics.linalg import carved
from robodyn_ros.dynamics.spatial import (
    add6,
    dot6,
    force_to_parent,
    inertia_times,
    inertia_to_world,
    motion_cross_force,
    motion_cross_motion,
    scale6,
    store,
    store_inertia_matrix,
    symmetric_times,
    vector6,
)
from robodyn_ros.dynamics.tree import (
    POSE,
    armature,
    body_inertia,
    joint_start,
    parent_indices,
    parent_of,
)

LANES = 8
"""States a batch's ABA runs side by side, one per lane of the workspace. Their passes are
independent, so the CPU overlaps one state's dependency chains with another's (measured in
docs/benchmarks.md, "Batches in parallel")."""

# The states of a batch that one call of aba runs side by side, one per lane of its workspace:
# first .. first + count − 1.
Lanes = namedtuple("Lanes", ("first", "count"))

# RBDA Table 7.1, world axes: U_i = I^A_i S_i, D_i = S_iᵀ U_i + armature, u_i = τ_i − S_iᵀ p^A_i
AbaWorkspace = namedtuple("AbaWorkspace", "X_world S_world v c pA U D u IA")
AbaWorkspace.__doc__ = """The ABA's arrays, a leading index per lane: world poses X_world, motion
subspaces S_world, v, c (then the accelerations a), pA, U, D, u and articulated inertias IA."""


@kernel_helper
def aba_workspace(n: int, count: int) -> AbaWorkspace:
    """An AbaWorkspace of `count` lanes, for as many states at once, carved from one block."""
    block = np.empty(count * n * (POSE + 5 * 6 + 2 + 36))
    X_world, at = carved(block, 0, (count, n, POSE))
    motions, at = carved(block, at, (5, count, n, 6))
    scalars, at = carved(block, at, (2, count, n))
    IA, at = carved(block, at, (count, n, 6, 6))
    return AbaWorkspace(X_world=X_world, S_world=motions[0], v=motions[1], c=motions[2],
                        pA=motions[3], U=motions[4], D=scalars[0], u=scalars[1], IA=IA)


@kernel_helper
def aba(tree, gravity, Q, QD, TAU, F, QDD, lanes, workspace):
    """q̈ of the states `lanes` (Lanes) of a batch, written into QDD; Q, QD, TAU and QDD are
    (B, n), F None or (B, n, 6) body-frame wrenches.

    Every quantity is in world axes about the world origin, so articulated inertias pass to
    the parent without a transform. Each state has its lane of the workspace (aba_workspace):
    X_world, S_world, v, c (velocity-product accelerations, then accelerations), pA, U, D, u
    and the articulated inertias IA, and each pass takes every lane at one body before the next.
    A lane's view (IA[lane], ...) is made where it is used, never bound to a name across a
    loop: numba counts the references of a view that lives across a loop on every iteration, an
    atomic add and subtract, a measurable share of a single-state ABA.
    """
    X_world, S_world, v, c = workspace.X_world, workspace.S_world, workspace.v, workspace.c
    pA, U, D, u, IA = workspace.pA, workspace.U, workspace.D, workspace.u, workspace.IA
    first, count = lanes.first, lanes.count
    n = tree.shape[0]

    # forward pass: poses, velocities, velocity-product accelerations c, rigid-body bias forces
    for i in range(n):
        parent, one_row = parent_of(tree, i), joint_start(tree, i) == i
        for lane in range(count):
            b = first + lane
            X, S = body_kinematics(tree, i, Q[b], X_world[lane], S_world[lane])
            vJ = scale6(QD[b, i], S)
            v_i = add6(vector6(v[lane], parent), vJ) if parent >= 0 else vJ
            inertia = inertia_to_world(X, body_inertia(tree, i))
            pA_i = motion_cross_force(v_i, inertia_times(inertia, v_i))
            if F is not None:
                pA_i = add6(pA_i, scale6(-1.0, force_to_parent(X, vector6(F[b], i))))
            store(v[lane], i, v_i)
            if one_row:
                store(c[lane], i, motion_cross_motion(v_i, vJ))
            else:  # a multi-DOF joint's row (tree.py)
                store(c[lane], i, motion_cross_motion(joint_velocity_less_before(
                    tree, i, QD[b], S_world[lane], v_i), vJ))
            store(pA[lane], i, pA_i)
            store_inertia_matrix(IA[lane], i, inertia)

    # backward pass: articulated inertias IA and bias forces pA, handed to the parent:
    # Ia = IA − U Uᵀ/D, pa = pA + Ia c + U u/D = pA + IA c + U (u − Uᵀc)/D, D = Sᵀ U + armature
    for i in range(n - 1, -1, -1):
        parent = parent_of(tree, i)
        for lane in range(count):
            S, pA_i = vector6(S_world[lane], i), vector6(pA[lane], i)
            U_i = symmetric_times(IA[lane], i, S)
            D_i, u_i = dot6(S, U_i) + armature(tree, i), TAU[first + lane, i] - dot6(S, pA_i)
            D[lane, i], u[lane, i] = D_i, u_i
            store(U[lane], i, U_i)
            if parent >= 0:
                c_i = vector6(c[lane], i)
                pa = add6(pA_i, symmetric_times(IA[lane], i, c_i))
                pa = add6(pa, scale6((u_i - dot6(U_i, c_i)) / D_i, U_i))
                store(pA[lane], parent, add6(vector6(pA[lane], parent), pa))
                for r in range(6):
                    for k in range(r + 1):  # the lower triangle: IA is symmetric
                        IA[lane, parent, r, k] += IA[lane, i, r, k] - U_i[r] * U_i[k] / D_i

    # forward pass: accelerations, the base accelerating upwards at g; c becomes a
    a = c
    a_root = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
    for i in range(n):
        parent = parent_of(tree, i)
        for lane in range(count):
            a_i = add6(vector6(a[lane], parent) if parent >= 0 else a_root, vector6(a[lane], i))
            qdd_i = (u[lane, i] - dot6(vector6(U[lane], i), a_i)) / D[lane, i]
            QDD[first + lane, i] = qdd_i
            store(a[lane], i, add6(a_i, scale6(qdd_i, vector6(S_world[lane], i))))


@routine
def aba_lanes(tree, gravity, Q, QD, TAU, F, QDD, first, workspace):
    """aba for the LANES states from `first`, with a LANES-lane workspace. This and aba_one
    are compiled once for every kernel that calls them (the batch kernels, and the rollout's
    integrator stages, where the call made a step faster than the inlined aba_state: an
    inlined ABA counts a reference to each array it takes, at every call)."""
    aba(tree, gravity, Q, QD, TAU, F, QDD, Lanes(first, LANES), workspace)


@routine
def aba_one(tree: PackedTree, gravity: FloatArray, Q: FloatArray, QD: FloatArray,
            TAU: FloatArray, F: FloatArray | None, QDD: FloatArray, b: int,
            workspace: AbaWorkspace) -> None:
    """aba for state b alone, with a one-lane workspace."""
    aba(tree, gravity, Q, QD, TAU, F, QDD, Lanes(b, 1), workspace)


@routine
def aba_state(tree, gravity, q, qd, tau, f_ext, qdd, workspace):
    """aba for one state (n,) into qdd, with f_ext None or (1, n, 6) and a one-lane workspace.
    The states become batches of one by np.newaxis, a view made inline: reshape calls into
    numba's runtime each time, a cost the rollout pays at every ABA."""
    aba(tree, gravity, q[np.newaxis], qd[np.newaxis], tau[np.newaxis], f_ext, qdd[np.newaxis],
        Lanes(0, 1), workspace)


@kernel_helper
def aba_batch(tree, gravity, Q, QD, TAU, F, QDD):
    """aba for a batch (B, nq): LANES states at a time; the last group ends at the last state
    and so repeats a few states of the one before, which its lanes compute alike."""
    B, n = QD.shape
    if B < LANES:
        workspace = aba_workspace(n, 1)
        for b in range(B):
            aba_one(tree, gravity, Q, QD, TAU, F, QDD, b, workspace)
        return
    workspace = aba_workspace(n, LANES)
    for first in range(0, B, LANES):
        aba_lanes(tree, gravity, Q, QD, TAU, F, QDD, min(first, B - LANES), workspace)


@kernel
def forward_dynamics(tree, gravity, q, qd, tau, f_ext, qdd):
    """ABA for a state or a batch: q (..., nq), qd and tau (..., n); f_ext None or
    (..., n, 6); qdd like qd."""
    Q, QD, TAU = np.atleast_2d(q), np.atleast_2d(qd), np.atleast_2d(tau)
    B, n = QD.shape
    if f_ext is None:
        aba_batch(tree, gravity, Q, QD, TAU, None, qdd.reshape((B, n)))
    else:
        aba_batch(tree, gravity, Q, QD, TAU, f_ext.reshape((B, n, 6)), qdd.reshape((B, n)))


@kernel
def forward_dynamics_factored(tree, gravity, q, qd, tau, f_ext, qdd):
    """q̈ = M⁻¹(τ − b), b from RNEA and M factored as LᵀDL (the "cholesky" method), for a
    state or a batch (q (..., nq), the others (..., n))."""
    Q, TAU = np.atleast_2d(q), np.atleast_2d(tau)
    B, n = TAU.shape
    QDD = qdd.reshape((B, n))
    inverse_dynamics(tree, gravity, q, qd, np.zeros(tau.shape), f_ext, qdd)  # b, into qdd
    workspace, LD, parent = crba_workspace(tree, n), np.empty((n, n)), parent_indices(tree)
    for b in range(B):
        factor_mass_matrix(tree, parent, Q[b], LD, workspace)
        for i in range(n):
            QDD[b, i] = TAU[b, i] - QDD[b, i]
        ltdl_solve(LD, parent, QDD[b])
