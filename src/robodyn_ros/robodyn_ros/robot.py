"""Robot: a Model bound to the dynamics kernels, the API most users touch.

Every state argument is one state ``(n,)`` or a batch ``(B, n)``; a batch returns results with
a leading ``B``. Joint vectors follow ``joint_names``; 6-D quantities are ``[linear; angular]``;
Jacobians and operational-space inertias are about the frame origin in world-aligned axes.

The methods are called every control cycle, so argument checks come in two steps: a quick
test that passes for C-contiguous float64 arrays of the right shapes, and only when it fails,
a conversion that either fixes the input or raises an error naming the argument.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from robodyn_ros._state_call import StateCall
from robodyn_ros.answers import check_finite, check_mass_matrix, joints_moving_no_mass
from robodyn_ros.batch_threads import run_batch
from robodyn_ros.dynamics import (
    conjugate_gradient,
    constraint_iterations,
    coriolis,
    energy,
    forward_dynamics,
    gdahj,
    inertia_diagonal,
    inertia_inverse,
    inertia_matrix,
    inverse_dynamics,
    kinematics,
    recursive_doubling,
    rnea_columns,
    schur,
    schur_link_frames,
    state_entries,
    task_space,
)
from robodyn_ros.dynamics.tree import pack_frames, pack_tree
from robodyn_ros.errors import SingularMassMatrixError
from robodyn_ros.iteration import IterationInfo, IterativeMethod
from robodyn_ros.model import Model, URDFWarning, expand_xacro, load_urdf, load_urdf_string
from robodyn_ros.model.armature import Armature, armature_vector
from robodyn_ros.model.model import checked_gravity
from robodyn_ros.model.payload import checked_payload, with_payload
from robodyn_ros.operational_space import (
    SCHUR_METHODS,
    SINGULAR_THRESHOLD,
    OperationalSpaceDynamics,
    check_schur_task,
    task_axes,
)

if TYPE_CHECKING:
    from robodyn_ros.mimic_robot import Coupling

_ARRAY = np.ndarray
_FLOAT = np.dtype(np.float64)

_MASS_MATRIX = {
    "crba": inertia_matrix.mass_matrix,
    "gdahj": gdahj.mass_matrix,
    "recursive_doubling": recursive_doubling.mass_matrix,
    "rnea_columns": rnea_columns.mass_matrix,
}
_MASS_MATRIX_INVERSE = {
    "aba": inertia_inverse.mass_matrix_inverse,
    "ltdl": inertia_inverse.mass_matrix_inverse_factored,
    "schur": schur.mass_matrix_inverse_schur,
    "schur_bcr": schur.mass_matrix_inverse_schur_bcr,
}
_FORWARD_DYNAMICS = {
    "aba": forward_dynamics.forward_dynamics,
    "cholesky": forward_dynamics.forward_dynamics_factored,
    "schur": schur_link_frames.forward_dynamics_schur,
    "schur_bcr": schur.forward_dynamics_schur_bcr,
}
_OPERATIONAL_SPACE_INERTIA = {
    "dense": task_space.operational_space_inertia,
    "recursive": task_space.operational_space_inertia_recursive,
    "schur": task_space.operational_space_inertia_schur,
    "schur_bcr": task_space.operational_space_inertia_schur_bcr,
}
_CONSTRAINT_PARAMETERS = ("omega", "spectral_radius")
# The methods through the joint constraint forces (Sharf & D'Eleuterio, Fijany): their system
# has the joint torque as a given force on each body, with no term for the rotor's a_i q̈_i,
# so they refuse a robot with armature rather than answer for the robot without it.
_CONSTRAINT_FORCE_METHODS = (
    "schur", "schur_bcr", "jacobi", "gauss_seidel", "sor", "jacobi_si", "jacobi_cg",
)
_ARMATURE_METHODS = {
    "forward_dynamics": "'aba', 'cholesky', 'cg' or 'pcg'",
    "mass_matrix_inverse": "'aba' or 'ltdl'",
    "operational_space_inertia": "'recursive' or 'dense'",
    "operational_space": "'recursive' or 'dense'",
}
_ITERATIVE_FORWARD_DYNAMICS = {
    method.name: method
    for method in (
        IterativeMethod("cg", conjugate_gradient.forward_dynamics_cg, False),
        IterativeMethod("pcg", conjugate_gradient.forward_dynamics_cg, True),
        *(
            IterativeMethod(
                name,
                constraint_iterations.forward_dynamics_constraint_forces,
                scheme,
                _CONSTRAINT_PARAMETERS,
                tunable,
            )
            for name, scheme, tunable in (
                ("jacobi", constraint_iterations.JACOBI, ()),
                ("gauss_seidel", constraint_iterations.GAUSS_SEIDEL, ()),
                ("sor", constraint_iterations.SOR, _CONSTRAINT_PARAMETERS),
                ("jacobi_si", constraint_iterations.JACOBI_SI, ("spectral_radius",)),
                ("jacobi_cg", constraint_iterations.JACOBI_CG, ()),
            )
        ),
    )
}


def _state_call(
    function: str, tree: np.ndarray, constants: np.ndarray, inputs: int, out_shape: tuple
) -> StateCall:
    """The StateCall of `function`'s C entry (dynamics.state_entry) on these arrays."""
    address = state_entries().ENTRIES[function].address
    return StateCall(address, tree, constants, inputs, out_shape)


def _with_gravity(model: Model, gravity: Sequence[float] | np.ndarray | None) -> Model:
    """The model under `gravity` (its own when None); Model checks the vector."""
    if gravity is None:
        return model
    return dataclasses.replace(model, gravity=checked_gravity(gravity, f"robot '{model.name}'"))


def _general_path(*_states) -> None:
    """The stand-in for a StateCall whose answer never exists (a robot with a joint that moves
    no mass): it sends every call to the general path, which raises."""


