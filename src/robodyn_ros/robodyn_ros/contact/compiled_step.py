"""One time step of a robot in a world of planes, compiled: the pieces of a numba kernel that
contact.time_step's `contact_step` calls once and the preview's contact rollout calls every
step (sim.contact_rollout).

The step (Stewart & Trinkle 1996, time_step's module docstring):

    contacts at q                                   (detection, below)
    v_free = v + dt q̈(q, v, τ)                     (ABA without contacts; with some,
                                                     q̈ = M⁻¹ (τ − b): M = L Lᵀ by the CRBA
                                                     and Cholesky, b by the fixed-frame RNEA)
    G = J M⁻¹ Jᵀ = Yᵀ Y,  Y = L⁻¹ Jᵀ
    λ = PGS(G, J v_free, u_min, μ)                   (solver.projected_gauss_seidel,
                                                     from sticking_start)
    v⁺ = v_free + L⁻ᵀ (Y λ),   q⁺ = q ⊕ dt v⁺,

G and λ over the contacts that bind: those touching or inside their plane, and those still
open whose gap v_free or the others' impulses close (solve_contacts); the rest take none.

Detection: each shape on a moving body (ContactModel) whose bounding ball reaches a plane
within the margin gives its candidate points against it: a box's corners and a mesh's hull
vertices (fixed in the shape's frame; those of a cluster only when the ball that holds the
cluster reaches the plane within the margin), a sphere's lowest point, a capsule's two end
spheres' lowest points, a cylinder's two rim points lowest along the plane (its
2 × RIM_POINTS rim points when it stands on a face). Those under the margin are contacts, and
of more than four of one shape on one plane its lowest and its extremes along the plane's two
tangents, ties to the point first in the shape's order, kept in that order
(geometry.CollisionShape.support_points and detection.support_polygon say the same in numpy).
"""

import math
from collections import namedtuple

import numpy as np

from robodyn_ros.contact.geometry import FLAT, RIM_POINTS
from robodyn_ros.contact.solver import ROWS, SWEEP_ROWS, projected_gauss_seidel
from robodyn_ros.dynamics.arrays import FloatArray, IntArray, PackedTree
from robodyn_ros.dynamics.constrained_dynamics import frame_twist
from robodyn_ros.dynamics.fixed_frame import world_bias_forces, world_inertias
from robodyn_ros.dynamics.forward_dynamics import aba_one, aba_workspace
from robodyn_ros.dynamics.inertia_matrix import (
    CrbaWorkspace,
    composite_inertia_matrix,
    crba_workspace,
)
from robodyn_ros.dynamics.jit import borrowing_routine, kernel, kernel_helper, routine
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.lie_group import integrate_configuration
from robodyn_ros.dynamics.linalg import (
    back_substitute,
    carved,
    cholesky,
    cholesky_solve,
    copy_vector,
    forward_substitute,
)
from robodyn_ros.dynamics.task_space import body_velocities, velocity_product_accelerations
from robodyn_ros.dynamics.tree import parent_of

SPHERE, BOX, CYLINDER, CAPSULE, MESH = range(5)
SHAPE_CODES = {"sphere": SPHERE, "box": BOX, "cylinder": CYLINDER, "capsule": CAPSULE,
               "mesh": MESH}
MOST_KEPT = 5  # contacts of one shape on one plane at most: its lowest and four extremes

SMALL_DELASSUS = 24  # rows of G up to which plain loops form it faster than a BLAS call
# the smallest pivot of G's Cholesky factor, relative to its diagonal entry, from which the
# sweeps start at the impulses that hold every contact (sticking_start); below it the contacts
# are redundant (a box's four corners) and the sweeps start from zero, as they do for a G of
# more than SMALL_DELASSUS rows, whose factor would cost more than the sweeps it saves
STICKING_PIVOT = 1e-6

# step statuses
CONVERGED, NOT_CONVERGED, NOT_POSITIVE_DEFINITE = 0, 1, 2

