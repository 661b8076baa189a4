"""A controlled robot rolled out over many fixed time steps in one kernel: the control law,
the integrator and the articulated-body algorithm, with the joint damping, smoothed Coulomb
friction and limits of sim.SimulatedRobot, step for step as SimulatedRobot and the controller
plugins compute them in Python.

Each step k: τ_cmd = the control law at (q_k, q̇_k) every `control_every` steps, the last
command in between (a controller running at a lower rate); the applied effort clip(τ_cmd,
±effort limit) is held over the step; q̈ = ABA(q, q̇, τ − d q̇ − f tanh(q̇/ε)) is integrated by
semi-implicit Euler or RK4; then velocities are clipped to their limits and a joint past a
position limit is put back on it with its outward velocity zeroed. At a step where the
operational-space law ran, the integrator's first q̈ is M⁻¹ (τ − d q̇ − f tanh(q̇/ε) − b) from
the law's own factor of M and b instead of one more ABA at the same state. The pose of the
task frame at q_k comes from what step k computed there anyway: the law's kinematics where
the operational-space law ran or the step is a sample, else the first integrator stage's ABA.
At the samples (every sample_every steps and the last) the law's kinematics also give the
energy ½ q̇ᵀ M q̇ + V and J's Gram matrix, whose smallest eigenvalue over the samples the
rollout returns as a singular value.

Control laws (`law`):

- TORQUE: τ_cmd = reference[k, 0], an open-loop profile.
- JOINT_TRACKING: τ_cmd = K (q* − q) − D (q̇ − q̇*) + RNEA(q, q̇, q̈*), joint impedance with
  the inverse-dynamics feed-forward M q̈* + C q̇ + g; reference[k] = (q*, q̇*, q̈*)
  (control.joint_impedance).
- OPERATIONAL_SPACE: Khatib's τ = Jᵀ (Λ ẍ* + μ + p) + Nᵀ (τ₀ + b)
  (control.operational_space_controller), evaluated as the equal
  τ = b + τ₀ + Jᵀ Λ (ẍ* − J̇ q̇ − J M⁻¹ τ₀), since μ + p = J̄ᵀ b − Λ J̇ q̇
  and J̄ᵀ = Λ J M⁻¹; ẍ* = Kp e − Kd J q̇, e = [p* − p; log(R* Rᵀ)], τ₀ = K₀ (q₀ − q) − D₀ q̇,
  Λ damped near singularities as Robot.operational_space damps it. M comes from the CRBA
  on the law's world-axes kinematics, factored M = L Lᵀ: Λ⁻¹ = (L⁻¹ Jᵀ)ᵀ (L⁻¹ Jᵀ) and
  J M⁻¹ τ₀ = (L⁻¹ Jᵀ)ᵀ (L⁻¹ τ₀), forward substitutions only.
"""

import math
from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.fixed_frame import joint_forces, world_inertias
from robodyn_ros.dynamics.forward_dynamics import aba_one, aba_workspace
from robodyn_ros.dynamics.inertia_matrix import composite_inertia_matrix, crba_workspace
from robodyn_ros.dynamics.inverse_dynamics import rnea, rnea_workspace
from robodyn_ros.dynamics.jit import kernel_helper, long_kernel
from robodyn_ros.dynamics.kinematics import (
    forward_kinematics,
    frame_jacobian_into,
    frame_pose_into,
)
from robodyn_ros.dynamics.linalg import (
    cholesky,
    cholesky_solve,
    forward_substitute,
    inverse_trace,
)
from robodyn_ros.dynamics.rotation import log_so3
from robodyn_ros.dynamics.spatial import (
    add6,
    inertia_at,
    inertia_times,
    motion_cross_force,
    store,
    vector6,
)
from robodyn_ros.dynamics.task_space import (
    classical_acceleration_into,
    damped_task_inertia,
    velocity_product_accelerations,
)
from robodyn_ros.dynamics.tree import FRAME_BODY, parent_of

TORQUE, JOINT_TRACKING, OPERATIONAL_SPACE = 0, 1, 2
SEMI_IMPLICIT_EULER, RK4 = 0, 1

