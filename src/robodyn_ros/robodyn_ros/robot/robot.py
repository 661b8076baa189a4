"""Robot: a Model bound to the dynamics kernels, the API most users touch.

Every state argument is one state ``(n,)`` or a batch ``(B, n)``; a batch returns results with
a leading ``B``. Joint vectors follow ``joint_names``; 6-D quantities are ``[linear; angular]``;
Jacobians and operational-space inertias are about the frame origin in world-aligned axes.

The methods are called every control cycle, so argument checks come in two steps: a quick
test that passes for C-contiguous float64 arrays of the right shapes, and only when it fails,
a conversion that either fixes the input or raises an error naming the argument.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import (
    Any,
    ClassVar,
    Literal,
    NamedTuple,
    Self,
    TypeAlias,
    TypedDict,
    Unpack,
    cast,
    overload,
)

import numpy as np
from numpy.typing import ArrayLike

import robodyn_ros.robot.configuration as configuration
from robodyn_ros._state_call import StateCall
from robodyn_ros.dynamics import (
    centroidal,
    conjugate_gradient,
    constrained_dynamics,
    constraint_iterations,
    coriolis,
    derivatives,
    energy,
    inertia_diagonal,
    inverse_dynamics,
    kinematics,
    methods,
    regressor,
    schur_link_frames,
    state_entries,
    task_space,
)
from robodyn_ros.dynamics.arrays import FloatArray
from robodyn_ros.dynamics.batch_threads import per_state_part, run_batch
from robodyn_ros.dynamics.tree import pack_frames, pack_tree
from robodyn_ros.errors import SingularMassMatrixError
from robodyn_ros.model import (
    Model,
    UrdfOptions,
    URDFWarning,
    expand_xacro,
    load_urdf,
    load_urdf_string,
)
from robodyn_ros.model.armature import Armature, armature_vector
from robodyn_ros.model.inertial_parameters import (
    model_with_parameters,
    parameter_count_of,
    parameter_names,
    parameters_of,
)
from robodyn_ros.model.model import (
    FREE_FLYER_DOF,
    FREE_FLYER_JOINTS,
    FRICTION_VELOCITY,
    MULTI_DOF_JOINTS,
    checked_gravity,
)
from robodyn_ros.model.payload import checked_payload, with_payload
from robodyn_ros.robot.answers import check_finite, check_mass_matrix, joints_moving_no_mass
from robodyn_ros.robot.configuration import check_configuration, configuration_description
from robodyn_ros.robot.contact_dynamics import (
    Contact,
    ContactDynamics,
    ContactTasks,
    contact_inverse_dynamics,
    placement_error,
    split_forces,
)
from robodyn_ros.robot.coupling import Coupling
from robodyn_ros.robot.derivatives import (
    ForwardDynamicsDerivatives,
    InverseDynamicsDerivatives,
    split_derivatives,
)
from robodyn_ros.robot.external_wrenches import ExternalWrenches, wrench_forces
from robodyn_ros.robot.iteration import IterationInfo, IterativeMethod
from robodyn_ros.robot.operational_space import (
    SCHUR_METHODS,
    SINGULAR_THRESHOLD,
    OperationalSpaceDynamics,
    check_schur_task,
    stacked_task_rows,
    task_axes,
)

_ARRAY = np.ndarray
_FLOAT = np.dtype(np.float64)

Task: TypeAlias = str | Sequence[str]
"""The frames of a task: one frame name, or several whose rows are stacked in that order."""

TaskAxes: TypeAlias = str | Sequence[int | str] | None
"""Task axes of every frame of a task (robodyn_ros.robot.operational_space.task_axes): None for all
six ([linear; angular]), indices 0 to 5, or the names "x", "y", "z", "rx", "ry", "rz"."""

class LoadOptions(TypedDict, total=False):
    """The options every Robot.from_* takes, as Robot.from_urdf describes them."""

    locked_joints: Mapping[str, float] | None
    strict_inertia: bool
    armature: Armature | None
    gravity: Sequence[float] | np.ndarray | None
    mimic: bool
    threads: int


_CONSTRAINT_PARAMETERS = ("omega", "spectral_radius")
# What a robot can use where a constraint-force method refuses it (armature, or a free-flyer
# or planar joint).
_NON_CONSTRAINT_METHODS = {
    "forward_dynamics": "'aba', 'cholesky', 'cg' or 'pcg'",
    "mass_matrix_inverse": "'aba' or 'ltdl'",
    "operational_space_inertia": "'recursive' or 'dense'",
    "operational_space": "'recursive' or 'dense'",
}
_ITERATIVE_FORWARD_DYNAMICS = {
    method.name: method
    for method in (
        IterativeMethod("cg", conjugate_gradient.forward_dynamics_cg,
                        conjugate_gradient.CGSettings, False),
        IterativeMethod("pcg", conjugate_gradient.forward_dynamics_cg,
                        conjugate_gradient.CGSettings, True),
        *(
            IterativeMethod(
                name,
                constraint_iterations.forward_dynamics_constraint_forces,
                constraint_iterations.IterationSettings,
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
    call: EntryCall, tree: np.ndarray, constants: np.ndarray, first_extra: int,
) -> StateCall:
    """The StateCall of the call's C entry (dynamics.state_entry) on these arrays; q has
    first_extra = nq − nv numbers more than the other vectors."""
    entries = state_entries()
    return StateCall(entries.ENTRIES[call.function].address, tree, constants, call.inputs,
                     call.shape(tree.shape[0]), first_extra,
                     symmetric=call.function in entries.SYMMETRIC_ANSWERS, record=call.record)


def _with_gravity(model: Model, gravity: Sequence[float] | np.ndarray | None) -> Model:
    """The model under `gravity` (its own when None); Model checks the vector."""
    if gravity is None:
        return model
    return dataclasses.replace(model, gravity=checked_gravity(gravity, f"robot '{model.name}'"))


def _general_path(*_states: object) -> None:
    """The stand-in for a StateCall whose answer never exists (a robot with a joint that moves
    no mass): it sends every call to the general path, which raises."""


class EntryCall(NamedTuple):
    """A single-state call's C entry and what it answers."""

    function: str  # its function's name in state_entry.ENTRIES
    inputs: int  # the state vectors it takes
    shape: Callable[[int], tuple[int, ...]]  # its answer's shape for n joints
    record: type[tuple[Any, ...]] | None = None  # a record of the answer's leading parts


class BoundOnUse:
    """Single-state calls bound on first use: the first read of a call binds it (its C entry
    compiled, or loaded from the kernel cache: a StateCall takes the entry's address) and keeps
    it, so that later reads are plain attribute reads, and a robot compiles only the entries
    it calls. CALLS names the calls; other names are AttributeErrors.

    Args:
        tree: the packed tree.
        constants: what the entries take besides it (gravity, or a frame's row).
        first_extra: nq − nv, what a configuration has more than a velocity.
    """

    CALLS: ClassVar[dict[str, EntryCall]]

    def __init__(self, tree: np.ndarray, constants: np.ndarray, first_extra: int = 0) -> None:
        self._tree, self._constants, self._first_extra = tree, constants, first_extra

    def __getattr__(self, name: str) -> StateCall:
        if name not in self.CALLS:
            raise AttributeError(name)
        call = self._state_call(self.CALLS[name])
        setattr(self, name, call)
        return call

    def _state_call(self, call: EntryCall) -> StateCall:
        """The StateCall of the call's C entry."""
        return _state_call(call, self._tree, self._constants, self._first_extra)

    def replaced(self, **calls: Callable[..., Any]) -> Self:
        """A copy with `calls` in place of the calls of those names."""
        replaced = copy.copy(self)
        vars(replaced).update(calls)
        return replaced


class _OneState(BoundOnUse):
    """A robot's single-state calls that enter the compiled kernels directly (StateCall):
    each answers one state of C-contiguous float64 vectors, or returns None for anything
    else, which the Robot's general path then converts, checks or batches. The regressor's
    is at the default friction velocity. Its constants are the gravity."""

    CALLS: ClassVar[dict[str, EntryCall]] = {
        "inverse_dynamics": EntryCall("inverse_dynamics", 3, lambda n: (n,)),
        "inverse_dynamics_derivatives": EntryCall(
            "inverse_dynamics_derivatives", 3, lambda n: (3, n, n), InverseDynamicsDerivatives),
        "forward_dynamics_derivatives": EntryCall(
            "forward_dynamics_derivatives", 3, lambda n: (3, n, n), ForwardDynamicsDerivatives),
        "inverse_dynamics_regressor": EntryCall("inverse_dynamics_regressor", 3,
                                                lambda n: (n, parameter_count_of(n))),
        "bias_forces": EntryCall("bias_forces", 2, lambda n: (n,)),
        "gravity_torques": EntryCall("gravity_torques", 1, lambda n: (n,)),
        "coriolis_matrix": EntryCall("coriolis_matrix", 2, lambda n: (n, n)),
        "mass_matrix": EntryCall("mass_matrix", 1, lambda n: (n, n)),
        "mass_matrix_diagonal": EntryCall("mass_matrix_diagonal", 1, lambda n: (n,)),
        "centroidal_momentum_matrix": EntryCall("centroidal_momentum_matrix", 1,
                                                lambda n: (6, n)),
        "centre_of_mass": EntryCall("centre_of_mass", 1, lambda n: (3,)),
        "mass_matrix_inverse": EntryCall("mass_matrix_inverse", 1, lambda n: (n, n)),
        "forward_dynamics": EntryCall("forward_dynamics", 3, lambda n: (n,)),
        "kinetic_energy": EntryCall("kinetic_energy", 2, lambda n: ()),
        "potential_energy": EntryCall("potential_energy", 1, lambda n: ()),
    }

    def _state_call(self, call: EntryCall) -> StateCall:
        constants = self._constants
        if call.function == "inverse_dynamics_regressor":
            constants = np.append(constants, FRICTION_VELOCITY)
        return _state_call(call, self._tree, constants, self._first_extra)


