"""The exact solves of issue 6's constraint-force system against ABA and Pinocchio on the robots
of helpers/cases.py: forward dynamics by block LDLᵀ ("schur", in link frames) and block cyclic
reduction ("schur_bcr", chains only), and M⁻¹ = 𝒢 − ℬᵀ𝒜⁻¹ℬ. Tolerances as
test_robot_against_pinocchio (RTOL relative, scaled by κ(M)/KAPPA_REF beyond KAPPA_REF).
"""

from __future__ import annotations

import numpy as np
import pytest

from robodyn_ros import Robot

from helpers.tolerances import KAPPA_REF, assert_close

STATES = 2
EXACT = ("schur", "schur_bcr")  # block LDLᵀ and block cyclic reduction of one system
CHAIN_ONLY = "schur_bcr"


def is_chain(robot: Robot) -> bool:
    return bool(np.all(robot.model.parent == np.arange(robot.nv) - 1))


def refuses_tree(robot: Robot, method: str) -> bool:
    return method == CHAIN_ONLY and not is_chain(robot)


def kappa_scale(case, q: np.ndarray) -> float:
    return max(1.0, float(np.linalg.cond(case.oracle.mass_matrix(q))) / KAPPA_REF)


# -- exact: the Schur / constraint-force solve ------------------------------------------------


@pytest.mark.parametrize("method", EXACT)
def test_schur_forward_dynamics_equals_aba_and_pinocchio(case, method: str) -> None:
    robot = case.robot
    q, qd, _, f_ext = case.states(STATES, seed=60)
    tau = case.states(STATES, seed=61)[2] * 10.0
    if refuses_tree(robot, method):
        with pytest.raises(ValueError, match=rf"'{method}'.*serial chain"):
            robot.forward_dynamics(q[0], qd[0], tau[0], method=method)
        return
    for i in range(STATES):
        for f in (None, f_ext[i]):
            qdd = robot.forward_dynamics(q[i], qd[i], tau[i], method=method, f_ext=f)
            what = f"{case.name} state {i} {'fext' if f is not None else 'no fext'} {method}"
            scale = kappa_scale(case, q[i])
            assert_close(qdd, robot.forward_dynamics(q[i], qd[i], tau[i], f_ext=f),
                         what + " vs aba", scale=scale)
            assert_close(qdd, case.oracle.aba(q[i], qd[i], tau[i], f), what + " vs Pinocchio",
                         scale=scale)


@pytest.mark.parametrize("method", EXACT)
def test_schur_mass_matrix_inverse_equals_pinocchio(case, method: str) -> None:
    robot = case.robot
    q, _, _, _ = case.states(STATES, seed=62)
    if refuses_tree(robot, method):
        with pytest.raises(ValueError, match=rf"'{method}'.*serial chain"):
            robot.mass_matrix_inverse(q[0], method=method)
        return
    for i in range(STATES):
        Minv = robot.mass_matrix_inverse(q[i], method=method)
        assert_close(Minv, case.oracle.mass_matrix_inverse(q[i]), f"{case.name} state {i} Minv",
                     scale=kappa_scale(case, q[i]))
