"""Forward dynamics by conjugate gradient on M q̈ = τ − b without forming M (Fijany & Scheid,
"Efficient conjugate gradient algorithms for computation of the manipulator forward dynamics"):
CCG (eqs. 5–9) and PCG-DS (eqs. 10–15, preconditioned by diag M).

Each product M p is one Newton–Euler pass with zero velocity and gravity, every vector projected
in one fixed frame (fixed_frame.py), so an iteration costs O(n) and no rotation: the projections
are made once per state. PCG-DS takes diag M from the H_i, K_i recursion (inertia_diagonal.py,
eqs. 64–67), whose forward kinematics are the projections the CG passes then use.

Stopping test: the true relative residual ‖τ − b − M q̈‖ / ‖τ − b‖ ≤ tol. The recursively updated
residual drifts from the true one by rounding, so when it passes the test the true residual is
computed and, if it fails, the iteration restarts from there.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.fixed_frame import (
    ZERO6,
    gravity_acceleration,
    newton_euler,
    newton_euler_workspace,
    velocity_terms,
    world_inertias,
)
from robodyn_ros.dynamics.inertia_diagonal import diagonal_workspace, inertia_diagonal
from robodyn_ros.dynamics.jit import kernel, kernel_helper, routine
from robodyn_ros.dynamics.kinematics import forward_kinematics

# What the caller sets of CCG and PCG-DS (Fijany & Scheid).
CGSettings = namedtuple("CGSettings", (
    "preconditioned",  # PCG-DS, preconditioned by diag M; else CCG
    "warm",            # whether q̈ holds a guess to start from, else q̈ = 0
    "tol",             # stop when ‖τ − b − M q̈‖ / ‖τ − b‖ ≤ tol
    "max_iterations",  # or after this many iterations
))

# The arrays of CCG and PCG-DS (Fijany & Scheid).
CGWorkspace = namedtuple("CGWorkspace", (
    "diagonal",  # the DiagonalWorkspace of diag M, whose X_world and S_world the passes use
    "inertia",   # (n, 10) each body's inertia, world frame
    "v",         # (n, 6) each body's velocity
    "c",         # (n, 6) c_i = v_i × S_i q̇_i
    "bias",      # (n, 6) β_i = v_i ×* I_i v_i − f_ext,i
    "passes",    # the NewtonEulerWorkspace of the Newton–Euler passes
    "rhs",       # (n,) τ − b(q, q̇)
    "diag",      # (n,) the preconditioner's diagonal
    "r",         # (n,) the residual
    "z",         # (n,) the preconditioned residual
    "p",         # (n,) the search direction
    "Mp",        # (n,) M p
))


@kernel_helper
def cg_workspace(n):
    """A CGWorkspace of n links."""
    return CGWorkspace(
        diagonal_workspace(n), np.empty((n, 10)), np.empty((n, 6)), np.empty((n, 6)),
        np.empty((n, 6)), newton_euler_workspace(n), np.empty(n), np.empty(n), np.empty(n),
        np.empty(n), np.empty(n), np.empty(n),
    )


@kernel_helper
def residual(tree, S_world, inertia, rhs, x, r, passes):
    """r = rhs − M x; returns ‖r‖. passes: a NewtonEulerWorkspace."""
    newton_euler(tree, S_world, inertia, x, ZERO6, None, None, r, passes)
    for i in range(r.shape[0]):
        r[i] = rhs[i] - r[i]
    return np.sqrt(np.dot(r, r))


@kernel_helper
def conjugate_gradient(tree, S_world, inertia, rhs, x, diag, settings, ws):
    """Solve M x = rhs by PCG with the preconditioner diag(diag) (all ones: CCG), x holding the
    initial guess, to settings.tol within settings.max_iterations; returns (iterations,
    relative residual)."""
    passes, r, z, p, Mp = ws.passes, ws.r, ws.z, ws.p, ws.Mp
    tol, max_iterations = settings.tol, settings.max_iterations
    scale = np.sqrt(np.dot(rhs, rhs))
    scale = scale if scale > 0.0 else 1.0
    iterations = 0
    relative = residual(tree, S_world, inertia, rhs, x, r, passes) / scale
    while relative > tol and iterations < max_iterations:
        z[:] = r / diag  # eq. 10
        p[:] = z
        rz = np.dot(r, z)
        while iterations < max_iterations:
            newton_euler(tree, S_world, inertia, p, ZERO6, None, None, Mp, passes)
            alpha = rz / np.dot(p, Mp)  # eqs. 7, 13
            x += alpha * p  # eqs. 8, 14
            r -= alpha * Mp  # eqs. 9, 15
            iterations += 1
            if np.sqrt(np.dot(r, r)) <= tol * scale:
                break
            z[:] = r / diag  # eq. 10
            rz_next = np.dot(r, z)
            p *= rz_next / rz  # eqs. 5, 11: β
            p += z  # eqs. 6, 12
            rz = rz_next
        relative = residual(tree, S_world, inertia, rhs, x, r, passes) / scale
    return iterations, relative


@routine
def cg_forward_dynamics(tree, gravity, settings, q, qd, tau, f_ext, qdd, ws):
    """q̈ for one state into qdd (holding the initial guess) by CCG or PCG-DS as `settings`
    (CGSettings) say; returns (iterations, residual). Compiled on its own and called once a
    state: inlined, numba copied its whole body (four Newton–Euler passes and the diagonal of
    M) into the kernel, a third of its compile."""
    X_world, S_world = ws.diagonal.X_world, ws.diagonal.S_world
    inertia, v, c, bias, rhs, diag = ws.inertia, ws.v, ws.c, ws.bias, ws.rhs, ws.diag
    if settings.preconditioned:
        inertia_diagonal(tree, q, diag, ws.diagonal)  # also the projections X_world, S_world
    else:
        forward_kinematics(tree, q, X_world, S_world)
        diag[:] = 1.0
    world_inertias(tree, X_world, inertia)
    velocity_terms(tree, qd, f_ext, X_world, S_world, inertia, v, c, bias)
    # r0 = τ − b, b = g1(q, q̇, 0, f_ext) (Fijany & Scheid eq. 47)
    newton_euler(tree, S_world, inertia, np.zeros(tree.shape[0]), gravity_acceleration(gravity),
                 c, bias, rhs, ws.passes)
    for i in range(tree.shape[0]):
        rhs[i] = tau[i] - rhs[i]
    return conjugate_gradient(tree, S_world, inertia, rhs, qdd, diag, settings, ws)


@kernel
def forward_dynamics_cg(tree: PackedTree, gravity: FloatArray, settings: CGSettings,
                        q: FloatArray, qd: FloatArray, tau: FloatArray, f_ext: FloatArray,
                        qdd: FloatArray, stats: FloatArray) -> None:
    """CCG or PCG-DS as `settings` (CGSettings) say for a batch q, qd, tau (B, n), f_ext
    (B, n, 6), into qdd (B, n): from the q̈ it holds when settings.warm, else from q̈ = 0.
    stats (B, 2) gets the iterations and the relative residual. One signature for every use,
    so the kernel compiles once."""
    B, n = q.shape[0], tree.shape[0]
    if not settings.warm:
        qdd[:, :] = 0.0
    ws = cg_workspace(n)
    for b in range(B):
        stats[b, 0], stats[b, 1] = cg_forward_dynamics(
            tree, gravity, settings, q[b], qd[b], tau[b], f_ext[b], qdd[b], ws,
        )
