"""Coupling: how a model's mimic joints follow their leaders, as linear maps from the
independent coordinates to every joint of the tree (q_all = G_q q + q₀, q̇_all = G q̇).

Robot keeps one (None without mimic joints); MimicRobot sees every quantity of the tree
through it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from robodyn_ros.model import Model
from robodyn_ros.model.model import ConfigurationJoint, configuration_joints


def has_mimic_joints(model: Model) -> bool:
    """Whether some joint of `model` follows another (a URDF <mimic>)."""
    return bool(model.mimic)


@dataclasses.dataclass(frozen=True, eq=False)
class Coupling:
    """How every joint of the tree follows the independent coordinates: q_all = G_q q + q₀ and
    q̇_all = G q̇ (G_q = G where every joint has one coordinate).

    Attributes:
        joint_names: the rows of the independent coordinates, in tree order.
        mimic_joints: the joints that follow, in tree order.
        tree_joint_names: every row of the tree, in its order (model.joint_names).
        configuration_joints: the independent joints' layout (configuration.Layout).
        G: (nv_all, nv) ∂q̇_all/∂q̇.
        G_q: (nq_all, nq) ∂q_all/∂q.
        offset: (nq_all,) q₀.
        independent: (nq,) int64, where each independent coordinate is in q_all.
    """

    joint_names: tuple[str, ...]
    mimic_joints: tuple[str, ...]
    tree_joint_names: tuple[str, ...]
    configuration_joints: tuple[ConfigurationJoint, ...]
    G: np.ndarray
    G_q: np.ndarray
    offset: np.ndarray
    independent: np.ndarray

    @classmethod
    def of(cls, model: Model) -> Coupling:
        rules = {rule.joint: rule for rule in model.mimic}
        rows = [i for i, name in enumerate(model.joint_names) if name not in rules]
        names = tuple(model.joint_names[i] for i in rows)
        layout = configuration_joints(names, tuple(model.joint_kinds[i] for i in rows))
        free = {joint.name: joint for joint in layout}
        nq = layout[-1].q.stop
        G, G_q = np.zeros((model.nv, len(names))), np.zeros((model.nq, nq))
        offset, independent = np.zeros(model.nq), np.empty(nq, dtype=np.int64)
        for joint in model.configuration_joints:
            rule = rules.get(joint.name)
            if rule is None:
                own = free[joint.name]
                G[joint.v, own.v] = np.eye(joint.v.stop - joint.v.start)
                G_q[joint.q, own.q] = np.eye(joint.q.stop - joint.q.start)
                independent[own.q] = np.arange(joint.q.start, joint.q.stop)
            else:
                leader = free[rule.leader]
                G[joint.v.start, leader.v.start] = rule.multiplier
                G_q[joint.q.start, leader.q.start] = rule.multiplier
                offset[joint.q.start] = rule.offset
        return cls(names, tuple(rules), model.joint_names, layout, G, G_q, offset, independent)

    def positions(self, q: np.ndarray) -> np.ndarray:
        """q of every joint of the tree, (..., nq_all)."""
        q_all: np.ndarray = q @ self.G_q.T + self.offset
        return q_all

    def coordinates(self, q_all: np.ndarray) -> np.ndarray:
        """The independent coordinates of tree configurations (..., nq_all), (..., nq)."""
        return q_all[..., self.independent]

    def rates(self, qd: np.ndarray) -> np.ndarray:
        """q̇ or q̈ of every joint of the tree, (..., n_all)."""
        rates_all: np.ndarray = qd @ self.G.T
        return rates_all

    def forces(self, tau_all: np.ndarray) -> np.ndarray:
        """Gᵀ τ_all: the generalized forces on the independent coordinates, (..., n)."""
        tau: np.ndarray = tau_all @ self.G
        return tau

    def matrix(self, A_all: np.ndarray) -> np.ndarray:
        """Gᵀ A_all G, (..., n, n)."""
        A: np.ndarray = self.G.T @ A_all @ self.G
        return A


__all__ = ["Coupling", "has_mimic_joints"]