ContactModel = namedtuple("ContactModel", (
    "body",         # (S,) int64, the body each shape moves with
    "placement",    # (S, 4, 4) each shape's frame in its body's frame
    "kind",         # (S,) int64, SPHERE, BOX, CYLINDER, CAPSULE or MESH
    "size",         # (S, 2) a sphere's, cylinder's or capsule's radius and length (m)
    "reach",        # (S,) the radius of a ball about the shape's origin that holds it (m)
    "points",       # (3, P) a box's corners and a mesh's hull vertices, in their shape's frame,
                    # a row per axis, shape after shape, each shape's cluster after cluster
    "point_rank",   # (P,) int64, each point's index among its shape's (the candidates' order)
    "cluster_start",  # (S + 1,) int64, where each shape's clusters start
    "cluster_point_start",  # (C + 1,) int64, where each cluster's points start in `points`
    "cluster_centre",  # (C, 3) each cluster's centre in its shape's frame
    "cluster_radius",  # (C,) the radius of a ball about the centre that holds its points (m)
    "planes",       # (W, 3, 3) each plane's rows [n; t1; t2]
    "plane_point",  # (W, 3) a point of each plane
    "friction",     # (W,) each plane's μ
))

StepSettings = namedtuple("StepSettings", (
    "dt", "margin", "baumgarte", "tolerance", "max_iterations", "relaxation"))
StepSettings.__doc__ = """The step dt (s) and time_step.ContactSettings' numbers."""

# A step's contacts, the first `count` rows of each (capacity: contact_capacity).
Contacts = namedtuple("Contacts", (
    "shape",     # (K,) int64, the shape that touches
    "plane",     # (K,) int64, the plane it touches
    "point",     # (K, 3) where, in the world (m)
    "height",    # (K,) its height over the plane at the step's start (m, negative inside)
    "force",     # (K, 3) the world's force on the robot there, world axes (N)
    "velocity",  # (K, 3) the robot's point there after the step, world axes (m/s)
))

# The candidate points of one shape on one plane: the shape's pose in the world (3 x 4), the
# points (P, 3), their heights over the plane and their ranks in the shape's order, the kept
# ones' indices and a workspace of MOST_KEPT for keep_support_polygon.
Candidates = namedtuple("Candidates", ("pose", "points", "height", "rank", "kept", "chosen"))

# The contact solve's arrays: its floats carved from one block (solve_size: the Jacobian, the
# bounds, v_free, the impulses, the bodies' velocities, and contact_impulses' Y, u_free,
# bounds, impulses, step, G and the sweeps' workspace) for the most contacts a step can find,
# which contacts are solved and the indices of those.
ContactSolve = namedtuple("ContactSolve", ("block", "solved", "binding"))

# What a step needs besides the contacts: the ABA's and the CRBA's workspaces, the stage
# arrays of one ABA call, M, its factor and b = C q̇ + g (shared with a control law's, which
# may have them at the step's start), the bodies' velocities, accelerations at q̈ = 0 and
# forces of the fixed-frame RNEA (n x 6), the Candidates of one shape on one plane and the
# ContactSolve.
StepWorkspace = namedtuple("StepWorkspace", (
    "aba", "Q", "QD", "TAU", "QDD", "crba", "M", "L", "b", "velocity", "acceleration",
    "forces", "theta", "candidates", "solve"))


def contact_capacity(model: ContactModel) -> int:
    """The most contacts a step can find: MOST_KEPT of each shape on each plane, fewer for a
    shape with fewer candidates."""
    counts = np.diff(model.cluster_point_start[model.cluster_start])  # each shape's points
    candidates = np.where(model.kind == SPHERE, 1, np.where(model.kind == CAPSULE, 2, counts))
    candidates = np.where(model.kind == CYLINDER, 2 * RIM_POINTS, candidates)
    return int(np.minimum(candidates, MOST_KEPT).sum()) * len(model.friction)


@kernel_helper
def most_candidates(model: ContactModel) -> int:
    """The most candidate points one shape of `model` can have against a plane."""
    return max(2 * RIM_POINTS, model.points.shape[1])


@kernel_helper
def contacts_of(capacity: int) -> Contacts:
    """Contacts arrays for `capacity` contacts."""
    return Contacts(np.empty(capacity, dtype=np.int64), np.empty(capacity, dtype=np.int64),
                    np.empty((capacity, 3)), np.empty(capacity), np.empty((capacity, 3)),
                    np.empty((capacity, 3)))


@kernel_helper
def solve_size(n: int, capacity: int) -> int:
    """The floats of a ContactSolve's block for n velocities and `capacity` contacts."""
    rows = ROWS * capacity
    # J, least, friction, v_free, the impulses and the bodies' velocities
    solve = rows * n + 2 * capacity + n + rows + 6 * n
    # step, Y, u_free, bounds, impulses, G, the sweeps' workspace, G's factor and the start
    impulses = (n + n * rows + rows + 2 * capacity + rows + rows * rows + SWEEP_ROWS * rows
                + rows * rows + rows)
    return solve + impulses


