"""The parallel backends answer as serial does: batches of Robot calls (exactly in this
process, to 1e-12 from worker processes: helpers.tolerances.assert_as_serial), maps of plain
functions, errors that name the item, and cancellation. The Dask backend runs a real
LocalCluster of worker processes."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from robodyn_ros.dynamics.batch_threads import MIN_CHUNK
from robodyn_ros.errors import NonFiniteResultError
from robodyn_ros.parallel import (
    BACKENDS,
    CancelledError,
    ParallelError,
    SerialBackend,
    ThreadBackend,
    backend,
)

from helpers.tolerances import assert_as_serial

B = 64


def square(x: float) -> float:
    return x * x


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three is not allowed")
    return x


def slow(x: float) -> float:
    time.sleep(0.01)
    return x


@pytest.fixture(scope="module")
def panda(load_robot):
    return load_robot("bundled_panda")


@pytest.fixture(scope="module", params=BACKENDS)
def pool(request):
    with backend(request.param, workers=2) as opened:
        yield opened


@pytest.fixture(scope="module")
def states(panda):
    rng = np.random.default_rng(11)
    return (
        rng.uniform(-1.0, 1.0, (B, panda.nv)),
        rng.uniform(-1.0, 1.0, (B, panda.nv)),
        rng.uniform(-5.0, 5.0, (B, panda.nv)),
    )


@pytest.mark.parametrize(
    ("method", "count"),
    [("forward_dynamics", 3), ("mass_matrix", 1), ("inverse_dynamics", 3)],
)
def test_batch_equals_serial(pool, panda, states, method: str, count: int) -> None:
    expected = getattr(panda, method)(*states[:count])
    assert_as_serial(pool.batch(panda, method, *states[:count]), expected, pool.name, method)


def test_a_bound_robot_runs_its_functions_on_the_backend(pool, panda, states) -> None:
    bound = pool.bind(panda)
    assert_as_serial(bound.mass_matrix(states[0]), panda.mass_matrix(states[0]), pool.name,
                     "mass_matrix")
    expected = panda.operational_space_inertia(states[0], "panda_hand_tcp")
    assert_as_serial(bound.operational_space_inertia(states[0], frame="panda_hand_tcp"),
                     expected, pool.name, "operational_space_inertia")
    with pytest.raises(AttributeError, match="no function 'nv'"):
        bound.nv  # noqa: B018


def test_batch_passes_options(pool, panda, states) -> None:
    expected = panda.forward_dynamics(*states, method="cholesky")
    answer = pool.batch(panda, "forward_dynamics", *states, method="cholesky")
    assert_as_serial(answer, expected, pool.name, "forward_dynamics(cholesky)")


def test_map_keeps_order(pool) -> None:
    assert pool.map(square, range(10)) == [x * x for x in range(10)]


def test_a_failing_item_is_named(pool) -> None:
    with pytest.raises(ParallelError, match=r"item 3 \(fail_on_three\).*three is not allowed"):
        pool.map(fail_on_three, range(6))


def test_a_failing_chunk_names_the_error(pool, panda) -> None:
    bad = np.zeros((4, panda.nv + 1))
    with pytest.raises((ParallelError, ValueError), match="q must have shape"):
        pool.batch(panda, "mass_matrix", bad)


@pytest.mark.parametrize("make", [SerialBackend, ThreadBackend], ids=["serial", "threads"])
def test_cancel_stops_the_pending_items(make) -> None:
    cancel, done = threading.Event(), []

    def record(x: int) -> int:
        done.append(slow(x))
        return x

    with make() as opened:
        threading.Timer(0.05, cancel.set).start()
        with pytest.raises(CancelledError, match="cancelled with"):
            opened.map(record, range(200), cancel=cancel)
    assert len(done) < 200, "every item ran although the cancel event was set"


def test_unknown_backend_and_bad_workers_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        backend("gpu")
    with pytest.raises(ValueError, match="workers must be an integer"):
        backend("threads", workers=0)
    with pytest.raises(ValueError, match=r"\(B, n\) arrays with one B"):
        SerialBackend().batch(None, "mass_matrix", np.zeros((3, 7)), np.zeros((4, 7)))


FRAME = "panda_hand_tcp"
ROBOT_FUNCTIONS = {  # a Robot function → (its states, of Q, QD, QDD; its other arguments)
    "inverse_dynamics": (3, {}),
    "bias_forces": (2, {}),
    "gravity_torques": (1, {}),
    "coriolis_matrix": (2, {}),
    "mass_matrix": (1, {}),
    "mass_matrix_diagonal": (1, {}),
    "mass_matrix_inverse": (1, {}),
    "forward_dynamics": (3, {}),
    "frame_pose": (1, {"frame": FRAME}),
    "frame_poses": (1, {}),
    "jacobian": (1, {"frame": FRAME}),
    "kinetic_energy": (2, {}),
    "potential_energy": (1, {}),
    "operational_space_inertia": (1, {"frame": FRAME}),
}


@pytest.fixture(scope="module")
def many_states(panda):
    """Enough states for 3 threads: each chunk above batch_threads.MIN_CHUNK joint-states."""
    rng = np.random.default_rng(12)
    size = 3 * MIN_CHUNK // panda.nv + 3
    return tuple(rng.uniform(-1.0, 1.0, (size, panda.nv)) for _ in range(3))


@pytest.mark.parametrize("function", ROBOT_FUNCTIONS)
def test_every_robot_function_on_threads_equals_serial(panda, many_states, function) -> None:
    count, options = ROBOT_FUNCTIONS[function]
    expected = getattr(panda, function)(*many_states[:count], **options)
    answer = getattr(panda.with_threads(3), function)(*many_states[:count], **options)
    assert np.array_equal(answer, expected), f"{function} on 3 threads differs from serial"


def test_operational_space_and_iterative_methods_on_threads_equal_serial(
    panda, many_states
) -> None:
    threaded = panda.with_threads(2)
    expected = panda.operational_space(*many_states[:2], FRAME)
    answer = threaded.operational_space(*many_states[:2], FRAME)
    for field in ("J", "Lambda", "Jbar", "mu", "p", "Jdot_qd", "rank", "condition"):
        assert np.array_equal(getattr(answer, field), getattr(expected, field)), field
    cg, cg_info = threaded.forward_dynamics(*many_states, method="pcg", info=True)
    np.testing.assert_array_equal(cg, panda.forward_dynamics(*many_states, method="pcg"))
    assert cg_info.iterations.shape == (len(many_states[0]),)


def test_threads_are_a_setting_of_the_robot(panda) -> None:
    assert panda.threads == 1 and panda.with_threads(2).threads == 2 and panda.threads == 1
    with pytest.raises(ValueError, match="threads must be an integer"):
        panda.with_threads(0)


def test_an_error_in_a_helper_threads_chunk_names_its_state(panda, many_states) -> None:
    singular = many_states[0].copy()
    singular[-1] = 0.0  # the stretched-out arm, in the last thread's chunk: Λ does not exist
    last = len(singular) - 1
    with pytest.raises(np.linalg.LinAlgError,
                       match=f"does not exist at this configuration \\(state {last} of the batch"):
        panda.with_threads(2).operational_space_inertia(singular, FRAME)


def test_the_dynamics_errors_keep_their_type_on_every_backend(pool, panda, states) -> None:
    q, qd, tau = states
    qd = qd.copy()
    qd[5] = 1e300  # state 5's velocity products overflow, whichever worker runs it
    with pytest.raises(NonFiniteResultError, match="forward_dynamics"):
        pool.batch(panda, "forward_dynamics", q, qd, tau)
