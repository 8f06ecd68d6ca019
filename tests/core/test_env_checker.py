"""check_env: passes every registered env, and catches each broken piece of the contract."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest

import sekai
import sekai.testing
from sekai.env_checker import EnvCheckError, EnvCheckWarning, check_env


class WalkEnv(sekai.Env):
    """A seeded random walk keeping the whole contract; each broken env below changes one thing."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(-np.inf, np.inf, shape=(2,))
        self.action_space = sekai.Discrete(3)
        self.close_calls = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._set_rng(seed)
        self.position = self.rng.normal(size=2)
        self.t = 0
        return sekai.ResetResult(self.observe(), {})

    def step(self, action):
        self.position = self.position + (int(action) - 1) + self.rng.normal(size=2)
        self.t += 1
        return sekai.StepResult(self.observe(), self.reward(), False, self.t >= 30, {})

    def observe(self) -> Any:
        return self.position.astype(np.float32)

    def reward(self) -> Any:
        return float(-abs(self.position).sum())

    def close(self) -> None:
        self.close_calls += 1


def test_a_correct_env_passes_without_warnings_and_is_closed() -> None:
    env = WalkEnv()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env)
    assert env.close_calls == 2  # closed twice, to check that this is harmless


@pytest.mark.parametrize("env_id", sekai.testing.env_ids())
def test_every_registered_env_passes(env_id: str) -> None:
    env = sekai.make(env_id)
    if isinstance(env, sekai.MultiAgentEnv):  # check_env is single-agent: roll it out instead
        check_multi_agent_rollout(env)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error", EnvCheckWarning)
        check_env(env)


def check_multi_agent_rollout(env: sekai.MultiAgentEnv[Any, Any, Any], steps: int = 20) -> None:
    """Observations lie in their agents' spaces, and sampled actions (within the env's action
    masks, if it has them) step without error."""
    for agent in env.possible_agents:
        env.action_space(agent).seed(0)
    result: Any = env.reset(seed=0)
    for _ in range(steps):
        for agent, observation in result.observations.items():
            assert env.observation_space(agent).contains(observation), agent
        if result.all_done:
            break
        masks = getattr(env, "action_mask", lambda agent: None)
        result = env.step(
            {a: env.action_space(a).sample(mask=masks(a)) for a in result.observations}
        )
    env.close()


# -- one broken env per rule -------------------------------------------------------------------


class GymnasiumSpace(WalkEnv):
    def __init__(self) -> None:
        super().__init__()
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, shape=(2,))


class NoActionSpace(WalkEnv):
    def __init__(self) -> None:
        super().__init__()
        self.action_space = None


class ResetReturnsTuple(WalkEnv):
    def reset(self, *, seed=None, options=None):
        return tuple(super().reset(seed=seed, options=options))


class StepReturnsTuple(WalkEnv):
    def step(self, action):
        return tuple(super().step(action))


class ObservationOutsideSpace(WalkEnv):
    def observe(self):
        return np.zeros(3, np.float32)


class StepObservationOutsideSpace(WalkEnv):
    def observe(self):
        return np.zeros(2 if self.t == 0 else 3, np.float32)


class BoolReward(WalkEnv):
    def reward(self):
        return True


class ArrayReward(WalkEnv):
    def reward(self):
        return np.array([1.0])


class NanReward(WalkEnv):
    def reward(self):
        return float("nan")


class IntTerminated(WalkEnv):
    def step(self, action):
        return super().step(action)._replace(terminated=0)


class ListInfo(WalkEnv):
    def step(self, action):
        return super().step(action)._replace(info=[])


class ResetWithoutSeed(WalkEnv):
    def reset(self, *, options=None):
        return super().reset(options=options)


class IgnoresSeed(WalkEnv):
    def reset(self, *, seed=None, options=None):
        return super().reset(seed=None, options=options)


class UnseededStep(WalkEnv):
    def step(self, action):
        self.position = self.position + np.random.default_rng().normal(size=2)
        return super().step(action)


class ReseedsOnNone(WalkEnv):
    def reset(self, *, seed=None, options=None):
        self.rng = np.random.default_rng(seed)  # a None seed draws fresh entropy
        return super().reset(seed=seed, options=options)


class RestartsOnNone(WalkEnv):
    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.last_seed = seed
        return super().reset(seed=self.last_seed, options=options)


class RandomOnlyInStep(WalkEnv):
    """Starts at the origin every time; only the steps are random."""

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        self.position, self.t = np.zeros(2), 0
        return sekai.ResetResult(self.observe(), {})


class StepOnlyRestartsOnNone(RandomOnlyInStep):
    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.last_seed = seed
        return super().reset(seed=self.last_seed, options=options)


class Deterministic(RandomOnlyInStep):
    def step(self, action):
        self.position = self.position + (int(action) - 1)
        self.t += 1
        return sekai.StepResult(self.observe(), self.reward(), False, self.t >= 30, {})


