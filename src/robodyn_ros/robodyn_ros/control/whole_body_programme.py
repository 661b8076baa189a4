"""The whole-body controller's quadratic programme at a state, compiled: what
control.whole_body's module docstring writes, built into named arrays, its equalities
eliminated (control.null_space), solved by DAQP (the dual active-set solver of Arnström,
Bemporad & Axehill 2022) and turned into τ, in one kernel call for the controller
(whole_body_command) and inside the preview's contact rollout (whole_body_torque). The kernel
calls DAQP's C entry point (control.daqp_call).

Over x = (v̇, λ̃), λ̃ = λ / m, the programme is

    minimise Σ_i w_i ‖A_i v̇ − b_i‖² + w_λ ‖λ̃‖²   subject to   E x = e,   C λ̃ ≥ lower,

E x = e the base rows of the dynamics over m and the contacts held, J_c v̇ = ζ; C each
contact's surface-frame cone rows turned into the world. The tasks are the centre of mass,
the frame and the posture. Everything comes from one pass of the world-frame kinematics
(dynamics.kinematics), the velocity-product accelerations (dynamics.task_space), the
fixed-frame RNEA for b = C v + g (whose root force gives m c̈ at v̇ = 0) and the CRBA, whose
composite forces F_j = Ic_j S_j give J_com = F_linᵀ / m. With x = x₀ + Z z (null_space), DAQP
solves the programme over z, one coordinate per actuated joint:

    minimise ½ zᵀ H z + gᵀ z   subject to   lower ≤ A z,

H = Σ_i w_i (A_i Z_v)ᵀ (A_i Z_v) + w_λ Z_λᵀ Z_λ and g likewise from the tasks' residuals at x₀,
A = C Z_λ with the bounds moved by C λ̃₀. The joints' efforts are then τ = M v̇ + b − J_cᵀ λ on
the joint rows, zero on the base's.
"""

# One QP over (v̇, λ), the base's rows its equalities: Herzog et al. 2016 (Auton. Robots 40:473).
# Its equalities eliminated by the null-space method: Nocedal & Wright 2006, §16.2.

from collections import namedtuple

import numpy as np
import numpy.typing as npt

from robodyn_ros.control.daqp_call import NOT_FINITE, PROBLEM, RESULT, quadprog
from robodyn_ros.control.null_space import (
    BASE_ROWS,
    eliminate_base,
    eliminate_contacts,
    null_space_basis,
)
from robodyn_ros.dynamics.arrays import FloatArray, IntArray, PackedTree
from robodyn_ros.dynamics.fixed_frame import world_bias_forces, world_inertias
from robodyn_ros.dynamics.inertia_matrix import (
    CrbaWorkspace,
    composite_inertia_matrix,
    crba_workspace,
)
from robodyn_ros.dynamics.jit import borrowing_routine, kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import forward_kinematics, frame_jacobian_into, frame_pose_into
from robodyn_ros.dynamics.linalg import all_finite
from robodyn_ros.dynamics.rotation import log_so3
from robodyn_ros.dynamics.task_space import (
    classical_acceleration_into,
    velocity_product_accelerations,
)
from robodyn_ros.dynamics.tree import FRAME_BODY, parent_of

COM_TASK, FRAME_TASK, POSTURE_TASK = range(3)  # columns of ProgrammeModel.gains
KP, KD, WEIGHT = range(3)  # rows of ProgrammeModel.gains
PARALLEL = 1e-6  # |x × n| below this: the contact frame's x is along the ground's normal
ACTIVE_AT_LOWER = 3  # DAQP's sense of an inequality row starting active at its lower bound
NO_BOUND = 1e30  # DAQP's infinity
# DAQP's exit flags (and daqp_call.NOT_FINITE); eliminate_equalities also gives OVERDETERMINED
SOLVED, INFEASIBLE, CYCLING, UNBOUNDED, ITERATION_LIMIT, NOT_CONVEX, OVERDETERMINED = (
    1, -1, -2, -3, -4, -5, -6)

ProgrammeModel = namedtuple("ProgrammeModel", [
    "contact_frames", "contact_widths", "cone_start", "surface_cones", "cone_lower", "normal",
    "frame", "gains", "contact_damping", "force_weight", "mass"])