# rows of the (6, n) joint-property array
LOWER, UPPER, VELOCITY_LIMIT, EFFORT_LIMIT, DAMPING, FRICTION = range(6)
# rows of the (3, n) joint gains: K, D and the rest posture q₀ (operational space: K₀, D₀, q₀)
STIFFNESS, JOINT_DAMPING, REST = range(3)
# rows of the (2, 6) task gains
KP, KD = range(2)

# RK4 stage s (semi-implicit Euler: s = 0 alone): k_q = QD[s], k_v = QDD[s] = ABA(Q, QD, TAU)[s]
IntegratorWorkspace = namedtuple("IntegratorWorkspace", "aba Q QD TAU QDD")
IntegratorWorkspace.__doc__ = """The integrator's arrays: a one-lane AbaWorkspace, and the stages'
positions Q, velocities QD, applied efforts TAU and accelerations QDD (4 x n each)."""

# Khatib 1987: τ = b + τ₀ + Jᵀ Λ (ẍ* − J̇ q̇ − J M⁻¹ τ₀), Λ⁻¹ = J M⁻¹ Jᵀ, M = L_M L_Mᵀ
ControlWorkspace = namedtuple("ControlWorkspace", [
    "crba", "M", "L_M", "rnea", "b", "tau0", "v", "a", "J", "Jdot_qd", "frame_pose", "Lambda",
    "task_inertia_info", "Linv_JT", "Lambda_inv", "L_Lambda_inv", "task_force", "rotation_error",
    "Linv_tau0"])
ControlWorkspace.__doc__ = """What the control laws need: the CRBA's and RNEA's workspaces, M, its
Cholesky factor L_M, b = C q̇ + g, τ₀, the bodies' world velocities v and accelerations a at
q̈ = 0, J, J̇ q̇, the frame's pose, Λ, damped_task_inertia's info, L_M⁻¹ Jᵀ, Λ⁻¹, its Cholesky
factor L_Lambda_inv, the task force (built up from the pose error), R* Rᵀ and L_M⁻¹ τ₀."""


@kernel_helper
def stage_torques(joints, friction_velocity, tau, QD, TAU, s):
    """TAU[s] = τ − d q̇ − f tanh(q̇/ε) at the stage velocity q̇ = QD[s]: the applied effort
    with damping and smoothed friction."""
    for i in range(tau.shape[0]):
        TAU[s, i] = (tau[i] - joints[DAMPING, i] * QD[s, i]
                     - joints[FRICTION, i] * math.tanh(QD[s, i] / friction_velocity))


@kernel_helper
def integrator_workspace(n):
    """An IntegratorWorkspace: the RK4 stages as batches of four states, QD = k_q and
    QDD = k_v. Stage s is state s of the batch, so each stage's ABA is a call of the aba_one
    routine with no array view made: numba counts a reference to each array an inlined ABA
    takes, an atomic add and subtract, 15 of each a stage."""
    return IntegratorWorkspace(aba=aba_workspace(n, 1), Q=np.empty((4, n)), QD=np.empty((4, n)),
                               TAU=np.empty((4, n)), QDD=np.empty((4, n)))


@kernel_helper
def start_stages(q, qd, workspace):
    """The step's first stage, (q, q̇), into Q[0] and QD[0] of the workspace."""
    Q, QD = workspace.Q, workspace.QD
    for i in range(q.shape[0]):
        Q[0, i], QD[0, i] = q[i], qd[i]


@kernel_helper
def acceleration_from_factor(joints, friction_velocity, L, b, tau, workspace):
    """The first stage's q̈ = M⁻¹ (τ − d q̇ − f tanh(q̇/ε) − b) at a state where M = L Lᵀ
    (L from cholesky) and b = C q̇ + g are known (from the operational-space law), without
    an ABA: into QDD[0] of the workspace, whose QD[0] holds q̇."""
    QD, TAU, QDD = workspace.QD, workspace.TAU, workspace.QDD
    stage_torques(joints, friction_velocity, tau, QD, TAU, 0)
    for i in range(tau.shape[0]):
        QDD[0, i] = TAU[0, i] - b[i]
    cholesky_solve(L, QDD[0])


