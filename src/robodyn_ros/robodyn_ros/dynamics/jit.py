"""How the kernels are compiled, and where their builds are cached.

Every kernel uses numpy's error model: a division by zero gives inf or NaN instead of raising.
A kernel never raises for arithmetic (a C entry could not pass the exception on, and a batch
would stop at its first bad state); what it computed travels to the facade, which checks that
finite inputs gave finite results and raises the error that names the cause (robodyn_ros.errors).

Compiled kernels are cached on disk. numba checks a cached kernel only against its own source
file, not against the helpers inlined into it, so the cache folder is keyed by a digest of
every kernel module of the package (KERNEL_SOURCES) and the numba version: editing any kernel
starts a fresh cache. numba takes the folder from ``numba.config.CACHE_DIR`` when a function
is decorated, so each decorator here decorates inside kernel_cache(): a kernel caches in
kernel_cache_dir() whichever layer's module it lives in. The folder is ``$NUMBA_CACHE_DIR``
if set, else ``$XDG_CACHE_HOME/robodyn_ros`` (``~/.cache/robodyn_ros``).

Importing this module also makes numba's inlining of kernel helpers copy each helper once per
call site (copy_each_inlining_once) and translate each helper once per process
(translate_each_helper_once).
"""

import copy
import fcntl
import functools
import hashlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import numba
from numba import cfunc, njit
from numba.core import inline_closurecall, sigutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.dispatcher import Dispatcher
from numba.core.typing import Signature

PACKAGE = Path(__file__).resolve().parent.parent
"""The robodyn_ros package folder, which KERNEL_SOURCES are relative to."""

KERNEL_SOURCES = (
    "dynamics/jit.py",
    "dynamics/tree.py",
    "dynamics/spatial.py",
    "dynamics/linalg.py",
    "dynamics/moments.py",
    "dynamics/kinematics.py",
    "dynamics/inverse_dynamics.py",
    "dynamics/regressor.py",
    "dynamics/inertia_matrix.py",
    "dynamics/centroidal.py",
    "dynamics/coriolis.py",
    "dynamics/gdahj.py",
    "dynamics/inertia_diagonal.py",
    "dynamics/recursive_doubling.py",
    "dynamics/rnea_columns.py",
    "dynamics/factorization.py",
    "dynamics/inertia_inverse.py",
    "dynamics/forward_dynamics.py",
    "dynamics/derivatives.py",
    "dynamics/pivots.py",
    "dynamics/energy.py",
    "dynamics/task_space.py",
    "dynamics/fixed_frame.py",
    "dynamics/conjugate_gradient.py",
    "dynamics/constraint_system.py",
    "dynamics/constraint_iterations.py",
    "dynamics/cyclic_reduction.py",
    "dynamics/schur.py",
    "dynamics/schur_link_frames.py",
    "dynamics/rotation.py",
    "dynamics/constrained_dynamics.py",
    "dynamics/lie_group.py",
    "dynamics/state_entry.py",
    "dynamics/contact_state_entry.py",
    "control/compiled_laws.py",
    "control/daqp_call.py",
    "control/null_space.py",
    "control/whole_body_programme.py",
    "sim/rollout.py",
    "sim/contact_rollout.py",
    "contact/solver.py",
    "contact/compiled_step.py",
)
"""Every module of the package that compiles a kernel, as a file relative to PACKAGE: the
ones in dynamics/, and those of the layers above that build on them (read, not imported)."""


@cache
def _kernel_digest() -> str:
    """A digest of the numba version and of every file in KERNEL_SOURCES."""
    digest = hashlib.sha256(numba.__version__.encode())
    for source in KERNEL_SOURCES:
        digest.update((PACKAGE / source).read_bytes())
    return digest.hexdigest()[:16]


def kernel_cache_dir() -> Path:
    """The on-disk cache folder for this exact version of the kernels."""
    base = os.environ.get("NUMBA_CACHE_DIR") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "robodyn_ros"
    )
    return Path(base, f"kernels-{_kernel_digest()}")


@contextmanager
def kernel_cache() -> Iterator[None]:
    """numba caches what is decorated inside in kernel_cache_dir()."""
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(kernel_cache_dir())
    try:
        yield
    finally:
        numba.config.CACHE_DIR = previous


class _OneMemoPerInlining:
    """The ``copy`` module as numba's inliner sees it, with one memo for the deep copies of one
    inlining (``memo`` is set while InlineWorker.inline_ir runs)."""

    memo: dict[int, Any] | None = None

    def deepcopy(self, x: Any, memo: dict[int, Any] | None = None) -> Any:
        return copy.deepcopy(x, self.memo if memo is None else memo)

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)