@dataclass(frozen=True, slots=True)
class _OneState:
    """A robot's single-state calls that enter the compiled kernels directly (StateCall):
    each answers one state of C-contiguous float64 vectors, or returns None for anything
    else, which the Robot's general path then converts, checks or batches."""

    inverse_dynamics: StateCall
    bias_forces: StateCall
    gravity_torques: StateCall
    coriolis_matrix: StateCall
    mass_matrix: StateCall
    mass_matrix_diagonal: StateCall
    mass_matrix_inverse: StateCall
    forward_dynamics: StateCall
    kinetic_energy: StateCall
    potential_energy: StateCall

    @classmethod
    def bind(cls, tree: np.ndarray, gravity: np.ndarray) -> _OneState:
        n = tree.shape[0]

        def call(function: str, inputs: int, *out_shape: int) -> StateCall:
            return _state_call(function, tree, gravity, inputs, out_shape)

        return cls(
            inverse_dynamics=call("inverse_dynamics", 3, n),
            bias_forces=call("bias_forces", 2, n),
            gravity_torques=call("gravity_torques", 1, n),
            coriolis_matrix=call("coriolis_matrix", 2, n, n),
            mass_matrix=call("mass_matrix", 1, n, n),
            mass_matrix_diagonal=call("mass_matrix_diagonal", 1, n),
            mass_matrix_inverse=call("mass_matrix_inverse", 1, n, n),
            forward_dynamics=call("forward_dynamics", 3, n),
            kinetic_energy=call("kinetic_energy", 2),
            potential_energy=call("potential_energy", 1),
        )


@dataclass(frozen=True, slots=True)
class _OneFrame:
    """A frame's single-state calls, as _OneState's: its pose, its Jacobian, and its Λ and Λ⁻¹
    by the "recursive" method (Λ[0, 0] is NaN where Λ does not exist)."""

    pose: StateCall
    jacobian: StateCall
    task_inertia: StateCall
    task_inertia_inverse: StateCall

    @classmethod
    def bind(cls, tree: np.ndarray, row: np.ndarray) -> _OneFrame:
        n = tree.shape[0]

        def call(function: str, *out_shape: int) -> StateCall:
            return _state_call(function, tree, row, 1, out_shape)

        return cls(
            pose=call("frame_pose", 4, 4),
            jacobian=call("jacobian", 6, n),
            task_inertia=call("operational_space_inertia", 6, 6),
            task_inertia_inverse=call("operational_space_inertia_inverse", 6, 6),
        )


