"""Robot descriptions and loads that tests of several folders use: the bundled panda's URDF,
its joints, a resting state and its tool frame; a small generated chain; the panda with a tip
that moves no mass; a tool load with a full inertia tensor; a URDF given a mimic joint."""

from __future__ import annotations

import re

import numpy as np

from robodyn_ros.model.generate import random_chain_urdf
from robodyn_ros.model.inertia import rotation_from_rpy
from robodyn_ros.resources import bundled_urdf

PANDA = bundled_urdf("panda").read_text()
PANDA_JOINTS = [f"panda_joint{k}" for k in range(1, 8)]
CHAIN = random_chain_urdf(4, seed=0)
TIP = "panda_hand_tcp"
Q0 = [0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8]
TOOL = (1.3, (0.02, -0.01, 0.08),  # a tool held off-centre and tilted: a full inertia tensor
        rotation_from_rpy((0.3, -0.2, 0.7)) @ np.diag([0.004, 0.006, 0.009])
        @ rotation_from_rpy((0.3, -0.2, 0.7)).T)


def massless_tip(urdf: str) -> str:
    """The URDF with no <inertial> from panda_link7 on: joint 7 moves no mass."""
    start = urdf.index('<link name="panda_link7">')
    return urdf[:start] + re.sub(r"<inertial>.*?</inertial>", "", urdf[start:], flags=re.S)


MASSLESS = massless_tip(PANDA)


def with_mimic(urdf: str, joint: str, leader: str, multiplier: float, offset: float) -> str:
    """The URDF with `joint` mimicking `leader`."""
    start = urdf.index(f'<joint name="{joint}"')
    end = urdf.index("</joint>", start)
    rule = f'<mimic joint="{leader}" multiplier="{multiplier}" offset="{offset}"/>'
    return urdf[:end] + rule + urdf[end:]
