"""A controlled robot rolled out over many fixed time steps in one kernel: the control law,
the integrator and the articulated-body algorithm, with the joint damping, smoothed Coulomb
friction and limits of sim.SimulatedRobot, step for step as SimulatedRobot and the controller
plugins compute them in Python.

Each step k: τ_cmd = the control law at (q_k, q̇_k) every `control_every` steps, the last
command in between (a controller running at a lower rate); the applied effort clip(τ_cmd,
±effort limit) is held over the step; q̈ = ABA(q, q̇, τ − d q̇ − f tanh(q̇/ε)) is integrated by
semi-implicit Euler or RK4 on the configuration's group (dynamics.lie_group: q ⊕ θ, and the
Runge–Kutta–Munthe-Kaas stages for free flyers and planar joints, as
sim.lie_integrators step them); then, where the stepping stops joints at their limits,
velocities are clipped to their limits and a joint past a position limit is put back on it with
its outward velocity zeroed, else the steps each joint ends past one are counted. At a step
where the operational-space law ran, the integrator's first q̈ is M⁻¹ (τ − d q̇ − f tanh(q̇/ε) −
b) from the law's own factor of M and b instead of one more ABA at the same state. The pose of
the task frame at q_k comes from what step k computed there anyway: the law's kinematics where
the operational-space law ran or the step is a sample, else the first integrator stage's ABA. At
the samples (every sample_every steps and the last) the law's kinematics also give the energy ½
q̇ᵀ M q̇ + V and J's Gram matrix, whose smallest eigenvalue over the samples the rollout returns
as a singular value.

The control laws (TORQUE, JOINT_TRACKING, OPERATIONAL_SPACE) and their record ControlLaw are
control.compiled_laws'. The rollout takes the robot (RolloutRobot), the law, the stepping
(Stepping) and the arrays it fills (Trajectory), each a named record.
"""

import math
from collections import namedtuple

import numpy as np

from robodyn_ros.control.compiled_laws import (
    OPERATIONAL_SPACE,
    TARGET,
    ControlLaw,
    ControlWorkspace,
    control_workspace,
    law_torque,
    task_frame_state,
)
from robodyn_ros.dynamics.arrays import FloatArray, IntArray, PackedTree
from robodyn_ros.dynamics.forward_dynamics import aba_one, aba_workspace
from robodyn_ros.dynamics.jit import kernel_helper, long_kernel
from robodyn_ros.dynamics.kinematics import frame_pose_into
from robodyn_ros.dynamics.lie_group import dexp_inverse, integrate_configuration
from robodyn_ros.dynamics.linalg import cholesky, cholesky_solve, copy_vector
from robodyn_ros.dynamics.tree import configuration_index, parent_of

SEMI_IMPLICIT_EULER, RK4 = 0, 1

# rows of the (6, n) joint-property array
LOWER, UPPER, VELOCITY_LIMIT, EFFORT_LIMIT, DAMPING, FRICTION = range(6)

RolloutRobot = namedtuple("RolloutRobot", "tree gravity joints")
RolloutRobot.__doc__ = """The robot as the rollout takes it: the packed tree and gravity
(Robot.kernel_arrays) and joints (6, n), the rows LOWER, UPPER, VELOCITY_LIMIT, EFFORT_LIMIT,
DAMPING (d) and FRICTION (f)."""

Stepping = namedtuple("Stepping", "integrator dt friction_velocity sample_every stop_at_limits")
Stepping.__doc__ = """How the rollout steps: the integrator (SEMI_IMPLICIT_EULER or RK4), the
step dt (s), the friction's smoothing velocity ε (friction_velocity, as SimulatedRobot takes
it), the steps between two samples, and whether joints stop at their position and velocity
limits (SimulatedRobot's) or only count the steps they end past one (a floating robot, whose
stops would change its momentum)."""