@pytest.mark.parametrize("env_type", [RandomOnlyInStep, Deterministic])
def test_envs_with_less_randomness_pass_too(env_type: type[sekai.Env]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env_type())


def test_reset_that_forwards_seed_and_options_as_keyword_arguments_passes() -> None:
    class ForwardsResetKeywords(WalkEnv):
        def reset(self, **kwargs):
            return super().reset(**kwargs)

    check_env(ForwardsResetKeywords())


def test_an_action_space_built_anew_by_a_property_passes() -> None:
    class ActionSpaceProperty(Deterministic):
        @property
        def action_space(self):  # a new space object (and generator) on every access
            return sekai.Discrete(3)

        @action_space.setter
        def action_space(self, space):
            pass

    check_env(ActionSpaceProperty())  # was: "step 1 ... differs between two runs"


class ReusesObservationBuffer(WalkEnv):
    def observe(self):
        if not hasattr(self, "buffer"):
            self.buffer = np.zeros(2, np.float32)
        self.buffer[:] = self.position
        return self.buffer


class ReusesStepBuffer(ReusesObservationBuffer):
    def reset(self, *, seed=None, options=None):
        result = super().reset(seed=seed, options=options)
        return result._replace(observation=result.observation.copy())


class IgnoresSeedInABuffer(IgnoresSeed, ReusesObservationBuffer):
    pass


class CloseTwiceFails(WalkEnv):
    def close(self) -> None:
        if self.close_calls:
            raise RuntimeError("already closed")
        super().close()


class CloseFails(WalkEnv):
    def close(self) -> None:
        raise RuntimeError("socket already gone")


@pytest.mark.parametrize(
    ("env_type", "problem"),
    [
        (GymnasiumSpace, "env.observation_space must be a sekai space"),
        (NoActionSpace, "env.action_space must be a sekai space"),
        (ResetReturnsTuple, r"reset\(\) must return sekai.ResetResult"),
        (StepReturnsTuple, r"step\(\) must return sekai.StepResult"),
        (ObservationOutsideSpace, r"reset\(\) returned an observation outside observation_space"),
        (StepObservationOutsideSpace, r"step\(\) returned an observation outside"),
        (BoolReward, "reward True of type bool"),
        (ArrayReward, "rewards must be real numbers"),
        (NanReward, "non-finite reward nan"),
        (IntTerminated, "terminated=0 of type int"),
        (ListInfo, r"step\(\) returned info of type list"),
        (ResetWithoutSeed, "must accept the keyword arguments seed and options"),
        (IgnoresSeed, r"first observation after reset\(seed=123\) differs between two runs"),
        (IgnoresSeedInABuffer, r"first observation after reset\(seed=123\) differs"),
        (UnseededStep, r"step 1 after reset\(seed=123\) differs between two runs"),
        (ReseedsOnNone, r"after reset\(\), following reset\(seed=123\), differs between two"),
        (RestartsOnNone, r"reset\(\) after reset\(seed=123\) replayed the seeded episode"),
        (StepOnlyRestartsOnNone, "replayed the seeded episode"),
        (ReusesObservationBuffer, r"observation returned by reset\(\) changed"),
        (ReusesStepBuffer, r"observation returned by step\(\) changed"),
        (CloseTwiceFails, r"calling close\(\) a second time raised RuntimeError"),
        (CloseFails, r"calling close\(\) raised RuntimeError: socket already gone"),
    ],
)
def test_each_broken_rule_is_named(env_type: type[sekai.Env], problem: str) -> None:
    with pytest.raises(EnvCheckError, match=problem):
        check_env(env_type())


def test_check_errors_are_assertion_errors() -> None:
    assert issubclass(EnvCheckError, AssertionError)


# -- soft problems warn --------------------------------------------------------------------------


class Float64Observations(WalkEnv):
    def observe(self):
        return self.position.copy()


class ListObservations(WalkEnv):
    def observe(self):
        return [float(x) for x in self.position]


class NeverSeeds(WalkEnv):
    """Deterministic, so nothing breaks, but reset() never calls _set_rng."""

    def reset(self, *, seed=None, options=None):
        self.position, self.t = np.zeros(2), 0
        return sekai.ResetResult(self.observe(), {})

    def step(self, action):
        self.position = self.position + (int(action) - 1)
        self.t += 1
        return sekai.StepResult(self.observe(), 0.0, False, False, {})


class SeedsItsOwnGenerator(NeverSeeds):
    """Seeds the first time only, so self.rng does not restart on the next reset(seed=...)."""

    def reset(self, *, seed=None, options=None):
        if self._rng is None:
            self._set_rng(seed)
        self.rng.random()
        return super().reset(seed=seed, options=options)