@kernel_helper
def integrate(tree, gravity, joints, friction_velocity, integrator, dt, q, qd, tau, workspace,
              start_known, frame, pose):
    """(q, q̇) advanced in place by one step of `integrator` under the held effort τ, from
    the stages set up by start_stages; where start_known, QDD[0] already holds q̈ at
    (q, q̇), else the first stage's ABA, at q, leaves the frame's pose in `pose` (4 x 4)."""
    aba_ws, Q, QD = workspace.aba, workspace.Q, workspace.QD
    TAU, QDD = workspace.TAU, workspace.QDD
    n = q.shape[0]
    for s in range(1 if start_known else 0, 1 if integrator == SEMI_IMPLICIT_EULER else 4):
        h = dt if s == 3 else 0.5 * dt  # RK4's stages at t, t + dt/2, t + dt/2, t + dt
        if s > 0:  # stage 0 is (q, q̇), set by start_stages
            for i in range(n):
                Q[s, i] = q[i] + h * QD[s - 1, i]
                QD[s, i] = qd[i] + h * QDD[s - 1, i]
        stage_torques(joints, friction_velocity, tau, QD, TAU, s)
        aba_one(tree, gravity, Q, QD, TAU, None, QDD, s, aba_ws)
        if s == 0:
            frame_pose_into(aba_ws.X_world[0], frame, pose)  # the ABA's world poses at q
    if integrator == SEMI_IMPLICIT_EULER:  # q̇ₖ₊₁ = q̇ₖ + dt a(qₖ, q̇ₖ), qₖ₊₁ = qₖ + dt q̇ₖ₊₁
        for i in range(n):
            qd[i] += dt * QDD[0, i]
            q[i] += dt * qd[i]
        return
    for i in range(n):  # classical fourth-order Runge–Kutta on (q̇, q̈)
        q[i] += dt / 6.0 * (QD[0, i] + 2.0 * QD[1, i] + 2.0 * QD[2, i] + QD[3, i])
        qd[i] += dt / 6.0 * (QDD[0, i] + 2.0 * QDD[1, i] + 2.0 * QDD[2, i] + QDD[3, i])


@kernel_helper
def enforce_limits(joints, q, qd, clamped):
    """Velocities clipped to ±limit; a joint past a position limit is put on it with its
    outward velocity zeroed, and counted in `clamped`."""
    for i in range(q.shape[0]):
        qd[i] = min(max(qd[i], -joints[VELOCITY_LIMIT, i]), joints[VELOCITY_LIMIT, i])
        if q[i] > joints[UPPER, i]:
            q[i], qd[i] = joints[UPPER, i], min(qd[i], 0.0)
            clamped[i] += 1
        elif q[i] < joints[LOWER, i]:
            q[i], qd[i] = joints[LOWER, i], max(qd[i], 0.0)
            clamped[i] += 1


@kernel_helper
def control_workspace(tree, n):
    """A ControlWorkspace for n joints."""
    return ControlWorkspace(
        crba=crba_workspace(tree, n), M=np.empty((n, n)), L_M=np.empty((n, n)),
        rnea=rnea_workspace(n), b=np.empty(n), tau0=np.empty(n), v=np.empty((n, 6)),
        a=np.empty((n, 6)), J=np.empty((6, n)), Jdot_qd=np.empty(6), frame_pose=np.empty((4, 4)),
        Lambda=np.empty((6, 6)), task_inertia_info=np.empty(2), Linv_JT=np.empty((n, 6)),
        Lambda_inv=np.empty((6, 6)), L_Lambda_inv=np.empty((6, 6)), task_force=np.empty(6),
        rotation_error=np.empty((3, 3)), Linv_tau0=np.empty((n, 1)),
    )