Trajectory = namedtuple("Trajectory", "q qd tau clamped path energy")
Trajectory.__doc__ = """What the rollout fills: q (K + 1, nq), qd (K + 1, n) the states from
q[0], qd[0]; tau (K, n) the commanded efforts; clamped (n,) the steps each joint ended past a
limit; path
(K + 1, 4, 4) the poses of the law's frame; energy (S,) the kinetic + potential energy at the
samples, the steps k = 0, sample_every, 2 sample_every, ... and K."""

# RK4 stage s (semi-implicit Euler: s = 0 alone) at Q[s] = q ⊕ θ_s:
# k_θ = THETA_DOT[s] = dexp⁻¹(θ_s, QD[s]), k_v = QDD[s] = ABA(Q, QD, TAU)[s]
IntegratorWorkspace = namedtuple("IntegratorWorkspace", "aba Q QD TAU QDD THETA_DOT theta")
IntegratorWorkspace.__doc__ = """The integrator's arrays: a one-lane AbaWorkspace, the stages'
configurations Q (4 x nq), velocities QD, applied efforts TAU, accelerations QDD and rates
THETA_DOT of the motion θ from q (4 x n each), and θ (n) itself."""


@kernel_helper
def stage_torques(joints: FloatArray, friction_velocity: float, tau: FloatArray, QD: FloatArray,
                  TAU: FloatArray, s: int) -> None:
    """TAU[s] = τ − d q̇ − f tanh(q̇/ε) at the stage velocity q̇ = QD[s]: the applied effort
    with damping and smoothed friction."""
    for i in range(tau.shape[0]):
        TAU[s, i] = (tau[i] - joints[DAMPING, i] * QD[s, i]
                     - joints[FRICTION, i] * math.tanh(QD[s, i] / friction_velocity))


@kernel_helper
def integrator_workspace(n: int, nq: int) -> IntegratorWorkspace:
    """An IntegratorWorkspace: the RK4 stages as batches of four states. Stage s is state s
    of the batch, so each stage's ABA is a call of the aba_one routine with no array view
    made: numba counts a reference to each array an inlined ABA takes, an atomic add and
    subtract, 15 of each a stage."""
    return IntegratorWorkspace(aba=aba_workspace(n, 1), Q=np.empty((4, nq)),
                               QD=np.empty((4, n)), TAU=np.empty((4, n)), QDD=np.empty((4, n)),
                               THETA_DOT=np.empty((4, n)), theta=np.empty(n))


@kernel_helper
def start_stages(q: FloatArray, qd: FloatArray, workspace: IntegratorWorkspace) -> None:
    """The step's first stage, (q, q̇), into Q[0] and QD[0] of the workspace."""
    Q, QD = workspace.Q, workspace.QD
    for i in range(q.shape[0]):
        Q[0, i] = q[i]
    for i in range(qd.shape[0]):
        QD[0, i] = qd[i]


@kernel_helper
def acceleration_from_factor(joints: FloatArray, friction_velocity: float, L: FloatArray,
                             b: FloatArray, tau: FloatArray,
                             workspace: IntegratorWorkspace) -> None:
    """The first stage's q̈ = M⁻¹ (τ − d q̇ − f tanh(q̇/ε) − b) at a state where M = L Lᵀ
    (L from cholesky) and b = C q̇ + g are known (from the operational-space law), without
    an ABA: into QDD[0] of the workspace, whose QD[0] holds q̇."""
    QD, TAU, QDD = workspace.QD, workspace.TAU, workspace.QDD
    stage_torques(joints, friction_velocity, tau, QD, TAU, 0)
    for i in range(tau.shape[0]):
        QDD[0, i] = TAU[0, i] - b[i]
    cholesky_solve(L, QDD[0])


