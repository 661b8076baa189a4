"""StateCall, the C extension that enters a compiled single-state kernel: an answer holding NaN
or inf is None (the general path then says why), a symmetric answer checked on its upper
triangle, an answer of several parts as a record of views of one array, and arguments it
cannot read in place also None."""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np
import pytest
from numba import carray, cfunc, types

from robodyn_ros._state_call import StateCall, all_finite

SIZE = 5  # the answer is SIZE x SIZE, copied from the first input of SIZE² numbers
POINTER = types.CPointer(types.float64)


@cfunc(types.void(POINTER, POINTER, types.int64, POINTER, POINTER, POINTER, POINTER))
def copy_entry(tree, constants, n, x0, x1, x2, out):
    carray(out, n)[:] = carray(x0, n)


def _call(symmetric: bool) -> StateCall:
    tree = np.zeros((SIZE * SIZE, 1))
    return StateCall(copy_entry.address, tree, np.zeros(1), 1, (SIZE, SIZE), symmetric=symmetric)


def _symmetric() -> np.ndarray:
    A = np.random.default_rng(0).normal(size=(SIZE, SIZE))
    return A + A.T


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_answer_is_none(symmetric: bool, bad: float) -> None:
    call = _call(symmetric)
    np.testing.assert_array_equal(call(_symmetric().ravel()), _symmetric())
    for r in range(SIZE):
        for c in range(r, SIZE):
            answer = _symmetric()
            answer[r, c] = answer[c, r] = bad
            assert call(answer.ravel()) is None, (r, c)


def test_arguments_it_cannot_read_in_place_are_none() -> None:
    call = _call(True)
    x = _symmetric().ravel()
    assert call(x.astype(np.float32)) is None
    assert call(x[::-1].copy()[::-1]) is None  # strided
    assert call(x[:-1]) is None
    assert call(list(x)) is None
    assert call(x, x) is None


def test_a_symmetric_answer_must_be_square() -> None:
    with pytest.raises(ValueError, match="symmetric output must be square"):
        StateCall(copy_entry.address, np.zeros((6, 1)), np.zeros(1), 1, (2, 3), symmetric=True)


class _Parts(NamedTuple):
    first: np.ndarray
    second: np.ndarray


def test_a_record_holds_the_parts_of_one_answer() -> None:
    parts = StateCall(copy_entry.address, np.zeros((2 * SIZE, 1)), np.zeros(1), 1, (2, SIZE),
                      record=_Parts)
    x = np.arange(2.0 * SIZE)
    for _ in range(3):  # each answer a new array, which lives as long as a part
        answer = parts(x)
        assert type(answer) is _Parts
        np.testing.assert_array_equal(answer.first, x[:SIZE])
        np.testing.assert_array_equal(answer.second, x[SIZE:])
        assert answer.first.base is answer.second.base
        assert answer.first.flags.c_contiguous and answer.first.flags.writeable
        whole = weakref.ref(answer.first.base)
        first = answer.first
        del answer
        alive = whole() is not None  # while a part lives, the array does
        del first
        assert alive and whole() is None
    x[1] = np.nan
    assert parts(x) is None


@pytest.mark.parametrize("record", [list, dict, "not a type"])
def test_a_record_must_be_a_tuple_type_of_parts(record: object) -> None:
    with pytest.raises(ValueError, match="record must be a tuple subclass"):
        StateCall(copy_entry.address, np.zeros((6, 1)), np.zeros(1), 1, (2, 3), record=record)
    with pytest.raises(ValueError, match="record must be a tuple subclass"):
        StateCall(copy_entry.address, np.zeros((6, 1)), np.zeros(1), 1, (6,), record=_Parts)


@pytest.mark.parametrize("size", [1, 3, 4, 5, 8, 33])
def test_all_finite_finds_each_bad_value(size: int) -> None:
    for position in range(size):
        for bad in (np.nan, np.inf, -np.inf):
            values = np.full(size, -np.finfo(float).max)
            values[position] = bad
            assert all_finite(values) is False
    assert all_finite(np.array([np.finfo(float).max, 5e-324, -0.0][:size])) is True