@kernel_helper
def step_workspace(crba: CrbaWorkspace, M: FloatArray, L: FloatArray, b: FloatArray, nq: int,
                   most: int, capacity: int) -> StepWorkspace:
    """A StepWorkspace over a CRBA workspace, M, L and b (n joints), for nq coordinates,
    shapes of at most `most` candidate points (most_candidates) and steps of at most
    `capacity` contacts (contact_capacity)."""
    n = b.shape[0]
    return StepWorkspace(
        aba=aba_workspace(n, 1), Q=np.empty((1, nq)), QD=np.empty((1, n)),
        TAU=np.empty((1, n)), QDD=np.empty((1, n)), crba=crba, M=M, L=L, b=b,
        velocity=np.empty((n, 6)), acceleration=np.empty((n, 6)), forces=np.empty((n, 6)),
        theta=np.empty(n), candidates=Candidates(
            pose=np.empty((3, 4)), points=np.empty((most, 3)), height=np.empty(most),
            rank=np.empty(most, np.int64), kept=np.empty(most, np.int64),
            chosen=np.empty(MOST_KEPT, np.int64)),
        solve=ContactSolve(block=np.empty(solve_size(n, capacity)),
                           solved=np.empty(capacity, np.bool_),
                           binding=np.empty(capacity, np.int64)))


@kernel_helper
def place_shape(X_world: FloatArray, body: int, placements: FloatArray, shape: int,
                out: FloatArray) -> None:
    """out (3 x 4) = [R | o], the pose in the world of the shape whose placement in its body
    is placements[shape]: its body's pose (X_world row, rotation row by row then translation)
    composed with that placement."""
    for r in range(3):
        for c in range(4):
            s = X_world[body, 9 + r] if c == 3 else 0.0
            for k in range(3):
                s += X_world[body, 3 * r + k] * placements[shape, k, c]
            out[r, c] = s


@kernel_helper
def packed_candidates(model: ContactModel, s: int, pose: FloatArray, normal: FloatArray,
                      origin: FloatArray, margin: float, out: FloatArray, heights: FloatArray,
                      ranks: IntArray) -> int:
    """The packed points of box or mesh shape s at `pose` (3 x 4) closer to the plane (unit
    `normal` through `origin`) than `margin`, into out (k x 3), their heights into heights
    and their point_rank into ranks; returns k. A point's height is n_s · p_s + h_o, n_s = Rᵀ n
    the normal in the shape's frame and h_o its origin's height, so only the kept are placed;
    a cluster whose ball (centre c, radius r) is not under the margin (n_s · c + h_o − r) is
    passed over whole."""
    normal_in_shape = (pose[0, 0] * normal[0] + pose[1, 0] * normal[1] + pose[2, 0] * normal[2],
                       pose[0, 1] * normal[0] + pose[1, 1] * normal[1] + pose[2, 1] * normal[2],
                       pose[0, 2] * normal[0] + pose[1, 2] * normal[1] + pose[2, 2] * normal[2])
    origin_height = ((pose[0, 3] - origin[0]) * normal[0] + (pose[1, 3] - origin[1]) * normal[1]
                     + (pose[2, 3] - origin[2]) * normal[2])
    points, centre, radius = model.points, model.cluster_centre, model.cluster_radius
    point_start, point_rank = model.cluster_point_start, model.point_rank
    count = 0
    for k in range(model.cluster_start[s], model.cluster_start[s + 1]):
        if (origin_height + normal_in_shape[0] * centre[k, 0] + normal_in_shape[1] * centre[k, 1]
                + normal_in_shape[2] * centre[k, 2] - radius[k] >= margin):
            continue
        for p in range(point_start[k], point_start[k + 1]):
            x, y, z = points[0, p], points[1, p], points[2, p]
            height = (origin_height + normal_in_shape[0] * x + normal_in_shape[1] * y
                      + normal_in_shape[2] * z)
            if height < margin:
                for r in range(3):
                    out[count, r] = pose[r, 3] + pose[r, 0] * x + pose[r, 1] * y + pose[r, 2] * z
                heights[count], ranks[count] = height, point_rank[p]
                count += 1
    return count


