"""Property tests: wrappers keep observations inside their declared spaces for random nested
Dict/Tuple/MaskedBox spaces, action wrappers send the env actions inside its action space, and
normalisation statistics survive a state_dict round trip."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from wrapper_envs import SampleEnv

import sekai
from sekai.spaces import flatten
from sekai.wrappers import (
    ClipAction,
    FlattenObservation,
    FrameStackObservation,
    NormalizeObservation,
    RescaleAction,
)
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
spaces_with_bounded_boxes = spaces_with_boxes.filter(
    lambda space: all(
        np.isfinite(box.low).all() and np.isfinite(box.high).all()
        for _, box in find_parts(space, (sekai.Box,))
    )
)
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None)
OBS = sekai.Box(0.0, 1.0, shape=(1,))


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


def _at(value, path):
    for key in path:
        value = value[key]
    return value


def _assert_actions_reach_the_env_inside_its_space(env, inner, seed, steps=4):
    """Actions of the wrapper's declared space reach ``inner`` inside its action space, with
    every non-Box part (a MaskedBox's mask included) passed on unchanged."""
    env.action_space.seed(seed)
    for _ in range(steps):
        action = env.action_space.sample()
        env.step(action)
        sent = inner.actions[-1]
        assert sent in inner.action_space, (inner.action_space, sent)
        for path, _ in find_parts(inner.action_space, (sekai.Discrete, sekai.MultiBinary)):
            np.testing.assert_array_equal(_at(sent, path), _at(action, path))


@PROPERTY_SETTINGS
@given(spaces_with_boxes, st.integers(0, 2**16))
def test_clip_action_sends_actions_inside_the_env_space(space, seed):
    inner = SampleEnv(OBS, space)
    env = ClipAction(inner)
    _assert_actions_reach_the_env_inside_its_space(env, inner, seed)
    space.seed(seed)  # and an action already inside the env's space is not changed
    action = space.sample()
    np.testing.assert_array_equal(flatten(space, env.action(action)), flatten(space, action))


@PROPERTY_SETTINGS
@given(spaces_with_bounded_boxes, st.integers(0, 2**16), st.floats(-5.0, 5.0), st.floats(0.1, 5.0))
def test_rescale_action_sends_actions_inside_the_env_space(space, seed, low, width):
    inner = SampleEnv(OBS, space)
    _assert_actions_reach_the_env_inside_its_space(
        RescaleAction(inner, low, low + width), inner, seed
    )