ProgrammeModel.__doc__ = """The programme's fixed parts: the contacts' packed frame rows (k, 13)
and their widths (k,), 3 or 6 force rows; cone_start (k + 1,), where each contact's cone rows
start in surface_cones (rows on [f_t1, f_t2, f_n, τ_t1, τ_t2, τ_n], surface frame) and
cone_lower (their bounds, N); the ground's unit normal (3,); the task frame's packed row (13,);
gains (3, 3), the rows KP, KD and WEIGHT of the tasks COM_TASK, FRAME_TASK and POSTURE_TASK;
kd_c (1/s), w_λ, and the robot's mass m (kg)."""

ProgrammeTargets = namedtuple("ProgrammeTargets", ["com", "position", "orientation", "posture"])
ProgrammeTargets.__doc__ = """The tasks' targets: the centre of mass (3,) and the frame's
position (3,) in the world, m, its orientation (3, 3), and the joints' positions (n - 6,)."""

Programme = namedtuple("Programme", [
    "H", "g", "A", "upper", "lower", "sense", "z", "multipliers", "problem", "result",
    "solution", "basis", "particular", "base", "base_factor", "constraint", "columns",
    "contact_goal", "cones", "M", "b", "J_c", "crba", "velocity", "acceleration", "forces",
    "J", "Jdot_v", "twist", "pose", "J_com", "com", "com_drift", "task_goal", "task_row",
    "rotation_error", "surface"])
Programme.__doc__ = """The programme over z (H, g, and the cone rows A with their bounds upper
and lower and DAQP's sense, those active at the last answer marked so, where the next solve
starts), DAQP's solution z and the rows' multipliers, its problem and result records
(daqp_call); the solution x = (v̇, λ̃) = particular + basis z (n + k, and (n + k, n - 6)) and
null_space's base (6, n - 6 + k + 1), base_factor (6, 6), constraint (k, n - 6 + k + 1) and
columns (n - 6 + k,); what it was built from: the contacts' accelerations ζ (k,) and
cone rows in the world (rows, 6: each on its contact's [f; τ]), M and b = C v + g at the state,
the contacts' Jacobian J_c (k, n); the CRBA's workspace, the bodies' world velocities and
accelerations at v̇ = 0 and the RNEA's forces (n x 6); a frame's J, J̇ v, twist J v and pose;
J_com, c and c̈ at v̇ = 0; a task's goal (6,), one task row over z, R* Rᵀ and a contact's
surface frame (rows t1, t2, n)."""


WholeBodyLaw = namedtuple("WholeBodyLaw", ["model", "targets", "programme"])
WholeBodyLaw.__doc__ = """The whole-body controller as a compiled control law takes it
(control.compiled_laws.ControlLaw.whole_body): its ProgrammeModel, ProgrammeTargets and the
Programme it fills at every control step."""


def empty_programme(tree: np.ndarray, n: int, forces: int, cone_rows: int) -> Programme:
    """A Programme for n velocity rows, `forces` contact force rows and `cone_rows` cone rows;
    made in Python once per controller and filled by whole_body_programme at every call."""
    joints = max(n - BASE_ROWS, 0)
    reduced = joints + forces  # y = (v̇_j, λ̃)
    return Programme(
        H=np.empty((joints, joints)), g=np.empty(joints), A=np.empty((cone_rows, joints)),
        upper=np.full(cone_rows, NO_BOUND), lower=np.empty(cone_rows),
        sense=np.zeros(cone_rows, dtype=np.int32), z=np.empty(joints),
        multipliers=np.empty(cone_rows), problem=np.zeros(1, PROBLEM),
        result=np.zeros(1, RESULT), solution=np.empty(n + forces),
        basis=np.empty((n + forces, joints)), particular=np.empty(n + forces),
        base=np.empty((BASE_ROWS, reduced + 1)), base_factor=np.empty((BASE_ROWS, BASE_ROWS)),
        constraint=np.empty((forces, reduced + 1)), columns=np.empty(reduced, dtype=np.int64),
        contact_goal=np.empty(forces), cones=np.empty((cone_rows, 6)), M=np.empty((n, n)),
        b=np.empty(n), J_c=np.empty((forces, n)), crba=crba_workspace(tree, n),
        velocity=np.empty((n, 6)), acceleration=np.empty((n, 6)), forces=np.empty((n, 6)),
        J=np.empty((6, n)), Jdot_v=np.empty(6), twist=np.empty(6), pose=np.empty((4, 4)),
        J_com=np.empty((3, n)), com=np.empty(3), com_drift=np.empty(3), task_goal=np.empty(6),
        task_row=np.empty((1, joints)), rotation_error=np.empty((3, 3)), surface=np.empty((3, 3)))


