"""What the Ray tests share: killing an actor and knowing it is dead."""

from __future__ import annotations

from typing import Any

import pytest


def kill(vec: Any, worker: int) -> None:
    """ray.kill actor ``worker`` of ``vec`` and wait until Ray reports it dead: the kill takes
    effect asynchronously, and a call sent before it does may still be answered."""
    import ray
    from ray.exceptions import RayActorError

    actor = vec._actors[worker]
    ray.kill(actor)
    with pytest.raises(RayActorError):
        while True:
            ray.get(actor.__ray_ready__.remote(), timeout=30)