class Robot:
    """Dynamics of a fixed-base robot: inverse and forward dynamics, mass matrices,
    kinematics, energy and operational-space inertia, for one state or a batch."""

    MASS_MATRIX_METHODS = tuple(_MASS_MATRIX)
    MASS_MATRIX_INVERSE_METHODS = tuple(_MASS_MATRIX_INVERSE)
    FORWARD_DYNAMICS_METHODS = (*_FORWARD_DYNAMICS, *_ITERATIVE_FORWARD_DYNAMICS)
    ITERATIVE_FORWARD_DYNAMICS_METHODS = tuple(_ITERATIVE_FORWARD_DYNAMICS)
    OPERATIONAL_SPACE_METHODS = tuple(_OPERATIONAL_SPACE_INERTIA)

    def __new__(cls, model: Model, *, threads: int = 1) -> Robot:
        """A MimicRobot (robodyn_ros.mimic_robot) when the model has mimic joints."""
        if model.mimic and cls is Robot:
            from robodyn_ros.mimic_robot import MimicRobot  # a subclass: imported on use

            cls = MimicRobot
        return super().__new__(cls)

    def __init__(self, model: Model, *, threads: int = 1) -> None:
        """The robot of `model`; its functions run each batch of states on `threads` threads
        (see `threads`). `massless_joints` names the joints that move no mass at any
        configuration (a URDFWarning says so at load): with any, M is singular everywhere and
        the functions that need M⁻¹ raise SingularMassMatrixError."""
        self.model = model
        self.threads = threads
        self.nq = self.nv = model.nv
        self.joint_names = model.joint_names
        self.mimic_joints: tuple[str, ...] = ()  # joints that follow another (MimicRobot)
        self.coupling: Coupling | None = None  # how they follow (mimic_robot.Coupling)
        self.frame_names = model.frame_names
        self._tree = pack_tree(model)
        self._frames = pack_frames(model)
        self._frame_rows = {
            name: self._frames[k : k + 1] for k, name in enumerate(model.frame_names)
        }
        self._gravity = np.array(model.gravity, dtype=float)
        assert model.armature is not None  # Model makes it an array
        self._no_armature_methods = _CONSTRAINT_FORCE_METHODS if model.armature.any() else ()
        self._link_frames: np.ndarray | None = None  # for "schur", made on its first call
        self._tasks: dict[tuple, tuple[tuple[str, ...], np.ndarray, np.ndarray, tuple]] = {}
        self._schur_tasks: set[tuple[str, ...]] = set()  # checked for the SCHUR_METHODS
        self._one_state = _OneState.bind(self._tree, self._gravity)
        self._one_frame = {
            name: _OneFrame.bind(self._tree, row) for name, row in self._frame_rows.items()
        }
        self.massless_joints = joints_moving_no_mass(model, self._tree)
        if self.massless_joints:
            self._refuse_inverses()

    def _refuse_inverses(self) -> None:
        """M is singular at every configuration: warn, and send every call that needs M⁻¹
        (q̈, M⁻¹, Λ) to the general path, which raises SingularMassMatrixError."""
        self._warn_massless(stacklevel=5)  # the caller of Robot.from_urdf*
        self._one_state = dataclasses.replace(
            self._one_state, forward_dynamics=_general_path, mass_matrix_inverse=_general_path
        )
        self._one_frame = {
            name: dataclasses.replace(
                calls, task_inertia=_general_path, task_inertia_inverse=_general_path
            )
            for name, calls in self._one_frame.items()
        }

    def _warn_massless(self, stacklevel: int) -> None:
        """The URDFWarning naming massless_joints and the remedies."""
        warnings.warn(
            f"robot '{self.model.name}': joint(s) {', '.join(map(repr, self.massless_joints))} "
            "move no mass at any configuration, so M(q) is singular and q̈, M⁻¹ and Λ do not "
            "exist (SingularMassMatrixError); M, τ, g and kinematics are unaffected. Give the "
            "bodies they move an <inertial>, add rotor inertia (armature=), or lock the joints "
            "(locked_joints=)",
            URDFWarning,
            stacklevel=stacklevel,
        )

    def __reduce__(self) -> tuple:
        """Pickled as its Model (for the process and Dask backends); rebuilt on arrival, with
        one thread: a worker of those backends is one of several already."""
        return (type(self), (self.model,))

    @classmethod
    def from_urdf(
        cls,
        path: str | os.PathLike,
        *,
        locked_joints: Mapping[str, float] | None = None,
        strict_inertia: bool = False,
        armature: Armature | None = None,
        gravity: Sequence[float] | np.ndarray | None = None,
        mimic: bool = True,
        threads: int = 1,
    ) -> Robot:
        """Load a URDF file.

        Args:
            path: the URDF file.
            locked_joints: joint name → position at which that joint is frozen.
            strict_inertia: refuse a link whose own inertia is impossible even where its
                body's is not (model.load_urdf).
            armature: joint name → reflected rotor inertia (kg·m² revolute, kg prismatic), or
                a YAML file of that mapping (robodyn_ros.model.armature); added to M's diagonal
                by every algorithm. The constraint-force methods (schur, schur_bcr, jacobi,
                gauss_seidel, sor, jacobi_si, jacobi_cg) then raise ValueError.
            gravity: the gravitational acceleration (m/s²) in the base frame, (0, 0, -9.81)
                when None: an arm on a wall or a ceiling is mounted by this vector alone.
            mimic: joints with a URDF <mimic> follow their leader and are not coordinates
                (a MimicRobot, `mimic_joints`); False loads them as independent joints.
            threads: as in `threads`.

        Returns:
            The Robot.

        Raises:
            ModelError: an invalid URDF, locked joint or armature (see model.load_urdf).
            OSError: the URDF or the armature file cannot be read.
        """
        model = load_urdf(path, locked_joints=locked_joints, strict_inertia=strict_inertia,
                          armature=armature, mimic=mimic)
        return cls(_with_gravity(model, gravity), threads=threads)

    @classmethod
    def from_urdf_string(
        cls,
        xml: str | bytes,
        *,
        source: str = "<string>",
        locked_joints: Mapping[str, float] | None = None,
        strict_inertia: bool = False,
        armature: Armature | None = None,
        gravity: Sequence[float] | np.ndarray | None = None,
        mimic: bool = True,
        threads: int = 1,
    ) -> Robot:
        """Load a URDF from its text, which `source` names in error messages; the options as
        in from_urdf."""
        model = load_urdf_string(xml, source=source, locked_joints=locked_joints,
                                 strict_inertia=strict_inertia, armature=armature, mimic=mimic)
        return cls(_with_gravity(model, gravity), threads=threads)

    @classmethod
    def from_xacro(
        cls,
        path: str | os.PathLike,
        mappings: Mapping[str, str] | None = None,
        *,
        locked_joints: Mapping[str, float] | None = None,
        strict_inertia: bool = False,
        armature: Armature | None = None,
        gravity: Sequence[float] | np.ndarray | None = None,
        mimic: bool = True,
        threads: int = 1,
    ) -> Robot:
        """Load a xacro file, expanded to URDF as ``xacro path name:=value ...`` does.

        Args:
            path: the xacro file; it names the source in every error message, also in those
                about the URDF it expands to.
            mappings: xacro argument name → value (``$(arg name)``, ``<xacro:arg>``).
            locked_joints, strict_inertia, armature, gravity, mimic, threads: as in from_urdf.

        Returns:
            The Robot.

        Raises:
            ModelError: the file does not expand (a missing argument or include, a bad macro,
                a ``$(find pkg)`` the ament index cannot answer: model.expand_xacro), or it
                expands to an invalid URDF, or an invalid locked joint or armature.
            OSError: the armature file cannot be read.
        """
        return cls.from_urdf_string(
            expand_xacro(path, mappings), source=os.fspath(path), locked_joints=locked_joints,
            strict_inertia=strict_inertia, armature=armature, gravity=gravity, mimic=mimic,
            threads=threads,
        )

    def with_gravity(self, gravity: Sequence[float] | np.ndarray) -> Robot:
        """This robot under another gravity: the acceleration (m/s²) in the base frame, e.g.
        (9.81, 0, 0) for an arm on a wall whose base z axis is horizontal.

        Returns:
            A new Robot on the same kinematics and inertias; the compiled kernels are shared.

        Raises:
            ModelError: gravity is not 3 finite numbers.
        """
        return type(self)(_with_gravity(self.model, gravity), threads=self.threads)

    def with_armature(self, armature: Armature) -> Robot:
        """This robot with the given armature instead of its own (joints not named get zero).

        Args:
            armature: joint name → value, or a YAML file of that mapping, as in from_urdf.

        Returns:
            A new Robot on the same kinematics and inertias; the compiled kernels are shared.

        Raises:
            ModelError: a name that is not a moving joint or a value that is not a finite
                number ≥ 0.
            OSError: the armature file cannot be read.
        """
        vector = armature_vector(armature, self.model.joint_names,
                                 source=f"robot '{self.model.name}'")
        return type(self)(dataclasses.replace(self.model, armature=vector), threads=self.threads)

    def with_payload(
        self,
        frame: str,
        mass: float,
        com: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0),
        inertia: Sequence[Sequence[float]] | np.ndarray | None = None,
    ) -> Robot:
        """This robot carrying a rigid load on `frame`, in place of any it carried there.

        Args:
            frame: the frame (URDF link) the load is fixed to, e.g. the flange or the hand.
            mass: kg; 0 removes the payload on that frame.
            com: its centre of mass in the frame, m.
            inertia: its 3x3 rotational inertia about the centre of mass in the frame's axes,
                kg·m²; None for a point mass.

        Returns:
            A new Robot on the same kinematics, with the load in every function; the compiled
            kernels are shared. `model.payloads` lists the loads it carries.

        Raises:
            ModelError: an unknown frame, or a mass, centre of mass or inertia no rigid body
                can have (model.payload.checked_payload).
        """
        payload = checked_payload(self.model, frame, mass, com, inertia)
        return type(self)(with_payload(self.model, frame, payload), threads=self.threads)

    @property
    def threads(self) -> int:
        """How many threads run a batch of states (B, n) at once, each on contiguous chunks
        of it with the GIL released; the answer is the same bit for bit whatever the number.
        One state always runs in the calling thread."""
        return self._threads

    @threads.setter
    def threads(self, threads: int) -> None:
        if not (isinstance(threads, int) and threads >= 1):
            raise ValueError(f"threads must be an integer ≥ 1; got {threads!r}")
        self._threads = threads

    def with_threads(self, threads: int) -> Robot:
        """This robot (the same model and caches) running its batches on `threads` threads."""
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.threads = threads
        return view

    def __repr__(self) -> str:
        return f"Robot('{self.model.name}', nv={self.nv}, frames={len(self.frame_names)})"

    def per_coordinate(self, per_joint: np.ndarray) -> np.ndarray:
        """A per-joint array of the model (its limits, damping, friction: model.joint_names
        order) for the robot's coordinates, in joint_names order (the same array here; a
        MimicRobot leaves the mimic joints out)."""
        return np.asarray(per_joint)

    @property
    def kernel_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(tree, gravity): the packed model the dynamics kernels take, for a caller of a
        kernel the Robot does not wrap (the preview's rollout kernel, sim.rollout); not to be
        modified."""
        return self._tree, self._gravity

    def frame_row(self, frame: str) -> np.ndarray:
        """The packed row (13,) of one frame as the kernels take it; ValueError naming an
        unknown frame."""
        return self._frame(frame)[0]

    # -- inverse dynamics -------------------------------------------------------------------

    def inverse_dynamics(self, q, qd, qdd, f_ext=None) -> np.ndarray:
        """τ = M(q) q̈ + C(q, q̇) q̇ + g(q) − Σ Jᵢᵀ f_ext,i by RNEA.

        f_ext: optional wrench [force; torque] on each moving body, shape (..., n, 6); row i
        acts on the child link of joint i, expressed in that link's frame about its origin.
        """
        if f_ext is None:
            tau = self._one_state.inverse_dynamics(q, qd, qdd)
            if tau is not None:
                return tau
        if f_ext is not None or not _ready(self.nv, q, qd, qdd):
            q, qd, qdd = self._checked(q, qd=qd, qdd=qdd)
            f_ext = self._wrenches(f_ext, q.shape)
        tau = np.empty(q.shape)
        self._run(inverse_dynamics.inverse_dynamics, (self._tree, self._gravity), q, qd, qdd, f_ext,
                  tau)
        self._check("inverse_dynamics", False, (("τ", tau),), q, qd, qdd, f_ext)
        return tau

    def bias_forces(self, q, qd) -> np.ndarray:
        """C(q, q̇) q̇ + g(q): Coriolis, centrifugal and gravity torques."""
        tau = self._one_state.bias_forces(q, qd)
        if tau is not None:
            return tau
        if not _ready(self.nv, q, qd):
            q, qd = self._checked(q, qd=qd)
        tau = np.empty(q.shape)
        self._run(inverse_dynamics.bias_forces, (self._tree, self._gravity), q, qd, tau)
        self._check("bias_forces", False, (("C(q, q̇) q̇ + g(q)", tau),), q, qd)
        return tau

    def gravity_torques(self, q) -> np.ndarray:
        """g(q): the torques that hold the robot still against gravity."""
        tau = self._one_state.gravity_torques(q)
        if tau is not None:
            return tau
        if not _ready(self.nv, q):
            (q,) = self._checked(q)
        tau = np.empty(q.shape)
        self._run(inverse_dynamics.gravity_torques, (self._tree, self._gravity), q, tau)
        self._check("gravity_torques", False, (("g(q)", tau),), q)
        return tau

    def coriolis_matrix(self, q, qd) -> np.ndarray:
        """Coriolis matrix C(q, q̇), with C q̇ = bias_forces − gravity_torques (the Coriolis and
        centrifugal torques) and Ṁ − 2C skew-symmetric: Pinocchio's computeCoriolisMatrix. The
        armature, constant in M, does not enter C.

        Args:
            q: joint positions, (n,) or a batch (B, n).
            qd: joint velocities, the shape of q.

        Returns:
            C, shape (n, n), or (B, n, n) for a batch.

        Raises:
            ValueError: q or qd of the wrong shape.
            TypeError: q or qd not numbers.
            NonFiniteResultError: finite q and qd gave a non-finite C (an overflow).
        """
        C = self._one_state.coriolis_matrix(q, qd)
        if C is not None:
            return C
        if not _ready(self.nv, q, qd):
            q, qd = self._checked(q, qd=qd)
        C = np.empty((*q.shape, self.nv))
        self._run(coriolis.coriolis_matrix, (self._tree,), q, qd, C)
        self._check("coriolis_matrix", False, (("C", C),), q, qd)
        return C

    # -- joint-space inertia ----------------------------------------------------------------

    def mass_matrix(self, q, method: str = "crba") -> np.ndarray:
        """Joint-space inertia matrix M(q), shape (..., n, n).

        Methods (MASS_MATRIX_METHODS), all exact to rounding: "crba" (composite-rigid-body
        algorithm, world frame), "gdahj" (Safeea et al.: O(n) recursions, then the minimal
        O(n²) loop; the fastest from about 40 joints on), "recursive_doubling" (Amin-Javaheri
        & Orin: ⌈log₂n⌉ levels of independent set combinations; serial chains only, a tree
        raises ValueError) and "rnea_columns" (n inverse-dynamics calls, the baseline).
        """
        if method == "crba":
            M = self._one_state.mass_matrix(q)
            if M is not None:
                return M
        kernel = _MASS_MATRIX.get(method)
        if kernel is None or not _ready(self.nv, q):
            (q,) = self._checked(q)
            _check_method(method, self.MASS_MATRIX_METHODS, "mass_matrix")
        M = np.empty((*q.shape, self.nv))
        self._run(kernel, (self._tree,), q, M)
        self._check("mass_matrix", False, (("M", M),), q)
        return M

    def mass_matrix_diagonal(self, q) -> np.ndarray:
        """diag M(q), shape (..., n), in O(n) by the composite first and second moments of
        mass (Fijany & Scheid), without forming M."""
        diag = self._one_state.mass_matrix_diagonal(q)
        if diag is not None:
            return diag
        if not _ready(self.nv, q):
            (q,) = self._checked(q)
        diag = np.empty(q.shape)
        self._run(inertia_diagonal.mass_matrix_diagonal, (self._tree,), q, diag)
        self._check("mass_matrix_diagonal", False, (("diag M", diag),), q)
        return diag

    def mass_matrix_inverse(self, q, method: str = "aba") -> np.ndarray:
        """M(q)⁻¹, shape (..., n, n). Methods: "aba" (the articulated-body recursion for all
        unit torques at once, O(n²), M never formed), "ltdl" (CRBA, the branch-sparse LᵀDL
        factor of M and n solves) and "schur" (M⁻¹ = 𝒢 − ℬᵀ𝒜⁻¹ℬ, 𝒜 the constraint-force
        matrix, block tridiagonal on a chain and with the tree's sparsity on a tree, factored
        once by block LᵀDL, leaves first, then a column per joint, O(n²); bodies with mass
        only, else ValueError) and "schur_bcr" (the same with 𝒜 factored by block cyclic
        reduction, ⌈log₂n⌉ levels; serial chains only, else ValueError). The armature is on
        M's diagonal; "schur" and "schur_bcr" do not model it and raise ValueError for a robot
        with armature."""
        if method == "aba":
            Minv = self._one_state.mass_matrix_inverse(q)
            if Minv is not None:
                return Minv
        kernel = _MASS_MATRIX_INVERSE.get(method)
        if kernel is None or not _ready(self.nv, q):
            (q,) = self._checked(q)
            _check_method(method, self.MASS_MATRIX_INVERSE_METHODS, "mass_matrix_inverse")
        self._require_mass("mass_matrix_inverse")
        if method in self._no_armature_methods:
            self._refuse_armature(method, "mass_matrix_inverse")
        Minv = np.empty((*q.shape, self.nv))
        self._run(kernel, (self._tree,), q, Minv)
        self._check("mass_matrix_inverse", True, (("M⁻¹", Minv),), q)
        return Minv

    # -- forward dynamics -------------------------------------------------------------------

    @overload
    def forward_dynamics(
        self, q, qd, tau, method: str = ..., f_ext=..., *, info: Literal[False] = ..., **options
    ) -> np.ndarray: ...

    @overload
    def forward_dynamics(
        self, q, qd, tau, method: str = ..., f_ext=..., *, info: Literal[True], **options
    ) -> tuple[np.ndarray, IterationInfo]: ...

    def forward_dynamics(
        self, q, qd, tau, method: str = "aba", f_ext=None, **options
    ) -> np.ndarray | tuple[np.ndarray, IterationInfo]:
        """q̈ = M⁻¹(τ − C q̇ − g + Σ Jᵢᵀ f_ext,i).

        Direct methods: "aba" (articulated-body algorithm, O(n)), "cholesky" (CRBA, the LᵀDL
        factor of M and a solve), "schur" (the joint constraint forces of Sharf &
        D'Eleuterio's system, block tridiagonal on a chain and with the tree's sparsity on a
        tree, solved exactly by block LᵀDL, leaves first, O(n), in each link's frame in three
        passes like ABA) and "schur_bcr" (the same system by block cyclic reduction, ⌈log₂n⌉
        levels of independent eliminations, Fijany; serial chains only, else ValueError).
        Iterative methods: "cg" and "pcg" (Fijany & Scheid's CCG and PCG-DS on M q̈ = τ − b,
        each product M p one O(n) Newton–Euler pass, M never formed; PCG-DS preconditioned by
        diag M) and the iterative solves of the constraint forces, "jacobi", "gauss_seidel",
        "sor" (option `omega`, default Young's optimum from an estimate of the Jacobi spectral
        radius, or from option `spectral_radius`), "jacobi_si" (Chebyshev; option
        `spectral_radius`, default estimated by power iteration) and "jacobi_cg". Their
        options `tol`, `max_iterations`, `initial_guess` (a q̈) and `info` (return
        ``(qdd, IterationInfo)``) are described in robodyn_ros.iteration; not converging
        raises ConvergenceError unless `info` is set. On a tree with branches the sibling
        joints couple through their parent, the block-Jacobi step is extrapolated to converge
        and the default ω and spectral radius come from both ends of the spectrum of D⁻¹𝒜.
        The constraint-force methods ("schur", "schur_bcr" and the five above) need bodies
        with mass, else ValueError; their system has no term for the armature (the joint
        torque enters as a given force on each body, the rotor's a_i q̈_i would make it an
        unknown), so for a robot with armature they raise ValueError too. The others include it
        in M (ABA: D_i = S_iᵀ I^A_i S_i + a_i).
        f_ext as in `inverse_dynamics`.
        """
        if method == "aba" and f_ext is None and not options:
            qdd = self._one_state.forward_dynamics(q, qd, tau)
            if qdd is not None:
                return qdd
        kernel = _FORWARD_DYNAMICS.get(method)
        if method in self._no_armature_methods:
            self._refuse_armature(method, "forward_dynamics")
        if kernel is None or options or f_ext is not None or not _ready(self.nv, q, qd, tau):
            q, qd, tau = self._checked(q, qd=qd, tau=tau)
            f_ext = self._wrenches(f_ext, q.shape)
            _check_method(method, self.FORWARD_DYNAMICS_METHODS, "forward_dynamics")
            iterative = _ITERATIVE_FORWARD_DYNAMICS.get(method)
            if iterative is not None:
                self._require_mass("forward_dynamics")
                answer = iterative.solve(self._run_batch, (self._tree, self._gravity), q, qd,
                                         tau, f_ext, options)
                qdd = answer[0] if isinstance(answer, tuple) else answer
                self._check("forward_dynamics", True, (("q̈", qdd),), q, qd, tau, f_ext)
                return answer
            if options:
                raise ValueError(
                    f"forward_dynamics: method '{method}' is direct and takes no options; got "
                    f"{', '.join(options)}"
                )
        self._require_mass("forward_dynamics")
        qdd = np.empty(q.shape)
        self._run(kernel, (self._forward_dynamics_model(method), self._gravity), q, qd, tau,
                  f_ext, qdd)
        self._check("forward_dynamics", True, (("q̈", qdd),), q, qd, tau, f_ext)
        return qdd

    def _forward_dynamics_model(self, method: str) -> np.ndarray:
        """The model array `method`'s kernel takes: the tree, or for "schur" the link frames'
        constants (dynamics.schur_link_frames), made on its first call."""
        if method != "schur":
            return self._tree
        if self._link_frames is None:
            self._link_frames = schur_link_frames.link_frames(self._tree)
        return self._link_frames

    # -- kinematics -------------------------------------------------------------------------

    def frame_pose(self, q, frame: str) -> np.ndarray:
        """Pose of a frame in the world as a 4x4 homogeneous transform, shape (..., 4, 4)."""
        calls = self._one_frame.get(frame)
        if calls is not None:
            pose = calls.pose(q)
            if pose is not None:
                return pose
        row = self._frame(frame)
        if not _ready(self.nv, q):
            (q,) = self._checked(q)
        pose = np.empty((*q.shape[:-1], 4, 4))
        self._run(kinematics.frame_poses, (self._tree, row), q, pose)
        self._check("frame_pose", False, ((f"the pose of frame '{frame}'", pose),), q)
        return pose

    def frame_poses(self, q) -> np.ndarray:
        """Poses of every frame, in `frame_names` order, shape (..., F, 4, 4)."""
        if not _ready(self.nv, q):
            (q,) = self._checked(q)
        poses = np.empty((*q.shape[:-1], len(self.frame_names), 4, 4))
        self._run(kinematics.frame_poses, (self._tree, self._frames), q, poses)
        self._check("frame_poses", False, (("the frame poses", poses),), q)
        return poses

    def jacobian(self, q, frame: str) -> np.ndarray:
        """Jacobian of a frame, shape (..., 6, n): the [linear; angular] velocity of the frame
        origin in world-aligned axes (Pinocchio's LOCAL_WORLD_ALIGNED)."""
        calls = self._one_frame.get(frame)
        if calls is not None:
            J = calls.jacobian(q)
            if J is not None:
                return J
        row = self._frame(frame)
        if not _ready(self.nv, q):
            (q,) = self._checked(q)
        J = np.empty((*q.shape[:-1], 6, self.nv))
        self._run(kinematics.frame_jacobian, (self._tree, row[0]), q, J)
        self._check("jacobian", False, ((f"the Jacobian of frame '{frame}'", J),), q)
        return J

    # -- energy -----------------------------------------------------------------------------

    def kinetic_energy(self, q, qd) -> np.ndarray:
        """½ q̇ᵀ M(q) q̇ in J; shape () or (B,)."""
        T = self._one_state.kinetic_energy(q, qd)
        if T is not None:
            return T
        if not _ready(self.nv, q, qd):
            q, qd = self._checked(q, qd=qd)
        T = np.empty(q.shape[:-1])
        self._run(energy.kinetic_energy, (self._tree,), q, qd, T)
        self._check("kinetic_energy", False, (("the kinetic energy", T),), q, qd)
        return T

    def potential_energy(self, q) -> np.ndarray:
        """Gravitational potential energy in J, zero with every centre of mass at the height
        of the world origin; shape () or (B,)."""
        V = self._one_state.potential_energy(q)
        if V is not None:
            return V
        if not _ready(self.nv, q):
            (q,) = self._checked(q)
        V = np.empty(q.shape[:-1])
        self._run(energy.potential_energy, (self._tree, self._gravity), q, V)
        self._check("potential_energy", False, (("the potential energy", V),), q)
        return V

    # -- operational space ------------------------------------------------------------------

    def operational_space_inertia(
        self,
        q,
        frame: str | Sequence[str],
        method: str = "recursive",
        inverse: bool = False,
        *,
        axes=None,
    ) -> np.ndarray:
        """Λ = (J M⁻¹ Jᵀ)⁻¹ of a frame, or of the stacked task of several frames (a list of
        names), or Λ⁻¹ when `inverse`, shape (..., m, m), about each frame origin in
        world-aligned axes. `axes` selects task axes of every frame (C Λ⁻¹ Cᵀ): None (all six,
        [linear; angular]), indices 0–5, or names "x", "y", "z", "rx", "ry", "rz" (one string
        such as "xyz" too); m = 6 or len(axes), times the number of frames.

        Methods (OPERATIONAL_SPACE_METHODS), all exact to rounding: "dense" (J M⁻¹ Jᵀ with M⁻¹
        by the O(n²) recursion; the reference), "recursive" (O(n), no n x n matrix: the
        articulated-body inertias and the inverse-inertia recursion Ω_i = T_iᵀ Ω_λ T_i +
        S_i S_iᵀ / D_i, trees and several frames; the default) and "schur" (Fijany's
        Λ⁻¹ = D − Eᵀ 𝒜⁻¹ E from the block elimination of the constraint-force matrix 𝒜 of
        the joints from the base to the frames' body, the subtrees off that path eliminated
        first, leaf first, O(n), and Λ of one whole frame directly as I_N + W_N R⁻¹ W_Nᵀ, the
        paper's second form; every frame on one moving body, else ValueError; its Λ⁻¹ is exact
        to about 1e-12 relative, 𝒜 carrying the inverse inertias of light links); "schur_bcr"
        is "schur" with 𝒜 reduced by block cyclic reduction, ⌈log₂n⌉ levels of independent
        eliminations. M includes the armature; "schur" and "schur_bcr" do not model it and
        raise ValueError for a robot with armature. Λ does not exist where Λ⁻¹ is singular
        (LinAlgError); Robot.operational_space damps it there."""
        calls = self._one_frame.get(frame) if type(frame) is str else None
        if calls is not None and method == "recursive" and axes is None:
            Lambda = (calls.task_inertia_inverse if inverse else calls.task_inertia)(q)
            if Lambda is not None:
                return Lambda
        names, rows, selection, _ = self._task(frame, axes)
        kernel = _OPERATIONAL_SPACE_INERTIA.get(method)
        if kernel is None or not _ready(self.nv, q):
            (q,) = self._checked(q)
            _check_method(method, self.OPERATIONAL_SPACE_METHODS, "operational_space_inertia")
        if method in self._no_armature_methods:
            self._refuse_armature(method, "operational_space_inertia")
        if method in SCHUR_METHODS and names not in self._schur_tasks:
            check_schur_task(self.model, names, "operational_space_inertia", method)
            self._schur_tasks.add(names)
        self._require_mass("operational_space_inertia")
        m = selection.shape[0]
        out = np.empty((*q.shape[:-1], m, m))
        quantity = "Λ⁻¹" if inverse else "Λ"
        try:
            self._run(kernel, (self._tree, rows, selection), q, bool(inverse), out)
        except np.linalg.LinAlgError as error:
            check_mass_matrix("operational_space_inertia", self._tree, self.joint_names, q)
            where = getattr(error, "state", "")
            raise np.linalg.LinAlgError(
                f"operational_space_inertia: Λ of frame(s) {', '.join(map(repr, names))} does "
                f"not exist at this configuration{f' ({where})' if where else ''}: J M⁻¹ Jᵀ is "
                "singular (the task Jacobian has lost rank, a kinematic singularity); Λ⁻¹ "
                "(inverse=True) is defined everywhere"
            ) from None
        self._check("operational_space_inertia", True, ((quantity, out),), q)
        return out

    def operational_space_inertia_inverse_times(
        self, q, frame: str | Sequence[str], force, *, axes=None
    ) -> np.ndarray:
        """Λ⁻¹ F for one task force F, shape (..., m) like F: the task acceleration a force F on
        the frames (one name or several, [force; torque] about each frame origin in world-aligned
        axes, cut to `axes` as in operational_space_inertia) gives the robot at rest with τ = 0
        and no gravity. One right-hand side in O(n) (the articulated-body algorithm with F as
        external wrenches), Λ⁻¹ never formed."""
        names, rows, selection, _ = self._task(frame, axes)
        if not _ready(self.nv, q):
            (q,) = self._checked(q)
        force = _as_float_array(force, "force")
        expected = (*q.shape[:-1], selection.shape[0])
        if force.shape != expected:
            raise ValueError(
                f"force must have shape {expected}: one value per task axis of the frame(s) "
                f"{', '.join(map(repr, names))} for each state; got {force.shape}"
            )
        self._require_mass("operational_space_inertia_inverse_times")
        out = np.empty(expected)
        self._run(
            task_space.operational_space_inertia_inverse_times,
            (self._tree, rows, selection), q, force, out,
        )
        self._check("operational_space_inertia_inverse_times", True, (("Λ⁻¹ F", out),), q,
                    force)
        return out

    def classical_acceleration(self, q, qd, frames: str | Sequence[str], *,
                               axes=None) -> np.ndarray:
        """J̇ q̇ of a frame, or of the stacked task of several (a list of names), shape
        (..., m): the classical acceleration [a; α] of each frame origin at q̈ = 0 in
        world-aligned axes (Pinocchio's getFrameClassicalAcceleration, LOCAL_WORLD_ALIGNED),
        cut to `axes` as in operational_space_inertia. Kinematics only: M does not enter."""
        _, rows, selection, _ = self._task(frames, axes)
        if not _ready(self.nv, q, qd):
            q, qd = self._checked(q, qd=qd)
        out = np.empty((*q.shape[:-1], selection.shape[0]))
        self._run(task_space.classical_accelerations, (self._tree, rows, selection), q,
                  qd, out)
        self._check("classical_acceleration", False, (("J̇ q̇", out),), q, qd)
        return out

    def operational_space(
        self,
        q,
        qd,
        frames: str | Sequence[str],
        method: str = "dense",
        *,
        axes=None,
        singular_threshold: float = SINGULAR_THRESHOLD,
        singular_damping: float | None = None,
    ) -> OperationalSpaceDynamics:
        """J, Λ⁻¹, Λ, J̄, μ, p and J̇ q̇ of the stacked task of `frames` (one name or several),
        computed together (see OperationalSpaceDynamics); `axes` selects task axes as in
        operational_space_inertia. Λ is damped where the smallest eigenvalue of Λ⁻¹ falls
        below singular_threshold times the largest, with a damping of up to singular_damping
        (default: singular_threshold) times the largest; Λ then stays below about
        1 / (singular_threshold · s_max). Methods (OPERATIONAL_SPACE_METHODS): the route to
        Λ⁻¹; the rest comes from M⁻¹ by the O(n²) recursion whatever the method."""
        names, rows, selection, chosen = self._task(frames, axes)
        route = _OPERATIONAL_SPACE_INERTIA.get(method)
        if route is None or not _ready(self.nv, q, qd):
            q, qd = self._checked(q, qd=qd)
            _check_method(method, self.OPERATIONAL_SPACE_METHODS, "operational_space")
        if method in self._no_armature_methods:
            self._refuse_armature(method, "operational_space")
        if method in SCHUR_METHODS and names not in self._schur_tasks:
            check_schur_task(self.model, names, "operational_space", method)
            self._schur_tasks.add(names)
        if singular_damping is None:
            singular_damping = singular_threshold
        if not (0.0 < singular_threshold < 1.0 and singular_damping > 0.0):
            raise ValueError(
                "operational_space: singular_threshold must be in (0, 1) and singular_damping "
                f"positive; got {singular_threshold!r} and {singular_damping!r}"
            )
        self._require_mass("operational_space")
        batch, n, m = q.shape[:-1], self.nv, selection.shape[0]
        J, Jbar = np.empty((*batch, m, n)), np.empty((*batch, n, m))
        Lambda_inv, Lambda = np.empty((*batch, m, m)), np.empty((*batch, m, m))
        mu, p, Jdot_qd = np.empty((*batch, m)), np.empty((*batch, m)), np.empty((*batch, m))
        info = np.empty((*batch, 2))
        given = method != "dense"
        if given:
            self._run(route, (self._tree, rows, selection), q, True, Lambda_inv)
        self._run(
            task_space.operational_space_dynamics,
            (self._tree, self._gravity, rows, selection), q, qd, singular_threshold,
            singular_damping, given, J, Lambda_inv, Lambda, Jbar, mu, p, Jdot_qd, info,
        )
        self._check(
            "operational_space", True,
            (("J", J), ("Λ⁻¹", Lambda_inv), ("Λ", Lambda), ("J̄", Jbar), ("μ", mu), ("p", p),
             ("J̇ q̇", Jdot_qd)),
            q, qd,
        )
        rank, condition = info[..., 0].astype(np.int64), info[..., 1]
        return OperationalSpaceDynamics(
            names, J, Lambda_inv, Lambda, Jbar, mu, p, Jdot_qd, rank, condition, chosen
        )

    # -- running the kernels ----------------------------------------------------------------

    def _run(self, kernel, constants: tuple, q: np.ndarray, *per_state) -> None:
        """kernel(*constants, q, *per_state): a batch by _run_batch, one state as a batch of
        one in the calling thread (the kernel's one build takes batches, dynamics.jit)."""
        if q.ndim == 1:
            kernel(*constants, *(x[np.newaxis] if isinstance(x, np.ndarray) else x
                                 for x in (q, *per_state)))
        else:
            self._run_batch(kernel, constants, q, *per_state)

    def _run_batch(self, kernel, constants: tuple, *per_state) -> None:
        """The kernel over a batch, on `threads` threads."""
        run_batch(kernel, constants, per_state, self._threads)

    # -- answer checks ----------------------------------------------------------------------

    def _require_mass(self, function: str) -> None:
        """SingularMassMatrixError when M is singular at every configuration (massless_joints)."""
        if self.massless_joints:
            raise SingularMassMatrixError(function, self.massless_joints, "at every configuration")

    def _check(self, function: str, inverts: bool, quantities: tuple, q, *inputs) -> None:
        """Raise where finite inputs gave a non-finite quantity (answers.check_finite)."""
        check_finite(function, quantities, (q, *inputs), self._tree, self.joint_names, inverts)

    # -- argument checks --------------------------------------------------------------------

    def _refuse_armature(self, method: str, function: str) -> None:
        """The ValueError of a constraint-force method asked about a robot with armature."""
        assert self.model.armature is not None  # Model makes it an array
        armed = np.flatnonzero(self.model.armature)
        joints = [self.joint_names[i] for i in armed]
        raise ValueError(
            f"{function}: method '{method}' does not model armature (the constraint-force "
            f"formulation has no term for the rotor inertia), and this robot has armature on "
            f"{', '.join(joints)}; use {_ARMATURE_METHODS[function]}"
        )

    def _task(self, frames, axes) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, tuple]:
        """(frame names, packed frame rows, selected task rows, axes) of a task of one frame
        name or several and its axes, remembered."""
        names = (frames,) if isinstance(frames, str) else tuple(frames)
        key = (names, axes if axes is None or isinstance(axes, str) else tuple(axes))
        task = self._tasks.get(key)
        if task is None:
            if not names:
                raise ValueError("operational_space: frames must name at least one frame")
            rows = np.concatenate([self._frame(name) for name in names])
            chosen = task_axes(axes)
            selection = np.array(
                [6 * k + axis for k in range(len(names)) for axis in chosen], dtype=np.int64
            )
            task = self._tasks[key] = (names, rows, selection, chosen)
        return task

    def _frame(self, frame: str) -> np.ndarray:
        row = self._frame_rows.get(frame)
        if row is None:
            self.model.frame_index(frame)  # raises, listing the frames
        assert row is not None
        return row

    def _checked(self, q, **others) -> tuple[np.ndarray, ...]:
        """q and the other joint vectors as C-contiguous float64 arrays of one shape, (n,)
        or (B, n), or an error naming the argument."""
        q = _as_float_array(q, "q")
        if q.ndim not in (1, 2) or q.shape[-1] != self.nv:
            names = ", ".join(self.joint_names[:8]) + (", ..." if self.nv > 8 else "")
            raise ValueError(
                f"q must have shape ({self.nv},) or (B, {self.nv}), one value per joint "
                f"({names}); got shape {q.shape}"
            )
        arrays = [q]
        for name, x in others.items():
            x = _as_float_array(x, name)
            if x.shape != q.shape:
                raise ValueError(f"{name} must have the shape of q, {q.shape}; got {x.shape}")
            arrays.append(x)
        return tuple(arrays)

    @staticmethod
    def _wrenches(f_ext, state_shape: tuple[int, ...]) -> np.ndarray | None:
        if f_ext is None:
            return None
        f_ext = _as_float_array(f_ext, "f_ext")
        expected = (*state_shape, 6)
        if f_ext.shape != expected:
            raise ValueError(
                f"f_ext must have shape {expected}: one [force; torque] per moving body "
                f"(the child link of each joint) for each state; got {f_ext.shape}"
            )
        return f_ext


def _ready(n: int, q, *others) -> bool:
    """True when q is a C-contiguous float64 (n,) or (B, n) array and the others match it."""
    if not (
        type(q) is _ARRAY and q.dtype is _FLOAT and 0 < q.ndim < 3 and q.shape[-1] == n
        and q.flags.c_contiguous
    ):
        return False
    for x in others:
        if not (
            type(x) is _ARRAY and x.dtype is _FLOAT and x.shape == q.shape and x.flags.c_contiguous
        ):
            return False
    return True


def _as_float_array(x, name: str) -> np.ndarray:
    """x as a C-contiguous float64 array (no copy when it already is one); numbers only."""
    array = np.asarray(x)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of numbers; got {array.dtype} values")
    return np.ascontiguousarray(array, dtype=float)


def _check_method(method: str, known: tuple[str, ...], function: str) -> None:
    if method not in known:
        raise ValueError(f"{function}: unknown method '{method}'; choose one of {', '.join(known)}")


__all__ = ["Robot"]
