"""6-D spatial algebra on plain arrays, [linear; angular] order (Featherstone, "Rigid Body
Dynamics Algorithms" (RBDA), ch. 2, with Pinocchio's ordering).

A pose X is 12 numbers, rotation R row-major then translation p (see tree.py); it maps child
coordinates to parent coordinates. Motions ``m = [v; ω]`` and forces ``f = [f; n]`` are
6-vectors about a frame origin. Functions write into ``out`` (never aliasing an input) so that
kernels allocate nothing per body; they are inlined into the kernels that call them.
"""

import numpy as np

from robodyn_ros.dynamics.jit import kernel_helper
from robodyn_ros.dynamics.tree import INERTIA, PLACEMENT, SUBSPACE


@kernel_helper
def joint_pose(tree_row, q, X):
    """X = placement · exp(S q): pose of a body in its parent body at joint position q.

    S is ``[0; axis]`` (revolute) or ``[axis; 0]`` (prismatic): exp(S q) is a rotation about
    the unit axis by q (Rodrigues' formula) or a translation q along it.
    """
    P = tree_row[PLACEMENT:SUBSPACE]
    S = tree_row[SUBSPACE:INERTIA]
    x, y, z = S[3], S[4], S[5]
    angle = q if (x != 0.0 or y != 0.0 or z != 0.0) else 0.0
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    J = (
        t * x * x + c, t * x * y - s * z, t * x * z + s * y,
        t * x * y + s * z, t * y * y + c, t * y * z - s * x,
        t * x * z - s * y, t * y * z + s * x, t * z * z + c,
    )
    for r in range(3):
        a0, a1, a2 = P[3 * r], P[3 * r + 1], P[3 * r + 2]
        X[3 * r] = a0 * J[0] + a1 * J[3] + a2 * J[6]
        X[3 * r + 1] = a0 * J[1] + a1 * J[4] + a2 * J[7]
        X[3 * r + 2] = a0 * J[2] + a1 * J[5] + a2 * J[8]
        X[9 + r] = P[9 + r] + q * (a0 * S[0] + a1 * S[1] + a2 * S[2])


@kernel_helper
def compose(A, B, out):
    """out = A · B for poses."""
    for r in range(3):
        a0, a1, a2 = A[3 * r], A[3 * r + 1], A[3 * r + 2]
        out[3 * r] = a0 * B[0] + a1 * B[3] + a2 * B[6]
        out[3 * r + 1] = a0 * B[1] + a1 * B[4] + a2 * B[7]
        out[3 * r + 2] = a0 * B[2] + a1 * B[5] + a2 * B[8]
        out[9 + r] = A[9 + r] + a0 * B[9] + a1 * B[10] + a2 * B[11]


@kernel_helper
def motion_to_child(X, m, out):
    """Motion m in parent coordinates → child coordinates: ω' = Rᵀω, v' = Rᵀ(v − p × ω)."""
    w0, w1, w2 = m[3], m[4], m[5]
    v0 = m[0] - X[10] * w2 + X[11] * w1
    v1 = m[1] - X[11] * w0 + X[9] * w2
    v2 = m[2] - X[9] * w1 + X[10] * w0
    for k in range(3):
        out[k] = X[k] * v0 + X[3 + k] * v1 + X[6 + k] * v2
        out[3 + k] = X[k] * w0 + X[3 + k] * w1 + X[6 + k] * w2


@kernel_helper
def motion_to_parent(X, m, out):
    """Motion m in child coordinates → parent coordinates: ω' = Rω, v' = Rv + p × ω'."""
    for r in range(3):
        out[3 + r] = X[3 * r] * m[3] + X[3 * r + 1] * m[4] + X[3 * r + 2] * m[5]
        out[r] = X[3 * r] * m[0] + X[3 * r + 1] * m[1] + X[3 * r + 2] * m[2]
    out[0] += X[10] * out[5] - X[11] * out[4]
    out[1] += X[11] * out[3] - X[9] * out[5]
    out[2] += X[9] * out[4] - X[10] * out[3]


@kernel_helper
def force_to_parent(X, f, out):
    """Force f in child coordinates → parent coordinates: f' = Rf, n' = Rn + p × f'."""
    for r in range(3):
        out[r] = X[3 * r] * f[0] + X[3 * r + 1] * f[1] + X[3 * r + 2] * f[2]
        out[3 + r] = X[3 * r] * f[3] + X[3 * r + 1] * f[4] + X[3 * r + 2] * f[5]
    out[3] += X[10] * out[2] - X[11] * out[1]
    out[4] += X[11] * out[0] - X[9] * out[2]
    out[5] += X[9] * out[1] - X[10] * out[0]