@kernel_helper
def candidate_points(kind: int, radius: float, length: float, pose: FloatArray,
                     normal: FloatArray, out: FloatArray) -> int:
    """The candidate points of a sphere, capsule or cylinder (`kind`, its radius and length)
    at `pose` (3 x 4) against a plane of unit `normal`, into out (k x 3); returns k."""
    half = 0.5 * length
    if kind == SPHERE:
        for r in range(3):
            out[0, r] = pose[r, 3] - radius * normal[r]
        return 1
    axis_inward = -(pose[0, 2] * normal[0] + pose[1, 2] * normal[1] + pose[2, 2] * normal[2])
    if kind == CAPSULE:  # each end sphere's lowest point
        for e in range(2):
            for r in range(3):
                out[e, r] = (pose[r, 3] + (half if e == 0 else -half) * pose[r, 2]
                             - radius * normal[r])
        return 2
    across = (-normal[0] - axis_inward * pose[0, 2], -normal[1] - axis_inward * pose[1, 2],
              -normal[2] - axis_inward * pose[2, 2])  # the inward normal across the axis
    length = math.sqrt(across[0] ** 2 + across[1] ** 2 + across[2] ** 2)
    if length >= FLAT:  # its two rim points lowest along the plane
        for e in range(2):
            for r in range(3):
                out[e, r] = (pose[r, 3] + (half if e == 0 else -half) * pose[r, 2]
                             + radius * across[r] / length)
        return 2
    count = 0  # standing on a face: every rim point
    for e in range(2):
        for a in range(RIM_POINTS):
            angle = 2.0 * np.pi * a / RIM_POINTS
            x, y = radius * math.cos(angle), radius * math.sin(angle)
            for r in range(3):
                out[count, r] = (pose[r, 3] + (half if e == 0 else -half) * pose[r, 2]
                                 + x * pose[r, 0] + y * pose[r, 1])
            count += 1
    return count


@kernel_helper
def along(direction: tuple[float, float, float], points: FloatArray, c: int) -> float:
    """direction · points[c], the point's coordinate along a 3-tuple direction."""
    return direction[0] * points[c, 0] + direction[1] * points[c, 1] + direction[2] * points[c, 2]


@kernel_helper
def precedes(value: float, rank: int, other_value: float, other_rank: int) -> bool:
    """(value, rank) comes first: the smaller value, or on a tie the lower rank."""
    return value < other_value or (value == other_value and rank < other_rank)


@kernel_helper
def sort_by_rank(kept: IntArray, count: int, ranks: IntArray) -> None:
    """kept[:count] (candidate indices) sorted by their ranks, in place (count ≤ MOST_KEPT)."""
    for k in range(1, count):
        c, j = kept[k], k
        while j > 0 and ranks[kept[j - 1]] > ranks[c]:
            kept[j] = kept[j - 1]
            j -= 1
        kept[j] = c


@kernel_helper
def keep_support_polygon(points: FloatArray, heights: FloatArray, ranks: IntArray, count: int,
                         tangents: FloatArray, margin: float, kept: IntArray,
                         chosen: IntArray) -> int:
    """The candidates kept as contacts into kept, returns how many: those under `margin`, and
    of more than four, the lowest and the extremes along the two `tangents` (rows 1 and 2 of
    a plane's frame), ties to the lower rank, in the order of their ranks; chosen
    (MOST_KEPT,) int64 is a workspace."""
    near = 0
    for c in range(count):
        if heights[c] < margin:
            kept[near] = c
            near += 1
    if near <= 4:
        sort_by_rank(kept, near, ranks)
        return near
    chosen[0] = kept[0]
    for k in range(1, near):
        if precedes(heights[kept[k]], ranks[kept[k]], heights[chosen[0]], ranks[chosen[0]]):
            chosen[0] = kept[k]
    for t in range(2):
        tangent = (tangents[t + 1, 0], tangents[t + 1, 1], tangents[t + 1, 2])
        low, high = kept[0], kept[0]
        low_value = high_value = along(tangent, points, kept[0])
        for k in range(1, near):
            c = kept[k]
            value = along(tangent, points, c)
            if precedes(value, ranks[c], low_value, ranks[low]):
                low, low_value = c, value
            if precedes(-value, ranks[c], -high_value, ranks[high]):
                high, high_value = c, value
        chosen[1 + 2 * t], chosen[2 + 2 * t] = low, high
    sort_by_rank(chosen, MOST_KEPT, ranks)
    unique = 0
    for k in range(MOST_KEPT):
        if unique == 0 or chosen[k] != kept[unique - 1]:
            kept[unique] = chosen[k]
            unique += 1
    return unique


