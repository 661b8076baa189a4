"""Forward dynamics through the joint constraint forces (constraint_system.py), 𝒜 λ = b
solved iteratively (Sharf & D'Eleuterio): Jacobi (eq. 15), Gauss–Seidel (16), SOR (17),
Chebyshev semi-iteration J-SI and conjugate-gradient-accelerated Jacobi J-CG (Table 1),
stopping when the relative change of λ between two iterates is ≤ tol (§5).
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.constraint_system import (
    LAMBDA_SIZE,
    add5,
    assemble,
    block_times,
    check_masses,
    constraint_forces_of,
    diagonal_product,
    joint_accelerations,
    lift,
    project,
    system_workspace,
    transposed_block_times,
)
from robodyn_ros.dynamics.jit import kernel, kernel_helper, routine
from robodyn_ros.dynamics.linalg import invert_spd
from robodyn_ros.dynamics.spatial import add6, matrix_times, scale6, store, vector6

JACOBI, GAUSS_SEIDEL, SOR, JACOBI_SI, JACOBI_CG = 0, 1, 2, 3, 4
POWER_STEPS = 50  # power iterations of the estimate of ρ(B)

# What the caller sets of an iterative solve of 𝒜 λ = b (Sharf & D'Eleuterio §5, Table 1).
IterationSettings = namedtuple("IterationSettings", (
    "scheme",           # JACOBI (eq. 15), GAUSS_SEIDEL (16), SOR (17), JACOBI_SI or JACOBI_CG
    "warm",             # whether q̈ holds a guess to start from (its constraint forces), else λ = 0
    "tol",              # stop when ‖f⁽ⁱ⁾ − f⁽ⁱ⁻¹⁾‖ / ‖f⁽ⁱ⁾‖ ≤ tol (§5)
    "max_iterations",   # or after this many sweeps
    "omega",            # SOR's ω; NaN: Young's optimum (solve_iteratively)
    "spectral_radius",  # μ̄, the spectral radius of the Jacobi iteration; NaN: estimated
))

# The parameters of a stationary iteration in use, the settings' NaNs resolved
# (solve_iteratively): SOR's ω, the extrapolation γ of the Jacobi step (Hageman & Young) and
# the spectral radius μ̄ of the Chebyshev semi-iteration J-SI (Table 1).
Relaxation = namedtuple("Relaxation", ("omega", "gamma", "mu"))

# One sweep's update (sweep): out_i = ω J_i + (1 − ω) previous_i, the block-Jacobi step J_i
# extrapolated by γ, in place (Gauss–Seidel, SOR) or into another array (Jacobi, J-SI).
Step = namedtuple("Step", ("omega", "gamma", "in_place"))


@routine
def family_sums(ws, x, psi, sigma):
    """For each body p with several children, psi_p (n x 5) = Σ 𝒜_{p,c} x_c over its children
    c but the first (p + 1) and sigma_p (n x 6) = Σ W_c x_c over all its children."""
    house, pivot, Ao, parent, branching = ws.house, ws.pivot, ws.Ao, ws.parent, ws.branching
    n = x.shape[0]
    for p in range(n):
        if branching[p]:
            psi[p, :] = 0.0
            sigma[p, :] = 0.0
    for c in range(n):
        p = parent[c]
        if p >= 0 and branching[p]:
            store(sigma, p, add6(vector6(sigma, p), lift(house, pivot, c, x)))
            if c != p + 1:
                Ax = block_times(Ao, c - 1, x, c)
                for r in range(LAMBDA_SIZE):
                    psi[p, r] += Ax[r]


@routine
def siblings_times(Phi, house, pivot, x, i, p, sigma):
    """Σ 𝒜_is x_s over the siblings s of joint i (parent p with several children):
    W_iᵀ Φ_p (σ_p − W_i x_i), σ_p = Σ W_c x_c over p's children (family_sums). Only rows
    on a branching body take it, so it is compiled once and called, not inlined into every
    sweep."""
    g = add6(vector6(sigma, p), scale6(-1.0, lift(house, pivot, i, x)))
    return project(house, pivot, i, matrix_times(Phi, p, g))


@routine
def add_lifted(sigma, p, house, pivot, i, x, sign):
    """σ_p += sign W_i x_i: a Gauss–Seidel or SOR sweep keeps σ_p on the new iterate."""
    store(sigma, p, add6(vector6(sigma, p), scale6(sign, lift(house, pivot, i, x))))


@kernel_helper
def block_product(ws, x, out, iw):
    """out = 𝒜 x: sweep's pass over the rows with 𝒜's diagonal blocks; iw from
    iteration_workspace."""
    sweep(ws, ws.Ad, x, x, x, Step(1.0, 1.0, False), out, iw, True)


@kernel_helper
def sweep(ws, D, b, source, previous, step, out, iw, product):
    """out_i = ω J_i + (1 − ω) previous_i, J_i = γ 𝒜_ii⁻¹ (b_i − Σ_{j ≠ i} 𝒜_ij s_j)
    + (1 − γ) s_i, s = source, D[i] = 𝒜_ii⁻¹, ω, γ and whether in place from `step` (a Step),
    in index order (parents before children); returns (‖out − source‖², ‖out‖²). Jacobi
    (eq. 15): ω = 1, out apart from source; Gauss–Seidel (16) and SOR (17): γ = 1, in place,
    source, previous and out the same array, so a parent's and the earlier siblings' s_j are
    already the new iterate (the children's come later: their products are taken before the
    sweep); J-SI (Table 1): previous = f⁽ⁱ⁻¹⁾ and ω = ρ̄. γ ≠ 1 extrapolates the Jacobi step
    (jacobi_extrapolation).
    When `product` (block_product), out_i = D_i s_i + Σ_{j ≠ i} 𝒜_ij s_j instead, D = 𝒜's
    diagonal blocks. The row sums: the first child's 𝒜_{i,i+1} s_{i+1}, the other children's
    psi_i, the parent's 𝒜_{i,p} s_p = 𝒜_{p,i}ᵀ s_p and the siblings' (siblings_times), are
    written in the loop: the same sums in an inlined helper of their own, branches and all,
    made a chain's sweep several times slower (most likely its array arguments,
    reference-counted at every row). iw from iteration_workspace."""
    house, pivot, Ao, parent, branching = ws.house, ws.pivot, ws.Ao, ws.parent, ws.branching
    t, psi, sigma = iw.t, iw.psi, iw.sigma
    omega, gamma, in_place = step.omega, step.gamma, step.in_place
    n = source.shape[0]
    if ws.any_branching[0]:
        family_sums(ws, source, psi, sigma)
    change = norm = 0.0
    for i in range(n):
        off = (0.0, 0.0, 0.0, 0.0, 0.0)
        if i + 1 < n and parent[i + 1] == i:
            off = block_times(Ao, i, source, i + 1)
        if branching[i]:
            off = add5(off, (psi[i, 0], psi[i, 1], psi[i, 2], psi[i, 3], psi[i, 4]))
        p = parent[i]
        if p >= 0:
            off = add5(off, transposed_block_times(Ao, i - 1, source, p))
            if branching[p]:
                off = add5(off, siblings_times(ws.Phi, house, pivot, source, i, p, sigma))
        if product:
            store(out, i, add5(block_times(D, i, source, i), off))
            continue
        for r in range(LAMBDA_SIZE):
            t[0, r] = b[i, r] - off[r]
        jacobi = block_times(D, i, t, 0)
        shared = in_place and p >= 0 and branching[p]
        if shared:  # σ_p follows the new iterate of i
            add_lifted(sigma, p, house, pivot, i, source, -1.0)
        for r in range(LAMBDA_SIZE):
            extrapolated = gamma * jacobi[r] + (1.0 - gamma) * source[i, r]
            new = omega * extrapolated + (1.0 - omega) * previous[i, r]
            change += (new - source[i, r]) ** 2
            norm += new * new
            out[i, r] = new
        if shared:
            add_lifted(sigma, p, house, pivot, i, out, 1.0)
    return change, norm


@kernel_helper
def relative(change, norm):
    """‖f⁽ⁱ⁾ − f⁽ⁱ⁻¹⁾‖ / ‖f⁽ⁱ⁾‖ from the squares (Sharf & D'Eleuterio §5)."""
    if norm > 0.0:
        return np.sqrt(change / norm)
    return 0.0 if change == 0.0 else np.inf


@kernel_helper
def extreme_eigenvalue(ws, Dinv, shift, iw):
    """An eigenvalue of D⁻¹𝒜 at an end of its spectrum, the one farthest from `shift`: the
    Rayleigh quotient yᵀ𝒜y / yᵀDy after POWER_STEPS power iterations y ← (D⁻¹𝒜 − shift) y
    (an inner bound: the largest from below, the smallest from above)."""
    y, Ay, Dy = iw.r, iw.r_previous, iw.z  # free before an iteration starts
    y[:, :] = 1.0
    estimate = 0.0
    for _ in range(POWER_STEPS):
        block_product(ws, y, Ay, iw)
        diagonal_product(ws.Ad, y, Dy)
        estimate = np.sum(y * Ay) / np.sum(y * Dy)
        for i in range(y.shape[0]):
            DAy = block_times(Dinv, i, Ay, i)
            for r in range(LAMBDA_SIZE):
                y[i, r] = DAy[r] - shift * y[i, r]
        y /= np.sqrt(np.sum(y * y))
    return estimate


@kernel_helper
def jacobi_extrapolation(ws, Dinv, mu, iw):
    """(γ, μ̄): the extrapolation γ of the block-Jacobi step and the spectral radius μ̄ of its
    iteration matrix 1 − γ D⁻¹𝒜 (Hageman & Young's extrapolated Jacobi method), from the ends
    λ_min, λ_max of the spectrum of D⁻¹𝒜: γ = 2 / (λ_min + λ_max),
    μ̄ = (λ_max − λ_min) / (λ_max + λ_min). Without a body with several children (chains) 𝒜 is
    consistently ordered, the eigenvalues of D⁻¹𝒜 are 1 ± μ, so γ = 1 (the plain Jacobi step)
    and μ̄ = λ_max − 1 = ρ(B); μ̄ given (not NaN) is taken as that. With sibling joints coupled
    through their parent's Φ, λ_max may pass 2 (ρ(B) > 1: plain Jacobi diverges) and λ_min
    needs its own estimate. μ̄ is kept below 1."""
    if not np.isnan(mu):
        return 1.0, mu
    high = extreme_eigenvalue(ws, Dinv, 0.0, iw)
    if not ws.any_branching[0]:
        return 1.0, min(max(high - 1.0, 0.0), 1.0 - 1e-12)
    low = extreme_eigenvalue(ws, Dinv, high, iw)
    return 2.0 / (low + high), min(max((high - low) / (high + low), 0.0), 1.0 - 1e-12)


# The arrays of the iterative solvers of 𝒜 λ = b (Sharf & D'Eleuterio eqs. 15–17, Table 1).
IterationWorkspace = namedtuple("IterationWorkspace", (
    "Dinv",        # (n, 5, 5) 𝒜_ii⁻¹, the block-Jacobi preconditioner D⁻¹
    "previous",    # (n, 5) f⁽ⁱ⁻¹⁾
    "r",           # (n, 5) the residual b − 𝒜 f (J-CG); the power iterate y before
    "r_previous",  # (n, 5) r⁽ⁱ⁻¹⁾ (J-CG); 𝒜 y before
    "z",           # (n, 5) D⁻¹ r (J-CG); D y before
    "Az",          # (n, 5) 𝒜 z (J-CG)
    "t",           # (5, 5) a row's b_i − Σ_j 𝒜_ij s_j in its first row; Gauss–Jordan's scratch
    "psi",         # (n, 5) ψ_p = Σ 𝒜_{p,c} x_c over p's children but the first
    "sigma",       # (n, 6) σ_p = Σ W_c x_c over p's children
))


@kernel_helper
def iteration_workspace(n):
    """An IterationWorkspace of n links."""
    forces = (n, LAMBDA_SIZE)
    return IterationWorkspace(
        np.empty((n, LAMBDA_SIZE, LAMBDA_SIZE)), np.empty(forces), np.empty(forces),
        np.empty(forces), np.empty(forces), np.empty(forces),
        np.empty((LAMBDA_SIZE, LAMBDA_SIZE)), np.empty(forces), np.empty((n, 6)),
    )


@kernel_helper
def stationary(ws, Dinv, b, x, settings, relaxation, iw):
    """Jacobi, Gauss–Seidel, SOR or J-SI (settings.scheme) from x with the ω, γ and μ̄ of
    `relaxation` (the Jacobi steps extrapolated by γ), to settings.tol within
    settings.max_iterations; returns (iterations, relative change, x)."""
    scheme, mu, gamma = settings.scheme, relaxation.mu, relaxation.gamma
    previous = iw.previous
    previous[:, :] = x
    rho = 1.0
    change = np.inf
    iterations = 0
    while change > settings.tol and iterations < settings.max_iterations:
        iterations += 1
        if scheme == JACOBI:
            squares = sweep(ws, Dinv, b, x, x, Step(1.0, gamma, False), previous, iw, False)
            x, previous = previous, x
        elif scheme == JACOBI_SI:  # Table 1: ρ̄_1 = 1, ρ̄_2 = (1 − μ̄²/2)⁻¹, ρ̄ = (1 − μ̄²ρ̄/4)⁻¹
            rho = 1.0 if iterations == 1 else 1.0 / (
                1.0 - (0.5 if iterations == 2 else 0.25 * rho) * mu * mu)
            squares = sweep(ws, Dinv, b, x, previous, Step(rho, gamma, False), previous, iw,
                            False)
            x, previous = previous, x
        else:  # Gauss–Seidel (ω = 1) and SOR
            squares = sweep(ws, Dinv, b, x, x, Step(relaxation.omega, 1.0, True), x, iw, False)
        change = relative(squares[0], squares[1])
    return iterations, change, x


@kernel_helper
def jacobi_cg(ws, Dinv, b, x, settings, iw):
    """J-CG in Table 1's three-term form: z = D⁻¹(b − 𝒜 f), γ = (z, Dz)/(z, 𝒜z),
    ρ_{i+1} = (1 − (γ_{i+1}/γ_i) ((z⁽ⁱ⁾, Dz⁽ⁱ⁾)/(z⁽ⁱ⁻¹⁾, Dz⁽ⁱ⁻¹⁾)) / ρ_i)⁻¹,
    f⁽ⁱ⁺¹⁾ = ρ (f⁽ⁱ⁾ + γ z) + (1 − ρ) f⁽ⁱ⁻¹⁾, to settings.tol within settings.max_iterations;
    returns (iterations, relative change, x)."""
    previous, r, r_previous, z, Az = iw.previous, iw.r, iw.r_previous, iw.z, iw.Az
    block_product(ws, x, Az, iw)
    r[:, :] = b - Az
    previous[:, :] = x
    r_previous[:, :] = r
    rho = gamma = zDz = 1.0
    change = np.inf
    iterations = 0
    while change > settings.tol and iterations < settings.max_iterations:
        for i in range(x.shape[0]):
            store(z, i, block_times(Dinv, i, r, i))
        block_product(ws, z, Az, iw)
        zDz_next = np.sum(z * r)
        if zDz_next == 0.0:  # the exact answer already
            change = 0.0
            break
        gamma_next = zDz_next / np.sum(z * Az)
        rho = 1.0 if iterations == 0 else 1.0 / (1.0 - gamma_next / gamma * zDz_next / zDz / rho)
        gamma, zDz = gamma_next, zDz_next
        # previous becomes f⁽ⁱ⁺¹⁾, r_previous r⁽ⁱ⁺¹⁾ = ρ (r − γ 𝒜z) + (1 − ρ) r⁽ⁱ⁻¹⁾
        previous *= 1.0 - rho
        previous += rho * (x + gamma * z)
        r_previous *= 1.0 - rho
        r_previous += rho * (r - gamma * Az)
        change = relative(np.sum((previous - x) ** 2), np.sum(previous * previous))
        x, previous = previous, x
        r, r_previous = r_previous, r
        iterations += 1
    return iterations, change, x


@kernel_helper
def solve_iteratively(settings, ws, iw):
    """λ (in ws, holding the initial guess) by the scheme of `settings` (IterationSettings);
    returns (iterations, relative change). ω NaN: Young's optimum 2 / (1 + √(1 − μ̄²)) (exact
    for a consistently ordered 𝒜, a chain; on a tree from the μ̄ of the extrapolated Jacobi
    method); μ̄ NaN: its estimate (jacobi_extrapolation), which Jacobi needs only on a tree
    with branches."""
    Ad, b, lam = ws.Ad, ws.b, ws.lam
    Dinv = iw.Dinv
    scheme, omega, mu = settings.scheme, settings.omega, settings.spectral_radius
    for i in range(b.shape[0]):
        invert_spd(Ad[i], Dinv[i], iw.t)
    if scheme == JACOBI_CG:
        iterations, change, x = jacobi_cg(ws, Dinv, b, lam, settings, iw)
    else:
        gamma = 1.0
        needs_mu = ((scheme == SOR and np.isnan(omega)) or scheme == JACOBI_SI
                    or (scheme == JACOBI and ws.any_branching[0]))
        if needs_mu:
            gamma, mu = jacobi_extrapolation(ws, Dinv, mu, iw)
        if scheme == SOR and np.isnan(omega):
            omega = 2.0 / (1.0 + np.sqrt(1.0 - mu * mu))
        if scheme != SOR:
            omega = 1.0
        iterations, change, x = stationary(ws, Dinv, b, lam, settings,
                                           Relaxation(omega, gamma, mu), iw)
    lam[:, :] = x
    return iterations, change


@kernel
def forward_dynamics_constraint_forces(tree: PackedTree, gravity: FloatArray,
                                       settings: IterationSettings, q: FloatArray,
                                       qd: FloatArray, tau: FloatArray, f_ext: FloatArray,
                                       qdd: FloatArray, stats: FloatArray) -> None:
    """q̈ (B, n) into qdd by an iterative solve of the constraint forces for a batch q, qd, tau
    (B, n), f_ext (B, n, 6), as `settings` (IterationSettings) say: from the constraint forces
    of the q̈ that qdd holds when settings.warm, else from λ = 0. stats (B, 2): iterations,
    relative change. One signature for every use, so the kernel compiles once."""
    check_masses(tree)
    B, n = q.shape[0], tree.shape[0]
    ws, iw = system_workspace(n), iteration_workspace(n)
    for b in range(B):
        a_root = assemble(tree, gravity, q[b], qd[b], tau[b], f_ext[b], ws)
        if settings.warm:
            constraint_forces_of(tree, qdd[b], a_root, ws)
        else:
            ws.lam[:, :] = 0.0
        stats[b, 0], stats[b, 1] = solve_iteratively(settings, ws, iw)
        joint_accelerations(ws.lam, ws.c, a_root, ws, qdd[b])
