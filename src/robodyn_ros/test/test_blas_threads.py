"""blas_threads.one_blas_thread: numpy's and scipy's OpenBLAS run one thread inside the block
and their counts come back after; without /proc/self/maps it changes nothing."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from robodyn_ros import blas_threads
from robodyn_ros.blas_threads import one_blas_thread


def test_every_openblas_runs_one_thread_in_the_block() -> None:
    scipy.linalg.eigh(np.eye(3))  # scipy's OpenBLAS loaded beside numpy's
    controls = blas_threads._thread_controls()
    assert len(controls) >= 2  # numpy's and scipy's wheels each bring one
    before = [get() for get, _ in controls]
    with one_blas_thread():
        assert [get() for get, _ in controls] == [1] * len(controls)
        matrix = np.random.default_rng(0).standard_normal((60, 60))
        np.testing.assert_allclose(np.linalg.eigvalsh(matrix @ matrix.T).sum(),
                                   np.trace(matrix @ matrix.T))
    assert [get() for get, _ in controls] == before


def test_without_the_process_maps_nothing_changes(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(blas_threads, "_MAPS", tmp_path / "no_maps")
    assert blas_threads._thread_controls() == []
    with one_blas_thread():
        pass
