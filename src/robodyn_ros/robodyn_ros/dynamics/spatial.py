"""6-D spatial algebra on tuples of floats, [linear; angular] order (Featherstone, "Rigid Body
Dynamics Algorithms" (RBDA), ch. 2, with Pinocchio's ordering).

A pose X is 12 numbers, rotation R row-major then translation p (see tree.py); it maps child
coordinates to parent coordinates. Motions ``m = [v; ω]`` and forces ``f = [f; n]`` are
6-vectors about a frame origin. A rigid-body inertia is 10 numbers: mass M, first moment
h = M c (c the centre of mass) and the rotational inertia about the frame origin I_O (xx, xy,
xz, yy, yz, zz); as a 6x6 matrix it is [[M 1, −[h]×], [[h]×, I_O]] (RBDA eq. 2.63).

The functions take and return tuples, which LLVM keeps in registers; kernels load from and
store to their arrays only what other bodies read (``vector6``, ``pose_at``, ``store``). All
are inlined into the kernels that call them, and none makes an array view or allocates.
"""

import numpy as np

from robodyn_ros.dynamics.jit import kernel_helper
from robodyn_ros.dynamics.tree import CONTINUED, FREE_FLYER, PLANAR


@kernel_helper
def vector6(a, i):
    """Row i of an (n, 6) array."""
    return a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5]


@kernel_helper
def pose_at(a, i, start):
    """The pose at columns start .. start + 11 of row i."""
    return (
        a[i, start], a[i, start + 1], a[i, start + 2], a[i, start + 3],
        a[i, start + 4], a[i, start + 5], a[i, start + 6], a[i, start + 7],
        a[i, start + 8], a[i, start + 9], a[i, start + 10], a[i, start + 11],
    )


@kernel_helper
def inertia_at(a, i):
    """The rigid-body inertia in row i of an (n, 10) array."""
    return (
        a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4],
        a[i, 5], a[i, 6], a[i, 7], a[i, 8], a[i, 9],
    )


@kernel_helper
def store(a, i, values):
    """Row i of a (n, len(values)) array = values."""
    for k in range(len(values)):
        a[i, k] = values[k]


@kernel_helper
def dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@kernel_helper
def cross(a, b):
    return a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


@kernel_helper
def add3(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


@kernel_helper
def add6(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5]


@kernel_helper
def scale6(s, a):
    return s * a[0], s * a[1], s * a[2], s * a[3], s * a[4], s * a[5]


@kernel_helper
def dot6(a, b):
    """aᵀ b for 6-vectors (a motion with a force: power)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@kernel_helper
def rotate(X, x):
    """R x, R the rotation of pose X (or any 3x3 row-major matrix in X[:9])."""
    return (
        X[0] * x[0] + X[1] * x[1] + X[2] * x[2],
        X[3] * x[0] + X[4] * x[1] + X[5] * x[2],
        X[6] * x[0] + X[7] * x[1] + X[8] * x[2],
    )


@kernel_helper
def transposed(A):
    """Aᵀ of a 3 x 3 row-major A (9), or the rotation Rᵀ of a pose."""
    return A[0], A[3], A[6], A[1], A[4], A[7], A[2], A[5], A[8]


@kernel_helper
def rotate_back(X, x):
    """Rᵀ x, R the rotation of pose X."""
    return rotate(transposed(X), x)


@kernel_helper
def compose(A, B):
    """A · B for poses: rotation R_A R_B (row r of it is R_Bᵀ times row r of R_A), translation
    p_A + R_A p_B."""
    return (
        *rotate_back(B, A[0:3]), *rotate_back(B, A[3:6]), *rotate_back(B, A[6:9]),
        *add3(A[9:12], rotate(A, B[9:12])),
    )


@kernel_helper
def joint_pose(placement, S, axis, q, k):
    """placement · M(q): the pose of a body with its joint at configuration q[k:] (k the
    joint's tree.configuration_index), `placement` the pose of its joint's frame (in the parent
    body, or in the world).

    A revolute joint about ±e_k of its frame (`axis` = k ≥ 0, tree.frame_axis), the usual URDF
    axes, turns two columns of the placement (Pinocchio's JointModelRX, RY and RZ do the same);
    any other joint composes the placement with joint_motion(S, axis, q, k).
    """
    if axis >= 0:
        return turn_about_axis(placement, axis, S, q[k])[0]
    return compose(placement, joint_motion(S, axis, q, k))


@kernel_helper
def joint_pose_and_subspace(placement, S, axis, q, k):
    """joint_pose(placement, S, axis, q, k) = X, and S in the placement's frame,
    motion_to_parent(X, S). One branch on the joint's kind for both: in a helper with array
    arguments, a second branch kept their reference counts inside the kernel's loop."""
    if axis >= 0:
        X, turning = turn_about_axis(placement, axis, S, q[k])
        return X, (*cross(X[9:12], turning), *turning)
    X = compose(placement, joint_motion(S, axis, q, k))
    return X, motion_to_parent(X, S)


@kernel_helper
def joint_motion(S, axis, q, k):
    """The motion M(q) across a row's joint (tree.py): screw_motion(S, q[k]) for a joint of one
    degree of freedom, the free flyer's or planar joint's pose on the first row of one, the
    identity on the rows after it."""
    if axis == FREE_FLYER:
        return free_flyer_motion(q, k)
    if axis == PLANAR:
        return planar_motion(q, k)
    if axis == CONTINUED:
        return 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0
    return screw_motion(S, q[k])


@kernel_helper
def free_flyer_motion(q, k):
    """The pose of a free flyer's configuration q[k : k + 7] = [x y z, qx qy qz qw], its
    quaternion normalised (Pinocchio's JointModelFreeFlyer)."""
    x, y, z, w = q[k + 3], q[k + 4], q[k + 5], q[k + 6]
    s = 2.0 / (x * x + y * y + z * z + w * w)  # R = 1 + s w [u]× + s [u]×², u = (x, y, z)
    return (
        1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w),
        s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w),
        s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y),
        q[k], q[k + 1], q[k + 2],
    )