@kernel_helper
def find_contacts(model: ContactModel, margin: float, X_world: FloatArray,
                  candidates: Candidates, contacts: Contacts) -> int:
    """The contacts of the shapes, their bodies at X_world, with the planes, into the first
    rows of `contacts` (shape, plane, point, height); returns how many."""
    pose, points, heights, ranks = (candidates.pose, candidates.points, candidates.height,
                                    candidates.rank)
    shape, plane, point, height = contacts.shape, contacts.plane, contacts.point, contacts.height
    kept, chosen = candidates.kept, candidates.chosen
    bodies, placement, reach, kinds, size = (model.body, model.placement, model.reach,
                                             model.kind, model.size)
    found = 0
    for w in range(model.friction.shape[0]):
        frame, origin = model.planes[w], model.plane_point[w]
        normal = frame[0]
        for s in range(bodies.shape[0]):
            place_shape(X_world, bodies[s], placement, s, pose)
            gap = 0.0
            for r in range(3):
                gap += (pose[r, 3] - origin[r]) * normal[r]
            if gap > reach[s] + margin:
                continue
            kind = kinds[s]
            if kind == BOX or kind == MESH:
                count = packed_candidates(model, s, pose, normal, origin, margin, points,
                                          heights, ranks)
            else:
                count = candidate_points(kind, size[s, 0], size[s, 1], pose, normal, points)
                for c in range(count):
                    ranks[c] = c
                    heights[c] = 0.0
                    for r in range(3):
                        heights[c] += (points[c, r] - origin[r]) * normal[r]
            for k in range(keep_support_polygon(points, heights, ranks, count, frame, margin,
                                                kept, chosen)):
                c = kept[k]
                shape[found], plane[found], height[found] = s, w, heights[c]
                for r in range(3):
                    point[found, r] = points[c, r]
                found += 1
    return found


@kernel_helper
def contact_jacobian_rows(tree: PackedTree, S_world: FloatArray, planes: FloatArray, w: int,
                          body: int, point: FloatArray, c: int, J: FloatArray) -> None:
    """Contact c's rows of J (3 of n): its point (row c of `point`) on `body`, its linear
    velocity in the frame of plane w (planes[w], rows [n; t1; t2]): column j on the body's
    path, the joint's world motion [v_O; ω] at the point, v_O + ω × p; zero elsewhere."""
    p = (point[c, 0], point[c, 1], point[c, 2])
    for r in range(ROWS):
        for j in range(J.shape[1]):
            J[ROWS * c + r, j] = 0.0
    j = body
    while j >= 0:
        linear = (S_world[j, 0] + S_world[j, 4] * p[2] - S_world[j, 5] * p[1],
                  S_world[j, 1] + S_world[j, 5] * p[0] - S_world[j, 3] * p[2],
                  S_world[j, 2] + S_world[j, 3] * p[1] - S_world[j, 4] * p[0])
        for r in range(ROWS):
            J[ROWS * c + r, j] = (planes[w, r, 0] * linear[0] + planes[w, r, 1] * linear[1]
                                  + planes[w, r, 2] * linear[2])
        j = parent_of(tree, j)


@kernel_helper
def normal_velocity(planes: FloatArray, w: int, body_velocity: FloatArray, body: int,
                    point: FloatArray, c: int) -> float:
    """The velocity along the normal of plane w (planes[w, 0]) of contact c's point (row c of
    `point`) on `body`, v_O + ω × p from the bodies' spatial velocities (body_velocities):
    its normal row of J times q̇, without forming the row."""
    linear, _ = frame_twist(body_velocity, body, (point[c, 0], point[c, 1], point[c, 2]))
    return planes[w, 0, 0] * linear[0] + planes[w, 0, 1] * linear[1] + planes[w, 0, 2] * linear[2]


@kernel_helper
def row_times(A: FloatArray, r: int, x: FloatArray) -> float:
    """Row r of A times x."""
    s = 0.0
    for j in range(x.shape[0]):
        s += A[r, j] * x[j]
    return s


@routine
def gram_by_blas(Y: FloatArray, G: FloatArray) -> None:
    """G = Yᵀ Y by BLAS: a routine, as its product allocates."""
    G[:, :] = Y.T @ Y


@kernel_helper
def gram(Y: FloatArray, G: FloatArray) -> None:
    """G = Yᵀ Y (m x m) of Y (n x m): by BLAS over SMALL_DELASSUS columns, else in loops
    (row by row of Y, each adding its outer product to the lower triangle)."""
    n, m = Y.shape
    if m > SMALL_DELASSUS:
        gram_by_blas(Y, G)
        return
    G[:, :] = 0.0
    for j in range(n):
        for r in range(m):
            for c in range(r + 1):
                G[r, c] += Y[j, r] * Y[j, c]
    for r in range(m):
        for c in range(r):
            G[c, r] = G[r, c]