def no_whole_body(tree: np.ndarray, n: int) -> WholeBodyLaw:
    """The WholeBodyLaw of a law that is not the whole-body controller's: no contacts, of the
    same types as a real one, so that the rollout kernels compile once for every law."""
    model = ProgrammeModel(
        contact_frames=np.zeros((0, 13)), contact_widths=np.zeros(0, dtype=np.int64),
        cone_start=np.zeros(1, dtype=np.int64), surface_cones=np.zeros((0, 6)),
        cone_lower=np.zeros(0), normal=np.zeros(3), frame=np.zeros(13), gains=np.zeros((3, 3)),
        contact_damping=0.0, force_weight=0.0, mass=1.0)
    targets = ProgrammeTargets(np.zeros(3), np.zeros(3), np.eye(3), np.zeros(0))
    return WholeBodyLaw(model, targets, empty_programme(tree, n, 0, 0))


@kernel_helper
def add_task_row(weight: float, rows: FloatArray, r: int, residual: float, H: FloatArray,
                 g: FloatArray) -> None:
    """H += w rowᵀ row (its lower triangle) and g −= w rowᵀ residual, for one task row over z,
    row r of `rows`: row z ≈ residual. Zero entries are passed over: the rows of Z on the free
    joints select one coordinate of z."""
    for i in range(rows.shape[1]):
        if rows[r, i] == 0.0:
            continue
        scaled = weight * rows[r, i]
        g[i] -= scaled * residual
        for j in range(i + 1):
            H[i, j] += scaled * rows[r, j]


@kernel_helper
def add_task(weight: float, A: FloatArray, goal: FloatArray, basis: FloatArray,
             particular: FloatArray, task_row: FloatArray, H: FloatArray, g: FloatArray) -> None:
    """A task A v̇ = goal (rows of A over v̇) into H and g over z (x = particular + basis z):
    each row A_r Z_v z ≈ goal_r − A_r v̇₀, formed in task_row (1, n − 6)."""
    rows, n = A.shape
    for r in range(rows):
        residual = goal[r]
        for c in range(task_row.shape[1]):
            task_row[0, c] = 0.0
        for j in range(n):
            entry = A[r, j]
            if entry == 0.0:  # a joint off the frame's path
                continue
            residual -= entry * particular[j]
            for c in range(task_row.shape[1]):
                task_row[0, c] += entry * basis[j, c]
        add_task_row(weight, task_row, 0, residual, H, g)


@kernel_helper
def state_terms(tree: PackedTree, gravity: FloatArray, mass: float, q: FloatArray,
                v: FloatArray, crba: CrbaWorkspace, velocity: FloatArray,
                acceleration: FloatArray, forces: FloatArray, M: FloatArray, b: FloatArray,
                J_com: FloatArray, com: FloatArray, com_drift: FloatArray) -> None:
    """The world kinematics at q into crba, the bodies' velocities and accelerations at v̇ = 0,
    b = C v + g by the fixed-frame RNEA (its forces, whose roots carry m c̈ − m g: com_drift,
    c̈ at v̇ = 0 without gravity), then M by the CRBA, J_com from its composite forces and the
    centre of mass com from its roots' composite inertias (h = m c)."""
    X_world, S_world, inertias = crba.X_world, crba.S_world, crba.Ic
    n = v.shape[0]
    forward_kinematics(tree, q, X_world, S_world)
    velocity_product_accelerations(tree, S_world, v, velocity, acceleration)
    world_inertias(tree, X_world, inertias)
    world_bias_forces(tree, gravity, S_world, inertias, velocity, acceleration, forces, b)
    for r in range(3):
        total = 0.0
        for i in range(n):
            if parent_of(tree, i) < 0:
                total += forces[i, r]
        com_drift[r] = total / mass + gravity[r]
    composite_inertia_matrix(tree, S_world, crba.subtree_end, inertias, crba.F, M)
    for r in range(3):
        moment = 0.0
        for j in range(n):
            J_com[r, j] = crba.F[j, r] / mass
            if parent_of(tree, j) < 0:
                moment += inertias[j, 1 + r]
        com[r] = moment / mass