@kernel_helper
def planar_motion(q, k):
    """The pose of a planar joint's configuration q[k : k + 4] = [x, y, cos θ, sin θ], the
    rotation about z by θ with (cos θ, sin θ) normalised (Pinocchio's JointModelPlanar)."""
    norm = np.sqrt(q[k + 2] * q[k + 2] + q[k + 3] * q[k + 3])
    c, s = q[k + 2] / norm, q[k + 3] / norm
    return c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0, q[k], q[k + 1], 0.0


@kernel_helper
def screw_motion(S, q):
    """exp(S q) for S = ``[0; axis]`` (revolute) or ``[axis; 0]`` (prismatic): a rotation about
    the unit axis by q (Rodrigues' formula) or a translation q along it."""
    x, y, z = S[3], S[4], S[5]
    angle = q if (x != 0.0 or y != 0.0 or z != 0.0) else 0.0
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    return (
        t * x * x + c, t * x * y - s * z, t * x * z + s * y,
        t * x * y + s * z, t * y * y + c, t * y * z - s * x,
        t * x * z - s * y, t * y * z + s * x, t * z * z + c,
        q * S[0], q * S[1], q * S[2],
    )


@kernel_helper
def turn_about_axis(X, axis, S, q):
    """X · R_k(w q) for a joint about w e_k of its frame (k = axis, w = S[3 + k] = ±1), and
    the joint's axis w R e_k in the frame of X (column k of the rotation, which the turn keeps).

    Columns a = k + 1 and b = k + 2 (mod 3) of X's rotation turn, a ← c a + s b and
    b ← c b − s a. Each branch reads S and X at constant indices: indexed by `axis`, the
    tuples went through the stack.
    """
    if axis == 2:
        w = S[5]
        c, s = np.cos(w * q), np.sin(w * q)
        return (
            X[0] * c + X[1] * s, X[1] * c - X[0] * s, X[2],
            X[3] * c + X[4] * s, X[4] * c - X[3] * s, X[5],
            X[6] * c + X[7] * s, X[7] * c - X[6] * s, X[8],
            X[9], X[10], X[11],
        ), (w * X[2], w * X[5], w * X[8])
    if axis == 0:
        w = S[3]
        c, s = np.cos(w * q), np.sin(w * q)
        return (
            X[0], X[1] * c + X[2] * s, X[2] * c - X[1] * s,
            X[3], X[4] * c + X[5] * s, X[5] * c - X[4] * s,
            X[6], X[7] * c + X[8] * s, X[8] * c - X[7] * s,
            X[9], X[10], X[11],
        ), (w * X[0], w * X[3], w * X[6])
    w = S[4]
    c, s = np.cos(w * q), np.sin(w * q)
    return (
        X[0] * c - X[2] * s, X[1], X[2] * c + X[0] * s,
        X[3] * c - X[5] * s, X[4], X[5] * c + X[3] * s,
        X[6] * c - X[8] * s, X[7], X[8] * c + X[6] * s,
        X[9], X[10], X[11],
    ), (w * X[1], w * X[4], w * X[7])


