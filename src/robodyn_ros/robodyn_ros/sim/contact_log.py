"""What a run's contacts with the world did, step by step: the preview's contact metrics and
the contacts it reports at its sample steps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from robodyn_ros.contact.time_step import ContactForce


@dataclass(frozen=True)
class ContactMetrics:
    """A run's contacts in four numbers (all zero without a world).

    Attributes:
        peak_contact_force: N, the largest total force of the world on one link at one step.
        slip_distance: m, the furthest one link slid along a surface while touching it, over
            the run (its contact points' speed along the surface, averaged over its points,
            times the step).
        lost_contacts: how many times a link touching the world at one step did not at the
            next.
        penetration: m, the deepest a contact point was inside a surface.
    """

    peak_contact_force: float = 0.0
    slip_distance: float = 0.0
    lost_contacts: int = 0
    penetration: float = 0.0


class ContactLog:
    """Takes each step's contacts (`record`) and keeps the metrics and the contacts of the
    steps asked for."""

    def __init__(self, dt: float, kept_steps: Iterable[int] = ()) -> None:
        """Args:
            dt: the step, s.
            kept_steps: the step indices (1 = after the first step) whose contacts `kept`
                holds; the others' are only measured."""
        self.dt, self._kept_steps = dt, frozenset(int(step) for step in kept_steps)
        self._recorded: dict[int, tuple[ContactForce, ...]] = {}
        self.kept: Mapping[int, tuple[ContactForce, ...]] = self._recorded
        self._slid: dict[str, float] = {}
        self._touching: frozenset[str] = frozenset()
        self._peak = self._depth = 0.0
        self._lost = 0
        self._taken: ContactMetrics | None = None

    def record(self, step: int, contacts: tuple[ContactForce, ...]) -> None:
        """The contacts of the step that ended at index `step`."""
        if step in self._kept_steps:
            self._recorded[step] = contacts
        touching = frozenset(contact.link for contact in contacts)
        self._lost += len(self._touching - touching)
        self._touching = touching
        if not contacts:
            return
        links = [contact.link for contact in contacts]
        forces = np.array([contact.force for contact in contacts])
        normals = np.array([contact.normal for contact in contacts])
        velocities = np.array([contact.velocity for contact in contacts])
        slips = np.linalg.norm(
            velocities - np.sum(velocities * normals, axis=1, keepdims=True) * normals, axis=1)
        self._depth = max(self._depth, max(contact.depth for contact in contacts))
        for link in touching:
            mine = [k for k, name in enumerate(links) if name == link]
            self._peak = max(self._peak, float(np.linalg.norm(forces[mine].sum(axis=0))))
            self._slid[link] = self._slid.get(link, 0.0) + float(slips[mine].mean()) * self.dt

    def take(self, metrics: ContactMetrics, kept: Mapping[int, tuple[ContactForce, ...]]
             ) -> None:
        """The metrics and the contacts of the kept steps (and no others) of a run logged as
        it ran (the compiled contact rollout's ContactRecord), in place of those recorded."""
        self.kept = kept
        self._taken = metrics

    @property
    def metrics(self) -> ContactMetrics:
        """The metrics of the steps recorded so far (or taken)."""
        if self._taken is not None:
            return self._taken
        return ContactMetrics(self._peak, max(self._slid.values(), default=0.0), self._lost,
                              self._depth)


class SampleContacts(Sequence[tuple[ContactForce, ...]]):
    """The contacts of the step ending at each sample, () where there were none, read from a
    log's kept steps when asked (a compiled rollout's are made into records only then)."""

    def __init__(self, kept: Mapping[int, tuple[ContactForce, ...]], samples: np.ndarray
                 ) -> None:
        self._kept, self._samples = kept, [int(step) for step in samples]

    def __len__(self) -> int:
        return len(self._samples)

    @overload
    def __getitem__(self, index: int) -> tuple[ContactForce, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[tuple[ContactForce, ...], ...]: ...

    def __getitem__(self, index: int | slice
                    ) -> tuple[ContactForce, ...] | tuple[tuple[ContactForce, ...], ...]:
        if isinstance(index, slice):
            return tuple(self._kept.get(step, ()) for step in self._samples[index])
        return self._kept.get(self._samples[index], ())


__all__ = ["ContactLog", "ContactMetrics", "SampleContacts"]
