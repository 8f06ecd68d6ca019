"""Property: a vector env behaves exactly like independent sub-envs with same-step autoreset."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_envs import WalkEnv

from sekai.vector import AsyncVecEnv, SyncVecEnv

N = 3


@pytest.mark.parametrize("backend", [SyncVecEnv, AsyncVecEnv])
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    length=st.integers(1, 4),
    actions=st.lists(st.lists(st.integers(0, 2), min_size=N, max_size=N), max_size=10),
)
def test_backends_match_independent_sub_envs(backend, seed, length, actions):
    children = np.random.SeedSequence(seed).spawn(N)
    seeds = [int(child.generate_state(1, np.uint64)[0]) for child in children]
    references = [WalkEnv(length) for _ in range(N)]
    expected = [env.reset(seed=s).observation for env, s in zip(references, seeds, strict=True)]
    with backend([lambda: WalkEnv(length)] * N) as vec:
        np.testing.assert_array_equal(vec.reset(seed=seed).observations, expected)
        for batch in actions:
            result = vec.step(np.array(batch))
            for i, env in enumerate(references):
                step = env.step(batch[i])
                assert result.rewards[i] == step.reward
                assert result.terminated[i] == step.terminated
                if step.done:
                    final = result.infos[i]["final_observation"]
                    np.testing.assert_array_equal(final, step.observation)
                    np.testing.assert_array_equal(result.observations[i], env.reset().observation)
                else:
                    np.testing.assert_array_equal(result.observations[i], step.observation)
                    assert result.infos[i] == step.info