@kernel_helper
def motion_to_child(X, m):
    """Motion m in parent coordinates → child coordinates: ω' = Rᵀω, v' = Rᵀ(v − p × ω)."""
    w = m[3:6]
    p_cross_w = cross(X[9:12], w)
    v = (m[0] - p_cross_w[0], m[1] - p_cross_w[1], m[2] - p_cross_w[2])
    return (*rotate_back(X, v), *rotate_back(X, w))


@kernel_helper
def motion_to_parent(X, m):
    """Motion m in child coordinates → parent coordinates: ω' = Rω, v' = Rv + p × ω'."""
    w = rotate(X, m[3:6])
    return (*add3(rotate(X, m[0:3]), cross(X[9:12], w)), *w)


@kernel_helper
def force_to_parent(X, f):
    """Force f in child coordinates → parent coordinates: f' = Rf, n' = Rn + p × f'."""
    f_parent = rotate(X, f[0:3])
    return (*f_parent, *add3(rotate(X, f[3:6]), cross(X[9:12], f_parent)))


@kernel_helper
def motion_cross_motion(m, n):
    """m × n = [ω×v_n + v×ω_n; ω×ω_n] (Featherstone's crm)."""
    v, w = m[0:3], m[3:6]
    return (*add3(cross(w, n[0:3]), cross(v, n[3:6])), *cross(w, n[3:6]))


@kernel_helper
def motion_cross_force(m, f):
    """m ×* f = [ω×f; ω×n + v×f] (Featherstone's crf)."""
    v, w = m[0:3], m[3:6]
    return (*cross(w, f[0:3]), *add3(cross(w, f[3:6]), cross(v, f[0:3])))


@kernel_helper
def body_inertia_times(body, m):
    """I m for a body inertia (mass M, centre of mass c, I_c; see tree.py) in the frame of m:
    [M (v + ω × c); c × M (v + ω × c) + I_c ω] (RBDA eq. 2.63)."""
    mass, c, w = body[0], body[1:4], m[3:6]
    v_com = add3(m[0:3], cross(w, c))
    h = (mass * v_com[0], mass * v_com[1], mass * v_com[2])
    return (*h, *add3(cross(c, h), rotate(body[4:13], w)))


@kernel_helper
def inertia_to_world(X, body):
    """The rigid-body inertia (M, h, I_O) of a body (mass M, centre of mass c, I_c; see
    tree.py) at pose X, in world axes about the world origin: with c and I_c in world axes,
    h = M c and I_O = R I_c Rᵀ + M (|c|² 1 − c cᵀ) (RBDA eq. 2.63)."""
    mass = body[0]
    c = add3(X[9:12], rotate(X, body[1:4]))
    R0, R1, R2 = X[0:3], X[3:6], X[6:9]  # rows of R
    T0, T1, T2 = rotate(body[4:13], R0), rotate(body[4:13], R1), rotate(body[4:13], R2)
    cc = dot3(c, c)
    return (
        mass, mass * c[0], mass * c[1], mass * c[2],
        dot3(T0, R0) + mass * (cc - c[0] * c[0]), dot3(T0, R1) - mass * c[0] * c[1],
        dot3(T0, R2) - mass * c[0] * c[2], dot3(T1, R1) + mass * (cc - c[1] * c[1]),
        dot3(T1, R2) - mass * c[1] * c[2], dot3(T2, R2) + mass * (cc - c[2] * c[2]),
    )


@kernel_helper
def inertia_times(inertia, m):
    """I m for a rigid-body inertia (M, h, I_O): [M v − h × ω; h × v + I_O ω]."""
    mass, h, v, w = inertia[0], inertia[1:4], m[0:3], m[3:6]
    xx, xy, xz, yy, yz, zz = inertia[4:10]
    I_w = (xx * w[0] + xy * w[1] + xz * w[2], xy * w[0] + yy * w[1] + yz * w[2],
           xz * w[0] + yz * w[1] + zz * w[2])
    h_w = cross(h, w)
    f = (mass * v[0] - h_w[0], mass * v[1] - h_w[1], mass * v[2] - h_w[2])
    return (*f, *add3(cross(h, v), I_w))


