"""The inverse-dynamics regressor: τ = Y(q, q̇, q̈) π, linear in the parameters π of every body
and every joint (Atkeson, An & Hollerbach, "Estimation of inertial parameters of manipulator
loads and links", IJRR 5(3), 1986; Pinocchio's computeJointTorqueRegressor).

π holds, in this order (PARAMETERS_PER_BODY and PARAMETERS_PER_JOINT numbers each; the
layout of model.inertial_parameters):

- for each body i, in joint order, its inertial parameters in its own frame (the joint frame)
  about its origin: m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz (Pinocchio's
  order, and the body's spatial inertia [[m 1, −[h]×], [[h]×, I_O]] with h = m c);
- then for each joint i: its armature (on M's diagonal), viscous friction d (τ = d q̇),
  Coulomb friction f, smoothed as in the simulation (τ = f tanh(q̇ / ε)), and a constant
  offset (a torque sensor's bias).

A body's net force f = I a + v ×* I v is linear in its ten parameters (RBDA eq. 5.9 with I
written out): with a' = a_lin + ω × v_lin, the classical acceleration of the origin,

    f_lin = m a' + (α× + ω×ω×) h,      f_ang = −a'× h + I_O α + ω × I_O ω.

The joints above a body carry that force to the base, so column block j of row i is
S_iᵀ ⁱX_j* ∂f_j/∂π_j for every joint i on the path from body j to the root, zero elsewhere.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.inverse_dynamics import body_motion
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.spatial import add3, cross, dot6, force_to_parent, pose_at, store, vector6
from robodyn_ros.dynamics.tree import POSE, parent_of, subspace
from robodyn_ros.model.inertial_parameters import (
    ARMATURE,
    COULOMB,
    OFFSET,
    PARAMETERS_PER_BODY,
    PARAMETERS_PER_JOINT,
    VISCOUS,
)

RegressorWorkspace = namedtuple("RegressorWorkspace", (
    "Xup",     # (n, POSE) each body's pose in its parent
    "v",       # (n, 6) each body's velocity in its frame
    "a",       # (n, 6) each body's acceleration in its frame, gravity as the base's
    "forces",  # (PARAMETERS_PER_BODY, 6) ∂f/∂π of the body being carried to the root
))


@kernel_helper
def regressor_workspace(n):
    """A RegressorWorkspace for n bodies."""
    return RegressorWorkspace(Xup=np.empty((n, POSE)), v=np.empty((n, 6)), a=np.empty((n, 6)),
                              forces=np.empty((PARAMETERS_PER_BODY, 6)))


@kernel_helper
def body_force_columns(v, a, forces):
    """forces[k] = ∂f/∂π_k for the net force f = I a + v ×* I v on a body of velocity v and
    acceleration a (its own frame) and its ten parameters π_k (the module docstring's form)."""
    w, alpha = v[3:6], a[3:6]
    a_origin = add3(a[0:3], cross(w, v[0:3]))
    store(forces, 0, (*a_origin, 0.0, 0.0, 0.0))
    for k in range(3):
        e = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)
        store(forces, 1 + k, (*add3(cross(alpha, e), cross(w, cross(w, e))), *cross(e, a_origin)))
    # I_O x for each of the six inertia parameters (xx, xy, yy, xz, yz, zz) as unit entries
    for k in range(6):
        moment_a = unit_inertia_times(k, alpha)
        moment_w = unit_inertia_times(k, w)
        store(forces, 4 + k, (0.0, 0.0, 0.0, *add3(moment_a, cross(w, moment_w))))


@kernel_helper
def unit_inertia_times(k, x):
    """E_k x for the symmetric 3x3 E_k with a one at inertia parameter k (xx, xy, yy, xz,
    yz, zz) and its mirror."""
    if k == 0:
        return x[0], 0.0, 0.0
    if k == 1:
        return x[1], x[0], 0.0
    if k == 2:
        return 0.0, x[1], 0.0
    if k == 3:
        return x[2], 0.0, x[0]
    if k == 4:
        return 0.0, x[2], x[1]
    return 0.0, 0.0, x[2]


@kernel_helper
def regressor(tree, gravity, friction_velocity, q, qd, qdd, Y, workspace):
    """Y (n, PARAMETERS_PER_BODY n + PARAMETERS_PER_JOINT n) with τ = Y π for one state; Y
    is overwritten whole."""
    n = tree.shape[0]
    Y[:, :] = 0.0
    a_root = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)  # the base accelerates at −g
    v_root = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for i in range(n):
        parent = parent_of(tree, i)
        v_parent = vector6(workspace.v, parent) if parent >= 0 else v_root
        a_parent = vector6(workspace.a, parent) if parent >= 0 else a_root
        X_i, v_i, a_i = body_motion(tree, i, q, qd, qdd, v_parent, a_parent)
        store(workspace.Xup, i, X_i)
        store(workspace.v, i, v_i)
        store(workspace.a, i, a_i)
    for j in range(n):
        body_force_columns(vector6(workspace.v, j), vector6(workspace.a, j), workspace.forces)
        first = PARAMETERS_PER_BODY * j
        i = j
        while i >= 0:  # the joints from body j to the root carry its force
            S_i, X_i = subspace(tree, i), pose_at(workspace.Xup, i, 0)
            for k in range(PARAMETERS_PER_BODY):
                force = vector6(workspace.forces, k)
                Y[i, first + k] = dot6(S_i, force)
                store(workspace.forces, k, force_to_parent(X_i, force))
            i = parent_of(tree, i)
    for i in range(n):
        column = PARAMETERS_PER_BODY * n + PARAMETERS_PER_JOINT * i
        Y[i, column + ARMATURE] = qdd[i]
        Y[i, column + VISCOUS] = qd[i]
        Y[i, column + COULOMB] = np.tanh(qd[i] / friction_velocity)
        Y[i, column + OFFSET] = 1.0


@kernel
def inverse_dynamics_regressor(tree: PackedTree, gravity: FloatArray, friction_velocity: float,
                               q: FloatArray, qd: FloatArray, qdd: FloatArray,
                               Y: FloatArray) -> None:
    """The regressor Y (B, n, p) for a batch q, qd, qdd (B, n); ε = friction_velocity."""
    workspace = regressor_workspace(tree.shape[0])
    for b in range(q.shape[0]):
        regressor(tree, gravity, friction_velocity, q[b], qd[b], qdd[b], Y[b], workspace)
