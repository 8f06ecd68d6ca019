"""Property tests: wrappers keep observations inside their declared spaces for random nested
Dict/Tuple/MaskedBox spaces, and normalisation statistics survive a state_dict round trip."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from wrapper_envs import SampleEnv

import sekai
from sekai.spaces import flatten
from sekai.wrappers import FlattenObservation, FrameStackObservation, NormalizeObservation
from sekai.wrappers._parts import find_parts

shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)
finite = st.floats(-100.0, 100.0, allow_nan=False)


@st.composite
def boxes(draw):
    shape = draw(shapes)
    if draw(st.booleans()):
        return sekai.Box(-np.inf, np.inf, shape=shape)
    low = draw(finite)
    return sekai.Box(low, low + draw(st.floats(0.1, 50.0)), shape=shape)


@st.composite
def masked_boxes(draw):
    low = draw(finite)
    return sekai.MaskedBox(
        low,
        low + draw(st.floats(0.1, 50.0)),
        shape=draw(shapes),
        max_size=draw(st.integers(1, 4)),
    )


leaves = st.one_of(
    boxes(),
    masked_boxes(),
    st.integers(1, 4).map(sekai.Discrete),
    st.integers(1, 3).map(sekai.MultiBinary),
)
spaces = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.dictionaries(st.sampled_from("abcd"), children, min_size=1, max_size=3).map(sekai.Dict),
        st.lists(children, min_size=1, max_size=3).map(sekai.Tuple),
    ),
    max_leaves=5,
)
spaces_with_boxes = spaces.filter(lambda space: bool(find_parts(space)))
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None)


def _assert_observations_in_space(env, seed, steps=4):
    observations = [env.reset(seed=seed).observation]
    observations += [env.step(0).observation for _ in range(steps)]
    for observation in observations:
        assert observation in env.observation_space, (env.observation_space, observation)


@PROPERTY_SETTINGS
@given(spaces, st.integers(0, 2**16))
def test_flatten_observation_stays_in_its_space(space, seed):
    _assert_observations_in_space(FlattenObservation(SampleEnv(space)), seed)


@PROPERTY_SETTINGS
@given(spaces_with_boxes, st.integers(0, 2**16), st.sampled_from([None, 1.0]))
def test_normalize_observation_stays_in_its_space(space, seed, clip):
    _assert_observations_in_space(NormalizeObservation(SampleEnv(space), clip=clip), seed)


@PROPERTY_SETTINGS
@given(spaces, st.integers(0, 2**16), st.integers(1, 3), st.sampled_from(["zeros", "reset"]))
def test_frame_stack_observation_stays_in_its_space(space, seed, stack_size, padding):
    env = FrameStackObservation(SampleEnv(space), stack_size, padding)
    _assert_observations_in_space(env, seed)


@PROPERTY_SETTINGS
@given(spaces_with_boxes, st.integers(0, 2**16), st.sampled_from(["running", "ewm"]))
def test_normalize_state_survives_a_round_trip_exactly(space, seed, stats):
    trained = NormalizeObservation(SampleEnv(space), stats=stats, halflife=3.0)
    trained.reset(seed=seed)
    for _ in range(5):
        trained.step(0)
    restored = NormalizeObservation(SampleEnv(space), stats=stats, halflife=3.0)
    restored.obs_rms.load_state_dict(trained.obs_rms.state_dict())
    for path, stats_ in trained.obs_rms.stats.items():
        copy = restored.obs_rms.stats[path]
        np.testing.assert_array_equal(copy.mean, stats_.mean)
        np.testing.assert_array_equal(copy.var, stats_.var)
        assert copy.count == stats_.count
    # and both keep evolving identically from the same observations
    observation = SampleEnv(space).reset(seed=seed + 1).observation
    a, b = trained.observation(observation), restored.observation(observation)
    normalized = trained.observation_space
    np.testing.assert_array_equal(flatten(normalized, a), flatten(normalized, b))