@kernel_helper
def integrate(robot: RolloutRobot, stepping: Stepping, q: FloatArray, qd: FloatArray,
              tau: FloatArray, workspace: IntegratorWorkspace, start_known: bool,
              frame: FloatArray, pose: FloatArray) -> None:
    """(q, q̇) advanced in place by one step of the stepping's integrator under the held
    effort τ, from the stages set up by start_stages; where start_known, QDD[0] already holds
    q̈ at (q, q̇), else the first stage's ABA, at q, leaves the frame's pose in `pose` (4 x 4)."""
    tree, gravity, joints = robot.tree, robot.gravity, robot.joints
    dt, friction_velocity = stepping.dt, stepping.friction_velocity
    euler = stepping.integrator == SEMI_IMPLICIT_EULER
    aba_ws, Q, QD = workspace.aba, workspace.Q, workspace.QD
    TAU, QDD, THETA_DOT, theta = workspace.TAU, workspace.QDD, workspace.THETA_DOT, workspace.theta
    n = qd.shape[0]
    if not euler:  # θ_0 = 0: k_θ = q̇
        for i in range(n):
            THETA_DOT[0, i] = QD[0, i]
    for s in range(1 if start_known else 0, 1 if euler else 4):
        h = dt if s == 3 else 0.5 * dt  # RK4's stages at t, t + dt/2, t + dt/2, t + dt
        if s > 0:  # stage 0 is (q, q̇), set by start_stages
            for i in range(n):
                theta[i] = h * THETA_DOT[s - 1, i]
                QD[s, i] = qd[i] + h * QDD[s - 1, i]
            integrate_configuration(tree, q, theta, Q[s])
            dexp_inverse(tree, theta, QD[s], THETA_DOT[s])
        stage_torques(joints, friction_velocity, tau, QD, TAU, s)
        aba_one(tree, gravity, Q, QD, TAU, None, QDD, s, aba_ws)
        if s == 0:
            frame_pose_into(aba_ws.X_world[0], frame, pose)  # the ABA's world poses at q
    if euler:  # q̇ₖ₊₁ = q̇ₖ + dt a(qₖ, q̇ₖ), qₖ₊₁ = qₖ ⊕ dt q̇ₖ₊₁
        for i in range(n):
            qd[i] += dt * QDD[0, i]
            theta[i] = dt * qd[i]
        integrate_configuration(tree, q, theta, q)
        return
    for i in range(n):  # fourth-order Runge–Kutta(–Munthe-Kaas) on (θ, q̇)
        theta[i] = dt / 6.0 * (THETA_DOT[0, i] + 2.0 * THETA_DOT[1, i] + 2.0 * THETA_DOT[2, i]
                               + THETA_DOT[3, i])
        qd[i] += dt / 6.0 * (QDD[0, i] + 2.0 * QDD[1, i] + 2.0 * QDD[2, i] + QDD[3, i])
    integrate_configuration(tree, q, theta, q)


@kernel_helper
def enforce_limits(tree: PackedTree, joints: FloatArray, stop: bool, q: FloatArray,
                   qd: FloatArray, clamped: IntArray) -> None:
    """Where `stop`, velocities clipped to ±limit and a joint past a position limit put on it
    with its outward velocity zeroed; each joint past a position limit counted in `clamped`.
    The rows of free flyers and planar joints have none (±inf), so they pass untouched."""
    for i in range(qd.shape[0]):
        if stop:
            qd[i] = min(max(qd[i], -joints[VELOCITY_LIMIT, i]), joints[VELOCITY_LIMIT, i])
        k = configuration_index(tree, i)
        if q[k] > joints[UPPER, i]:
            if stop:
                q[k], qd[i] = joints[UPPER, i], min(qd[i], 0.0)
            clamped[i] += 1
        elif q[k] < joints[LOWER, i]:
            if stop:
                q[k], qd[i] = joints[LOWER, i], max(qd[i], 0.0)
            clamped[i] += 1


