"""A floating base as the kernels take it: its six free-flyer joints at q = 0, in the base frame.

The free-flyer joints (model.FREE_FLYER_JOINTS) sit at the identity in one another, so at q = 0
their frames are the base frame and their subspaces the unit vectors of the base velocity
[linear; angular] in it. Every kernel then computes in the base frame as if it were the world:
an inertial frame where the base is at this instant. Joint-space answers (τ, M, q̈, energy) do
not depend on the frame they are computed in; two things differ from a free flyer, and both
are a base acceleration:

- gravity is Rᵀ g in the base frame (R the base orientation); the kernels run without gravity
  and take it as the base accelerating upwards, as RNEA takes it at the root;
- the chain of six joints adds its velocity products Σ_k v_k × S_k v̇_k to the base acceleration
  (RBDA Table 5.1): e(v) = [v × ω; (ω_y ω_z, −ω_x ω_z, ω_x ω_y)], where a free flyer adds
  v × v = 0.

So the six joints' q̈ is the base acceleration less shift = e(v) + [Rᵀ g; 0]:
τ = RNEA(q_tree, v, v̇ − shift) and v̇ = ABA(q_tree, v, τ) + shift; the joints' are unchanged.
"""

import numpy as np

from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import body_kinematics
from robodyn_ros.dynamics.spatial import free_flyer_motion
from robodyn_ros.dynamics.tree import POSE, UNIT_TOLERANCE

CONFIGURATION = 7  # base position (3) then orientation quaternion (x, y, z, w)
VELOCITY = 6  # base velocity [linear; angular] in the base frame


@kernel_helper
def quaternion_norm(q):
    """The norm of the base orientation's quaternion q[3:7]."""
    return np.sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6])


@kernel_helper
def has_unit_quaternion(q):
    """Whether the base orientation's quaternion has unit norm, within UNIT_TOLERANCE."""
    return abs(quaternion_norm(q) - 1.0) <= UNIT_TOLERANCE


@kernel_helper
def base_rotation(q, R):
    """R (3x3) of the quaternion q[3:7] (x, y, z, w), normalised; returns its norm."""
    X = free_flyer_motion(q, 0)  # the base pose of q[:7], its rotation row-major in X[:9]
    R[0, 0], R[0, 1], R[0, 2] = X[0], X[1], X[2]
    R[1, 0], R[1, 1], R[1, 2] = X[3], X[4], X[5]
    R[2, 0], R[2, 1], R[2, 2] = X[6], X[7], X[8]
    return quaternion_norm(q)


@kernel_helper
def rotate_rows(R, A, start):
    """A[start : start + 3] ← R A[start : start + 3], column by column."""
    for c in range(A.shape[1]):
        a, b, d = A[start, c], A[start + 1, c], A[start + 2, c]
        for r in range(3):
            A[start + r, c] = R[r, 0] * a + R[r, 1] * b + R[r, 2] * d


@kernel_helper
def acceleration_shift(gravity, R, v, shift):
    """shift (nv) = e(v) + [Rᵀ g; 0] on the six base entries, 0 on the joints (module doc)."""
    shift[:] = 0.0
    vx, vy, vz, wx, wy, wz = v[0], v[1], v[2], v[3], v[4], v[5]
    shift[0] = vy * wz - vz * wy
    shift[1] = vz * wx - vx * wz
    shift[2] = vx * wy - vy * wx
    shift[3], shift[4], shift[5] = wy * wz, -wx * wz, wx * wy
    for k in range(3):
        shift[k] += R[0, k] * gravity[0] + R[1, k] * gravity[1] + R[2, k] * gravity[2]


@kernel_helper
def base_frame_kinematics(tree, q, X_world, S_world):
    """forward_kinematics of a floating model in the base frame, from its configuration q
    (n + 1): the free-flyer joints, at q = 0, have the identity for pose and the unit vectors
    e_k for subspaces at every state, and are stored as such; the joints after them as
    forward_kinematics, at q[CONFIGURATION:]."""
    for k in range(VELOCITY):
        for c in range(POSE):
            X_world[k, c] = 0.0
        X_world[k, 0] = X_world[k, 4] = X_world[k, 8] = 1.0
        for c in range(6):
            S_world[k, c] = 0.0
        S_world[k, k] = 1.0
    q_rows = q[CONFIGURATION - VELOCITY:]  # row i's position at q_rows[i]
    for i in range(VELOCITY, q.shape[0] - 1):
        body_kinematics(tree, i, q_rows, X_world, S_world)


@kernel_helper
def base_frame_state(gravity, q, v):
    """One state's q_tree, R and shift (base_frame_states), and whether its quaternion has
    unit norm; v may be None, and then shift is zero."""
    n = q.shape[0] - 1
    q_tree, R, shift = np.empty(n), np.empty((3, 3)), np.zeros(n)
    q_tree[:VELOCITY] = 0.0
    q_tree[VELOCITY:] = q[CONFIGURATION:]
    base_rotation(q, R)
    unit = has_unit_quaternion(q)
    if v is not None:
        acceleration_shift(gravity, R, v, shift)
    return q_tree, R, shift, unit


@kernel
def base_frame_states(gravity, q, v, q_tree, rotation, shift):
    """The kernels' state of floating-base states (module doc), for one or a batch.

    Args:
        gravity: (3,) in the world.
        q: (..., nv + 1) configurations [position, quaternion (x, y, z, w), joints].
        v: (..., nv) velocities [base linear; base angular; joints], or None.
        q_tree: out, (..., nv): 0 for the six free-flyer joints, then the joints.
        rotation: out, (..., 3, 3) base orientation R, world from base.
        shift: out, (..., nv) base acceleration shift; untouched when v is None.

    Returns:
        The index of the first state whose quaternion is finite but not of unit norm, −1 when
        none is.
    """
    Q = np.atleast_2d(q)
    B, nq = Q.shape
    Q_TREE, ROTATION = q_tree.reshape((B, nq - 1)), rotation.reshape((B, 3, 3))
    bad = -1
    for b in range(B):
        Q_TREE[b, :VELOCITY] = 0.0
        Q_TREE[b, VELOCITY:] = Q[b, CONFIGURATION:]
        norm = base_rotation(Q[b], ROTATION[b])
        if bad < 0 and abs(norm - 1.0) > UNIT_TOLERANCE:  # NaN in is NaN out, no error
            bad = b
    if v is not None:
        V = np.atleast_2d(v)
        SHIFT = shift.reshape((B, nq - 1))
        for b in range(B):
            acceleration_shift(gravity, ROTATION[b], V[b], SHIFT[b])
    return bad