@kernel_helper
def frame_terms(tree: PackedTree, frame: FloatArray, v: FloatArray, X_world: FloatArray,
                S_world: FloatArray, velocity: FloatArray, acceleration: FloatArray,
                pose: FloatArray, J: FloatArray, Jdot_v: FloatArray, twist: FloatArray) -> None:
    """A frame's pose, J, J̇ v (its classical acceleration at v̇ = 0) and twist J v, from
    state_terms' world kinematics and the bodies' velocities and accelerations at v̇ = 0."""
    body = int(frame[FRAME_BODY])
    frame_pose_into(X_world, frame, pose)
    origin = (pose[0, 3], pose[1, 3], pose[2, 3])
    frame_jacobian_into(tree, S_world, body, origin, J)
    classical_acceleration_into(velocity, acceleration, body, origin, Jdot_v)
    for r in range(6):
        s = 0.0
        for j in range(v.shape[0]):
            s += J[r, j] * v[j]
        twist[r] = s


@kernel_helper
def surface_axes(normal: FloatArray, pose: FloatArray, out: FloatArray) -> None:
    """out (3, 3) rows [t1; t2; n]: t1 the contact frame's x axis projected on the ground (its
    y axis where x is along n), t2 = n × t1 (whole_body.surface_frame)."""
    for axis in range(2):
        along = pose[0, axis] * normal[0] + pose[1, axis] * normal[1] + pose[2, axis] * normal[2]
        t = (pose[0, axis] - along * normal[0], pose[1, axis] - along * normal[1],
             pose[2, axis] - along * normal[2])
        length = np.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
        if length > PARALLEL:
            break
    for r in range(3):
        out[0, r] = t[r] / length
        out[2, r] = normal[r]
    out[1, 0] = normal[1] * out[0, 2] - normal[2] * out[0, 1]
    out[1, 1] = normal[2] * out[0, 0] - normal[0] * out[0, 2]
    out[1, 2] = normal[0] * out[0, 1] - normal[1] * out[0, 0]