def copy_each_inlining_once() -> None:
    """Make numba's inliner copy a helper's IR as one whole, once per call site.

    InlineWorker.inline_ir deep-copies the helper's IR block by block, each block with a memo
    of its own, so every block copies the whole scope, every variable of the function, again:
    blocks × variables, quadratic in the size of the inlined helper, and most of the time a
    kernel took to compile (numba issues 8989 and 9204). With one memo for the copies of one
    inlining, the scope and its variables are copied once. The copy is the same IR: the
    original's blocks share one scope too. Idempotent.
    """
    if isinstance(inline_closurecall.copy, _OneMemoPerInlining):
        return
    one_memo = _OneMemoPerInlining()
    inline_ir = inline_closurecall.InlineWorker.inline_ir

    @functools.wraps(inline_ir)
    def inline_ir_with_one_memo(*args: Any, **kwargs: Any) -> Any:
        outer, one_memo.memo = one_memo.memo, {}
        try:
            return inline_ir(*args, **kwargs)
        finally:
            one_memo.memo = outer

    inline_closurecall.copy = one_memo
    inline_closurecall.InlineWorker.inline_ir = inline_ir_with_one_memo


copy_each_inlining_once()


def translate_each_helper_once() -> None:
    """Make numba's inliner translate a helper to IR once per process, not once per call site.

    InlineWorker.run_untyped_passes runs the untyped pipeline over the helper (bytecode to IR,
    and the inlining of the helpers it calls, recursively) each time a kernel inlines it, so a
    helper deep in the kernels (a joint's transform, a 6-vector sum) was translated once per
    call site of every helper above it: about a third of a kernel's compile time. The IR of a
    function depends only on the function and on what the pipeline is given (the flags, the
    locals, SSA or not), so it is kept under those, and inline_ir copies it before it changes
    anything (it always has: the IR it receives is never mutated). Idempotent.
    """
    worker = inline_closurecall.InlineWorker
    if getattr(worker.run_untyped_passes, "translates_once", False):
        return
    run_untyped_passes = worker.run_untyped_passes
    translated: dict[tuple[Any, ...], Any] = {}

    @functools.wraps(run_untyped_passes)
    def run_untyped_passes_once(self: Any, func: Any, enable_ssa: bool = False) -> Any:
        flags = self.flags.copy()
        flags.enable_ssa = enable_ssa  # as run_untyped_passes sets it, on the caller's flags
        locals_key = tuple(sorted((name, str(kind)) for name, kind in self.locals.items()))
        key = (func, flags, locals_key, self._compiler_pipeline)
        with global_compiler_lock:
            if key not in translated:
                translated[key] = run_untyped_passes(self, func, enable_ssa)
            return translated[key]

    run_untyped_passes_once.translates_once = True  # type: ignore[attr-defined]
    worker.run_untyped_passes = run_untyped_passes_once


translate_each_helper_once()


class CompileLock:
    """The lock under which processes load or compile one kernel (or C entry) in one cache
    folder: an exclusive flock on ``<module>.<function>.lock`` there, taken inside numba's
    global compiler lock.

    numba's Dispatcher.compile and CFunc.compile hold the global compiler lock (an RLock of
    the process) and look in the disk cache before they compile and save, so a second process
    that waits here finds the first one's build and loads it. Re-entry is counted. A compile
    takes locks only down the calls, its own and then its callees' (kernels do not recurse),
    so two processes never wait on each other in a cycle, and processes starting together
    compile different kernels side by side, even of one module. The operating system
    releases a flock when the process that holds it ends, killed or not. A folder that cannot
    hold a lock file leaves the compile unlocked.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._descriptor: int | None = None
        self._depth = 0  # changed only by the thread that holds the global compiler lock

    def __enter__(self) -> None:
        global_compiler_lock.acquire()
        try:
            if self._depth == 0:
                self._descriptor = _locked_file(self.path)
            self._depth += 1
        except BaseException:
            global_compiler_lock.release()
            raise

    def __exit__(self, *_exception: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._descriptor is not None:
            os.close(self._descriptor)  # releases the flock
            self._descriptor = None
        global_compiler_lock.release()


def _locked_file(path: Path) -> int | None:
    """A descriptor of `path` under an exclusive flock (waiting for it), or None if the file
    cannot be created there."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


@cache
def compile_lock(name: str, folder: Path) -> CompileLock:
    """The one CompileLock of the kernel `name` (module.function) in the cache folder
    `folder`."""
    return CompileLock(folder / f"{name}.lock")


def compile_under(lock: CompileLock, dispatcher: Dispatcher) -> None:
    """Make `dispatcher` load or compile each new build under `lock`.

    Every compile of a numba dispatcher goes through its ``compile`` method (the first call
    with new argument types, and the typing of each kernel that calls it), so the dispatcher's
    own ``compile`` is replaced by one that holds the lock around it; a build the process has
    already is returned without taking the lock.
    """
    compile_build = dispatcher.compile

    @functools.wraps(compile_build)
    def compile_locked(signature: tuple | Signature) -> Any:
        with global_compiler_lock:
            argument_types, _ = sigutils.normalize_signature(signature)
            if tuple(argument_types) in dispatcher.overloads:
                return compile_build(signature)
            with lock:
                return compile_build(signature)

    dispatcher.compile = compile_locked


Function = TypeVar("Function", bound=Callable[..., Any])


class KernelDecorator(Protocol):
    """A kernel decorator as a type checker sees it: the kernel keeps the signature of its
    Python function (its dispatcher takes the same arguments; numba reads no annotations)."""

    def __call__(self, function: Function, /) -> Function: ...


