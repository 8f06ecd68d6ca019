"""A first tour of sekai: build spaces, make an env, run one episode and say what happened."""

import numpy as np

import sekai
from sekai.spaces import flatdim, flatten


def main() -> None:
    # Spaces describe observations and actions; each owns its own seeded generator.
    observation = sekai.Dict(
        {"returns": sekai.Box(-np.inf, np.inf, shape=(5,)), "regime": sekai.Discrete(3)}, seed=0
    )
    sample = observation.sample()
    print(f"space      {observation}")
    print(f"flattened  {flatdim(observation)} floats: {np.round(flatten(observation, sample), 3)}")

    # Envs come from the registry; make() adds the registered time limit.
    env = sekai.make("CartPole-v1")
    env.action_space.seed(0)
    result = env.reset(seed=0)
    total, steps = 0.0, 0
    while not result.done:
        result = env.step(env.action_space.sample())
        total += result.reward
        steps += 1
    ended = "terminated" if result.terminated else "truncated"
    print(f"episode    {env.spec.id}: {steps} random steps, return {total:.0f}, {ended}")
    env.close()

    # Markets on real data shipped with sekai-finance, by name; the dates reach every info.
    from sekai.finance import datasets

    market = sekai.make("Trading-v0", data=datasets.load("GOOGL"), episode_length=63)
    result = market.reset(seed=0)
    first = result.info["date"]
    while not result.done:
        result = market.step(1)  # long every bar: buy and hold
    period = f"{first:%Y-%m-%d} to {result.info['date']:%Y-%m-%d}"
    print(f"episode    GOOGL long {period}: return {result.info['episode_return']:+.1%}")


if __name__ == "__main__":
    main()
