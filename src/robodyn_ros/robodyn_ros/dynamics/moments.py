"""3x3 algebra of mass moments, shared by the joint-space inertia algorithms that carry first
and second moments of mass instead of 6x6 spatial inertias (GDAHJ, the diagonal of M, recursive
doubling). Matrices are 9-tuples, row-major; vectors 3-tuples; all inlined, none allocates.
"""

from robodyn_ros.dynamics.jit import kernel_helper
from robodyn_ros.dynamics.spatial import dot3, rotate


@kernel_helper
def add9(A, B):
    return (
        A[0] + B[0], A[1] + B[1], A[2] + B[2], A[3] + B[3], A[4] + B[4],
        A[5] + B[5], A[6] + B[6], A[7] + B[7], A[8] + B[8],
    )


@kernel_helper
def scale3(s, a):
    return s * a[0], s * a[1], s * a[2]


@kernel_helper
def sub3(a, b):
    return a[0] - b[0], a[1] - b[1], a[2] - b[2]


@kernel_helper
def skew_product(a, b, s):
    """s â b̂ = s (b aᵀ − (a·b) 1), â the cross-product matrix of a."""
    ab = dot3(a, b)
    return (
        s * (b[0] * a[0] - ab), s * b[0] * a[1], s * b[0] * a[2],
        s * b[1] * a[0], s * (b[1] * a[1] - ab), s * b[1] * a[2],
        s * b[2] * a[0], s * b[2] * a[1], s * (b[2] * a[2] - ab),
    )


@kernel_helper
def rotate_inertia(X, inertia):
    """R I Rᵀ for a symmetric 3x3 I and the rotation R of pose X (or any 3x3 in X[:9])."""
    R0, R1, R2 = X[0:3], X[3:6], X[6:9]  # rows of R
    T0, T1, T2 = rotate(inertia, R0), rotate(inertia, R1), rotate(inertia, R2)  # columns of I Rᵀ
    xy, xz, yz = dot3(R0, T1), dot3(R0, T2), dot3(R1, T2)
    return dot3(R0, T0), xy, xz, xy, dot3(R1, T1), yz, xz, yz, dot3(R2, T2)


@kernel_helper
def load9(a, i, start):
    """Columns start .. start + 8 of row i."""
    return (
        a[i, start], a[i, start + 1], a[i, start + 2], a[i, start + 3], a[i, start + 4],
        a[i, start + 5], a[i, start + 6], a[i, start + 7], a[i, start + 8],
    )


@kernel_helper
def load3(a, i, start):
    """Columns start .. start + 2 of row i."""
    return a[i, start], a[i, start + 1], a[i, start + 2]


@kernel_helper
def store_at(a, i, start, values):
    """Columns start .. start + len(values) − 1 of row i = values."""
    for k in range(len(values)):
        a[i, start + k] = values[k]


@kernel_helper
def is_revolute(S):
    """Whether a joint of motion subspace S = [v; ω] rotates (else it slides)."""
    return S[3] != 0.0 or S[4] != 0.0 or S[5] != 0.0
