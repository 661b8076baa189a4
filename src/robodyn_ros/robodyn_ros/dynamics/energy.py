"""Kinetic and potential energy of the moving bodies."""

import numpy as np

from robodyn_ros.dynamics.jit import kernel
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.spatial import (
    add3,
    add6,
    body_inertia_times,
    dot3,
    dot6,
    motion_to_child,
    pose_at,
    rotate,
    scale6,
    store,
    vector6,
)
from robodyn_ros.dynamics.tree import POSE, body_inertia, parent_of


@kernel
def kinetic_energy(tree, q, qd, out):
    """T = ½ Σ vᵢᵀ Iᵢ vᵢ for a state (n,) or a batch (B, n); out is () or (B,)."""
    Q, QD = np.atleast_2d(q), np.atleast_2d(qd)
    B, n = Q.shape
    OUT = out.reshape(B)
    X_world, S_world, v = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6))
    for b in range(B):
        forward_kinematics(tree, Q[b], X_world, S_world)
        energy = 0.0
        for i in range(n):
            lam = parent_of(tree, i)
            v_i = scale6(QD[b, i], vector6(S_world, i))
            if lam >= 0:
                v_i = add6(v_i, vector6(v, lam))
            store(v, i, v_i)
            v_body = motion_to_child(pose_at(X_world, i, 0), v_i)
            energy += 0.5 * dot6(v_body, body_inertia_times(body_inertia(tree, i), v_body))
        OUT[b] = energy


@kernel
def potential_energy(tree, gravity, q, out):
    """V = −Σ mᵢ gᵀ cᵢ (cᵢ the centre of mass of body i in the world); zero for every centre
    of mass at the height of the world origin. For a state (n,) or a batch (B, n)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape
    OUT = out.reshape(B)
    X_world, S_world = np.empty((n, POSE)), np.empty((n, 6))
    g = (gravity[0], gravity[1], gravity[2])
    for b in range(B):
        forward_kinematics(tree, Q[b], X_world, S_world)
        energy = 0.0
        for i in range(n):
            X, body = pose_at(X_world, i, 0), body_inertia(tree, i)
            energy -= body[0] * dot3(g, add3(X[9:12], rotate(X, body[1:4])))
        OUT[b] = energy