@kernel_helper
def contact_rows(tree: PackedTree, model: ProgrammeModel, v: FloatArray, crba: CrbaWorkspace,
                 velocity: FloatArray, acceleration: FloatArray, pose: FloatArray,
                 J: FloatArray, Jdot_v: FloatArray, twist: FloatArray, surface: FloatArray,
                 J_c: FloatArray, contact_goal: FloatArray, cones: FloatArray) -> None:
    """Every contact's rows after state_terms: J_c, the accelerations ζ = −γ − kd_c J_c v that
    hold it (γ the classical acceleration of a 3-D contact's origin, the spatial
    [a − ω × ṗ; α] of a 6-D contact's frame), and its cone rows turned into the world, each
    contact's frame_terms and surface axes formed in pose, J, Jdot_v, twist and surface."""
    row = 0
    for k in range(model.contact_widths.shape[0]):
        width = model.contact_widths[k]
        frame_terms(tree, model.contact_frames[k], v, crba.X_world, crba.S_world, velocity,
                    acceleration, pose, J, Jdot_v, twist)
        if width == 6:  # the spatial acceleration: a − ω × ṗ
            Jdot_v[0] -= twist[4] * twist[2] - twist[5] * twist[1]
            Jdot_v[1] -= twist[5] * twist[0] - twist[3] * twist[2]
            Jdot_v[2] -= twist[3] * twist[1] - twist[4] * twist[0]
        for r in range(width):
            for j in range(J.shape[1]):
                J_c[row + r, j] = J[r, j]
            contact_goal[row + r] = -Jdot_v[r] - model.contact_damping * twist[r]
        surface_axes(model.normal, pose, surface)
        local = model.surface_cones
        for c in range(model.cone_start[k], model.cone_start[k + 1]):
            for r in range(width):  # world row = local row on [f; τ] times the surface axes
                axis = r % 3
                half = 3 * (r // 3)
                cones[c, r] = (local[c, half] * surface[0, axis]
                               + local[c, half + 1] * surface[1, axis]
                               + local[c, half + 2] * surface[2, axis])
        row += width


@kernel_helper
def cone_constraints(model: ProgrammeModel, n: int, cones: FloatArray, basis: FloatArray,
                     particular: FloatArray, A: FloatArray, lower: FloatArray) -> None:
    """The cone rows over z: C λ̃ ≥ lower / m as (C Z_λ) z ≥ lower / m − C λ̃₀, C the cones
    in the world (contact_rows), λ̃ the rows of x after its n of v̇."""
    row = 0
    for k in range(model.contact_widths.shape[0]):
        width = model.contact_widths[k]
        for c in range(model.cone_start[k], model.cone_start[k + 1]):
            lower[c] = model.cone_lower[c] / model.mass
            for j in range(A.shape[1]):
                A[c, j] = 0.0
            for r in range(width):
                lower[c] -= cones[c, r] * particular[n + row + r]
                for j in range(A.shape[1]):
                    A[c, j] += cones[c, r] * basis[n + row + r, j]
        row += width


@kernel_helper
def frame_goal(model: ProgrammeModel, targets: ProgrammeTargets, pose: FloatArray,
               Jdot_v: FloatArray, twist: FloatArray, rotation_error: FloatArray,
               task_goal: FloatArray) -> None:
    """The frame task's goal Kp e − Kd J v − J̇ v into task_goal, e = [p* − p; log(R* Rᵀ)],
    from frame_terms' pose, J̇ v and twist of the task frame."""
    R = targets.orientation
    for r in range(3):
        task_goal[r] = targets.position[r] - pose[r, 3]
        for c in range(3):
            rotation_error[r, c] = (R[r, 0] * pose[c, 0] + R[r, 1] * pose[c, 1]
                                    + R[r, 2] * pose[c, 2])
    task_goal[3], task_goal[4], task_goal[5] = log_so3(rotation_error)
    kp, kd = model.gains[KP, FRAME_TASK], model.gains[KD, FRAME_TASK]
    for r in range(6):
        task_goal[r] = kp * task_goal[r] - kd * twist[r] - Jdot_v[r]


@kernel_helper
def eliminate_equalities(mass: float, M: FloatArray, b: FloatArray, J_c: FloatArray,
                         contact_goal: FloatArray, base_factor: FloatArray, base: FloatArray,
                         constraint: FloatArray, columns: IntArray, basis: FloatArray,
                         particular: FloatArray) -> int:
    """x = particular + basis z over the solutions of the equalities M, b, J_c and ζ make
    (control.null_space, its workspaces base_factor, base, constraint and columns). Returns
    SOLVED, OVERDETERMINED where the contacts' rows are dependent, or NOT_FINITE where the
    equalities are not finite (M_bb then no inertia)."""
    if not (all_finite(M) and all_finite(b) and all_finite(J_c) and all_finite(contact_goal)):
        return NOT_FINITE
    if not eliminate_base(M, b, J_c, mass, base_factor, base):
        return NOT_FINITE
    if not eliminate_contacts(J_c, contact_goal, base, constraint, columns):
        return OVERDETERMINED
    null_space_basis(base, constraint, columns, basis, particular)
    return SOLVED


@kernel_helper
def build_programme(tree: PackedTree, gravity: FloatArray, model: ProgrammeModel,
                    targets: ProgrammeTargets, q: FloatArray, v: FloatArray,
                    p: Programme) -> int:
    """The whole-body programme at (q, v) into p, over z (module docstring). The tasks: the
    centre of mass c̈* = Kp (c* − c) − Kd ċ, the frame ẍ* = Kp e − Kd ẋ, the joints
    q̈* = Kp (q* − q) − Kd q̇, and w_λ ‖λ̃‖². Returns eliminate_equalities' flag (SOLVED, or
    why there is no programme). Its passes take p's arrays, not p: numba counts a reference
    to every array of a record handed to a function it inlines."""
    n = v.shape[0]
    gains = model.gains
    H, g, basis, particular, task_goal, task_row = (p.H, p.g, p.basis, p.particular,
                                                    p.task_goal, p.task_row)
    crba, velocity, acceleration = p.crba, p.velocity, p.acceleration
    pose, J, Jdot_v, twist = p.pose, p.J, p.Jdot_v, p.twist
    state_terms(tree, gravity, model.mass, q, v, crba, velocity, acceleration, p.forces, p.M,
                p.b, p.J_com, p.com, p.com_drift)
    contact_rows(tree, model, v, crba, velocity, acceleration, pose, J, Jdot_v, twist,
                 p.surface, p.J_c, p.contact_goal, p.cones)
    flag = eliminate_equalities(model.mass, p.M, p.b, p.J_c, p.contact_goal, p.base_factor,
                                p.base, p.constraint, p.columns, basis, particular)
    if flag != SOLVED:
        return flag
    H[:, :] = 0.0
    g[:] = 0.0
    for r in range(3):
        com_rate = 0.0
        for j in range(n):
            com_rate += p.J_com[r, j] * v[j]
        task_goal[r] = (gains[KP, COM_TASK] * (targets.com[r] - p.com[r])
                        - gains[KD, COM_TASK] * com_rate - p.com_drift[r])
    add_task(gains[WEIGHT, COM_TASK], p.J_com, task_goal[:3], basis, particular, task_row, H,
             g)
    frame_terms(tree, model.frame, v, crba.X_world, crba.S_world, velocity, acceleration, pose,
                J, Jdot_v, twist)
    frame_goal(model, targets, pose, Jdot_v, twist, p.rotation_error, task_goal)
    add_task(gains[WEIGHT, FRAME_TASK], J, task_goal, basis, particular, task_row, H, g)
    for j in range(BASE_ROWS, n):  # the posture task: its rows select the joints
        goal = (gains[KP, POSTURE_TASK] * (targets.posture[j - BASE_ROWS] - q[j + 1])
                - gains[KD, POSTURE_TASK] * v[j])
        add_task_row(gains[WEIGHT, POSTURE_TASK], basis, j, goal - particular[j], H, g)
    for i in range(n, basis.shape[0]):  # w_λ ‖λ̃‖²
        add_task_row(model.force_weight, basis, i, -particular[i], H, g)
    for i in range(H.shape[0]):  # the upper triangle from the lower
        for j in range(i):
            H[j, i] = H[i, j]
    cone_constraints(model, n, p.cones, basis, particular, p.A, p.lower)
    return SOLVED


@kernel_helper
def warm_start(multipliers: FloatArray, flag: int, sense: npt.NDArray[np.int32]) -> None:
    """The cone rows at their lower bounds in DAQP's answer (a negative multiplier) start the
    next solve active (their DAQP sense), a warm start from the last control step's contact
    forces; after no answer, every cone row starts inactive."""
    for r in range(sense.shape[0]):
        sense[r] = ACTIVE_AT_LOWER if flag == SOLVED and multipliers[r] < 0.0 else 0


@borrowing_routine
def whole_body_torque(tree: PackedTree, gravity: FloatArray, model: ProgrammeModel,
                      targets: ProgrammeTargets, q: FloatArray, v: FloatArray, p: Programme,
                      tau: FloatArray) -> int:
    """τ of the whole-body controller at (q, v) into tau (module docstring): the programme
    built into p, solved by DAQP (warm_start), x = x₀ + Z z, τ = M v̇ + b − J_cᵀ λ, zero on
    the base. Returns SOLVED, or why not (build_programme's or quadprog's flag); tau is
    untouched unless SOLVED. A routine: the controller's kernel and the contact rollout share
    one build of it; borrowing, so that its records pass without a count per array."""
    flag = build_programme(tree, gravity, model, targets, q, v, p)
    if flag == SOLVED:
        flag = quadprog(p.H, p.g, p.A, p.upper, p.lower, p.sense, p.z, p.multipliers,
                        p.problem, p.result)
    warm_start(p.multipliers, flag, p.sense)
    if flag != SOLVED:
        return flag
    for i in range(p.solution.shape[0]):
        s = p.particular[i]
        for c in range(p.z.shape[0]):
            s += p.basis[i, c] * p.z[c]
        p.solution[i] = s
    n = v.shape[0]
    for i in range(n):
        s = p.b[i]
        for j in range(n):
            s += p.M[i, j] * p.solution[j]
        for r in range(p.J_c.shape[0]):
            s -= p.J_c[r, i] * model.mass * p.solution[n + r]
        tau[i] = s if i >= BASE_ROWS else 0.0
    return flag


@kernel
def whole_body_command(tree: PackedTree, gravity: FloatArray, model: ProgrammeModel,
                       targets: ProgrammeTargets, q: FloatArray, v: FloatArray, p: Programme,
                       tau: FloatArray) -> int:
    """whole_body_torque for one state: the kernel of control.whole_body's controller."""
    return whole_body_torque(tree, gravity, model, targets, q, v, p, tau)
