"""Kinetic and potential energy of the moving bodies."""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.jit import kernel, kernel_helper
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
from robodyn_ros.dynamics.tree import POSE, armature, body_inertia, parent_of

# What the energies need besides the state.
EnergyWorkspace = namedtuple("EnergyWorkspace", (
    "X_world",  # (n, POSE) each link's pose
    "S_world",  # (n, 6) each joint's motion axis
    "v",        # (n, 6) each body's velocity
))


@kernel_helper
def energy_workspace(n):
    """An EnergyWorkspace of n links."""
    return EnergyWorkspace(np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6)))


@kernel_helper
def kinetic_energy_of(tree, q, qd, workspace):
    """T = ½ Σ vᵢᵀ Iᵢ vᵢ + ½ Σ aᵢ q̇ᵢ² (a the armature) of one state; workspace from
    energy_workspace."""
    X_world, S_world, v = workspace.X_world, workspace.S_world, workspace.v
    forward_kinematics(tree, q, X_world, S_world)
    energy = 0.0
    for i in range(tree.shape[0]):
        parent = parent_of(tree, i)
        v_i = scale6(qd[i], vector6(S_world, i))
        if parent >= 0:
            v_i = add6(v_i, vector6(v, parent))
        store(v, i, v_i)
        v_body = motion_to_child(pose_at(X_world, i, 0), v_i)
        energy += 0.5 * dot6(v_body, body_inertia_times(body_inertia(tree, i), v_body))
        energy += 0.5 * armature(tree, i) * qd[i] * qd[i]
    return energy


@kernel_helper
def potential_energy_of(tree, gravity, q, workspace):
    """V = −Σ mᵢ gᵀ cᵢ of one state (cᵢ the centre of mass of body i in the world); zero for
    every centre of mass at the height of the world origin. workspace from energy_workspace."""
    X_world, S_world = workspace.X_world, workspace.S_world
    forward_kinematics(tree, q, X_world, S_world)
    g = (gravity[0], gravity[1], gravity[2])
    energy = 0.0
    for i in range(tree.shape[0]):
        X, body = pose_at(X_world, i, 0), body_inertia(tree, i)
        energy -= body[0] * dot3(g, add3(X[9:12], rotate(X, body[1:4])))
    return energy


@kernel
def kinetic_energy(tree: PackedTree, q: FloatArray, qd: FloatArray, out: FloatArray) -> None:
    """T for a state (n,) or a batch (B, n); out is () or (B,)."""
    Q, QD = np.atleast_2d(q), np.atleast_2d(qd)
    B, n = Q.shape[0], tree.shape[0]
    OUT = out.reshape(B)
    workspace = energy_workspace(n)
    for b in range(B):
        OUT[b] = kinetic_energy_of(tree, Q[b], QD[b], workspace)


@kernel
def potential_energy(tree: PackedTree, gravity: FloatArray, q: FloatArray,
                     out: FloatArray) -> None:
    """V for a state (n,) or a batch (B, n); out is () or (B,)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    OUT = out.reshape(B)
    workspace = energy_workspace(n)
    for b in range(B):
        OUT[b] = potential_energy_of(tree, gravity, Q[b], workspace)
