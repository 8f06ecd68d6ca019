"""Observation wrappers return new arrays: none shares memory with what the env returned."""

from __future__ import annotations

import numpy as np
import pytest
from wrapper_envs import SampleEnv

import sekai
from sekai.wrappers import (
    ActionMaskObservation,
    DelayObservation,
    DtypeObservation,
    FilterObservation,
    FlattenObservation,
    FrameStackObservation,
    NormalizeObservation,
    PadSequenceObservation,
    RescaleObservation,
    ReshapeObservation,
    TimeAwareObservation,
    TimeLimit,
)

BOX = sekai.Box(0.0, 1.0, shape=(2, 2))
DICT = sekai.Dict(
    {
        "prices": sekai.Box(0.0, 1.0, shape=(3,)),
        "flags": sekai.MultiBinary(2),
        "book": sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=2),
        "trades": sekai.Sequence(sekai.Box(0.0, 1.0, shape=(2,)), max_length=2, stack=True),
    }
)
FIXED_DICT = sekai.Dict({key: DICT[key] for key in ("prices", "flags", "book")})


class MaskedSampleEnv(SampleEnv):
    def action_mask(self):
        return np.ones(2, np.int8)


def _arrays(x):
    if isinstance(x, np.ndarray):
        yield x
    elif isinstance(x, dict):
        for value in x.values():
            yield from _arrays(value)
    elif isinstance(x, tuple | list):
        for value in x:
            yield from _arrays(value)


WRAPPERS = {
    "filter": (DICT, lambda env: FilterObservation(env, ["prices", "book", "trades"])),
    "flatten": (FIXED_DICT, FlattenObservation),
    "reshape": (BOX, lambda env: ReshapeObservation(env, (4,))),
    "rescale": (BOX, lambda env: RescaleObservation(env, -1.0, 1.0)),
    "dtype": (DICT, lambda env: DtypeObservation(env, np.float64)),
    "normalize": (DICT, NormalizeObservation),
    "time_aware": (DICT, lambda env: TimeAwareObservation(TimeLimit(env, 5))),
    "frame_stack": (FIXED_DICT, lambda env: FrameStackObservation(env, 2)),
    "delay": (DICT, lambda env: DelayObservation(env, 0)),
    "action_mask": (DICT, ActionMaskObservation),
    "pad_sequence": (DICT, PadSequenceObservation),
}


@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_observation_shares_no_memory_with_the_envs(name):
    space, wrap = WRAPPERS[name]
    inner = MaskedSampleEnv(space)
    env = wrap(inner)
    for observation in (env.reset(seed=0).observation, env.step(0).observation):
        raw = list(_arrays(inner.observations[-1]))
        assert raw
        for array in _arrays(observation):
            assert not any(np.shares_memory(array, source) for source in raw)
