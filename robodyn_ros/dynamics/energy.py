"""Kinetic and potential energy of the moving bodies."""

import numpy as np

from robodyn_ros.dynamics.jit import kernel
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.spatial import dot6, inertia_times, motion_to_child
from robodyn_ros.dynamics.tree import COM, INERTIA, POSE, WIDTH, parent_of


@kernel
def kinetic_energy(tree, q, qd, out):
    """T = ½ Σ vᵢᵀ Iᵢ vᵢ for a state (n,) or a batch (B, n); out is () or (B,)."""
    Q, QD = np.atleast_2d(q), np.atleast_2d(qd)
    B, n = Q.shape
    OUT = out.reshape(B)
    X_world, S_world, v = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6))
    v_body, h = np.empty(6), np.empty(6)
    for b in range(B):
        forward_kinematics(tree, Q[b], X_world, S_world)
        OUT[b] = 0.0
        for i in range(n):
            lam = parent_of(tree, i)
            for k in range(6):
                v[i, k] = S_world[i, k] * QD[b, i] + (v[lam, k] if lam >= 0 else 0.0)
            motion_to_child(X_world[i], v[i], v_body)
            inertia_times(tree[i, INERTIA:WIDTH], v_body, h)
            OUT[b] += 0.5 * dot6(v_body, h)


@kernel
def potential_energy(tree, gravity, q, out):
    """V = −Σ mᵢ gᵀ cᵢ (cᵢ the centre of mass of body i in the world); zero for every centre
    of mass at the height of the world origin. For a state (n,) or a batch (B, n)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape
    OUT = out.reshape(B)
    X_world, S_world = np.empty((n, POSE)), np.empty((n, 6))
    for b in range(B):
        forward_kinematics(tree, Q[b], X_world, S_world)
        OUT[b] = 0.0
        for i in range(n):
            X, mass, com = X_world[i], tree[i, INERTIA], tree[i, COM:COM + 3]
            for r in range(3):
                world_com = X[9 + r] + X[3 * r] * com[0] + X[3 * r + 1] * com[1]
                world_com += X[3 * r + 2] * com[2]
                OUT[b] -= mass * gravity[r] * world_com
