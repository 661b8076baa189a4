"""Robot descriptions and loads that tests of several folders use: the bundled panda's URDF,
its joints, a resting state and its tool frame; a small generated chain; the panda with a tip
that moves no mass; two joints whose M is singular at one configuration; a tool load with a
full inertia tensor; a URDF given a mimic joint; a two-link arm with a fingertip ball, its one
collision shape."""

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


def axis_point_mass_xml() -> str:
    """Joint 'spin' about z carries a massless link, then joint 'tilt' about x at the same
    point carries a point mass 1 m up: at tilt = 0 the mass is on spin's axis and M is
    singular, anywhere else it is not."""
    return """<robot name="axis_mass">
      <link name="base"/>
      <link name="hub"/>
      <link name="arm"><inertial><origin xyz="0 0 1"/><mass value="2.0"/>
        <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
      <joint name="spin" type="continuous"><parent link="base"/><child link="hub"/>
        <axis xyz="0 0 1"/></joint>
      <joint name="tilt" type="continuous"><parent link="hub"/><child link="arm"/>
        <axis xyz="1 0 0"/></joint>
    </robot>"""


def with_mimic(urdf: str, joint: str, leader: str, multiplier: float, offset: float) -> str:
    """The URDF with `joint` mimicking `leader`."""
    start = urdf.index(f'<joint name="{joint}"')
    end = urdf.index("</joint>", start)
    rule = f'<mimic joint="{leader}" multiplier="{multiplier}" offset="{offset}"/>'
    return urdf[:end] + rule + urdf[end:]


FINGERTIP_RADIUS = 0.05  # m, of the ball at the tip of FINGERTIP_ARM
FINGERTIP_ARM = f"""<robot name="arm">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0.25 0 0"/><mass value="2"/>
    <inertia ixx="0.01" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="fore"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>
    <inertia ixx="0.005" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.4 0 0"/><geometry><sphere radius="{FINGERTIP_RADIUS}"/></geometry>
    </collision></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="10"/>
    <dynamics damping="1.0"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0.5 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50"
    velocity="10"/><dynamics damping="1.0"/></joint>
</robot>"""