@kernel_helper
def mechanical_energy(tree: PackedTree, gravity: FloatArray, qd: FloatArray, M: FloatArray,
                      composite: FloatArray) -> float:
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
def store_gram(J: FloatArray, out: FloatArray) -> None:
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
def smallest_singular_value(grams: FloatArray, L: FloatArray) -> float:
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
def observe(tree: PackedTree, gravity: FloatArray, frame: FloatArray, at_sample: bool,
            q: FloatArray, qd: FloatArray, cw: ControlWorkspace, pose: FloatArray,
            energy: FloatArray, grams: FloatArray, sample: int) -> int:
    """At step k, (q, q̇) = (q_k, q̇_k), where the operational-space law runs or at a sample
    (the callers' test, so that cw is handed over only there): the law's kinematics
    (task_frame_state into cw) and the frame's pose into `pose`; at a sample the energy and
    J's Gram matrix into energy[sample] and grams[sample]. Returns the samples taken after
    it."""
    task_frame_state(tree, gravity, frame, q, qd, cw)
    for r in range(4):  # the pose of the frame at q_k
        copy_vector(cw.frame_pose[r], pose[r])
    if not at_sample:
        return sample
    energy[sample] = mechanical_energy(tree, gravity, qd, cw.M, cw.crba.Ic)
    store_gram(cw.J, grams[sample])
    return sample + 1


@long_kernel
def rollout(robot: RolloutRobot, law: ControlLaw, stepping: Stepping,
            trajectory: Trajectory) -> float:
    """Steps k = 0 .. K − 1 of `robot` (a RolloutRobot) under `law` (a ControlLaw) by
    `stepping` (a Stepping) from the state in trajectory.q[0], trajectory.qd[0], filling the
    rest of `trajectory` (a Trajectory; module docstring). Returns the smallest singular value
    of the law's frame's J over the samples."""
    # The records' arrays, taken out once: a record handed to an inlined helper at every step
    # would count a reference to each of its arrays there, used or not.
    tree, gravity, joints = robot.tree, robot.gravity, robot.joints
    joint_gains, task_gains, target, reference = (law.joint_gains, law.task_gains, law.target,
                                                  law.reference)
    force = law.force  # open loop: the wrench the frame exerts is F_d
    kind, frame, threshold = law.kind, law.frame, law.threshold
    q, qd, tau, path, energy = (trajectory.q, trajectory.qd, trajectory.tau, trajectory.path,
                                trajectory.energy)
    clamped = trajectory.clamped
    steps, n = tau.shape
    cw, applied = control_workspace(tree, n), np.empty(n)
    workspace = integrator_workspace(n, q.shape[1])
    m = min(6, n)
    grams, gram_factor = np.empty((energy.shape[0], m, m)), np.empty((m, m))
    clamped[:] = 0
    L_M, b = cw.L_M, cw.b
    sample = 0
    for k in range(steps):
        law_now = kind if k % law.control_every == 0 else -1
        at_sample = k % stepping.sample_every == 0
        if law_now == OPERATIONAL_SPACE or at_sample:
            sample = observe(tree, gravity, frame, at_sample, q[k], qd[k], cw, path[k], energy,
                             grams, sample)
        law_torque(tree, gravity, law_now, joint_gains, task_gains, force, force[TARGET], target,
                   threshold, reference, k, q, qd, tau, cw)
        for i in range(n):
            applied[i] = min(max(tau[k, i], -joints[EFFORT_LIMIT, i]), joints[EFFORT_LIMIT, i])
        q[k + 1] = q[k]
        qd[k + 1] = qd[k]
        start_stages(q[k], qd[k], workspace)
        if law_now == OPERATIONAL_SPACE:  # the law left M = L Lᵀ and b at this state
            acceleration_from_factor(joints, stepping.friction_velocity, L_M, b, applied,
                                     workspace)
        integrate(robot, stepping, q[k + 1], qd[k + 1], applied, workspace,
                  law_now == OPERATIONAL_SPACE, frame, path[k])
        enforce_limits(tree, joints, stepping.stop_at_limits, q[k + 1], qd[k + 1], clamped)
    observe(tree, gravity, frame, True, q[steps], qd[steps], cw, path[steps], energy, grams,
            sample)  # the last state, a sample
    return smallest_singular_value(grams, gram_factor)
