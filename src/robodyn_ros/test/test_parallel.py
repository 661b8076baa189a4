"""The parallel backends answer as serial does: batches of Robot calls (exactly: the same
kernels on the same states), maps of plain functions, errors that name the item, and
cancellation. The Dask backend runs a real LocalCluster of worker processes."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from robodyn_ros.parallel import (
    BACKENDS,
    CancelledError,
    ParallelError,
    SerialBackend,
    ThreadBackend,
    backend,
)

B = 64


def square(x: float) -> float:
    return x * x


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three is not allowed")
    return x


def slow(x: float) -> float:
    time.sleep(0.05)
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
    answer = pool.batch(panda, method, *states[:count])
    assert answer.shape == expected.shape
    assert np.array_equal(answer, expected), f"{pool.name}: {method} differs"


def test_a_bound_robot_runs_its_functions_on_the_backend(pool, panda, states) -> None:
    bound = pool.bind(panda)
    assert np.array_equal(bound.mass_matrix(states[0]), panda.mass_matrix(states[0]))
    expected = panda.operational_space_inertia(states[0], "panda_hand_tcp")
    assert np.array_equal(bound.operational_space_inertia(states[0], frame="panda_hand_tcp"),
                          expected)
    with pytest.raises(AttributeError, match="no function 'nv'"):
        bound.nv  # noqa: B018


def test_batch_passes_options(pool, panda, states) -> None:
    expected = panda.forward_dynamics(*states, method="cholesky")
    answer = pool.batch(panda, "forward_dynamics", *states, method="cholesky")
    np.testing.assert_allclose(answer, expected, rtol=1e-12, atol=0)


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
    cancel = threading.Event()
    with make() as opened:
        threading.Timer(0.1, cancel.set).start()
        start = time.monotonic()
        with pytest.raises(CancelledError, match="cancelled with"):
            opened.map(slow, range(200), cancel=cancel)
        assert time.monotonic() - start < 2.0  # 200 × 50 ms / 2 workers would be 5 s


def test_unknown_backend_and_bad_workers_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        backend("gpu")
    with pytest.raises(ValueError, match="workers must be an integer"):
        backend("threads", workers=0)
    with pytest.raises(ValueError, match=r"\(B, n\) arrays with one B"):
        SerialBackend().batch(None, "mass_matrix", np.zeros((3, 7)), np.zeros((4, 7)))