@kernel_helper
def world_bias_forces(tree, gravity, S_world, inertias, v, a, f, b):
    """b = C q̇ + g by RNEA (RBDA Table 5.1) in world axes about the world origin, from the
    bodies' world inertias (n x 10, world_inertias), the velocities v and the accelerations
    at q̈ = 0 a (n x 6, velocity_product_accelerations): f_i = I_i (a_i − a_g) + v_i ×* I_i
    v_i, each body's f added to its parent's without a transform, b_i = S_iᵀ f_i (the
    fixed-frame Newton–Euler's backward pass). f (n x 6) is a workspace."""
    for i in range(b.shape[0]):
        inertia = inertia_at(inertias, i)
        v_i = vector6(v, i)
        a_i = (a[i, 0] - gravity[0], a[i, 1] - gravity[1], a[i, 2] - gravity[2], a[i, 3],
               a[i, 4], a[i, 5])  # the base accelerating upwards at g
        store(f, i, add6(inertia_times(inertia, a_i),
                         motion_cross_force(v_i, inertia_times(inertia, v_i))))
    joint_forces(tree, S_world, f, b)







@kernel_helper
def task_inertia_times(Lambda_inv, threshold, x, L, Lambda, info):
    """x ← Λ x. Where every eigenvalue of Λ⁻¹ is above shift = threshold·trace(Λ⁻¹), so above
    threshold · s_max, Λ is the exact inverse (a Cholesky solve); otherwise Λ comes from
    damped_task_inertia, as Robot.operational_space damps it. The factor of Λ⁻¹ settles it
    where its smallest eigenvalue, at least 1 / trace(Λ), is above shift; elsewhere the
    Cholesky of Λ⁻¹ − shift·1 does (into Lambda, free until damped_task_inertia)."""
    shift = threshold * np.trace(Lambda_inv)
    if cholesky(Lambda_inv, 0.0, L) and (
            inverse_trace(L, Lambda) * shift < 1.0 or cholesky(Lambda_inv, shift, Lambda)):
        cholesky_solve(L, x)
        return
    damped_task_inertia(Lambda_inv, threshold, threshold, Lambda, info)
    x[:] = Lambda @ x


@kernel_helper
def task_inverse_inertia(J, L, LinvJT, Lambda_inv):
    """L⁻¹ Jᵀ (n x 6) and Λ⁻¹ = J M⁻¹ Jᵀ = (L⁻¹ Jᵀ)ᵀ (L⁻¹ Jᵀ) (6 x 6), M = L Lᵀ (cholesky)."""
    n = J.shape[1]
    for i in range(n):
        for r in range(6):
            LinvJT[i, r] = J[r, i]
    forward_substitute(L, LinvJT)
    for r in range(6):
        for c in range(r + 1):
            s = 0.0
            for j in range(n):
                s += LinvJT[j, r] * LinvJT[j, c]
            Lambda_inv[r, c] = Lambda_inv[c, r] = s


@kernel_helper
def task_frame_state(tree, gravity, frame, q, qd, cw):
    """What the operational-space law and the samples take from the state (q, q̇), into cw:
    the world kinematics, the frame's pose, J and J̇ q̇, b = C q̇ + g, and M by the CRBA, which
    leaves the composite inertias in the CRBA workspace."""
    crba_ws, M, rnea_ws, b, v, a = cw.crba, cw.M, cw.rnea, cw.b, cw.v, cw.a
    J, Jdot_qd, pose = cw.J, cw.Jdot_qd, cw.frame_pose
    end, X_world, S_world = crba_ws.subtree_end, crba_ws.X_world, crba_ws.S_world
    inertias, F = crba_ws.Ic, crba_ws.F
    forward_kinematics(tree, q, X_world, S_world)
    body = int(frame[FRAME_BODY])
    frame_pose_into(X_world, frame, pose)
    frame_jacobian_into(tree, S_world, body, pose[:3, 3], J)
    velocity_product_accelerations(tree, S_world, qd, v, a)
    classical_acceleration_into(v, a, body, (pose[0, 3], pose[1, 3], pose[2, 3]), Jdot_qd)
    world_inertias(tree, X_world, inertias)
    world_bias_forces(tree, gravity, S_world, inertias, v, a, rnea_ws.f, b)
    composite_inertia_matrix(tree, S_world, end, inertias, F, M)