@kernel_helper
def inertia_rate(inertia, m):
    """İ = m ×* I − I m×, the rate of change of a rigid-body inertia I = (M, h, I_O) moving at
    m = [v; ω], about a fixed origin: symmetric, and of the same form as I with mass 0, first
    moment ḣ = M v + ω × h and rotational part İ_O = A + Aᵀ − [v]×[h]× − [h]×[v]×, A = [ω]× I_O,
    where −[v]×[h]× − [h]×[v]× = 2 (v·h) 1 − h vᵀ − v hᵀ."""
    mass, h, v, w = inertia[0], inertia[1:4], m[0:3], m[3:6]
    xx, xy, xz, yy, yz, zz = inertia[4:10]
    h_rate = add3((mass * v[0], mass * v[1], mass * v[2]), cross(w, h))
    # the columns of A, ω × (the columns of I_O); entry (r, c) of İ_O is
    # A[r, c] + A[c, r] + 2 (v·h) δ_rc − h_r v_c − v_r h_c
    A0, A1, A2 = cross(w, (xx, xy, xz)), cross(w, (xy, yy, yz)), cross(w, (xz, yz, zz))
    vh = dot3(v, h)
    return (
        0.0, *h_rate,
        2.0 * (A0[0] + vh - h[0] * v[0]), A1[0] + A0[1] - h[0] * v[1] - v[0] * h[1],
        A2[0] + A0[2] - h[0] * v[2] - v[0] * h[2], 2.0 * (A1[1] + vh - h[1] * v[1]),
        A2[1] + A1[2] - h[1] * v[2] - v[1] * h[2], 2.0 * (A2[2] + vh - h[2] * v[2]),
    )


@kernel_helper
def store_inertia_matrix(A, i, inertia):
    """A[i] (6x6) = the matrix [[M 1, −[h]×], [[h]×, I_O]] of a rigid-body inertia."""
    mass, h0, h1, h2, xx, xy, xz, yy, yz, zz = inertia
    store_row(A, i, 0, (mass, 0.0, 0.0, 0.0, h2, -h1))
    store_row(A, i, 1, (0.0, mass, 0.0, -h2, 0.0, h0))
    store_row(A, i, 2, (0.0, 0.0, mass, h1, -h0, 0.0))
    store_row(A, i, 3, (0.0, -h2, h1, xx, xy, xz))
    store_row(A, i, 4, (h2, 0.0, -h0, xy, yy, yz))
    store_row(A, i, 5, (-h1, h0, 0.0, xz, yz, zz))


@kernel_helper
def store_row(A, i, r, m):
    """Row r of A[i] = m, for a (n, 6, 6) array A."""
    A[i, r, 0], A[i, r, 1], A[i, r, 2], A[i, r, 3], A[i, r, 4], A[i, r, 5] = m


@kernel_helper
def matrix_row_times(A, i, r, x):
    """Row r of A[i] times x, for a (n, 6, 6) array A."""
    return (
        A[i, r, 0] * x[0] + A[i, r, 1] * x[1] + A[i, r, 2] * x[2]
        + A[i, r, 3] * x[3] + A[i, r, 4] * x[4] + A[i, r, 5] * x[5]
    )


@kernel_helper
def matrix_times(A, i, x):
    """A[i] x for a (n, 6, 6) array A."""
    return (
        matrix_row_times(A, i, 0, x), matrix_row_times(A, i, 1, x),
        matrix_row_times(A, i, 2, x), matrix_row_times(A, i, 3, x),
        matrix_row_times(A, i, 4, x), matrix_row_times(A, i, 5, x),
    )


@kernel_helper
def symmetric_times(A, i, x):
    """A[i] x for a (n, 6, 6) array A of symmetric matrices, of which only the lower triangle
    is read."""
    a = A[i]
    return (
        symmetric_row_times(a, 0, x), symmetric_row_times(a, 1, x),
        symmetric_row_times(a, 2, x), symmetric_row_times(a, 3, x),
        symmetric_row_times(a, 4, x), symmetric_row_times(a, 5, x),
    )


@kernel_helper
def symmetric_row_times(a, r, x):
    """Row r of a symmetric 6 x 6 matrix times x, from its lower triangle."""
    s = 0.0
    for k in range(6):
        s += (a[r, k] if k <= r else a[k, r]) * x[k]
    return s
