"""Draw the finance frames shown in docs/finance.md and save them as PNGs (needs matplotlib).

Trading-v0 trades GOOGL's daily bars (the dataset sekai-finance ships, dated) with a momentum
rule; Portfolio-v0 holds its five simulated assets, bought in equal weights and then left to drift.
Run from the repository: ``python examples/finance_frames.py [OUT_DIR]``.
"""

import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import sekai
from sekai.finance import datasets
from sekai.finance.baselines import BuyAndHold


def trading_frame() -> np.ndarray:
    env = sekai.make(
        "Trading-v0", data=datasets.load("GOOGL"), lookback=20, render_mode="rgb_array"
    )
    observation, _ = env.reset(options={"start": 1800})
    for _ in range(180):
        momentum = observation[:20].sum()  # the log return over the last 20 bars
        observation = env.step(int(momentum > 0)).observation
    return env.render()


def portfolio_frame() -> np.ndarray:
    env = sekai.make("Portfolio-v0", render_mode="rgb_array")
    policy = BuyAndHold(env.action_space)
    observation, _ = env.reset(seed=3)
    for _ in range(180):
        observation = env.step(policy(observation[None])[0]).observation
    return env.render()


def main() -> None:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/assets")
    plt.imsave(out_dir / "frame-trading.png", trading_frame())
    plt.imsave(out_dir / "frame-portfolio.png", portfolio_frame())
    print(f"saved frame-trading.png and frame-portfolio.png to {out_dir}")


if __name__ == "__main__":
    main()