@pytest.mark.parametrize(
    ("env_type", "problem"),
    [
        (Float64Observations, "observation of dtype float64, but the observation space has dtype"),
        (ListObservations, r"observation as a list, not a NumPy array: return np.asarray"),
        (NeverSeeds, r"reset\(seed=...\) did not seed self.rng"),
        (SeedsItsOwnGenerator, "self.rng is in different states"),
    ],
)
def test_soft_problems_warn_once_and_only_when_asked(env_type: type, problem: str) -> None:
    with pytest.warns(EnvCheckWarning, match=problem) as record:
        check_env(env_type())
    assert len(record) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env_type(), warn=False)


def test_dtypes_are_checked_inside_dict_observations() -> None:
    class DictWalk(WalkEnv):
        def __init__(self) -> None:
            super().__init__()
            self.observation_space = sekai.Dict(
                {"walk": sekai.Tuple([sekai.Box(-np.inf, np.inf, shape=(2,))])}
            )

        def observe(self):
            return {"walk": (self.position.copy(),)}

    with pytest.warns(EnvCheckWarning, match=r"observation\['walk'\]\[0\] of dtype float64"):
        check_env(DictWalk())


# -- action masks --------------------------------------------------------------------------------


class MaskedWalk(WalkEnv):
    """Only actions 0 and 2 are allowed, and stepping with 1 is an error."""

    def action_mask(self):
        return np.array([1, 0, 1], np.int8)

    def step(self, action):
        if action == 1:
            raise ValueError("action 1 is masked out")
        return super().step(action)


class WrongMaskShape(MaskedWalk):
    def action_mask(self):
        return np.array([1, 0], np.int8)


class EmptyMask(MaskedWalk):
    def action_mask(self):
        return np.zeros(3, np.int8)


class IgnoresMasks(sekai.Discrete):
    def sample(self, mask=None):
        return 7


class MaskIgnoringSpace(MaskedWalk):
    def __init__(self) -> None:
        super().__init__()
        self.action_space = IgnoresMasks(3)


def test_actions_are_drawn_with_the_mask() -> None:
    check_env(MaskedWalk())  # would step with the forbidden action without the mask


@pytest.mark.parametrize(
    ("env_type", "problem"),
    [
        (WrongMaskShape, r"action_mask\(\) returned array\(\[1, 0\].*rejects \(ValueError"),
        (EmptyMask, r"action_mask\(\) returned .* which action_space.sample\(mask=...\) rejects"),
        (MaskIgnoringSpace, r"action 7, sampled from action_space with the mask"),
    ],
)
def test_bad_action_masks_are_named(env_type: type, problem: str) -> None:
    with pytest.raises(EnvCheckError, match=problem):
        check_env(env_type())


# -- what check_env accepts ----------------------------------------------------------------------


def test_checks_go_through_wrappers() -> None:
    class SharedBuffer(sekai.ObservationWrapper):
        def observation(self, observation):
            if not hasattr(self, "buffer"):
                self.buffer = np.zeros(2, np.float32)
            self.buffer[:] = observation
            return self.buffer

    check_env(sekai.TimeLimit(WalkEnv(), max_episode_steps=5))
    with pytest.raises(EnvCheckError, match="changed during the next call"):
        check_env(SharedBuffer(WalkEnv()))


def test_learning_wrappers_pass_once_frozen() -> None:
    with pytest.raises(EnvCheckError, match="differs between two runs"):
        check_env(sekai.NormalizeObservation(WalkEnv()))
    frozen = sekai.NormalizeObservation(WalkEnv())
    frozen.update_running_mean = False
    check_env(frozen)


def test_multi_agent_envs_and_other_objects_are_type_errors() -> None:
    with pytest.raises(TypeError, match="MultiAgentEnv"):
        check_env(sekai.MultiAgentEnv())
    with pytest.raises(TypeError, match=r"expects a sekai\.Env, got CartPoleEnv"):
        check_env(gymnasium.make("CartPole-v1").unwrapped)


def test_render_check_runs_only_when_asked() -> None:
    class Renders(WalkEnv):
        render_mode = "human"

        def render(self):
            raise AssertionError("render() should not be called")

    check_env(Renders())
    with pytest.raises(EnvCheckError, match=r"render_mode 'human' is not in metadata"):
        check_env(Renders(), skip_render_check=False)
    Renders.metadata = {"render_modes": ["human"]}
    with pytest.raises(AssertionError, match="should not be called"):
        check_env(Renders(), skip_render_check=False)


@pytest.mark.parametrize("wrapper", [sekai.NormalizeObservation, sekai.NormalizeReward])
def test_a_learning_normalizer_gets_the_advice_to_freeze_it(wrapper: Any) -> None:
    env = sekai.ClipReward(wrapper(sekai.make("CartPole-v1")), -10.0, 10.0)
    name = wrapper.__name__
    with pytest.raises(EnvCheckError, match=f"update_running_mean = False on the {name}") as caught:
        check_env(env, warn=False)
    assert "_set_rng" not in str(caught.value)
    frozen = wrapper(sekai.make("CartPole-v1"))
    frozen.update_running_mean = False
    check_env(frozen, warn=False)
