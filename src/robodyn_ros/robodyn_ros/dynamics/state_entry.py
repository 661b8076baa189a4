"""C entry points of the single-state kernels, for robodyn_ros._state_call.StateCall.

A control loop calls the dynamics one state at a time, and for a 7-joint arm entering a kernel
through numba's dispatcher costs as much as the kernel. Each function here is a numba cfunc
with one C signature,

    void entry(const double *tree, const double *constants, int64 n,
               const double *x0, const double *x1, const double *x2, double *out)

that views the pointers as arrays (tree (n, WIDTH); constants: gravity (3,), for the regressor
gravity and the friction velocity (REGRESSOR_CONSTANTS,), for the frame entries the frame's row
(FRAME_WIDTH,); the state vectors (n,); out shaped as the result) and
runs the one-state algorithm the batch kernels loop over, with its own workspace. A
configuration q has the tree's nq entries (tree.configuration_size), the other vectors n. Unused
inputs are NULL and never read. An entry cannot raise: where an answer does not exist its
output holds NaN or inf, which StateCall turns into its "take the general path" answer.

Compiled entries are cached on disk like the kernels; each compiles (or loads) the first time
it is used (jit.CEntry), so a process compiles only the entries it calls.
"""

import numpy as np
from numba import carray, types

from robodyn_ros.dynamics.centroidal import centroidal_map
from robodyn_ros.dynamics.coriolis import coriolis, coriolis_workspace
from robodyn_ros.dynamics.derivatives import (
    derivatives_workspace,
    fd_derivatives,
    forward_derivatives_workspace,
    rnea_derivatives,
)
from robodyn_ros.dynamics.energy import energy_workspace, kinetic_energy_of, potential_energy_of
from robodyn_ros.dynamics.forward_dynamics import aba_state, aba_workspace
from robodyn_ros.dynamics.inertia_diagonal import diagonal_workspace, inertia_diagonal
from robodyn_ros.dynamics.inertia_inverse import minv_aba, minv_workspace
from robodyn_ros.dynamics.inertia_matrix import crba, crba_workspace
from robodyn_ros.dynamics.inverse_dynamics import rnea, rnea_workspace
from robodyn_ros.dynamics.jit import c_entry, kernel_helper
from robodyn_ros.dynamics.kinematics import frame_jacobian_of, frame_pose_into, path_kinematics
from robodyn_ros.dynamics.regressor import regressor, regressor_workspace
from robodyn_ros.dynamics.task_space import (
    articulated_task_inverse,
    articulated_workspace,
    invert_task_inertia,
)
from robodyn_ros.dynamics.tree import (
    FRAME_BODY,
    FRAME_WIDTH,
    POSE,
    UNIT_TOLERANCE,
    WIDTH,
    configuration_size,
    rotations_are_unit,
)
from robodyn_ros.model.inertial_parameters import PARAMETERS_PER_BODY, PARAMETERS_PER_JOINT

_POINTER = types.CPointer(types.float64)
SIGNATURE = types.void(_POINTER, _POINTER, types.int64, _POINTER, _POINTER, _POINTER, _POINTER)

entry = c_entry(SIGNATURE)

REGRESSOR_CONSTANTS = 4  # gravity (3), the friction velocity ε
REGRESSOR_COLUMNS_PER_JOINT = PARAMETERS_PER_BODY + PARAMETERS_PER_JOINT


@kernel_helper
def as_tree(tree, n):
    """The packed tree (n, WIDTH) behind a pointer."""
    return carray(tree, (n, WIDTH))


@kernel_helper
def tree_and_configuration(tree, n, q):
    """The packed tree (n, WIDTH) and the configuration (nq,) behind their pointers, nq from
    the tree's joints; a configuration whose free flyer or planar joint's rotation is off unit
    norm (UNIT_TOLERANCE) becomes NaN, so that the answer is NaN and the general
    path says why."""
    packed = as_tree(tree, n)
    nq = configuration_size(packed)
    config = carray(q, nq)
    if nq != n and not rotations_are_unit(packed, config, UNIT_TOLERANCE):
        return packed, np.full(nq, np.nan)
    return packed, config


