"""dynamics.jit's changes to numba's inliner: copy_each_inlining_once copies a helper's IR as one
whole, its scope once, so that a kernel's compile time grows with its size, not with its size
squared; translate_each_helper_once translates a helper to IR once per process, not once per
call site."""

from __future__ import annotations

from typing import Any

import pytest
from numba import njit
from numba.core import bytecode, ir
from numba.core.compiler import run_frontend

import robodyn_ros.dynamics.jit  # noqa: F401  (installs the inliner's copy)


@njit(inline="always")
def clipped_steps(x: float, steps: int) -> float:
    """A helper of many blocks: a loop with branches inside."""
    total = 0.0
    for k in range(steps):
        if x > k:
            total += x - k
        elif x < -k:
            total -= x + k
        else:
            total += 0.5
    return total


def clipped_steps_in_python(x: float, steps: int) -> float:
    return sum(x - k if x > k else -(x + k) if x < -k else 0.5 for k in range(steps))


def test_an_inlined_helper_copies_its_variables_once_per_copy(
        monkeypatch: pytest.MonkeyPatch) -> None:
    copies = []
    var_deepcopy = ir.Var.__deepcopy__

    def counted(self: ir.Var, memo: dict[int, Any]) -> ir.Var:
        copies.append(self.name)
        return var_deepcopy(self, memo)

    monkeypatch.setattr(ir.Var, "__deepcopy__", counted)

    @njit
    def two_sites(x: float) -> float:
        return clipped_steps(x, 5) + clipped_steps(-x, 3)

    helper_ir = run_frontend(clipped_steps.py_func)
    blocks, variables = len(helper_ir.blocks), len(helper_ir.blocks[0].scope.localvars)
    assert blocks >= 6
    for x in (-7.5, -0.25, 2.0, 9.0):
        assert two_sites(x) == pytest.approx(
            clipped_steps_in_python(x, 5) + clipped_steps_in_python(-x, 3), abs=1e-12)
    # inline_ir copies the helper and then its copy: two sites, two copies each, each variable
    # once a copy (twice allowed, for what the untyped passes add); copied block by block,
    # each block's copy copied every variable again
    assert 0 < len(copies) <= 2 * 2 * variables * 2 < 2 * 2 * variables * blocks


def test_a_helper_inlined_at_several_sites_is_translated_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    @njit(inline="always")
    def halved(x: float) -> float:
        return 0.5 * x

    translations = []
    from_function = bytecode.FunctionIdentity.from_function

    def counted(function: Any) -> bytecode.FunctionIdentity:
        if function is halved.py_func:
            translations.append(function)
        return from_function(function)

    monkeypatch.setattr(bytecode.FunctionIdentity, "from_function", staticmethod(counted))

    @njit
    def three_sites(x: float) -> float:
        return halved(x) + halved(2.0 * x) + halved(halved(x))

    @njit
    def another_kernel(x: float) -> float:
        return halved(x) - 1.0

    assert three_sites(4.0) == pytest.approx(2.0 + 4.0 + 1.0)
    assert another_kernel(4.0) == pytest.approx(1.0)
    assert len(translations) == 1
