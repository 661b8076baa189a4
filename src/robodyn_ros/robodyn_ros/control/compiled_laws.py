"""The control laws of the controller plugins, compiled: pieces of a numba kernel that give,
at a state (q, q̇), the τ the plugin's `update` gives there, to rounding. The preview's rollout
kernel (sim.rollout) runs them at every control step; a test holds each to its plugin.

Laws (`ControlLaw.kind`):

- TORQUE: τ_cmd = reference[k, 0], an open-loop profile.
- JOINT_TRACKING: τ_cmd = K (q* − q) − D (q̇ − q̇*) + RNEA(q, q̇, q̈*), joint impedance with
  the inverse-dynamics feed-forward M q̈* + C q̇ + g; reference[k] = (q*, q̇*, q̈*)
  (control.joint_impedance with feedforward).
- OPERATIONAL_SPACE: Khatib's τ = Jᵀ (Λ ẍ* + F_w + μ + p) + Nᵀ (τ₀ + b)
  (control.operational_space_controller), evaluated as the equal
  τ = b + τ₀ + Jᵀ (Λ (ẍ* − J̇ q̇ − J M⁻¹ τ₀) + F_w), since μ + p = J̄ᵀ b − Λ J̇ q̇
  and J̄ᵀ = Λ J M⁻¹; ẍ* = Kp e − Kd J q̇, e = [p* − p; log(R* Rᵀ)], τ₀ = K₀ (q₀ − q) − D₀ q̇,
  and along the force axes Ω̃ (force[AXES]) ẍ* = −K_vf J q̇ (force[DAMPING]) and F_w the
  wrench the frame is to exert there (force[TARGET], plus the integral of the measured
  force's error where the caller closes the loop: task_wrench); F_w = 0 without force axes,
  Λ damped near singularities as Robot.operational_space damps it. M comes from the CRBA
  on the law's world-axes kinematics, factored M = L Lᵀ: Λ⁻¹ = (L⁻¹ Jᵀ)ᵀ (L⁻¹ Jᵀ) and
  J M⁻¹ τ₀ = (L⁻¹ Jᵀ)ᵀ (L⁻¹ τ₀), forward substitutions only.
- WHOLE_BODY: the whole-body controller's τ on unilateral frictional contacts
  (control.whole_body_programme.whole_body_torque: its programme built compiled and solved
  by DAQP), run by the contact rollout (sim.contact_rollout) only.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.fixed_frame import world_bias_forces, world_inertias
from robodyn_ros.dynamics.inertia_matrix import composite_inertia_matrix, crba_workspace
from robodyn_ros.dynamics.inverse_dynamics import rnea, rnea_workspace
from robodyn_ros.dynamics.jit import kernel_helper, routine
from robodyn_ros.dynamics.kinematics import forward_kinematics, frame_jacobian_into, frame_pose_into
from robodyn_ros.dynamics.linalg import (
    cholesky,
    cholesky_solve,
    copy_vector,
    forward_substitute,
    inverse_trace,
)
from robodyn_ros.dynamics.rotation import log_so3
from robodyn_ros.dynamics.task_space import (
    classical_acceleration_into,
    damped_task_inertia,
    velocity_product_accelerations,
)
from robodyn_ros.dynamics.tree import FRAME_BODY

TORQUE, JOINT_TRACKING, OPERATIONAL_SPACE, WHOLE_BODY = 0, 1, 2, 3

# rows of the (3, n) joint gains: K, D and the rest posture q₀ (operational space: K₀, D₀, q₀)
STIFFNESS, JOINT_DAMPING, REST = range(3)
# rows of the (2, 6) task gains
KP, KD = range(2)
# rows of the (3, 6) force law: the force axes Ω̃ (0/1), F_d, K_vf
AXES, TARGET, DAMPING = range(3)

ControlLaw = namedtuple("ControlLaw", [
    "kind", "control_every", "joint_gains", "task_gains", "force", "force_integral_gain",
    "target", "reference", "frame", "threshold", "whole_body"])
ControlLaw.__doc__ = """A control law as the rollout kernels run it: its kind (TORQUE,
JOINT_TRACKING, OPERATIONAL_SPACE, WHOLE_BODY), computed every control_every steps, held
between; joint_gains (3, n), the rows STIFFNESS, JOINT_DAMPING and REST; task_gains (2, 6),
the rows KP and KD; force (3, 6), the rows AXES, TARGET and DAMPING (zeros: no force control), with
force_integral_gain K_fi (1/s) of the measured force's error (sim.contact_rollout); target
(12,), the target pose R* (row by row) then p*; reference (K, 3, n), per step (q*, q̇*, q̈*) or
the open-loop effort in row 0 (none for OPERATIONAL_SPACE); frame (13,), the task frame's
packed row; threshold, ε of Λ's damping (singular_threshold); whole_body, the WHOLE_BODY
law's WholeBodyLaw (control.whole_body_programme; no_whole_body for the other kinds)."""

# Khatib 1987: τ = b + τ₀ + Jᵀ (Λ (ẍ* − J̇ q̇ − J M⁻¹ τ₀) + F_w), Λ⁻¹ = J M⁻¹ Jᵀ, M = L_M L_Mᵀ
ControlWorkspace = namedtuple("ControlWorkspace", [
    "crba", "M", "L_M", "rnea", "b", "tau0", "v", "a", "J", "Jdot_qd", "frame_pose", "Lambda",
    "task_inertia_info", "Linv_JT", "Lambda_inv", "L_Lambda_inv", "task_force", "rotation_error",
    "Linv_tau0"])
