"""detection.PointClusters against its definition on random point sets: every point once, in
its cluster, within the cluster's ball about the cluster's mean."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn_ros.contact.detection import CLUSTER_POINTS, PointClusters


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(0, 800),
       scale=st.tuples(*[st.floats(1e-3, 1.0)] * 3))
def test_clusters_hold_every_point_once_within_their_balls(seed, count, scale):
    points = np.random.default_rng(seed).normal(size=(count, 3)) * scale
    clusters = PointClusters.of(points)
    assert sorted(clusters.rank.tolist()) == list(range(count))
    np.testing.assert_array_equal(clusters.points, points[clusters.rank])
    assert clusters.size.sum() == count and (clusters.size > 0).all()
    assert len(clusters.size) <= max(1, count // CLUSTER_POINTS)
    owner = np.repeat(np.arange(len(clusters.size)), clusters.size)
    for cluster in range(len(clusters.size)):
        mine = clusters.points[owner == cluster]
        np.testing.assert_allclose(clusters.centre[cluster], mine.mean(axis=0), atol=1e-12)
        distance = np.linalg.norm(mine - clusters.centre[cluster], axis=1)
        assert distance.max() <= clusters.radius[cluster] * (1 + 1e-12) + 1e-15