@kernel_helper
def free_velocity(L: FloatArray, b: FloatArray, v: FloatArray, tau: FloatArray, dt: float,
                  qdd: FloatArray, out: FloatArray) -> None:
    """out = v + dt q̈, q̈ = L⁻ᵀ L⁻¹ (τ − b) formed in qdd, M = L Lᵀ and b at (q, v)."""
    for i in range(v.shape[0]):
        qdd[i] = tau[i] - b[i]
    cholesky_solve(L, qdd)
    for i in range(v.shape[0]):
        out[i] = v[i] + dt * qdd[i]


@kernel_helper
def free_velocity_by_aba(tree: PackedTree, gravity: FloatArray, q: FloatArray, v: FloatArray,
                         tau: FloatArray, dt: float, ws: StepWorkspace,
                         out: FloatArray) -> None:
    """out = v + dt q̈(q, v, τ) by one ABA (ws's stage arrays and ABA workspace)."""
    copy_vector(q, ws.Q[0])
    copy_vector(v, ws.QD[0])
    copy_vector(tau, ws.TAU[0])
    aba_one(tree, gravity, ws.Q, ws.QD, ws.TAU, None, ws.QDD, 0, ws.aba)
    for i in range(v.shape[0]):
        out[i] = v[i] + dt * ws.QDD[0, i]