@kernel_helper
def mechanical_energy(tree, gravity, qd, M, composite):
    """T + V = ½ q̇ᵀ M q̇ − gᵀ Σᵢ mᵢ cᵢ, the first moments Σᵢ mᵢ cᵢ summed in the composite
    inertias (n x 10, world axes) of the root bodies (as energy.py's, V zero for every centre of
    mass at the height of the world origin)."""
    n = qd.shape[0]
    energy = 0.0
    for i in range(n):
        for j in range(n):
            energy += 0.5 * qd[i] * M[i, j] * qd[j]
        if parent_of(tree, i) < 0:
            energy -= (gravity[0] * composite[i, 1] + gravity[1] * composite[i, 2]
                       + gravity[2] * composite[i, 3])
    return energy


@kernel_helper
def store_gram(J, out):
    """out = J Jᵀ or Jᵀ J, whichever is the smaller (m x m, m = min(rows, columns) of J): its
    eigenvalues are the squared singular values of J."""
    rows, columns = J.shape
    wide = rows <= columns
    m, inner = (rows, columns) if wide else (columns, rows)
    for r in range(m):
        for c in range(r + 1):
            s = 0.0
            for k in range(inner):
                s += J[r, k] * J[c, k] if wide else J[k, r] * J[k, c]
            out[r, c] = out[c, r] = s


@kernel_helper
def smallest_singular_value(grams, L):
    """min over s of σ_min(J_s) = √λ_min(G_s), G_s (S x m x m) from store_gram. Only the grams
    that a Cholesky of G_s − λ·1 cannot place above the lowest λ_min found so far are solved by
    eigvalsh, in the order of an upper bound on λ_min, the smallest pivot of their Cholesky
    (every pivot is at least λ_min by interlacing); L (m x m) is a workspace."""
    count, m = grams.shape[0], grams.shape[1]
    bound = np.zeros(count)
    for s in range(count):
        if cholesky(grams[s], 0.0, L):
            bound[s] = np.inf
            for j in range(m):
                bound[s] = min(bound[s], 1.0 / (L[j, j] * L[j, j]))
    lowest = np.inf
    for s in np.argsort(bound):
        if lowest == np.inf or not cholesky(grams[s], lowest, L):
            lowest = min(lowest, np.linalg.eigvalsh(grams[s])[0])
    return math.sqrt(max(lowest, 0.0))


@kernel_helper
def operational_space_torque(joint_gains, task_gains, target, threshold, q, qd, tau, cw):
    """Khatib's operational-space law (module docstring) into tau, after task_frame_state at
    (q, q̇)."""
    M, L_M, b, tau0, J, Jdot_qd = cw.M, cw.L_M, cw.b, cw.tau0, cw.J, cw.Jdot_qd
    pose, Lambda, info, LinvJT = cw.frame_pose, cw.Lambda, cw.task_inertia_info, cw.Linv_JT
    Lambda_inv, L, task, rotation = cw.Lambda_inv, cw.L_Lambda_inv, cw.task_force, cw.rotation_error
    Linv_tau0 = cw.Linv_tau0
    n = q.shape[0]
    if not cholesky(M, 0.0, L_M):
        raise ValueError("the joint-space inertia matrix is not positive definite")
    task_inverse_inertia(J, L_M, LinvJT, Lambda_inv)
    for i in range(n):
        tau0[i] = (joint_gains[STIFFNESS, i] * (joint_gains[REST, i] - q[i])
                   - joint_gains[JOINT_DAMPING, i] * qd[i])
        Linv_tau0[i, 0] = tau0[i]
    forward_substitute(L_M, Linv_tau0)
    for r in range(3):
        task[r] = target[9 + r] - pose[r, 3]
        for c in range(3):
            rotation[r, c] = (target[3 * r] * pose[c, 0] + target[3 * r + 1] * pose[c, 1]
                              + target[3 * r + 2] * pose[c, 2])  # R* Rᵀ
    task[3], task[4], task[5] = log_so3(rotation)
    for r in range(6):  # ẍ* − J̇ q̇ − J M⁻¹ τ₀ = Kp e − Kd J q̇ − J̇ q̇ − (L⁻¹ Jᵀ)ᵀ L⁻¹ τ₀
        s = task_gains[KP, r] * task[r] - Jdot_qd[r]
        for j in range(n):
            s -= task_gains[KD, r] * J[r, j] * qd[j] + LinvJT[j, r] * Linv_tau0[j, 0]
        task[r] = s
    task_inertia_times(Lambda_inv, threshold, task, L, Lambda, info)
    for i in range(n):
        s = b[i] + tau0[i]
        for r in range(6):
            s += J[r, i] * task[r]
        tau[i] = s