ControlWorkspace.__doc__ = """What the control laws need: the CRBA's and RNEA's workspaces, M, its
Cholesky factor L_M, b = C q̇ + g, τ₀, the bodies' world velocities v and accelerations a at
q̈ = 0, J, J̇ q̇, the frame's pose, Λ, damped_task_inertia's info, L_M⁻¹ Jᵀ, Λ⁻¹, its Cholesky
factor L_Lambda_inv, the task force (built up from the pose error), R* Rᵀ and L_M⁻¹ τ₀."""


@kernel_helper
def control_workspace(tree: PackedTree, n: int) -> ControlWorkspace:
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
def task_inertia_times(Lambda_inv: FloatArray, threshold: float, x: FloatArray, L: FloatArray,
                       Lambda: FloatArray, info: FloatArray) -> None:
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
    damped_task_inertia_times(Lambda_inv, threshold, x, Lambda, info)


@routine
def damped_task_inertia_times(Lambda_inv: FloatArray, threshold: float, x: FloatArray,
                              Lambda: FloatArray, info: FloatArray) -> None:
    """x ← Λ x, Λ from damped_task_inertia (its eigendecomposition allocates: a routine, so
    that the borrowing routines that take this rare branch compile)."""
    damped_task_inertia(Lambda_inv, threshold, threshold, Lambda, info)
    x[:] = Lambda @ x


@kernel_helper
def task_inverse_inertia(J: FloatArray, L: FloatArray, LinvJT: FloatArray,
                         Lambda_inv: FloatArray) -> None:
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
def task_frame_state(tree: PackedTree, gravity: FloatArray, frame: FloatArray, q: FloatArray,
                     qd: FloatArray, cw: ControlWorkspace) -> None:
    """What the operational-space law (and the rollout at its samples) takes from the state
    (q, q̇), into cw: the world kinematics, the frame's pose, J and J̇ q̇, b = C q̇ + g, and M by
    the CRBA, which leaves the composite inertias in the CRBA workspace."""
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
def operational_space_torque(joint_gains: FloatArray, task_gains: FloatArray, force: FloatArray,
                             task_wrench: FloatArray, target: FloatArray, threshold: float,
                             q: FloatArray, qd: FloatArray, tau: FloatArray,
                             cw: ControlWorkspace) -> None:
    """Khatib's operational-space law (module docstring) into tau, after task_frame_state at
    (q, q̇), with force (3, 6) the force law and task_wrench (6,) F_w: the compiled mirror of
    control.operational_space_controller.OperationalSpace."""
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
        along_force = force[AXES, r] != 0.0  # Khatib 1987: ẍ* = −K_vf ẋ there
        s = (0.0 if along_force else task_gains[KP, r] * task[r]) - Jdot_qd[r]
        damping = force[DAMPING, r] if along_force else task_gains[KD, r]
        for j in range(n):
            s -= damping * J[r, j] * qd[j] + LinvJT[j, r] * Linv_tau0[j, 0]
        task[r] = s
    task_inertia_times(Lambda_inv, threshold, task, L, Lambda, info)
    for i in range(n):
        s = b[i] + tau0[i]
        for r in range(6):
            s += J[r, i] * (task[r] + task_wrench[r])
        tau[i] = s


@kernel_helper
def joint_tracking_torque(tree: PackedTree, gravity: FloatArray, joint_gains: FloatArray,
                          reference: FloatArray, q: FloatArray, qd: FloatArray, tau: FloatArray,
                          cw: ControlWorkspace) -> None:
    """K (q* − q) − D (q̇ − q̇*) + M q̈* + C q̇ + g, into tau: the compiled mirror of
    control.joint_impedance.JointImpedance with feedforward."""
    rnea(tree, gravity, q, qd, reference[2], None, tau, cw.rnea)
    for i in range(q.shape[0]):
        tau[i] += (joint_gains[STIFFNESS, i] * (reference[0, i] - q[i])
                   - joint_gains[JOINT_DAMPING, i] * (qd[i] - reference[1, i]))


@kernel_helper
def law_torque(tree: PackedTree, gravity: FloatArray, law_now: int, joint_gains: FloatArray,
               task_gains: FloatArray, force: FloatArray, task_wrench: FloatArray,
               target: FloatArray, threshold: float, reference: FloatArray, k: int,
               q: FloatArray, qd: FloatArray, tau: FloatArray, cw: ControlWorkspace) -> None:
    """τ_k into tau[k] at state (q[k], q̇[k]) under the law running at step k (law_now: its
    kind at a step where it is computed, −1 between): τ_{k−1} held, the operational-space law
    with the task wrench `task_wrench`, joint tracking of reference[k], or the open-loop
    effort reference[k, 0]. The WHOLE_BODY law is its caller's."""
    if law_now < 0:
        copy_vector(tau[k - 1], tau[k])
    elif law_now == OPERATIONAL_SPACE:
        operational_space_torque(joint_gains, task_gains, force, task_wrench, target, threshold,
                                 q[k], qd[k], tau[k], cw)
    elif law_now == JOINT_TRACKING:
        joint_tracking_torque(tree, gravity, joint_gains, reference[k], q[k], qd[k], tau[k], cw)
    else:
        copy_vector(reference[k, 0], tau[k])