@kernel_helper
def sticking_start(G: FloatArray, free: FloatArray, least: FloatArray, friction: FloatArray,
                   factor: FloatArray, start: FloatArray, impulses: FloatArray) -> None:
    """The impulses (k, 3) PGS starts from: those that hold every contact where it is,
    G λ = u* − u_free (u* each contact's least normal velocity, no slip), each projected on
    its cone (λ_n ≥ 0, ‖λ_t‖ ≤ μ λ_n). Contacts that stand still are then solved at the first
    sweep. Zero where G's Cholesky factor (into `factor`) has a pivot under STICKING_PIVOT of
    its diagonal entry (redundant contacts, whose impulses G does not fix) and where G has
    more than SMALL_DELASSUS rows. `start` (3k,) is a workspace."""
    size = free.shape[0]
    impulses[:, :] = 0.0
    if size > SMALL_DELASSUS or not cholesky(G, 0.0, factor):
        return
    for r in range(size):  # factor's diagonal holds 1 / the pivot's square root
        if factor[r, r] * factor[r, r] * G[r, r] * STICKING_PIVOT > 1.0:
            return
        start[r] = (least[r // ROWS] if r % ROWS == 0 else 0.0) - free[r]
    cholesky_solve(factor, start)
    for i in range(impulses.shape[0]):
        normal = max(start[ROWS * i], 0.0)
        tangent_1, tangent_2 = start[ROWS * i + 1], start[ROWS * i + 2]
        reach, length = friction[i] * normal, math.sqrt(tangent_1 ** 2 + tangent_2 ** 2)
        scale = reach / length if length > reach else 1.0
        impulses[i, 0], impulses[i, 1], impulses[i, 2] = (normal, scale * tangent_1,
                                                          scale * tangent_2)


@kernel_helper
def contact_impulses(J: FloatArray, L: FloatArray, v_free: FloatArray, least: FloatArray,
                     friction: FloatArray, settings: StepSettings, binding: IntArray,
                     impulses: FloatArray, block: FloatArray) -> tuple[FloatArray, int, float]:
    """PGS (solver.projected_gauss_seidel) on the contacts `binding` (indices) alone, on
    G = Yᵀ Y, Y = L⁻¹ Jᵀ over their rows of J, from sticking_start: their impulses into
    `impulses`, the others' zero; Y, G, the sweeps' and the start's workspaces and the binding
    contacts' arrays carved from `block`.
    Returns (M⁻¹ Jᵀ λ (n x 1, a view of block), sweeps, velocity change of the last sweep)."""
    n, count = J.shape[1], binding.shape[0]
    size = ROWS * count
    step, at = carved(block, 0, (n, 1))
    Y, at = carved(block, at, (n, size))
    free, at = carved(block, at, (size,))
    binding_least, at = carved(block, at, (count,))
    binding_friction, at = carved(block, at, (count,))
    binding_impulses, at = carved(block, at, (count, ROWS))
    G, at = carved(block, at, (size, size))
    sweep_workspace, at = carved(block, at, (SWEEP_ROWS, size))
    factor, at = carved(block, at, (size, size))
    start, at = carved(block, at, (size,))
    impulses[:, :] = 0.0
    step[:, :] = 0.0
    if count == 0:
        return step, 0, 0.0
    for k in range(count):
        c = binding[k]
        binding_least[k], binding_friction[k] = least[c], friction[c]
        for r in range(ROWS):
            for j in range(n):
                Y[j, ROWS * k + r] = J[ROWS * c + r, j]
            free[ROWS * k + r] = row_times(J, ROWS * c + r, v_free)
    forward_substitute(L, Y)  # Y = L⁻¹ Jᵀ
    gram(Y, G)
    sticking_start(G, free, binding_least, binding_friction, factor, start, binding_impulses)
    sweeps = projected_gauss_seidel(G, free, binding_least, binding_friction,
                                    settings.tolerance, settings.max_iterations,
                                    settings.relaxation, binding_impulses, sweep_workspace)
    for k in range(count):
        for r in range(ROWS):
            impulse = binding_impulses[k, r]
            impulses[binding[k], r] = impulse
            for j in range(n):
                step[j, 0] += Y[j, ROWS * k + r] * impulse
    back_substitute(L, step)  # M⁻¹ Jᵀ λ = L⁻ᵀ Y λ
    return step, sweeps.iterations, sweeps.change


@kernel_helper
def solve_contacts(tree: PackedTree, model: ContactModel, settings: StepSettings,
                   contacts: Contacts, count: int, v_next: FloatArray, S_world: FloatArray,
                   L: FloatArray, solve: ContactSolve) -> tuple[int, int, float]:
    """v_next (holding v_free) ← v_free + M⁻¹ Jᵀ λ, λ the contacts' impulses by PGS
    (contact_impulses; M = L Lᵀ, S_world the bodies' motion subspaces); each contact's force
    and velocity after the step into `contacts`. A contact still open (its gap h > 0) that
    v_free does not close (u_n ≥ −h/dt) is left out of the solve, where it takes no impulse,
    and brought in (the solve made again) if the others' impulses close it: the impulses then
    hold every contact's conditions, as a solve of all would. J's rows are formed for the
    contacts solved alone; the others' velocities come from the bodies' velocities
    (body_velocities). Returns (status, sweeps, velocity change of the last sweep). Its arrays
    are carved from `solve`."""
    n = v_next.shape[0]
    J, at = carved(solve.block, 0, (ROWS * count, n))
    least, at = carved(solve.block, at, (count,))
    friction, at = carved(solve.block, at, (count,))
    v_free, at = carved(solve.block, at, (n,))
    impulses, at = carved(solve.block, at, (count, ROWS))
    body_velocity, at = carved(solve.block, at, (n, 6))
    solved, binding = solve.solved, solve.binding
    planes, bodies, plane_friction = model.planes, model.body, model.friction  # taken out once
    shape, plane, point, height = contacts.shape, contacts.plane, contacts.point, contacts.height
    body_velocities(tree, S_world, v_next, body_velocity)
    for c in range(count):
        h, body = height[c], bodies[shape[c]]
        least[c] = -(settings.baumgarte if h < 0.0 else 1.0) * h / settings.dt
        friction[c] = plane_friction[plane[c]]
        solved[c] = (h <= 0.0 or normal_velocity(planes, plane[c], body_velocity, body, point,
                                                  c) < least[c])
        if solved[c]:
            contact_jacobian_rows(tree, S_world, planes, plane[c], body, point, c, J)
    for j in range(n):
        v_free[j] = v_next[j]
    iterations = 0
    while True:
        bound = 0
        for c in range(count):
            if solved[c]:
                binding[bound] = c
                bound += 1
        step, sweeps, change = contact_impulses(J, L, v_free, least, friction, settings,
                                                binding[:bound], impulses, solve.block[at:])
        iterations += sweeps
        for j in range(n):
            v_next[j] = v_free[j] + step[j, 0]
        body_velocities(tree, S_world, v_next, body_velocity)
        closed = False
        for c in range(count):
            body = bodies[shape[c]]
            if not solved[c] and normal_velocity(planes, plane[c], body_velocity, body, point,
                                                 c) < least[c] - settings.tolerance:
                solved[c] = True
                contact_jacobian_rows(tree, S_world, planes, plane[c], body, point, c, J)
                closed = True
        if not closed or change > settings.tolerance:
            break
    force, velocity = contacts.force, contacts.velocity
    for c in range(count):
        w = plane[c]
        after, _ = frame_twist(body_velocity, bodies[shape[c]],
                               (point[c, 0], point[c, 1], point[c, 2]))
        for r in range(3):
            force[c, r] = (impulses[c, 0] * planes[w, 0, r] + impulses[c, 1] * planes[w, 1, r]
                           + impulses[c, 2] * planes[w, 2, r]) / settings.dt
            velocity[c, r] = after[r]
    converged = change <= settings.tolerance
    return (CONVERGED if converged else NOT_CONVERGED), iterations, change


@kernel_helper
def factor_state(tree: PackedTree, gravity: FloatArray, v: FloatArray, crba: CrbaWorkspace,
                 velocity: FloatArray, acceleration: FloatArray, forces: FloatArray,
                 M: FloatArray, L: FloatArray, b: FloatArray) -> bool:
    """At the world kinematics crba holds and v: b = C v + g by the fixed-frame RNEA (the
    bodies' velocities, accelerations at q̈ = 0 and forces), M by the CRBA and its Cholesky
    factor L. Returns False where M is not positive definite."""
    velocity_product_accelerations(tree, crba.S_world, v, velocity, acceleration)
    world_inertias(tree, crba.X_world, crba.Ic)
    world_bias_forces(tree, gravity, crba.S_world, crba.Ic, velocity, acceleration, forces, b)
    composite_inertia_matrix(tree, crba.S_world, crba.subtree_end, crba.Ic, crba.F, M)
    return cholesky(M, 0.0, L)


@borrowing_routine
def world_step(tree: PackedTree, gravity: FloatArray, model: ContactModel,
               settings: StepSettings, q: FloatArray, v: FloatArray, tau: FloatArray,
               factored: bool, q_next: FloatArray, v_next: FloatArray, ws: StepWorkspace,
               contacts: Contacts) -> tuple[int, int, int, float]:
    """(q_next, v_next) one step from (q, v) under τ (module docstring), the step's contacts
    in the first rows of `contacts`. `factored`: ws already holds the world kinematics at q
    (crba's X_world and S_world), M = L Lᵀ and b at (q, v) (a control law's, at the step
    where it ran). Otherwise the step makes them itself where it finds contacts, whose
    Delassus matrix wants L anyway, and runs one ABA where it finds none. Returns (contact
    count, status, sweeps, velocity change of the last sweep). Compiled once on its own for
    the step's kernel and the contact rollout's (inlined, it tripled the rollout's compile),
    borrowing its arguments' arrays."""
    if not factored:
        forward_kinematics(tree, q, ws.crba.X_world, ws.crba.S_world)
    count = find_contacts(model, settings.margin, ws.crba.X_world, ws.candidates, contacts)
    if count > 0 and not factored:
        if not factor_state(tree, gravity, v, ws.crba, ws.velocity, ws.acceleration, ws.forces,
                            ws.M, ws.L, ws.b):
            return count, NOT_POSITIVE_DEFINITE, 0, np.inf
        factored = True
    if factored:
        free_velocity(ws.L, ws.b, v, tau, settings.dt, ws.QDD[0], v_next)
    else:
        free_velocity_by_aba(tree, gravity, q, v, tau, settings.dt, ws, v_next)
    status, sweeps, change = CONVERGED, 0, 0.0
    if count > 0:
        status, sweeps, change = solve_contacts(tree, model, settings, contacts, count,
                                                v_next, ws.crba.S_world, ws.L, ws.solve)
    for i in range(v.shape[0]):
        ws.theta[i] = settings.dt * v_next[i]
    integrate_configuration(tree, q, ws.theta, q_next)
    return count, status, sweeps, change


@kernel
def contact_step_kernel(tree: PackedTree, gravity: FloatArray, model: ContactModel,
                        settings: StepSettings, q: FloatArray, v: FloatArray, tau: FloatArray,
                        q_next: FloatArray, v_next: FloatArray,
                        contacts: Contacts) -> tuple[int, int, int, float]:
    """world_step for one state, its workspace made here: the kernel of
    time_step.contact_step. Returns (contact count, status, sweeps, change)."""
    n = v.shape[0]
    ws = step_workspace(crba_workspace(tree, n), np.empty((n, n)), np.empty((n, n)),
                        np.empty(n), q.shape[0], most_candidates(model),
                        contacts.shape.shape[0])
    return world_step(tree, gravity, model, settings, q, v, tau, False, q_next, v_next, ws,
                      contacts)


__all__ = ["CONVERGED", "NOT_CONVERGED", "NOT_POSITIVE_DEFINITE", "SHAPE_CODES", "ContactModel",
           "Contacts", "StepSettings", "StepWorkspace", "contact_capacity", "contact_step_kernel",
           "contacts_of", "most_candidates", "step_workspace", "world_step"]