@entry
def inverse_dynamics_entry(tree, gravity, n, q, qd, qdd, tau):
    packed, config = tree_and_configuration(tree, n, q)
    rnea(packed, carray(gravity, 3), config, carray(qd, n), carray(qdd, n), None, carray(tau, n),
         rnea_workspace(n))


@entry
def bias_forces_entry(tree, gravity, n, q, qd, _x1, tau):
    packed, config = tree_and_configuration(tree, n, q)
    rnea(packed, carray(gravity, 3), config, carray(qd, n), np.zeros(n), None, carray(tau, n),
         rnea_workspace(n))


@entry
def gravity_torques_entry(tree, gravity, n, q, _x1, _x2, tau):
    packed, config = tree_and_configuration(tree, n, q)
    rnea(packed, carray(gravity, 3), config, None, None, None, carray(tau, n), rnea_workspace(n))


@entry
def coriolis_matrix_entry(tree, gravity, n, q, qd, _x1, C):
    packed, config = tree_and_configuration(tree, n, q)
    coriolis(packed, config, carray(qd, n), carray(C, (n, n)), coriolis_workspace(packed, n))


@entry
def inverse_dynamics_derivatives_entry(tree, gravity, n, q, qd, qdd, out):
    """out: ∂τ/∂q, ∂τ/∂q̇ and M (3, n, n)."""
    packed, config = tree_and_configuration(tree, n, q)
    answer = carray(out, (3, n, n))
    rnea_derivatives(packed, carray(gravity, 3), config, carray(qd, n), carray(qdd, n), None,
                     answer[0], answer[1], answer[2], derivatives_workspace(packed, n))


@entry
def forward_dynamics_derivatives_entry(tree, gravity, n, q, qd, tau, out):
    """out: ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ (3, n, n)."""
    packed, config = tree_and_configuration(tree, n, q)
    answer = carray(out, (3, n, n))
    fd_derivatives(packed, carray(gravity, 3), config, carray(qd, n), carray(tau, n), None,
                   answer[0], answer[1], answer[2], forward_derivatives_workspace(packed, n))


@entry
def inverse_dynamics_regressor_entry(tree, constants, n, q, qd, qdd, Y):
    """constants: gravity (3) then the friction velocity ε (REGRESSOR_CONSTANTS)."""
    packed, config = tree_and_configuration(tree, n, q)
    values = carray(constants, REGRESSOR_CONSTANTS)
    regressor(packed, values[:3], values[3], config, carray(qd, n), carray(qdd, n),
              carray(Y, (n, REGRESSOR_COLUMNS_PER_JOINT * n)), regressor_workspace(n))


@entry
def mass_matrix_entry(tree, gravity, n, q, _x1, _x2, M):
    packed, config = tree_and_configuration(tree, n, q)
    crba(packed, config, carray(M, (n, n)), crba_workspace(packed, n))


@entry
def centroidal_momentum_matrix_entry(tree, gravity, n, q, _x1, _x2, A):
    packed, config = tree_and_configuration(tree, n, q)
    centroidal_map(packed, config, carray(A, (6, n)), np.empty(3), crba_workspace(packed, n))


@entry
def centre_of_mass_entry(tree, gravity, n, q, _x1, _x2, com):
    packed, config = tree_and_configuration(tree, n, q)
    centroidal_map(packed, config, np.empty((6, n)), carray(com, 3), crba_workspace(packed, n))


@entry
def mass_matrix_diagonal_entry(tree, gravity, n, q, _x1, _x2, diag):
    packed, config = tree_and_configuration(tree, n, q)
    inertia_diagonal(packed, config, carray(diag, n), diagonal_workspace(n))


@entry
def mass_matrix_inverse_entry(tree, gravity, n, q, _x1, _x2, Minv):
    packed, config = tree_and_configuration(tree, n, q)
    minv_aba(packed, config, carray(Minv, (n, n)), minv_workspace(packed, n))


