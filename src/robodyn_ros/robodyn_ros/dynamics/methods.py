"""The kernels of each quantity by method name: the tables Robot's `method=` dispatches on.

Every kernel of one table has the same signature (the model arrays, then the per-state inputs
and outputs of a batch), so that Robot calls each the same way; what each method computes and
its paper is in the kernel's module and in docs/algorithms.md.
"""

from robodyn_ros.dynamics import (
    forward_dynamics,
    gdahj,
    inertia_inverse,
    inertia_matrix,
    recursive_doubling,
    rnea_columns,
    schur,
    schur_link_frames,
    task_space,
)

# kernel(tree, q, M)
MASS_MATRIX = {
    "crba": inertia_matrix.mass_matrix,
    "gdahj": gdahj.mass_matrix,
    "recursive_doubling": recursive_doubling.mass_matrix,
    "rnea_columns": rnea_columns.mass_matrix,
}

# kernel(tree, q, Minv)
MASS_MATRIX_INVERSE = {
    "aba": inertia_inverse.mass_matrix_inverse,
    "ltdl": inertia_inverse.mass_matrix_inverse_factored,
    "schur": schur.mass_matrix_inverse_schur,
    "schur_bcr": schur.mass_matrix_inverse_schur_bcr,
}

# kernel(model, gravity, q, qd, tau, f_ext, qdd); the model is the tree, except for "schur",
# which takes its link frames' constants (schur_link_frames.link_frames of the tree)
FORWARD_DYNAMICS = {
    "aba": forward_dynamics.forward_dynamics,
    "cholesky": forward_dynamics.forward_dynamics_factored,
    "schur": schur_link_frames.forward_dynamics_schur,
    "schur_bcr": schur.forward_dynamics_schur_bcr,
}
LINK_FRAME_METHODS = ("schur",)

# kernel(tree, frame rows, task rows, q, inverse, Lambda or Lambda_inv)
OPERATIONAL_SPACE_INERTIA = {
    "dense": task_space.operational_space_inertia,
    "recursive": task_space.operational_space_inertia_recursive,
    "schur": task_space.operational_space_inertia_schur,
    "schur_bcr": task_space.operational_space_inertia_schur_bcr,
}

# The methods through the joint constraint forces (Sharf & D'Eleuterio, Fijany): their system
# has the joint torque as a given force on each body, with no term for the rotor's a_i q̈_i,
# so a robot with armature is refused rather than answered for the robot without it.
CONSTRAINT_FORCE_METHODS = (
    "schur", "schur_bcr", "jacobi", "gauss_seidel", "sor", "jacobi_si", "jacobi_cg",
)

__all__ = [
    "CONSTRAINT_FORCE_METHODS",
    "FORWARD_DYNAMICS",
    "LINK_FRAME_METHODS",
    "MASS_MATRIX",
    "MASS_MATRIX_INVERSE",
    "OPERATIONAL_SPACE_INERTIA",
]
