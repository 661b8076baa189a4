"""batch_threads runs a kernel over a batch in chunks on threads, or in one piece when the
batch makes one chunk: every state's output is written either way, settings that are not
per-state reach every chunk as they are, a record of per-state arrays is cut with the batch, and
an error names the state that raised it."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

from robodyn_ros.dynamics.batch_threads import MIN_CHUNK, run_batch

# settings that hold no per-state array: handed to every chunk as they are
Scale = namedtuple("Scale", ("factor", "label"))

JOINTS = 4
STATES = 3 * MIN_CHUNK // JOINTS  # three chunks' worth: two threads share them
BATCHES = pytest.mark.parametrize("states", [STATES, 5], ids=["chunks on threads", "one chunk"])


def row_sums(
    offset: float, q: np.ndarray, scale: Scale, total: np.ndarray, chunk_size: np.ndarray
) -> None:
    """A kernel shaped like the dynamics kernels: a constant, q (B, n), settings and outputs;
    each state's total, and the number of states of the call that computed it."""
    if np.any(q < 0.0):
        raise ValueError("a negative joint")
    total[:] = offset + scale.factor * q.sum(axis=1)
    chunk_size[:] = q.shape[0]


@BATCHES
def test_every_state_is_written(states: int) -> None:
    q = np.random.default_rng(5).uniform(0.0, 1.0, (states, JOINTS))
    total, chunk_size = np.full(states, np.nan), np.full(states, np.nan)
    run_batch(row_sums, (1.0,), (q, Scale(2.0, "two"), total, chunk_size), threads=2)
    np.testing.assert_array_equal(total, 1.0 + 2.0 * q.sum(axis=1))
    if states == STATES:
        assert chunk_size.max() < states, "the batch ran in one piece: nothing was cut"
    else:
        assert np.all(chunk_size == states)


def sums_and_counts(q: np.ndarray, outputs: tuple) -> None:
    """A kernel whose outputs travel as one record (a plain tuple): total, chunk_size."""
    total, chunk_size = outputs
    total[:] = q.sum(axis=1)
    chunk_size[:] = q.shape[0]


@BATCHES
def test_a_record_of_outputs_is_cut_with_the_batch(states: int) -> None:
    q = np.random.default_rng(7).uniform(0.0, 1.0, (states, JOINTS))
    total, chunk_size = np.full(states, np.nan), np.full(states, np.nan)
    run_batch(sums_and_counts, (), (q, (total, chunk_size)), threads=2)
    np.testing.assert_array_equal(total, q.sum(axis=1))
    if states == STATES:
        assert chunk_size.max() < states, "the batch ran in one piece: nothing was cut"


@BATCHES
def test_an_error_names_its_state(states: int) -> None:
    q = np.random.default_rng(6).uniform(0.0, 1.0, (states, JOINTS))
    bad = states - 2
    q[bad, 1] = -1.0
    total, chunk_size = np.empty(states), np.empty(states)
    with pytest.raises(ValueError, match=f"a negative joint \\(state {bad} of the batch\\)"):
        run_batch(row_sums, (1.0,), (q, Scale(2.0, "two"), total, chunk_size), threads=2)
