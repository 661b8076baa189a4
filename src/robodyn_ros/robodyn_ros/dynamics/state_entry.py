"""C entry points of the single-state kernels, for robodyn_ros._state_call.StateCall.

A control loop calls the dynamics one state at a time, and for a 7-joint arm entering a kernel
through numba's dispatcher costs as much as the kernel. Each function here is a numba cfunc
with one C signature,

    void entry(const double *tree, const double *gravity, int64 n,
               const double *x0, const double *x1, const double *x2, double *out)

that views the pointers as the kernel's arrays (tree (n, WIDTH), gravity (3,), the state
vectors (n,), out shaped as the result) and runs the same kernel the batch path runs. Unused
inputs are NULL and never read.

Compiled entries are cached on disk like the kernels; the module compiles (or loads) them when
it is imported, which robodyn_ros.dynamics.state_entries does on first use.
"""

from numba import carray, cfunc, types

from robodyn_ros.dynamics import (
    energy,
    forward_dynamics,
    inertia_diagonal,
    inertia_inverse,
    inertia_matrix,
    inverse_dynamics,
)
from robodyn_ros.dynamics.jit import FASTMATH
from robodyn_ros.dynamics.tree import WIDTH

_POINTER = types.CPointer(types.float64)
SIGNATURE = types.void(_POINTER, _POINTER, types.int64, _POINTER, _POINTER, _POINTER, _POINTER)

entry = cfunc(SIGNATURE, cache=True, fastmath=FASTMATH)


@entry
def inverse_dynamics_entry(tree, gravity, n, q, qd, qdd, tau):
    inverse_dynamics.inverse_dynamics(
        carray(tree, (n, WIDTH)), carray(gravity, 3), carray(q, n), carray(qd, n),
        carray(qdd, n), None, carray(tau, n),
    )


@entry
def bias_forces_entry(tree, gravity, n, q, qd, _x1, tau):
    inverse_dynamics.bias_forces(
        carray(tree, (n, WIDTH)), carray(gravity, 3), carray(q, n), carray(qd, n),
        carray(tau, n),
    )


@entry
def gravity_torques_entry(tree, gravity, n, q, _x1, _x2, tau):
    inverse_dynamics.gravity_torques(
        carray(tree, (n, WIDTH)), carray(gravity, 3), carray(q, n), carray(tau, n)
    )


@entry
def mass_matrix_entry(tree, gravity, n, q, _x1, _x2, M):
    inertia_matrix.mass_matrix(carray(tree, (n, WIDTH)), carray(q, n), carray(M, (n, n)))


@entry
def mass_matrix_diagonal_entry(tree, gravity, n, q, _x1, _x2, diag):
    inertia_diagonal.mass_matrix_diagonal(carray(tree, (n, WIDTH)), carray(q, n), carray(diag, n))


@entry
def mass_matrix_inverse_entry(tree, gravity, n, q, _x1, _x2, Minv):
    inertia_inverse.mass_matrix_inverse(
        carray(tree, (n, WIDTH)), carray(q, n), carray(Minv, (n, n))
    )


@entry
def forward_dynamics_entry(tree, gravity, n, q, qd, tau, qdd):
    forward_dynamics.forward_dynamics(
        carray(tree, (n, WIDTH)), carray(gravity, 3), carray(q, n), carray(qd, n),
        carray(tau, n), None, carray(qdd, n),
    )


@entry
def kinetic_energy_entry(tree, gravity, n, q, qd, _x1, T):
    energy.kinetic_energy(carray(tree, (n, WIDTH)), carray(q, n), carray(qd, n), carray(T, ()))


@entry
def potential_energy_entry(tree, gravity, n, q, _x1, _x2, V):
    energy.potential_energy(
        carray(tree, (n, WIDTH)), carray(gravity, 3), carray(q, n), carray(V, ())
    )