@entry
def forward_dynamics_entry(tree, gravity, n, q, qd, tau, qdd):
    packed, config = tree_and_configuration(tree, n, q)
    aba_state(packed, carray(gravity, 3), config, carray(qd, n), carray(tau, n), None,
              carray(qdd, n), aba_workspace(n, 1))


@entry
def kinetic_energy_entry(tree, gravity, n, q, qd, _x1, T):
    packed, config = tree_and_configuration(tree, n, q)
    carray(T, 1)[0] = kinetic_energy_of(packed, config, carray(qd, n), energy_workspace(n))


@entry
def potential_energy_entry(tree, gravity, n, q, _x1, _x2, V):
    packed, config = tree_and_configuration(tree, n, q)
    carray(V, 1)[0] = potential_energy_of(packed, carray(gravity, 3), config, energy_workspace(n))


@entry
def frame_pose_entry(tree, frame, n, q, _x1, _x2, pose):
    packed, config = tree_and_configuration(tree, n, q)
    X_world, S_world, row = np.empty((n, POSE)), np.empty((n, 6)), carray(frame, FRAME_WIDTH)
    path_kinematics(packed, config, int(row[FRAME_BODY]), X_world, S_world,
                    np.empty(n, dtype=np.int64))
    frame_pose_into(X_world, row, carray(pose, (4, 4)))


@entry
def jacobian_entry(tree, frame, n, q, _x1, _x2, J):
    packed, config = tree_and_configuration(tree, n, q)
    X_world, S_world, pose = np.empty((n, POSE)), np.empty((n, 6)), np.empty((4, 4))
    frame_jacobian_of(packed, carray(frame, FRAME_WIDTH), config, X_world, S_world, pose,
                      np.empty(n, dtype=np.int64), carray(J, (6, n)))


@entry
def operational_space_inertia_inverse_entry(tree, frame, n, q, _x1, _x2, Lambda_inv):
    packed, config = tree_and_configuration(tree, n, q)
    articulated_task_inverse(packed, carray(frame, (1, FRAME_WIDTH)), config,
                             carray(Lambda_inv, (6, 6)), articulated_workspace(n))


@entry
def operational_space_inertia_entry(tree, frame, n, q, _x1, _x2, Lambda):
    """Λ; NaN in Λ[0, 0] where it does not exist, for the general path to raise."""
    packed, config = tree_and_configuration(tree, n, q)
    Lambda_inv, out = np.empty((6, 6)), carray(Lambda, (6, 6))
    articulated_task_inverse(packed, carray(frame, (1, FRAME_WIDTH)), config, Lambda_inv,
                             articulated_workspace(n))
    if not invert_task_inertia(Lambda_inv, out):
        out[0, 0] = np.nan


# The functions whose entry writes a symmetric answer whole (StateCall checks half of it).
SYMMETRIC_ANSWERS = frozenset({"mass_matrix"})

# The Robot function each entry answers → the entry (robot.py binds them by these names).
ENTRIES = {
    "inverse_dynamics": inverse_dynamics_entry,
    "inverse_dynamics_derivatives": inverse_dynamics_derivatives_entry,
    "forward_dynamics_derivatives": forward_dynamics_derivatives_entry,
    "inverse_dynamics_regressor": inverse_dynamics_regressor_entry,
    "bias_forces": bias_forces_entry,
    "gravity_torques": gravity_torques_entry,
    "coriolis_matrix": coriolis_matrix_entry,
    "mass_matrix": mass_matrix_entry,
    "mass_matrix_diagonal": mass_matrix_diagonal_entry,
    "centroidal_momentum_matrix": centroidal_momentum_matrix_entry,
    "centre_of_mass": centre_of_mass_entry,
    "mass_matrix_inverse": mass_matrix_inverse_entry,
    "forward_dynamics": forward_dynamics_entry,
    "kinetic_energy": kinetic_energy_entry,
    "potential_energy": potential_energy_entry,
    "frame_pose": frame_pose_entry,
    "jacobian": jacobian_entry,
    "operational_space_inertia_inverse": operational_space_inertia_inverse_entry,
    "operational_space_inertia": operational_space_inertia_entry,
}