@kernel_helper
def joint_tracking_torque(tree, gravity, joint_gains, reference, q, qd, tau, cw):
    """K (q* − q) − D (q̇ − q̇*) + M q̈* + C q̇ + g, into tau."""
    rnea_ws = cw.rnea
    X, vr, ar, fr = rnea_ws.Xup, rnea_ws.v, rnea_ws.a, rnea_ws.f
    rnea(tree, gravity, q, qd, reference[2], None, tau, X, vr, ar, fr)
    for i in range(q.shape[0]):
        tau[i] += (joint_gains[STIFFNESS, i] * (reference[0, i] - q[i])
                   - joint_gains[JOINT_DAMPING, i] * (qd[i] - reference[1, i]))


@long_kernel
def rollout(tree, gravity, frame, joints, joint_gains, task_gains, target, reference, law,
            control_every, integrator, dt, friction_velocity, threshold, sample_every, q, qd,
            tau, clamped, path, energy):
    """Steps k = 0 .. K − 1 from the state in q[0], qd[0] (module docstring): q, qd (K + 1, n)
    receive the states, tau (K, n) the commanded efforts, clamped (n,) counts the steps each
    joint ended past a limit, path (K + 1, 4, 4) the poses of `frame` (a 13-row), the
    operational-space task frame, energy (S,) the kinetic + potential energy at the samples,
    the steps k = 0, sample_every, 2 sample_every, ... and K. Returns the smallest singular
    value of the frame's J over the samples."""
    steps, n = tau.shape
    cw, workspace, applied = control_workspace(tree, n), integrator_workspace(n), np.empty(n)
    m = min(6, n)
    grams, gram_factor = np.empty((energy.shape[0], m, m)), np.empty((m, m))
    clamped[:] = 0
    L_M, b = cw.L_M, cw.b
    sample = 0
    for k in range(steps + 1):
        law_now = law if k % control_every == 0 else -1
        at_sample = k % sample_every == 0 or k == steps
        if law_now == OPERATIONAL_SPACE or at_sample:
            task_frame_state(tree, gravity, frame, q[k], qd[k], cw)
            path[k] = cw.frame_pose  # the pose of the frame at q_k
        if at_sample:
            energy[sample] = mechanical_energy(tree, gravity, qd[k], cw.M, cw.crba.Ic)
            store_gram(cw.J, grams[sample])
            sample += 1
        if k == steps:
            break
        if law_now < 0:
            tau[k] = tau[k - 1]
        elif law == OPERATIONAL_SPACE:
            operational_space_torque(joint_gains, task_gains, target, threshold, q[k], qd[k],
                                     tau[k], cw)
        elif law == JOINT_TRACKING:
            joint_tracking_torque(tree, gravity, joint_gains, reference[k], q[k], qd[k], tau[k],
                                  cw)
        else:
            tau[k] = reference[k, 0]
        for i in range(n):
            applied[i] = min(max(tau[k, i], -joints[EFFORT_LIMIT, i]), joints[EFFORT_LIMIT, i])
        q[k + 1] = q[k]
        qd[k + 1] = qd[k]
        start_stages(q[k], qd[k], workspace)
        if law_now == OPERATIONAL_SPACE:  # the law left M = L Lᵀ and b at this state
            acceleration_from_factor(joints, friction_velocity, L_M, b, applied, workspace)
        integrate(tree, gravity, joints, friction_velocity, integrator, dt, q[k + 1], qd[k + 1],
                  applied, workspace, law_now == OPERATIONAL_SPACE, frame, path[k])
        enforce_limits(joints, q[k + 1], qd[k + 1], clamped)
    return smallest_singular_value(grams, gram_factor)