class _OneFrame(BoundOnUse):
    """A frame's single-state calls, as _OneState's: its pose, its Jacobian, and its Λ and Λ⁻¹
    by the "recursive" method (Λ[0, 0] is NaN where Λ does not exist). Its constants are the
    frame's packed row."""

    CALLS: ClassVar[dict[str, EntryCall]] = {
        "pose": EntryCall("frame_pose", 1, lambda n: (4, 4)),
        "jacobian": EntryCall("jacobian", 1, lambda n: (6, n)),
        "task_inertia": EntryCall("operational_space_inertia", 1, lambda n: (6, 6)),
        "task_inertia_inverse": EntryCall("operational_space_inertia_inverse", 1,
                                          lambda n: (6, 6)),
    }


class _Task(NamedTuple):
    """A task as the operational-space kernels take it."""

    frames: tuple[str, ...]
    rows: np.ndarray  # the frames' packed rows (dynamics.tree.pack_frames)
    selection: np.ndarray  # the task rows kept, 6 k + axis for frame k
    axes: tuple[int, ...]  # the axes kept of every frame


class Robot:
    """Dynamics of a fixed-base robot: inverse and forward dynamics, mass matrices,
    kinematics, energy and operational-space inertia, for one state or a batch.

    Every function takes the joint vectors q, qd (q̇), qdd (q̈) and tau (τ) as one state (n,)
    or a batch (B, n), in `joint_names` order (SI units; revolute joints in rad), and returns
    float64 arrays with the batch's leading B. Each function raises, besides what its own
    docstring names:

    - ValueError: a joint vector of the wrong shape, an unknown frame or method (the message
      lists the valid ones);
    - TypeError: an argument that is not numbers;
    - NonFiniteResultError: finite inputs gave a non-finite answer (an overflow);
    - SingularMassMatrixError (a numpy.linalg.LinAlgError): a function that needs M⁻¹, where
      M is singular (massless_joints at every configuration, or at that state).

    Each function first tries its compiled single-state entry, which answers a single state of
    C-contiguous float64 vectors directly; anything else (a batch, another method, lists,
    options) takes the general path: check and convert the arguments, run the kernel of
    `method` (dynamics.methods) on the batch's threads, and check the answer.
    """

    MASS_MATRIX_METHODS = tuple(methods.MASS_MATRIX)
    MASS_MATRIX_INVERSE_METHODS = tuple(methods.MASS_MATRIX_INVERSE)
    FORWARD_DYNAMICS_METHODS = (*methods.FORWARD_DYNAMICS, *_ITERATIVE_FORWARD_DYNAMICS)
    ITERATIVE_FORWARD_DYNAMICS_METHODS = tuple(_ITERATIVE_FORWARD_DYNAMICS)
    OPERATIONAL_SPACE_METHODS = tuple(methods.OPERATIONAL_SPACE_INERTIA)

    _SPECIALISED: ClassVar[list[tuple[Callable[[Model], bool], type[Robot]]]] = []
    """The subclasses that serve models a plain Robot does not, each with its test."""

    def __init_subclass__(cls, serves: Callable[[Model], bool] | None = None,
                          **kwargs: Any) -> None:
        """A subclass declared with `serves=test` is what Robot(model) makes when test(model)
        holds (MimicRobot, for models with mimic joints)."""
        super().__init_subclass__(**kwargs)
        if serves is not None:
            Robot._SPECIALISED.append((serves, cls))

    def __new__(cls, model: Model, *, threads: int = 1) -> Robot:
        """The specialised subclass that serves `model`, if any (MimicRobot for mimic joints)."""
        if cls is Robot:
            cls = next((kind for serves, kind in Robot._SPECIALISED if serves(model)), Robot)
        return super().__new__(cls)

    def __init__(self, model: Model, *, threads: int = 1) -> None:
        """The robot of `model`; its functions run each batch of states on `threads` threads
        (see `threads`). `massless_joints` names the joints that move no mass at any
        configuration (a URDFWarning says so at load): with any, M is singular everywhere and
        the functions that need M⁻¹ raise SingularMassMatrixError."""
        self.model = model
        self.threads = threads
        self.nq, self.nv = model.nq, model.nv
        self.joint_names = model.joint_names
        self.configuration_joints = model.configuration_joints
        self.mimic_joints: tuple[str, ...] = ()  # joints that follow another (MimicRobot)
        self.coupling: Coupling | None = None  # how they follow (coupling.Coupling)
        self.frame_names = model.frame_names
        self._tree = pack_tree(model)
        self._frames = pack_frames(model)
        self._frame_rows = {
            name: self._frames[k : k + 1] for k, name in enumerate(model.frame_names)
        }
        self._gravity = np.array(model.gravity, dtype=float)
        assert model.armature is not None  # Model makes it an array
        self._multi_dof_joints = tuple(
            joint.name for joint in model.configuration_joints
            if joint.kind in MULTI_DOF_JOINTS)
        self._refused_methods = (methods.CONSTRAINT_FORCE_METHODS
                                 if model.armature.any() or self._multi_dof_joints else ())
        self._tree_under_gravity = (self._tree, self._gravity)  # what most kernels take first
        self._link_frame_constants: np.ndarray | None = None  # for "schur": _link_frames
        self._tasks: dict[tuple[tuple[str, ...], str | tuple[int | str, ...] | None], _Task] = {}
        self._schur_tasks: set[tuple[str, ...]] = set()  # checked for the SCHUR_METHODS
        extra = self.nq - self.nv
        self._one_state = _OneState(self._tree, self._gravity, extra)
        self._one_frame = {
            name: _OneFrame(self._tree, row, extra) for name, row in self._frame_rows.items()
        }
        self._contacts = ContactTasks(self._tree, self._gravity, self.nq, self.frame_row)
        self.massless_joints = joints_moving_no_mass(model, self._tree)
        if self.massless_joints:
            self._refuse_inverses()

    def _refuse_inverses(self) -> None:
        """M is singular at every configuration: warn, and send every call that needs M⁻¹
        (q̈, M⁻¹, Λ) to the general path, which raises SingularMassMatrixError."""
        self._warn_massless(stacklevel=5)  # the caller of Robot.from_urdf*
        self._one_state = self._one_state.replaced(
            forward_dynamics=_general_path, mass_matrix_inverse=_general_path
        )
        self._one_frame = {
            name: calls.replaced(task_inertia=_general_path, task_inertia_inverse=_general_path)
            for name, calls in self._one_frame.items()
        }

    def _warn_massless(self, stacklevel: int) -> None:
        """The URDFWarning naming massless_joints and the remedies."""
        base = ""
        if self.model.floating_base and set(self.massless_joints) & set(FREE_FLYER_JOINTS):
            base = (f" (a floating base whose body, the root link '{self.model.root_link}' "
                    "with its fixed links, is massless and moves with the joint below it)")
        elif any(self.model.joint_kinds[self.joint_names.index(name)] in MULTI_DOF_JOINTS
                 for name in self.massless_joints):
            base = (" (a free-flyer or planar joint whose body, with its fixed links, is "
                    "massless and moves with a joint below it)")
        warnings.warn(
            f"robot '{self.model.name}': joint(s) {', '.join(map(repr, self.massless_joints))} "
            f"move no mass at any configuration{base}, so M(q) is singular and q̈, M⁻¹ and Λ "
            "do not exist (SingularMassMatrixError); M, τ, g and kinematics are unaffected. "
            "Give the bodies they move an <inertial>, add rotor inertia (armature=), or lock "
            "the joints (locked_joints=)",
            URDFWarning,
            stacklevel=stacklevel,
        )

    def __reduce__(self) -> tuple[type[Self], tuple[Model]]:
        """Pickled as its Model (for the process and Dask backends); rebuilt on arrival, with
        one thread: a worker of those backends is one of several already."""
        return (type(self), (self.model,))

    @classmethod
    def from_urdf(
        cls,
        path: str | os.PathLike[str],
        *,
        gravity: Sequence[float] | np.ndarray | None = None,
        threads: int = 1,
        **options: Unpack[UrdfOptions],
    ) -> Robot:
        """Load a URDF file.

        Args:
            path: the URDF file.
            gravity: the gravitational acceleration (m/s²) in the base frame, (0, 0, -9.81)
                when None: an arm on a wall or a ceiling is mounted by this vector alone.
            threads: as in `threads`.
            options: how the URDF becomes a Model (model.UrdfOptions):
                - locked_joints: joint name → position at which that joint is frozen;
                - strict_inertia: refuse a link whose own inertia is impossible even where
                  its body's is not (model.load_urdf);
                - armature: joint name → reflected rotor inertia (kg·m² revolute, kg
                  prismatic), or a YAML file of that mapping (robodyn_ros.model.armature);
                  added to M's diagonal by every algorithm. The constraint-force methods
                  (schur, schur_bcr, jacobi, gauss_seidel, sor, jacobi_si, jacobi_cg) then
                  raise ValueError;
                - mimic: joints with a URDF <mimic> follow their leader and are not
                  coordinates (a MimicRobot, `mimic_joints`); False loads them as
                  independent joints;
                - floating_base: the root link floats (a humanoid, a quadruped, a mobile
                  base): a free flyer joins it to the world (model.FREE_FLYER_JOINT), its
                  configuration [base position, base quaternion (x, y, z, w)] first in q and
                  its velocity [linear; angular] in the base frame first in v; gravity is in
                  the world.

        Returns:
            The Robot (a MimicRobot with mimic joints).

        Raises:
            ModelError: an invalid URDF, locked joint or armature (see model.load_urdf).
            OSError: the URDF or the armature file cannot be read.
            TypeError: an option that is not one of UrdfOptions'.
        """
        return cls(_with_gravity(load_urdf(path, **options), gravity), threads=threads)

    @classmethod
    def from_urdf_string(
        cls,
        xml: str | bytes,
        *,
        source: str = "<string>",
        gravity: Sequence[float] | np.ndarray | None = None,
        threads: int = 1,
        **options: Unpack[UrdfOptions],
    ) -> Robot:
        """Load a URDF from its text.

        Args:
            xml: the URDF document.
            source: what error messages call it (a file name, a topic).
            gravity, threads, options: as in from_urdf.

        Returns:
            The Robot (a MimicRobot with mimic joints).

        Raises:
            ModelError: an invalid URDF, locked joint or armature (see model.load_urdf).
            OSError: the armature file cannot be read.
            TypeError: an option that is not one of UrdfOptions'.
        """
        model = load_urdf_string(xml, source=source, **options)
        return cls(_with_gravity(model, gravity), threads=threads)

    @classmethod
    def from_xacro(
        cls,
        path: str | os.PathLike[str],
        mappings: Mapping[str, str] | None = None,
        *,
        gravity: Sequence[float] | np.ndarray | None = None,
        threads: int = 1,
        **options: Unpack[UrdfOptions],
    ) -> Robot:
        """Load a xacro file, expanded to URDF as ``xacro path name:=value ...`` does.

        Args:
            path: the xacro file; it names the source in every error message, also in those
                about the URDF it expands to.
            mappings: xacro argument name → value (``$(arg name)``, ``<xacro:arg>``).
            gravity, threads, options: as in from_urdf.

        Returns:
            The Robot (a MimicRobot with mimic joints).

        Raises:
            ModelError: the file does not expand (a missing argument or include, a bad macro,
                a ``$(find pkg)`` the ament index cannot answer: model.expand_xacro), or it
                expands to an invalid URDF, or an invalid locked joint or armature.
            OSError: the armature file cannot be read.
            TypeError: an option that is not one of UrdfOptions'.
        """
        return cls.from_urdf_string(expand_xacro(path, mappings), source=os.fspath(path),
                                    gravity=gravity, threads=threads, **options)

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
    def measured_joints(self) -> tuple[str, ...]:
        """The joints a sensor_msgs/JointState carries: every joint, or a floating base's
        joints after its free flyer, whose state a nav_msgs/Odometry carries."""
        return (self.joint_names[FREE_FLYER_DOF:] if self.model.floating_base
                else self.joint_names)

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

    def per_coordinate(self, per_joint: ArrayLike) -> np.ndarray:
        """A per-joint array of the model for the robot's coordinates.

        Args:
            per_joint: one value per joint of the model (its limits, damping, friction), in
                model.joint_names order.

        Returns:
            The values of joint_names, in that order: the same array here; a MimicRobot leaves
            the mimic joints out.
        """
        return np.asarray(per_joint)

    def default_positions(self) -> np.ndarray:
        """q = 0 moved to the nearest point inside the position limits: where a simulation
        starts and where warm-ups compute, a configuration every joint can take. A free
        flyer or planar joint is at its neutral (the identity)."""
        if self.nq != self.nv:
            return configuration.neutral_within_limits(
                self.configuration_joints, self.per_coordinate(self.model.lower),
                self.per_coordinate(self.model.upper))
        return np.clip(np.zeros(self.nv), self.per_coordinate(self.model.lower),
                       self.per_coordinate(self.model.upper))

    def neutral(self) -> np.ndarray:
        """The neutral configuration (pinocchio.neutral): zero, and the identity rotation of
        every free flyer and planar joint."""
        return configuration.neutral(self.configuration_joints)

    def integrate(self, q: ArrayLike, v: ArrayLike, dt: float = 1.0) -> FloatArray:
        """q ⊕ v dt: the configuration reached from q (..., nq) at the constant velocity v
        (..., nv) in dt seconds, joint by joint (robodyn_ros.robot.configuration,
        pinocchio.integrate): a free flyer along the screw motion exp(v dt) in its own frame.

        Raises:
            ValueError: the last axes are not nq and nv, the batch shapes do not broadcast,
                or a free flyer's or planar joint's rotation in q is not of unit norm.
        """
        q = np.asarray(q, dtype=float)
        if q.ndim and q.shape[-1] == self.nq:
            check_configuration(self.configuration_joints, q, "q")
        return configuration.integrate(self.configuration_joints, q,
                                       np.asarray(v, dtype=float) * dt)

    def difference(self, q0: ArrayLike, q1: ArrayLike) -> FloatArray:
        """q1 ⊖ q0 (..., nv): the velocity that integrate takes from q0 to q1 in unit time
        (pinocchio.difference); a continuous joint turns the shorter way.

        Raises:
            ValueError: a last axis is not nq, the batch shapes do not broadcast, or a free
                flyer's or planar joint's rotation is not of unit norm.
        """
        for name, q in (("q0", q0), ("q1", q1)):
            q = np.asarray(q, dtype=float)
            if q.ndim and q.shape[-1] == self.nq:
                check_configuration(self.configuration_joints, q, name)
        return configuration.difference(self.configuration_joints, q0, q1)

    @property
    def kernel_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(tree, gravity): the packed model the dynamics kernels take, for a caller of a
        kernel the Robot does not wrap (the preview's rollout kernel, sim.rollout); not to be
        modified."""
        return self._tree, self._gravity

    def frame_row(self, frame: str) -> np.ndarray:
        """The packed row (13,) of one frame as the kernels take it.

        Raises:
            ValueError: an unknown frame, listing the frames.
        """
        row: np.ndarray = self._frame(frame)[0]
        return row

    # -- inverse dynamics -------------------------------------------------------------------

    def inverse_dynamics(
        self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, f_ext: ArrayLike | None = None, *,
        external_wrenches: ExternalWrenches | None = None,
    ) -> FloatArray:
        """τ = M(q) q̈ + C(q, q̇) q̇ + g(q) − Σ Jᵢᵀ f_ext,i − Σ J_kᵀ w_k by the recursive
        Newton–Euler algorithm.

        Args:
            q, qd, qdd: joint positions, velocities and accelerations.
            f_ext: optional wrenches [force; torque], one per moving body, shape (..., n, 6):
                row i acts on the child link of joint i, in that link's frame about its origin.
            external_wrenches: optional frame → wrench [fx fy fz tx ty tz] at the frame's
                origin in world-aligned axes, (6,) or one per state (robodyn_ros.
                external_wrenches): a push, a tool's contact force.

        Returns:
            τ, (..., nv).
        """
        if f_ext is None and external_wrenches is None:
            tau = self._one_state.inverse_dynamics(q, qd, qdd)
            if tau is not None:
                return tau
        tau = self._compute("inverse_dynamics", "τ", inverse_dynamics.inverse_dynamics,
                            self._tree_under_gravity, ("q", "qd", "qdd"), (q, qd, qdd),
                            (self.nv,), extras=(self._wrenches(f_ext, q),))
        if external_wrenches:
            tau -= wrench_forces(self, q, external_wrenches)
        return tau

    def bias_forces(self, q: ArrayLike, qd: ArrayLike) -> FloatArray:
        """C(q, q̇) q̇ + g(q): the Coriolis, centrifugal and gravity torques (τ at q̈ = 0).

        Returns:
            The torques, shaped like q.
        """
        tau = self._one_state.bias_forces(q, qd)
        if tau is not None:
            return tau
        return self._compute("bias_forces", "C(q, q̇) q̇ + g(q)", inverse_dynamics.bias_forces,
                             self._tree_under_gravity, ("q", "qd"), (q, qd), (self.nv,))

    def gravity_torques(self, q: ArrayLike) -> FloatArray:
        """g(q): the torques that hold the robot still against gravity.

        Returns:
            g, shaped like q.
        """
        tau = self._one_state.gravity_torques(q)
        if tau is not None:
            return tau
        return self._compute("gravity_torques", "g(q)", inverse_dynamics.gravity_torques,
                             self._tree_under_gravity, ("q",), (q,), (self.nv,))

    def coriolis_matrix(self, q: ArrayLike, qd: ArrayLike) -> FloatArray:
        """The Coriolis matrix C(q, q̇), with C q̇ = bias_forces − gravity_torques and Ṁ − 2C
        skew-symmetric (Pinocchio's computeCoriolisMatrix). The armature, constant in M, does
        not enter C.

        Returns:
            C, shape (..., n, n).
        """
        C = self._one_state.coriolis_matrix(q, qd)
        if C is not None:
            return C
        return self._compute("coriolis_matrix", "C", coriolis.coriolis_matrix, (self._tree,),
                             ("q", "qd"), (q, qd), (self.nv, self.nv))

    # -- derivatives ------------------------------------------------------------------------

    def inverse_dynamics_derivatives(
        self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, f_ext: ArrayLike | None = None,
    ) -> InverseDynamicsDerivatives:
        """∂τ/∂q, ∂τ/∂q̇ and ∂τ/∂q̈ of τ = inverse_dynamics(q, q̇, q̈, f_ext), by the recursive
        O(n d) algorithm of Carpentier & Mansard (RSS 2018), gravity as set. The derivative in
        q is taken in the tangent space (robodyn_ros.robot.derivatives).

        Args:
            q, qd, qdd: joint positions, velocities and accelerations.
            f_ext: optional wrenches as in inverse_dynamics, each in its link's frame: they
                turn with their links (Pinocchio's fext).

        Returns:
            InverseDynamicsDerivatives(dtau_dq, dtau_dv, dtau_da), each (..., nv, nv);
            dtau_da is M.
        """
        answer = None if f_ext is not None else cast(
            "InverseDynamicsDerivatives | None",  # the call's record (_OneState.CALLS)
            self._one_state.inverse_dynamics_derivatives(q, qd, qdd))
        if answer is not None:
            return answer
        out = self._compute("inverse_dynamics_derivatives", "∂τ",
                            derivatives.inverse_dynamics_derivatives, self._tree_under_gravity,
                            ("q", "qd", "qdd"), (q, qd, qdd), (3, self.nv, self.nv),
                            extras=(self._wrenches(f_ext, q),))
        return InverseDynamicsDerivatives(*split_derivatives(out))

    def forward_dynamics_derivatives(
        self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, f_ext: ArrayLike | None = None,
    ) -> ForwardDynamicsDerivatives:
        """∂q̈/∂q, ∂q̈/∂q̇ and ∂q̈/∂τ of q̈ = forward_dynamics(q, q̇, τ, f_ext): −M⁻¹ times the
        inverse-dynamics derivatives at that q̈, and M⁻¹ (Carpentier & Mansard, RSS 2018,
        §IV-C). The derivative in q is taken in the tangent space.

        Args:
            q, qd, tau: joint positions, velocities and efforts.
            f_ext: optional wrenches, as in inverse_dynamics_derivatives.

        Returns:
            ForwardDynamicsDerivatives(dvdot_dq, dvdot_dv, dvdot_dtau), each (..., nv, nv);
            dvdot_dtau is M⁻¹.
        """
        answer = None if f_ext is not None else cast(
            "ForwardDynamicsDerivatives | None",  # the call's record (_OneState.CALLS)
            self._one_state.forward_dynamics_derivatives(q, qd, tau))
        if answer is not None:
            return answer
        self._require_mass("forward_dynamics_derivatives")
        out = self._compute("forward_dynamics_derivatives", "∂q̈",
                            derivatives.forward_dynamics_derivatives, self._tree_under_gravity,
                            ("q", "qd", "tau"), (q, qd, tau), (3, self.nv, self.nv),
                            inverts=True, extras=(self._wrenches(f_ext, q),))
        return ForwardDynamicsDerivatives(*split_derivatives(out))

    # -- dynamic parameters -----------------------------------------------------------------

    def inverse_dynamics_regressor(
        self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, *,
        friction_velocity: float = FRICTION_VELOCITY,
    ) -> FloatArray:
        """Y(q, q̇, q̈) with τ = Y π, π the robot's dynamic parameters (inertial_parameters):
        ten per body, four per joint (robodyn_ros.model.inertial_parameters).

        Y π is inverse_dynamics' τ plus each joint's friction d q̇ + f tanh(q̇/ε) and offset,
        which inverse_dynamics leaves out.

        Args:
            q, qd, qdd: joint positions, velocities and accelerations.
            friction_velocity: ε of the smoothed Coulomb friction, > 0 (the simulation's by
                default, model.FRICTION_VELOCITY).

        Returns:
            Y, shape (..., n, len(parameter_names)).

        Raises:
            ValueError: friction_velocity not a positive number.
        """
        if friction_velocity == FRICTION_VELOCITY:
            Y = self._one_state.inverse_dynamics_regressor(q, qd, qdd)
            if Y is not None:
                return Y
        elif not (np.isfinite(friction_velocity) and friction_velocity > 0.0):
            raise ValueError("inverse_dynamics_regressor: friction_velocity must be a positive "
                             f"speed; got {friction_velocity!r}")
        return self._compute(
            "inverse_dynamics_regressor", "Y", regressor.inverse_dynamics_regressor,
            (*self._tree_under_gravity, float(friction_velocity)), ("q", "qd", "qdd"),
            (q, qd, qdd), (self.nv, parameter_count_of(self.nv)),
        )

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """The name of each entry of π: "<link>.m", "<link>.mcx", … for each body (named by
        its joint's child link), then "<joint>.armature", "<joint>.viscous", … for each joint
        of the tree (robodyn_ros.model.inertial_parameters)."""
        return parameter_names(self.model)

    def inertial_parameters(self) -> FloatArray:
        """π, the robot's dynamic parameters as inverse_dynamics_regressor multiplies them:
        each body's mass, first moment and rotational inertia about its origin in its frame,
        then each joint's armature, viscous and Coulomb friction (the URDF's damping and
        friction) and offset (zero).

        Returns:
            π, shape (len(parameter_names),).
        """
        return parameters_of(self.model)

    def with_inertial_parameters(self, parameters: ArrayLike) -> Robot:
        """This robot with the dynamic parameters π: its bodies' inertias, armature, damping
        and friction replaced. The offsets are not the robot's (a torque sensor's bias) and
        are left out; payloads it carried are part of π's bodies, so the new robot lists none.

        Args:
            parameters: π in the layout of parameter_names.

        Returns:
            A new Robot on the same kinematics; the compiled kernels are shared.

        Raises:
            ModelError: not one finite number per name; a body no rigid body can be (a
                negative mass, an impossible inertia) or a negative armature or friction, the
                message naming the link or joint.
        """
        return type(self)(model_with_parameters(self.model, parameters), threads=self.threads)

    # -- joint-space inertia ----------------------------------------------------------------

    def mass_matrix(self, q: ArrayLike, method: str = "crba") -> FloatArray:
        """The joint-space inertia matrix M(q), armature included.

        Args:
            q: joint positions.
            method: one of MASS_MATRIX_METHODS, all exact to rounding: "crba" (the
                composite-rigid-body algorithm in world axes), "gdahj" (Safeea et al.: O(n)
                recursions, then the minimal O(n²) loop), "recursive_doubling" (Amin-Javaheri
                & Orin: ⌈log₂n⌉ levels of independent set combinations; serial chains only)
                and "rnea_columns" (n inverse-dynamics calls, the baseline).

        Returns:
            M, shape (..., n, n).

        Raises:
            ValueError: "recursive_doubling" on a tree.
        """
        if method == "crba":
            M = self._one_state.mass_matrix(q)
            if M is not None:
                return M
        kernel = self._method(methods.MASS_MATRIX, method, "mass_matrix")
        return self._compute("mass_matrix", "M", kernel, (self._tree,), ("q",), (q,),
                             (self.nv, self.nv))

    def mass_matrix_diagonal(self, q: ArrayLike) -> FloatArray:
        """diag M(q) in O(n), by the composite first and second moments of mass (Fijany &
        Scheid), without forming M.

        Returns:
            The diagonal, shaped like q.
        """
        diag = self._one_state.mass_matrix_diagonal(q)
        if diag is not None:
            return diag
        return self._compute("mass_matrix_diagonal", "diag M",
                             inertia_diagonal.mass_matrix_diagonal, (self._tree,), ("q",), (q,),
                             (self.nv,))

    def mass_matrix_inverse(self, q: ArrayLike, method: str = "aba") -> FloatArray:
        """M(q)⁻¹, armature included.

        Args:
            q: joint positions.
            method: one of MASS_MATRIX_INVERSE_METHODS: "aba" (the articulated-body recursion
                for all unit torques at once, O(n²), M never formed), "ltdl" (CRBA, the
                branch-sparse LᵀDL factor of M, inverted row by row), "schur"
                (M⁻¹ = 𝒢 − ℬᵀ𝒜⁻¹ℬ, 𝒜 the constraint-force matrix factored once by block LᵀDL,
                leaves first, O(n²)) and
                "schur_bcr" (𝒜 factored by block cyclic reduction, ⌈log₂n⌉ levels; serial
                chains only).

        Returns:
            M⁻¹, shape (..., n, n).

        Raises:
            ValueError: "schur" or "schur_bcr" for a robot with armature (their system has no
                term for it) or with a massless body; "schur_bcr" on a tree.
        """
        if method == "aba":
            Minv = self._one_state.mass_matrix_inverse(q)
            if Minv is not None:
                return Minv
        kernel = self._method(methods.MASS_MATRIX_INVERSE, method, "mass_matrix_inverse")
        self._require_mass("mass_matrix_inverse")
        return self._compute("mass_matrix_inverse", "M⁻¹", kernel, (self._tree,), ("q",), (q,),
                             (self.nv, self.nv), inverts=True)

    # -- forward dynamics -------------------------------------------------------------------

    @overload
    def forward_dynamics(
        self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, method: str = ...,
        f_ext: ArrayLike | None = ..., *, info: Literal[False] = ...,
        external_wrenches: ExternalWrenches | None = ..., **options: Any,
    ) -> FloatArray: ...

    @overload
    def forward_dynamics(
        self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, method: str = ...,
        f_ext: ArrayLike | None = ..., *, info: Literal[True],
        external_wrenches: ExternalWrenches | None = ..., **options: Any,
    ) -> tuple[FloatArray, IterationInfo]: ...

    def forward_dynamics(
        self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, method: str = "aba",
        f_ext: ArrayLike | None = None, *, external_wrenches: ExternalWrenches | None = None,
        **options: Any,
    ) -> FloatArray | tuple[FloatArray, IterationInfo]:
        """q̈ = M⁻¹(τ − C q̇ − g + Σ Jᵢᵀ f_ext,i + Σ J_kᵀ w_k).

        Args:
            q, qd, tau: joint positions, velocities and efforts.
            method: one of FORWARD_DYNAMICS_METHODS. Direct: "aba" (the articulated-body
                algorithm, O(n)), "cholesky" (CRBA, the LᵀDL factor of M and a solve),
                "schur" (the joint constraint forces of Sharf & D'Eleuterio's system, solved
                exactly by block LᵀDL, leaves first, O(n), in each link's frame) and
                "schur_bcr" (the same system by block cyclic reduction, Fijany; serial chains
                only). Iterative (ITERATIVE_FORWARD_DYNAMICS_METHODS): "cg" and "pcg" (Fijany
                & Scheid's CCG and PCG-DS on M q̈ = τ − b, each product M p one O(n)
                Newton–Euler pass; PCG-DS preconditioned by diag M) and the iterative solves of
                the constraint forces "jacobi", "gauss_seidel", "sor", "jacobi_si" and
                "jacobi_cg" (on a tree with branches the block-Jacobi step is extrapolated to
                converge).
            f_ext, external_wrenches: as in inverse_dynamics; the wrenches push (τ + Σ J_kᵀ w_k).
            **options: the iterative methods' `tol`, `max_iterations`, `initial_guess` (a q̈)
                and `info` (return ``(qdd, IterationInfo)``), described in
                robodyn_ros.robot.iteration; "sor" also takes `omega` (default: Young's optimum) and
                `spectral_radius`, "jacobi_si" `spectral_radius` (default: estimated by power
                iteration).

        Returns:
            q̈, shaped like q; ``(q̈, IterationInfo)`` when `info` is set.

        Raises:
            ValueError: an option the method does not take; a constraint-force method ("schur",
                "schur_bcr" and the five iterative ones) on a robot with armature (their system
                has the joint torque as a given force on each body, with no term for the rotor's
                a_i q̈_i; the others include it in M) or with a massless body.
            ConvergenceError: an iterative method did not reach `tol` (unless `info` is set).
        """
        if external_wrenches:
            (q,) = self._inputs(("q",), q)
            tau = np.asarray(tau, dtype=float) + wrench_forces(self, q, external_wrenches)
        if method == "aba" and f_ext is None and not options:
            qdd = self._one_state.forward_dynamics(q, qd, tau)
            if qdd is not None:
                return qdd
        if method in self._refused_methods:
            self._refuse_constraint_forces(method, "forward_dynamics")
        kernel = methods.FORWARD_DYNAMICS.get(method)
        if kernel is None or options:
            return self._iterate(method, q, qd, tau, f_ext, options)
        self._require_mass("forward_dynamics")
        model = self._link_frames() if method in methods.LINK_FRAME_METHODS else self._tree
        wrenches = self._wrenches(f_ext, q, zeros=method in methods.CONSTRAINT_FORCE_METHODS)
        return self._compute("forward_dynamics", "q̈", kernel, (model, self._gravity),
                             ("q", "qd", "tau"), (q, qd, tau), (self.nv,), inverts=True,
                             extras=(wrenches,))

    def _iterate(
        self, method: str, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, f_ext: ArrayLike | None,
        options: dict[str, Any],
    ) -> FloatArray | tuple[FloatArray, IterationInfo]:
        """forward_dynamics by an iterative method, its answer checked."""
        q, qd, tau = self._inputs(("q", "qd", "tau"), q, qd, tau)
        wrenches = self._wrenches(f_ext, q)
        _check_method(method, self.FORWARD_DYNAMICS_METHODS, "forward_dynamics")
        iterative = _ITERATIVE_FORWARD_DYNAMICS.get(method)
        if iterative is None:
            raise ValueError(
                f"forward_dynamics: method '{method}' is direct and takes no options; got "
                f"{', '.join(options)}"
            )
        self._require_mass("forward_dynamics")
        answer = iterative.solve(self._run_batch, self._tree_under_gravity, q, qd, tau, wrenches,
                                 options)
        qdd = answer[0] if isinstance(answer, tuple) else answer
        self._check("forward_dynamics", True, (("q̈", qdd),), (q, qd, tau, wrenches))
        return answer

    def _link_frames(self) -> np.ndarray:
        """The link frames' constants the "schur" forward dynamics takes
        (dynamics.schur_link_frames), made on its first call."""
        if self._link_frame_constants is None:
            self._link_frame_constants = schur_link_frames.link_frames(self._tree)
        return self._link_frame_constants

    # -- kinematics -------------------------------------------------------------------------

    def frame_pose(self, q: ArrayLike, frame: str) -> FloatArray:
        """The pose of a frame in the world.

        Args:
            q: joint positions.
            frame: a name of frame_names (every URDF link).

        Returns:
            The 4x4 homogeneous transform, shape (..., 4, 4).
        """
        calls = self._one_frame.get(frame)  # a frame's single-state C entries, where it has them
        if calls is not None and (pose := calls.pose(q)) is not None:
            return pose
        row = self._frame(frame)
        return self._compute("frame_pose", f"the pose of frame '{frame}'",
                             kinematics.frame_poses, (self._tree, row), ("q",), (q,), (4, 4))

    def frame_poses(self, q: ArrayLike) -> FloatArray:
        """The poses of every frame, in frame_names order.

        Returns:
            4x4 homogeneous transforms, shape (..., F, 4, 4).
        """
        return self._compute("frame_poses", "the frame poses", kinematics.frame_poses,
                             (self._tree, self._frames), ("q",), (q,),
                             (len(self.frame_names), 4, 4))

    def jacobian(self, q: ArrayLike, frame: str) -> FloatArray:
        """The Jacobian of a frame: the [linear; angular] velocity of the frame origin in
        world-aligned axes (Pinocchio's LOCAL_WORLD_ALIGNED).

        Args:
            q: joint positions.
            frame: a name of frame_names.

        Returns:
            J, shape (..., 6, n).
        """
        calls = self._one_frame.get(frame)  # a frame's single-state C entries, where it has them
        if calls is not None and (J := calls.jacobian(q)) is not None:
            return J
        row = self._frame(frame)
        return self._compute("jacobian", f"the Jacobian of frame '{frame}'",
                             kinematics.frame_jacobian, (self._tree, row[0]), ("q",), (q,),
                             (6, self.nv))

    def frame_jacobian_time_variation(self, q: ArrayLike, qd: ArrayLike, frame: str
                                      ) -> FloatArray:
        """J̇, the time derivative of jacobian(q, frame) at the velocity q̇ (Pinocchio's
        getFrameJacobianTimeVariation, LOCAL_WORLD_ALIGNED); J̇ q̇ is classical_acceleration's.
        Linear in q̇: J̇ at q̇ = δ is J's directional derivative along δ, in the tangent space.

        Args:
            q, qd: joint positions and velocities.
            frame: a name of frame_names.

        Returns:
            J̇, shape (..., 6, n).
        """
        row = self._frame(frame)
        return self._compute("frame_jacobian_time_variation",
                             f"J̇ of frame '{frame}'", kinematics.frame_jacobian_time_variation,
                             (self._tree, row[0]), ("q", "qd"), (q, qd), (6, self.nv))

    # -- energy -----------------------------------------------------------------------------

    def centroidal_momentum_matrix(self, q: ArrayLike) -> FloatArray:
        """A_g, (..., 6, nv): the robot's momentum [linear; angular about its centre of mass]
        in world axes is A_g q̇ (Orin, Briggs & Goswami; Pinocchio's computeCentroidalMap)."""
        A = self._one_state.centroidal_momentum_matrix(q)
        if A is not None:
            return A
        return self._centroidal(q)[0]

    def centre_of_mass(self, q: ArrayLike) -> FloatArray:
        """The centre of mass of the moving bodies in the world, (..., 3)."""
        com = self._one_state.centre_of_mass(q)
        if com is not None:
            return com
        return self._centroidal(q)[1]

    def com_jacobian(self, q: ArrayLike) -> FloatArray:
        """J_c, (..., 3, nv): the centre of mass's velocity in the world is J_c q̇ (the linear
        rows of A_g over the mass)."""
        return self.centroidal_momentum_matrix(q)[..., :3, :] / self.model.total_mass

    def _centroidal(self, q: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """(A_g, c) by the general path."""
        (q,) = self._inputs(("q",), q)
        A, com = np.empty((*q.shape[:-1], 6, self.nv)), np.empty((*q.shape[:-1], 3))
        self._run(centroidal.centroidal_momentum_matrix, (self._tree,), (q, A, com))
        self._check("centroidal_momentum_matrix", False, (("A_g", A), ("c", com)), (q,))
        return A, com

    def kinetic_energy(self, q: ArrayLike, qd: ArrayLike) -> FloatArray:
        """½ q̇ᵀ M(q) q̇, in J.

        Returns:
            The energy, shape () or (B,).
        """
        T = self._one_state.kinetic_energy(q, qd)
        if T is not None:
            return T
        return self._compute("kinetic_energy", "the kinetic energy", energy.kinetic_energy,
                             (self._tree,), ("q", "qd"), (q, qd), ())

    def potential_energy(self, q: ArrayLike) -> FloatArray:
        """The gravitational potential energy in J, zero with every centre of mass at the
        height of the world origin.

        Returns:
            The energy, shape () or (B,).
        """
        V = self._one_state.potential_energy(q)
        if V is not None:
            return V
        return self._compute("potential_energy", "the potential energy",
                             energy.potential_energy, self._tree_under_gravity, ("q",), (q,), ())

    # -- operational space ------------------------------------------------------------------

    def operational_space_inertia(
        self,
        q: ArrayLike,
        frame: Task,
        method: str = "recursive",
        inverse: bool = False,
        *,
        axes: TaskAxes = None,
    ) -> FloatArray:
        """Λ = (J M⁻¹ Jᵀ)⁻¹ of a task, or Λ⁻¹, about each frame origin in world-aligned axes.

        Args:
            q: joint positions.
            frame: the task's frame, or several frames whose rows are stacked.
            method: one of OPERATIONAL_SPACE_METHODS, all exact to rounding: "dense"
                (J M⁻¹ Jᵀ with M⁻¹ by the O(n²) recursion; the reference), "recursive" (O(n),
                no n x n matrix: the articulated-body inertias and the inverse-inertia
                recursion Ω_i = T_iᵀ Ω_λ T_i + S_i S_iᵀ / D_i; the default), "schur" (Fijany's
                Λ⁻¹ = D − Eᵀ 𝒜⁻¹ E from the block elimination of the constraint-force matrix
                of the joints from the base to the frames' body, leaf first, O(n), and Λ of one
                whole frame directly as I_N + W_N R⁻¹ W_Nᵀ) and "schur_bcr" ("schur" with 𝒜
                reduced by block cyclic reduction).
            inverse: return Λ⁻¹, which exists everywhere, instead of Λ.
            axes: the task axes of every frame (C Λ⁻¹ Cᵀ); m = 6 or len(axes) rows per frame.

        Returns:
            Λ or Λ⁻¹, shape (..., m, m).

        Raises:
            LinAlgError: Λ does not exist at this state (J has lost rank: a kinematic
                singularity); Robot.operational_space damps it there.
            ValueError: "schur" or "schur_bcr" with frames on more than one body, or for a
                robot with armature (their system has no term for it).
        """
        calls = self._one_frame.get(frame) if type(frame) is str else None
        if calls is not None and method == "recursive" and axes is None:
            Lambda = (calls.task_inertia_inverse if inverse else calls.task_inertia)(q)
            if Lambda is not None:
                return Lambda
        task = self._task(frame, axes)
        kernel = self._task_method(method, task.frames, "operational_space_inertia")
        self._require_mass("operational_space_inertia")
        m = task.selection.shape[0]
        try:
            return self._compute("operational_space_inertia", "Λ⁻¹" if inverse else "Λ", kernel,
                                 (self._tree, task.rows, task.selection), ("q",), (q,), (m, m),
                                 inverts=True, extras=(bool(inverse),))
        except np.linalg.LinAlgError as error:
            if isinstance(error, SingularMassMatrixError):
                raise
            (q,) = self._inputs(("q",), q)
            check_mass_matrix("operational_space_inertia", self._tree, self.joint_names, q)
            where = getattr(error, "state", "")
            raise np.linalg.LinAlgError(
                f"operational_space_inertia: Λ of frame(s) {', '.join(map(repr, task.frames))} "
                f"does not exist at this configuration{f' ({where})' if where else ''}: "
                "J M⁻¹ Jᵀ is singular (the task Jacobian has lost rank, a kinematic "
                "singularity); Λ⁻¹ (inverse=True) is defined everywhere"
            ) from None

    def operational_space_inertia_inverse_rate(
        self, q: ArrayLike, direction: ArrayLike, frames: Task, *, axes: TaskAxes = None
    ) -> FloatArray:
        """The rate of Λ⁻¹ = J M⁻¹ Jᵀ as q moves along `direction` (a velocity, tangent
        space): J̇ M⁻¹ Jᵀ + J M⁻¹ J̇ᵀ − J M⁻¹ Ṁ M⁻¹ Jᵀ, with J̇ and Ṁ = C + Cᵀ at q̇ = direction
        (frame_jacobian_time_variation, coriolis_matrix).

        Args:
            q: joint positions.
            direction: the tangent direction δq, shaped like a velocity.
            frames, axes: the task, as in operational_space_inertia.

        Returns:
            dΛ⁻¹ along `direction`, shape (..., m, m).
        """
        q, direction = self._inputs(("q", "direction"), q, direction)
        J = stacked_task_rows(lambda name: self.jacobian(q, name), frames, axes)
        J_dot = stacked_task_rows(
            lambda name: self.frame_jacobian_time_variation(q, direction, name), frames, axes)
        C = self.coriolis_matrix(q, direction)
        Y = self.mass_matrix_inverse(q) @ np.swapaxes(J, -1, -2)  # M⁻¹ Jᵀ
        turn = J_dot @ Y
        derivative: FloatArray = turn + np.swapaxes(turn, -1, -2) - np.swapaxes(Y, -1, -2) @ (
            C + np.swapaxes(C, -1, -2)) @ Y
        return derivative

    def operational_space_inertia_inverse_times(
        self, q: ArrayLike, frame: Task, force: ArrayLike, *, axes: TaskAxes = None
    ) -> FloatArray:
        """Λ⁻¹ F for one task force F, in O(n) without forming Λ⁻¹ (the articulated-body
        algorithm with F as external wrenches): the task acceleration that F gives the robot at
        rest with τ = 0 and no gravity.

        Args:
            q: joint positions.
            frame, axes: the task, as in operational_space_inertia.
            force: F, [force; torque] about each frame origin in world-aligned axes, cut to
                `axes`, shape (..., m).

        Returns:
            Λ⁻¹ F, shaped like force.
        """
        task = self._task(frame, axes)
        (q,) = self._inputs(("q",), q)
        force = _as_float_array(force, "force")
        m = task.selection.shape[0]
        if force.shape != (*q.shape[:-1], m):
            raise ValueError(
                f"force must have shape {(*q.shape[:-1], m)}: one value per task axis of the "
                f"frame(s) {', '.join(map(repr, task.frames))} for each state; got {force.shape}"
            )
        self._require_mass("operational_space_inertia_inverse_times")
        return self._compute("operational_space_inertia_inverse_times", "Λ⁻¹ F",
                             task_space.operational_space_inertia_inverse_times,
                             (self._tree, task.rows, task.selection), None, (q,), (m,),
                             inverts=True, extras=(force,))

    def classical_acceleration(
        self, q: ArrayLike, qd: ArrayLike, frames: Task, *, axes: TaskAxes = None
    ) -> FloatArray:
        """J̇ q̇ of a task: the classical acceleration [a; α] of each frame origin at q̈ = 0 in
        world-aligned axes (Pinocchio's getFrameClassicalAcceleration, LOCAL_WORLD_ALIGNED).
        Kinematics only: M does not enter.

        Args:
            q, qd: joint positions and velocities.
            frames, axes: the task, as in operational_space_inertia.

        Returns:
            J̇ q̇, shape (..., m).
        """
        task = self._task(frames, axes)
        return self._compute("classical_acceleration", "J̇ q̇",
                             task_space.classical_accelerations,
                             (self._tree, task.rows, task.selection), ("q", "qd"), (q, qd),
                             (task.selection.shape[0],))

    def operational_space(
        self,
        q: ArrayLike,
        qd: ArrayLike,
        frames: Task,
        method: str = "dense",
        *,
        axes: TaskAxes = None,
        singular_threshold: float = SINGULAR_THRESHOLD,
        singular_damping: float | None = None,
    ) -> OperationalSpaceDynamics:
        """J, Λ⁻¹, Λ, J̄, μ, p and J̇ q̇ of a task, computed together (OperationalSpaceDynamics).

        Λ is damped where the smallest eigenvalue of Λ⁻¹ falls below singular_threshold times
        the largest, with a damping of up to singular_damping times the largest; Λ then stays
        below about 1 / (singular_threshold · s_max).

        Args:
            q, qd: joint positions and velocities.
            frames, axes: the task, as in operational_space_inertia.
            method: the route to Λ⁻¹ (OPERATIONAL_SPACE_METHODS); the rest comes from M⁻¹ by
                the O(n²) recursion whatever the method.
            singular_threshold: in (0, 1).
            singular_damping: > 0; singular_threshold when None.

        Returns:
            The OperationalSpaceDynamics, each array with the batch's leading B.

        Raises:
            ValueError: a threshold or damping out of range; a "schur" method as in
                operational_space_inertia.
        """
        task = self._task(frames, axes)
        route = self._task_method(method, task.frames, "operational_space")
        q, qd = self._inputs(("q", "qd"), q, qd)
        if singular_damping is None:
            singular_damping = singular_threshold
        if not (0.0 < singular_threshold < 1.0 and singular_damping > 0.0):
            raise ValueError(
                "operational_space: singular_threshold must be in (0, 1) and singular_damping "
                f"positive; got {singular_threshold!r} and {singular_damping!r}"
            )
        self._require_mass("operational_space")
        batch, n, m = q.shape[:-1], self.nv, task.selection.shape[0]
        J, Jbar = np.empty((*batch, m, n)), np.empty((*batch, n, m))
        Lambda_inv, Lambda = np.empty((*batch, m, m)), np.empty((*batch, m, m))
        mu, p, Jdot_qd = np.empty((*batch, m)), np.empty((*batch, m)), np.empty((*batch, m))
        info = np.empty((*batch, 2))
        given = method != "dense"
        if given:
            self._run(route, (self._tree, task.rows, task.selection), (q, True, Lambda_inv))
        settings = (singular_threshold, singular_damping, given)  # a TaskSettings
        quantities = (J, Lambda_inv, Lambda, Jbar, mu, p, Jdot_qd, info)  # a TaskQuantities
        self._run(
            task_space.operational_space_dynamics,
            (self._tree, self._gravity, task.rows, task.selection, settings),
            (q, qd, quantities),
        )
        self._check(
            "operational_space", True,
            (("J", J), ("Λ⁻¹", Lambda_inv), ("Λ", Lambda), ("J̄", Jbar), ("μ", mu), ("p", p),
             ("J̇ q̇", Jdot_qd)),
            (q, qd),
        )
        rank, condition = info[..., 0].astype(np.int64), info[..., 1]
        return OperationalSpaceDynamics(
            task.frames, J, Lambda_inv, Lambda, Jbar, mu, p, Jdot_qd, rank, condition, task.axes
        )

    # -- contacts ---------------------------------------------------------------------------

    @property
    def mass(self) -> float:
        """The total mass of the moving bodies, kg."""
        return self.model.total_mass

    def standing(self, feet: Sequence[str], q: ArrayLike | None = None) -> FloatArray:
        """q (default: neutral) with the floating base moved along the world's z so that the
        lowest origin of the frames `feet` is at z = 0: the robot on level ground at z = 0.

        Args:
            feet: the frames on the ground (soles, point feet).
            q: the configuration to move; its joints and base orientation are kept.

        Returns:
            The configuration, (nq,).

        Raises:
            ValueError: the robot has no floating base, no frame is given, or q is not one
                finite configuration of this robot.
            ModelError: a frame the robot lacks, named.
        """
        if not self.model.floating_base:
            raise ValueError(f"standing: robot '{self.model.name}' has no floating base to "
                             "move (load it with floating_base=True)")
        if not feet:
            raise ValueError("standing: name at least one frame on the ground")
        standing = self.neutral() if q is None else np.array(q, dtype=float)
        if standing.shape != (self.nq,):
            raise ValueError(f"standing: q has shape {standing.shape}, not ({self.nq},)")
        if not np.isfinite(standing).all():
            raise ValueError(f"standing: q is not finite at index(es) "
                             f"{np.flatnonzero(~np.isfinite(standing)).tolist()}")
        lowest = min(self.frame_pose(standing, frame)[2, 3] for frame in feet)
        standing[2] -= lowest  # q[:3] is the base's position in the world
        return standing

    def constrained_forward_dynamics(
        self,
        q: ArrayLike,
        qd: ArrayLike,
        tau: ArrayLike,
        contacts: Sequence[Contact],
        kp: float = 0.0,
        kd: float = 0.0,
        method: str = "recursive",
    ) -> ContactDynamics:
        """q̈ and the contact forces with the contact frames held in the world
        (robodyn_ros.robot.contact_dynamics; dynamics.constrained_dynamics solves it).

        Args:
            q, qd, tau: the state and the generalised forces (zero on a floating base's rows
                unless something pushes on the base).
            contacts: the contacts, independent (J_c of full row rank).
            kp, kd: Baumgarte gains, 1/s² and 1/s, ≥ 0.
            method: the route to the Delassus matrix J_c M⁻¹ J_cᵀ, one of
                OPERATIONAL_SPACE_METHODS: "recursive" (O(n), the default) is computed with
                the rest in one compiled pass, the others beside it.

        Returns:
            The ContactDynamics (its vdot is q̈), tau as given.

        Raises:
            ValueError: no contact, a gain < 0, an unknown frame, or mimic joints.
            LinAlgError: the contacts are not independent at this state, so their forces are
                not determined; SingularMassMatrixError where M is singular.
        """
        if not (kp >= 0.0 and kd >= 0.0):
            raise ValueError(f"constrained_forward_dynamics: kp and kd must be ≥ 0; got {kp}, "
                             f"{kd}")
        if self.coupling is not None:
            raise ValueError("constrained_forward_dynamics does not take mimic joints yet: "
                             "load the robot with mimic=False or lock them (locked_joints=)")
        held = self._contacts.held_call(contacts, kp, kd) if method == "recursive" else None
        if held is not None and not self.massless_joints:
            answer = held.call(q, qd, tau)
            if answer is not None:
                return ContactDynamics(answer[: self.nv], np.asarray(tau),
                                       tuple([answer[rows] for rows in held.forces]))
        task = self._contacts.task(contacts)
        q, qd, tau = self._inputs(("q", "qd", "tau"), q, qd, tau)
        given = np.empty((0, 0))  # the kernel computes Λ⁻¹ itself
        if method != "recursive":
            given = self.operational_space_inertia(q, task.frames, method, inverse=True)
        self._require_mass("constrained_forward_dynamics")
        error = placement_error(self, q, contacts)
        qdd, forces = np.empty_like(qd), np.empty_like(error)
        constrained_dynamics.constrained_forward_dynamics(
            self._tree, self._gravity, task.frame_rows, task.rows, task.spatial,
            np.array([kp, kd], dtype=float), q, qd, tau, error, given, qdd, forces)
        if not np.isfinite(qdd).all():
            check_mass_matrix("constrained_forward_dynamics", self._tree, self.joint_names,
                              q.reshape(-1, self.nq))
            raise np.linalg.LinAlgError(
                f"constrained_forward_dynamics: contacts {', '.join(map(repr, task.frames))} are "
                "not independent at this state (their Delassus matrix J_c M⁻¹ J_cᵀ is "
                "singular), so their forces are not determined; hold fewer rows (a '3d' contact "
                "instead of a '6d' one)"
            )
        return ContactDynamics(qdd, tau, split_forces(forces, contacts))

    def contact_inverse_dynamics(
        self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, contacts: Sequence[Contact]
    ) -> ContactDynamics:
        """The joint efforts (zero on the rows of free flyers and planar joints, which no
        motor drives) and contact forces that give q̈, where the motion determines the forces
        (contact_dynamics.contact_inverse_dynamics).

        Raises:
            ValueError: the forces are not determined, or q̈ is not a motion the contacts
                allow.
        """
        return contact_inverse_dynamics(self, q, qd, qdd, contacts)

    # -- the general path -------------------------------------------------------------------

    def _inputs(self, names: tuple[str, ...], *vectors: Any) -> tuple[np.ndarray, ...]:
        """The joint vectors called `names` (q first) as the kernels take them: as given when
        they already are C-contiguous float64 arrays of one shape (n,) or (B, n), else
        converted and checked (_checked)."""
        if _ready(self.nq, self.nv, *vectors):
            return vectors
        return self._checked(names, vectors)

    def _compute(
        self,
        function: str,
        quantity: str,
        kernel: Callable[..., None],
        constants: tuple[object, ...],
        names: tuple[str, ...] | None,
        vectors: tuple[Any, ...],
        shape: tuple[int, ...],
        inverts: bool = False,
        extras: tuple[object, ...] = (),
    ) -> FloatArray:
        """The general path: kernel(*constants, *vectors, *extras, out) over the states of q,
        out of `shape` per state, checked to be finite where the inputs are.

        Args:
            function: the Robot function, named in errors.
            quantity: what out is, named in errors.
            kernel: a dynamics kernel over a batch.
            constants: the model arrays it takes first.
            names: the names of the joint vectors, which are converted and checked (_inputs);
                None when the caller has done so.
            vectors: the joint vectors, q first.
            shape: out's shape for one state.
            inverts: whether the function needs M⁻¹ (a non-finite answer may then mean a
                singular M).
            extras: the kernel's arguments between the vectors and out (per-state arrays,
                None where absent, or flags).

        Returns:
            out.
        """
        if names is not None and not _ready(self.nq, self.nv, *vectors):
            vectors = self._checked(names, vectors)
        q = vectors[0]
        out = np.empty((*q.shape[:-1], *shape))
        inputs = vectors + extras
        self._run(kernel, constants, (*inputs, out))
        self._check(function, inverts, ((quantity, out),), inputs)
        return out

    def _method(self, table: Mapping[str, Callable[..., None]], method: str,
                function: str) -> Callable[..., None]:
        """The kernel of `method` in `table`, for a method this robot can use."""
        kernel = table.get(method)
        if kernel is None:
            raise _unknown_method(method, tuple(table), function)
        if method in self._refused_methods:
            self._refuse_constraint_forces(method, function)
        return kernel

    def _task_method(self, method: str, frames: tuple[str, ...],
                     function: str) -> Callable[..., None]:
        """The Λ⁻¹ kernel of `method` for a task of `frames` (the "schur" methods serve frames
        on one body only; checked once per task)."""
        kernel = self._method(methods.OPERATIONAL_SPACE_INERTIA, method, function)
        if method in SCHUR_METHODS and frames not in self._schur_tasks:
            check_schur_task(self.model, frames, function, method)
            self._schur_tasks.add(frames)
        return kernel

    # -- running the kernels ----------------------------------------------------------------

    def _run(self, kernel: Callable[..., None], constants: tuple[object, ...],
             per_state: tuple[Any, ...]) -> None:
        """kernel(*constants, *per_state), per_state q first: a batch on `threads` threads,
        one state as a batch of one in the calling thread (the kernel's one build takes
        batches, dynamics.jit)."""
        if per_state[0].ndim == 1:
            kernel(*constants, *per_state_part(per_state, np.newaxis))
        else:
            run_batch(kernel, constants, per_state, self._threads)

    def _run_batch(self, kernel: Callable[..., None], constants: tuple[object, ...],
                   *per_state: object) -> None:
        """The kernel over a batch, on `threads` threads."""
        run_batch(kernel, constants, per_state, self._threads)

    # -- answer checks ----------------------------------------------------------------------

    def _require_mass(self, function: str) -> None:
        """SingularMassMatrixError when M is singular at every configuration (massless_joints)."""
        if self.massless_joints:
            raise SingularMassMatrixError(function, self.massless_joints, "at every configuration")

    def _check(self, function: str, inverts: bool,
               quantities: tuple[tuple[str, np.ndarray], ...], inputs: tuple[object, ...]) -> None:
        """Raise where finite inputs gave a non-finite quantity (answers.check_finite)."""
        check_finite(function, quantities, inputs, self._tree, self.joint_names, inverts)

    # -- argument checks --------------------------------------------------------------------

    def _refuse_constraint_forces(self, method: str, function: str) -> None:
        """The ValueError of a constraint-force method asked about a robot with a free-flyer
        or planar joint, or with armature."""
        if self._multi_dof_joints:
            raise ValueError(
                f"{function}: method '{method}' takes joints of one degree of freedom, each "
                "moving a body of its own (the constraint-force formulation inverts each "
                "body's inertia), and this robot's free-flyer or planar joint(s) "
                f"{', '.join(map(repr, self._multi_dof_joints))} take a row per degree of "
                f"freedom with massless bodies between; use {_NON_CONSTRAINT_METHODS[function]}"
            )
        assert self.model.armature is not None  # Model makes it an array
        armed = np.flatnonzero(self.model.armature)
        joints = [self.joint_names[i] for i in armed]
        raise ValueError(
            f"{function}: method '{method}' does not model armature (the constraint-force "
            f"formulation has no term for the rotor inertia), and this robot has armature on "
            f"{', '.join(joints)}; use {_NON_CONSTRAINT_METHODS[function]}"
        )

    def _task(self, frames: Task, axes: TaskAxes) -> _Task:
        """The task of one frame name or several and its axes, remembered."""
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
            task = self._tasks[key] = _Task(names, rows, selection, chosen)
        return task

    def _frame(self, frame: str) -> np.ndarray:
        row = self._frame_rows.get(frame)
        if row is None:
            self.model.frame_index(frame)  # raises, listing the frames
        assert row is not None
        return row

    def _checked(self, names: tuple[str, ...], vectors: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
        """The joint vectors called `names` (q first) as C-contiguous float64 arrays, q (nq,)
        or (B, nq) and the others (nv,) or (B, nv) of its batch, or an error naming the
        argument."""
        q = _as_float_array(vectors[0], names[0])
        if q.ndim not in (1, 2) or q.shape[-1] != self.nq:
            raise ValueError(
                f"{names[0]} must have shape ({self.nq},) or (B, {self.nq}): "
                f"{self._configuration_layout()}; got shape {q.shape}"
            )
        if self.nq != self.nv:
            check_configuration(self.configuration_joints, q, names[0])
        arrays = [q]
        shape = (*q.shape[:-1], self.nv)
        for name, vector in zip(names[1:], vectors[1:], strict=True):
            x = _as_float_array(vector, name)
            if x.shape != shape:
                raise ValueError(
                    f"{name} must have shape {shape}, one value per velocity coordinate of "
                    f"q's states; got {x.shape}")
            arrays.append(x)
        return tuple(arrays)

    def _configuration_layout(self) -> str:
        """What q holds, for errors: one value per joint, or the multi-DOF joints' layout."""
        if self.nq == self.nv:
            joints = ", ".join(self.joint_names[:8]) + (", ..." if self.nv > 8 else "")
            return f"one value per joint ({joints})"
        return configuration_description(self.configuration_joints)

    def _wrenches(self, f_ext: ArrayLike | None, q: ArrayLike, zeros: bool = False
                  ) -> np.ndarray | None:
        """f_ext as the kernels take it, (..., n, 6) for the states of q; when absent None, or
        with `zeros` zero wrenches (a kernel that then compiles for an array only: the
        constraint-force methods', where a wrench is one more given force on its body)."""
        if f_ext is None and not zeros:
            return None
        (q,) = self._inputs(("q",), q)
        if f_ext is None:
            return np.zeros((*q.shape[:-1], self.nv, 6))
        f_ext = _as_float_array(f_ext, "f_ext")
        expected = (*q.shape[:-1], self.nv, 6)
        if f_ext.shape != expected:
            raise ValueError(
                f"f_ext must have shape {expected}: one [force; torque] per moving body "
                f"(the child link of each joint) for each state; got {f_ext.shape}"
            )
        return f_ext


def _ready(nq: int, nv: int, q: object, *others: object) -> bool:
    """True when q is a C-contiguous float64 (nq,) or (B, nq) array and the others are (nv,)
    or (B, nv) of its batch; a configuration with multi-DOF joints is never ready, for its
    joints' unit norms are checked (check_configuration)."""
    if not (
        type(q) is _ARRAY and q.dtype is _FLOAT and 0 < q.ndim < 3 and q.shape[-1] == nq
        and q.flags.c_contiguous and nq == nv
    ):
        return False
    for x in others:
        if not (
            type(x) is _ARRAY and x.dtype is _FLOAT and x.shape == q.shape and x.flags.c_contiguous
        ):
            return False
    return True


def _as_float_array(x: ArrayLike, name: str) -> np.ndarray:
    """x as a C-contiguous float64 array (no copy when it already is one); numbers only."""
    array = np.asarray(x)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of numbers; got {array.dtype} values")
    return np.ascontiguousarray(array, dtype=float)


def _check_method(method: str, known: tuple[str, ...], function: str) -> None:
    if method not in known:
        raise _unknown_method(method, known, function)


def _unknown_method(method: str, known: tuple[str, ...], function: str) -> ValueError:
    return ValueError(f"{function}: unknown method '{method}'; choose one of {', '.join(known)}")


__all__ = ["Robot"]
