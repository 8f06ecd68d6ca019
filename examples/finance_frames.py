"""Draw the finance frames shown in docs/finance.md and save them as PNGs (needs matplotlib).

Trading-v0 trades GOOGL's daily closes with a momentum rule, dated by the CSV's dates;
Portfolio-v0 holds its five simulated assets, bought in equal weights and then left to drift.
Run from the repository: ``python examples/finance_frames.py [DATA_DIR] [OUT_DIR]``.
"""

import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import sekai
from sekai.finance import load_csv
from sekai.finance.baselines import BuyAndHold


def trading_frame(data_dir: Path) -> np.ndarray:
    bars = load_csv(data_dir / "STOCKS_GOOGL.csv")
    env = sekai.make("Trading-v0", prices=bars.close, lookback=20, render_mode="rgb_array")
    env.unwrapped._dates = bars.dates  # what data= with a date column sets
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
    data_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/data")
    out_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("docs/assets")
    plt.imsave(out_dir / "frame-trading.png", trading_frame(data_dir))
    plt.imsave(out_dir / "frame-portfolio.png", portfolio_frame())
    print(f"saved frame-trading.png and frame-portfolio.png to {out_dir}")


if __name__ == "__main__":
    main()
