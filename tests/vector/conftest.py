"""Fixtures of the vector tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def local_ray():
    """A local Ray (2 CPUs, no dashboard) for the tests marked ``needs("ray")`` (`nox -s ray`),
    started once for all of them."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
