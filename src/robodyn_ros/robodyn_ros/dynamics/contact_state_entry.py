"""The C entry of constrained dynamics for one state of a robot, on contacts held
where they are, with the signature and StateCall of state_entry's: constants are the contacts
and gains packed by constrained_dynamics.pack_contact_task.

A module of its own, compiled or loaded on first use (contact_state_entries()), so that a
process that never asks for contact forces never compiles it.
"""

import numpy as np
from numba import carray

from robodyn_ros.dynamics.constrained_dynamics import (
    TASK_HEADER,
    constraint_workspace,
    contact_task_size,
    held,
    unpack_contact_task,
)
from robodyn_ros.dynamics.state_entry import entry, tree_and_configuration


@entry
def constrained_forward_dynamics_entry(tree, task, n, q, v, tau, out):
    """constants: the contacts and gains (constrained_dynamics.pack_contact_task), held where
    they are; out: v̇ (n) then the m contact forces, world axes."""
    m = int(carray(task, TASK_HEADER)[6])
    gravity, gains, frames, rows, spatial = unpack_contact_task(
        carray(task, contact_task_size(carray(task, TASK_HEADER))))
    answer = carray(out, n + m)
    packed, config = tree_and_configuration(tree, n, q)
    held(packed, gravity, frames, rows, spatial, gains, config, carray(v, n), carray(tau, n),
         np.zeros(m), np.empty((0, 0)), answer[:n], answer[n:],
         constraint_workspace(n, frames.shape[0], m))