def cached(decorator: Callable[[Any], Dispatcher]) -> KernelDecorator:
    """`decorator` (numba's njit, with cache=True) applied inside kernel_cache(), each of its
    builds loaded or compiled under the function's CompileLock."""

    def decorate(function: Any) -> Dispatcher:
        with kernel_cache():
            dispatcher = decorator(function)
        name = f"{function.__module__}.{function.__qualname__}"
        compile_under(compile_lock(name, kernel_cache_dir()), dispatcher)
        return dispatcher

    return cast(KernelDecorator, decorate)


# Floating-point contraction (FMA) and reassociation, which let LLVM fuse and vectorize; not
# the flags that assume finite values, so NaN and inf still propagate to the results.
FASTMATH = {"contract", "reassoc", "arcp"}
ERROR_MODEL = "numpy"

# Reference counting (numba's NRT) is stated on every decorator: a function compiled as the
# callee of another takes the caller's setting where its own is not set, so that a routine first
# called from a borrowing_routine would be built without it (and fail to compile where it
# allocates).
kernel = cached(njit(cache=True, fastmath=FASTMATH, nogil=True, error_model=ERROR_MODEL,
                     _nrt=True))
"""A kernel called from Python: compiled on first use, cached on disk, releasing the GIL.

Robot calls it for a batch (B, n) on several threads at once (dynamics.batch_threads), and
for one state as a batch of one, so that one build serves both: a second, GIL-holding build
for single states compiled every kernel twice. The many short single-state calls of a control
or simulation loop enter through state_entry's C entries instead, which keep the GIL (taking
it back after each call made sim_node wait behind the node's other threads)."""

kernel_helper = cached(
    njit(cache=True, inline="always", fastmath=FASTMATH, error_model=ERROR_MODEL))
"""A piece of a kernel, inlined into the kernels that call it. A record (a namedtuple of
arrays) handed to one counts a reference to each of its arrays there, and numba's pruning
leaves most of those counts in a long kernel: a helper called at every step of a rollout
takes the arrays it uses, not the record that holds them."""

long_kernel = cached(njit(cache=True, nogil=True, fastmath=FASTMATH, error_model=ERROR_MODEL,
                          _nrt=True))
"""A kernel that runs long (a whole rollout) per call: it releases the GIL, so threads run
several side by side, and one call's dispatch is nothing beside its work."""


routine = cached(njit(cache=True, fastmath=FASTMATH, error_model=ERROR_MODEL, _nrt=True))
"""A long piece of several kernels (an O(N) sweep called once a state), compiled once on its
own and called rather than inlined into each: inlined, it made each kernel that uses it
compile for a minute longer. Not for the hot inner loop of an iterative solver: with the
constraint-force sweeps in routines, J-CG ran markedly slower than with them inlined into the
kernel that allocates their arrays (benchmarks/fd_study.py). There a rarely taken branch (a
row on a branching body) can call a routine instead."""

borrowing_routine = cached(njit(cache=True, fastmath=FASTMATH, error_model=ERROR_MODEL,
                                _nrt=False))
"""A routine that allocates nothing and keeps no array beyond its call, compiled without
numba's reference counting: it borrows the arrays its caller holds. A routine counts a
reference to every array of its arguments when it starts and again for every array it takes
out of a record: for the records of a contact step, a hundred arrays, hundreds of atomic
operations at every step. An allocation in one (np.empty, a matmul, an array assigned to an
array) does not compile."""


class CEntry:
    """A C entry point (numba's cfunc with one signature, cached), compiled or loaded from the
    kernel cache the first time it is used, under a lock of its own: a process compiles only
    the entries it calls, and processes starting together on an empty cache compile different
    entries side by side. The lock is taken before those of its callees, and no kernel takes
    an entry's lock, so no two processes wait on each other in a cycle.

    Attributes of the compiled cfunc (``address``, ``ctypes``, ``cache_hits``) are read
    through it, compiling it first.
    """

    def __init__(self, function: Any, signature: Signature) -> None:
        self.function, self.signature = function, signature
        self.__name__ = function.__name__
        self.__module__ = function.__module__
        self._compiled: Any = None

    @property
    def lock_name(self) -> str:
        """The name of its lock file in the cache folder (without ``.lock``)."""
        return f"{self.__module__}.{self.__name__}"

    @property
    def compiled(self) -> Any:
        """The cfunc, compiled or loaded on first use."""
        if self._compiled is None:
            with kernel_cache(), compile_lock(self.lock_name, kernel_cache_dir()):
                if self._compiled is None:  # another thread's, while this one waited
                    self._compiled = cfunc(self.signature, cache=True, fastmath=FASTMATH,
                                           error_model=ERROR_MODEL)(self.function)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled, name)


def c_entry(signature: Signature) -> Callable[[Any], CEntry]:
    """A C entry point with `signature`: a CEntry, compiled or loaded on first use."""

    def decorate(function: Any) -> CEntry:
        return CEntry(function, signature)

    return decorate
