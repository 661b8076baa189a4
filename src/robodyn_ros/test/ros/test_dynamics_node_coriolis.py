"""The Coriolis matrix over real DDS: dynamics_node publishes C(q, q̇), Pinocchio's, when
"coriolis_matrix" is among its quantities, and leaves the field empty by default."""

from __future__ import annotations

import numpy as np
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.nodes import dynamics_peer, panda_state, wait_for
from helpers.robots import PANDA, PANDA_JOINTS
from helpers.tolerances import assert_close


def test_dynamics_node_publishes_c_when_asked_and_leaves_it_empty_by_default(ros) -> None:
    """Over DDS: with "coriolis_matrix" in quantities, the published C at a state with
    velocity is Pinocchio's; by default the field stays empty."""
    oracle = PinocchioOracle(PANDA, PANDA_JOINTS, is_string=True)
    qd = np.linspace(-1.0, 1.0, 7)
    for quantities, published in ((["mass_matrix", "coriolis_matrix"], True), (None, False)):
        extra = () if quantities is None else (Parameter("quantities", value=quantities),)
        peer = dynamics_peer(ros, *extra)
        try:
            q = np.linspace(0.1, 0.7, 7)

            def answered(q=q, peer=peer) -> bool:
                peer.publish(JointState, "joint_states", panda_state(q, qd=qd))
                return wait_for(lambda: any(np.array_equal(m.position, q)
                                            for m in peer.answers), 0.2)

            assert wait_for(answered)
            answer = next(m for m in peer.answers if np.array_equal(m.position, q))
            if published:
                C = np.reshape(answer.coriolis_matrix, (7, 7))
                assert_close(C, oracle.coriolis_matrix(q, qd), "published C", 1e-9)
            else:
                assert len(answer.coriolis_matrix) == 0 and len(answer.mass_matrix) == 49
        finally:
            peer.close()
