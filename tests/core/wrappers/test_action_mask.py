"""get_action_mask and ActionMaskObservation."""

from __future__ import annotations

import numpy as np
import pytest
from wrapper_envs import SampleEnv

import sekai
from sekai.wrappers import ActionMaskObservation, TimeLimit, get_action_mask

OBS = sekai.Box(0.0, 1.0, shape=(2,))


class MaskedEnv(SampleEnv):
    """Allows only action ``steps % n`` (as a plain list, to check conversion)."""

    def action_mask(self):
        n = self.action_space.n
        return [1 if i == self.steps % n else 0 for i in range(n)]


def test_get_action_mask_reads_through_wrappers():
    env = TimeLimit(MaskedEnv(OBS, sekai.Discrete(3)), 10)
    env.reset(seed=0)
    env.step(0)
    assert get_action_mask(env) == [0, 1, 0]


def test_get_action_mask_without_a_mask_method():
    with pytest.raises(AttributeError, match="has no action_mask"):
        get_action_mask(TimeLimit(SampleEnv(OBS), 10))


def test_get_action_mask_refuses_multi_agent_envs():
    with pytest.raises(TypeError, match=r"single-agent; call env.action_mask\(agent\)"):
        get_action_mask(sekai.MultiAgentEnv())


def test_box_observation_goes_under_observation_with_the_mask_beside_it():
    inner = MaskedEnv(OBS, sekai.Discrete(3))
    env = ActionMaskObservation(inner)
    assert env.observation_space == sekai.Dict(
        {"observation": OBS, "action_mask": sekai.MultiBinary(3)}
    )
    first = env.reset(seed=0).observation
    second = env.step(0).observation
    assert first["action_mask"].tolist() == [1, 0, 0]
    assert second["action_mask"].tolist() == [0, 1, 0]
    assert second["action_mask"].dtype == np.int8
    assert first in env.observation_space and second in env.observation_space
    np.testing.assert_array_equal(second["observation"], inner.observations[-1])
    assert env.action_space.sample(mask=second["action_mask"]) == 1


def test_dict_observation_gains_the_key():
    class MultiMasked(SampleEnv):
        def action_mask(self):
            return (np.array([0, 1], np.int8), np.array([1, 1, 0], np.int8))

    space = sekai.Dict({"prices": OBS})
    env = ActionMaskObservation(MultiMasked(space, sekai.MultiDiscrete([2, 3])), key="legal")
    assert list(env.observation_space.keys()) == ["prices", "legal"]
    observation = env.reset(seed=0).observation
    assert observation in env.observation_space
    assert [m.tolist() for m in observation["legal"]] == [[0, 1], [1, 1, 0]]


def test_needs_a_mask_method_and_a_free_key():
    with pytest.raises(AttributeError, match="has no action_mask"):
        ActionMaskObservation(SampleEnv(OBS))
    with pytest.raises(ValueError, match="already has a 'prices' key"):
        ActionMaskObservation(
            MaskedEnv(sekai.Dict({"prices": OBS}), sekai.Discrete(2)), key="prices"
        )


def test_a_padded_multi_discrete_mask_becomes_one_mask_per_entry():
    """MultiDiscrete masks may be one array padded to max(nvec); the padding is not part of
    the observation, which must stay in its (Tuple of MultiBinary) space."""

    class PaddedMasked(SampleEnv):
        def action_mask(self):
            return np.array([[0, 1, 1], [1, 0, 1]], np.int8)  # entry 0 has 2 values: pad ignored

    env = ActionMaskObservation(PaddedMasked(OBS, sekai.MultiDiscrete([2, 3])))
    observation = env.reset(seed=0).observation
    assert observation in env.observation_space
    assert [mask.tolist() for mask in observation["action_mask"]] == [[0, 1], [1, 0, 1]]
