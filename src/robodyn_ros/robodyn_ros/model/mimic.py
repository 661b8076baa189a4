"""Mimic joints (URDF ``<mimic>``): a joint that follows another, q_joint = multiplier · q_leader
+ offset, as the two fingers of a parallel gripper do. A chain of mimics is resolved to the
independent joint at its end, so each rule names an independent leader."""

from __future__ import annotations

from collections.abc import Mapping

from urdf_parser_py.urdf import URDF

from robodyn_ros.model.model import SINGLE_DOF_KINDS, Mimic, ModelError

_LOCK_ATOL = 1e-9  # rad or m: a locked follower's position against its rule


def mimic_rules(robot: URDF, source: str) -> dict[str, Mimic]:
    """The rule of every moving joint with a ``<mimic>``, chains resolved.

    Args:
        robot: the parsed URDF.
        source: the file, first in every error.

    Returns:
        joint name → its Mimic, in URDF order.

    Raises:
        ModelError: a joint mimics a joint that is not a moving joint of the robot (unknown,
            or fixed), or a chain of mimics closes on itself.
    """
    moving = {joint.name: joint for joint in robot.joints if joint.type in SINGLE_DOF_KINDS}
    declared = {name: joint.mimic for name, joint in moving.items() if joint.mimic is not None}
    rules = {}
    for name in declared:
        multiplier, offset, chain = 1.0, 0.0, [name]
        while chain[-1] in declared:
            follower, mimic = chain[-1], declared[chain[-1]]
            if mimic.joint not in moving:
                raise ModelError(
                    f"{source}: joint '{follower}' mimics joint '{mimic.joint}', which is not a "
                    "moving (revolute, continuous, prismatic) joint of the robot"
                )
            if mimic.joint in chain:
                raise ModelError(
                    f"{source}: mimic joints follow one another in a loop: "
                    + " → ".join(f"'{joint}'" for joint in (*chain, mimic.joint))
                )
            # q_name = multiplier · q_follower + offset, q_follower = a · q_leader + b
            a = 1.0 if mimic.multiplier is None else float(mimic.multiplier)
            b = 0.0 if mimic.offset is None else float(mimic.offset)
            multiplier, offset = multiplier * a, multiplier * b + offset
            chain.append(mimic.joint)
        rules[name] = Mimic(name, chain[-1], multiplier, offset)
    return rules


def lock_followers(
    rules: Mapping[str, Mimic], locked: Mapping[str, float], source: str
) -> dict[str, float]:
    """The locked joints with the followers of locked leaders locked where their rule puts
    them.

    Raises:
        ModelError: a follower is locked but its leader is not, or is locked where its rule
            does not put it.
    """
    locked = dict(locked)
    for rule in rules.values():
        if rule.leader in locked:
            position = rule.multiplier * locked[rule.leader] + rule.offset
            if rule.joint in locked and abs(locked[rule.joint] - position) > _LOCK_ATOL:
                raise ModelError(
                    f"{source}: locked joint '{rule.joint}' mimics joint '{rule.leader}', "
                    f"locked at {locked[rule.leader]:g}, so it must be at {position:g}; got "
                    f"{locked[rule.joint]:g} (lock the leader alone)"
                )
            locked[rule.joint] = position
        elif rule.joint in locked:
            raise ModelError(
                f"{source}: locked joint '{rule.joint}' mimics joint '{rule.leader}', which is "
                f"not locked: lock '{rule.leader}' and '{rule.joint}' follows it"
            )
    return locked
