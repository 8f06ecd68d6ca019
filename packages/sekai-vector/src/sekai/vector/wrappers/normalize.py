"""VecNormalizeObservation and VecNormalizeReward: statistics shared across sub-envs.

They reuse the single-env wrappers' statistics objects (``ObservationNormalizer``,
``RunningMeanStd``), which take batches with a leading axis: one sample per sub-env per step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.vector.base import OptionsArg, SeedArg, VecEnv
from sekai.vector.results import VecStepResult
from sekai.vector.wrappers.base import VecObservationWrapper, VecWrapper
from sekai.wrappers import ObservationNormalizer, RunningMeanStd


class VecNormalizeObservation(VecObservationWrapper):
    """Normalise every Box part of the observations with statistics over all sub-envs.

    The options are those of ``NormalizeObservation``; the statistics live in
    ``obs_rms`` (``state_dict()`` / ``load_state_dict()``), frozen by
    ``update_running_mean = False``. Terminal observations in ``infos[i]["final_observation"]``
    are normalised with the current statistics without updating them. With ``stats="ewm"``
    each step adds ``num_envs`` samples, so scale ``halflife`` accordingly.
    """

    def __init__(
        self,
        venv: VecEnv,
        epsilon: float = 1e-8,
        *,
        stats: str = "running",
        halflife: float = 1000.0,
        clip: float | None = None,
    ) -> None:
        super().__init__(venv)
        self.obs_rms = ObservationNormalizer(
            venv.observation_space, epsilon=epsilon, stats=stats, halflife=halflife, clip=clip
        )
        self.observation_space = self.obs_rms.observation_space
        self.update_running_mean = True

    def observation(self, batch: Any) -> Any:
        if self.update_running_mean:
            self.obs_rms.update(batch)
        return self.obs_rms.normalize(batch)

    def final_observation(self, observation: Any) -> Any:
        return self.obs_rms.first(self.obs_rms.normalize(self.obs_rms.batch_of_one(observation)))


class VecNormalizeReward(VecWrapper):
    """Divide rewards by the running std of each sub-env's discounted return.

    One ``return_rms`` is shared by all sub-envs; each sub-env's discounted return restarts with
    its episodes. Freeze the statistics with ``update_running_mean = False``.
    """

    def __init__(self, venv: VecEnv, gamma: float = 0.99, epsilon: float = 1e-8) -> None:
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {gamma}")
        super().__init__(venv)
        self.gamma = gamma
        self.epsilon = epsilon
        self.return_rms = RunningMeanStd((), epsilon, prior_weight=1.0)
        self.discounted_returns = np.zeros(self.num_envs, dtype=np.float64)
        self.update_running_mean = True

    def before_reset(self, seed: SeedArg, options: OptionsArg) -> None:
        self.discounted_returns[:] = 0.0

    def after_step(self, result: VecStepResult) -> VecStepResult:
        self.discounted_returns = self.discounted_returns * self.gamma + result.rewards
        if self.update_running_mean:
            self.return_rms.update(self.discounted_returns)
        self.discounted_returns[result.dones] = 0.0
        scaled = result.rewards / np.sqrt(self.return_rms.var + self.epsilon)
        return result._replace(rewards=scaled)