@kernel_helper
def motion_cross_motion(m, n, out):
    """out = m × n = [ω×v_n + v×ω_n; ω×ω_n] (Featherstone's crm)."""
    v0, v1, v2, w0, w1, w2 = m[0], m[1], m[2], m[3], m[4], m[5]
    out[0] = w1 * n[2] - w2 * n[1] + v1 * n[5] - v2 * n[4]
    out[1] = w2 * n[0] - w0 * n[2] + v2 * n[3] - v0 * n[5]
    out[2] = w0 * n[1] - w1 * n[0] + v0 * n[4] - v1 * n[3]
    out[3] = w1 * n[5] - w2 * n[4]
    out[4] = w2 * n[3] - w0 * n[5]
    out[5] = w0 * n[4] - w1 * n[3]


@kernel_helper
def motion_cross_force(m, f, out):
    """out = m ×* f = [ω×f; ω×n + v×f] (Featherstone's crf)."""
    v0, v1, v2, w0, w1, w2 = m[0], m[1], m[2], m[3], m[4], m[5]
    out[0] = w1 * f[2] - w2 * f[1]
    out[1] = w2 * f[0] - w0 * f[2]
    out[2] = w0 * f[1] - w1 * f[0]
    out[3] = w1 * f[5] - w2 * f[4] + v1 * f[2] - v2 * f[1]
    out[4] = w2 * f[3] - w0 * f[5] + v2 * f[0] - v0 * f[2]
    out[5] = w0 * f[4] - w1 * f[3] + v0 * f[1] - v1 * f[0]


@kernel_helper
def matvec6(A, x, out):
    """out = A x for a 6x6 matrix."""
    for r in range(6):
        out[r] = (
            A[r, 0] * x[0] + A[r, 1] * x[1] + A[r, 2] * x[2]
            + A[r, 3] * x[3] + A[r, 4] * x[4] + A[r, 5] * x[5]
        )


@kernel_helper
def dot6(a, b):
    """aᵀ b for 6-vectors (a motion with a force: power)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@kernel_helper
def inertia_times(body, m, out):
    """out = I m for a body inertia (mass M, centre of mass c, I_c; see tree.py) in the frame
    of m: [M (v + ω × c); c × M (v + ω × c) + I_c ω] (RBDA eq. 2.63)."""
    mass, c0, c1, c2 = body[0], body[1], body[2], body[3]
    v0, v1, v2, w0, w1, w2 = m[0], m[1], m[2], m[3], m[4], m[5]
    h0 = mass * (v0 + w1 * c2 - w2 * c1)
    h1 = mass * (v1 + w2 * c0 - w0 * c2)
    h2 = mass * (v2 + w0 * c1 - w1 * c0)
    out[0], out[1], out[2] = h0, h1, h2
    out[3] = c1 * h2 - c2 * h1 + body[4] * w0 + body[5] * w1 + body[6] * w2
    out[4] = c2 * h0 - c0 * h2 + body[7] * w0 + body[8] * w1 + body[9] * w2
    out[5] = c0 * h1 - c1 * h0 + body[10] * w0 + body[11] * w1 + body[12] * w2


@kernel_helper
def inertia_to_world(X, body, out):
    """The 6x6 spatial inertia of a body at pose X, in world axes about the world origin.

    With c the centre of mass and I_c the rotational inertia about it, in world axes:
    [[M 1, −M[c]×], [M[c]×, I_c − M[c]×[c]×]] (RBDA eq. 2.63).
    """
    mass = body[0]
    c = (
        X[9] + X[0] * body[1] + X[1] * body[2] + X[2] * body[3],
        X[10] + X[3] * body[1] + X[4] * body[2] + X[5] * body[3],
        X[11] + X[6] * body[1] + X[7] * body[2] + X[8] * body[3],
    )
    cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
    for r in range(3):
        # row r of R I_c, then times Rᵀ: (R I_c Rᵀ)[r, k]
        t0 = X[3 * r] * body[4] + X[3 * r + 1] * body[7] + X[3 * r + 2] * body[10]
        t1 = X[3 * r] * body[5] + X[3 * r + 1] * body[8] + X[3 * r + 2] * body[11]
        t2 = X[3 * r] * body[6] + X[3 * r + 1] * body[9] + X[3 * r + 2] * body[12]
        for k in range(3):
            rotated = t0 * X[3 * k] + t1 * X[3 * k + 1] + t2 * X[3 * k + 2]
            out[3 + r, 3 + k] = rotated + mass * ((cc if r == k else 0.0) - c[r] * c[k])
            out[r, k] = mass if r == k else 0.0
    mc0, mc1, mc2 = mass * c[0], mass * c[1], mass * c[2]
    out[3, 0], out[3, 1], out[3, 2] = 0.0, -mc2, mc1  # M[c]×
    out[4, 0], out[4, 1], out[4, 2] = mc2, 0.0, -mc0
    out[5, 0], out[5, 1], out[5, 2] = -mc1, mc0, 0.0
    for r in range(3):
        for k in range(3):
            out[r, 3 + k] = out[3 + k, r]
