"""The price path of a large agent sell in LobsterReplay-v0, with impact off and on.

    python benchmarks/replay_impact.py [--out docs/assets]

The default day (an hour of Cont-Stoikov-Talreja flow); from the same start, the agent
sells 40 lots at market every 0.2 s for 6 s, then waits 6 s. Without impact the book it
sees is the replayed day's: its sells take the levels' lots without removing them, and the
mid is the day's. With impact the bids it sold into are gone from its window, real sells
walk further down the bids, and the mid falls until the flow refills the book. Writes
``replay_impact.png`` into ``--out`` (needs matplotlib, the ``plot`` extra) and prints the
mids.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from sekai.envs.finance.lobster_replay import LobsterReplayEnv

STEP, SELLING, WAITING, LOTS, START = 0.2, 30, 30, 40, 3000


def mid_path(impact: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seconds from the start, and after each step the mid and the lots sold so far."""
    env = LobsterReplayEnv(
        step_seconds=STEP,
        episode_steps=SELLING + WAITING,
        order_size=LOTS,
        max_inventory=SELLING * LOTS,
        impact=impact,
    )
    env.reset(options={"start": START})
    model = env.unwrapped.model
    mids, sold = [model.mid[0]], [0]
    for step in range(SELLING + WAITING):
        action = [0, 0, 2] if step < SELLING else [0, 0, 0]  # sell at market, then wait
        mids.append(env.step(action).info["mid_price"])
        sold.append(-int(model.inventory[0, 0]))
    seconds = np.arange(len(mids)) * STEP
    return seconds, np.array(mids), np.array(sold)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/assets"))
    args = parser.parse_args()
    paths = {impact: mid_path(impact) for impact in (False, True)}
    for impact, (_, mids, sold) in paths.items():
        label = "on " if impact else "off"
        print(f"impact {label}: sold {sold[-1]} lots, mid {mids[0]:.3f} -> lowest {mids.min():.3f}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (price, lots) = plt.subplots(
        2, 1, figsize=(7, 5), dpi=120, sharex=True, height_ratios=(2, 1)
    )
    for impact, (seconds, mids, sold) in paths.items():
        label = "impact=True" if impact else "impact=False (virtual orders)"
        color = "C3" if impact else "C0"
        price.step(seconds, mids, where="post", label=label, color=color)
        lots.step(seconds, sold, where="post", color=color)
    for axes in (price, lots):
        axes.axvspan(0, SELLING * STEP, color="0.92")
    price.set_ylabel("mid price ($)")
    price.set_title(
        f"LobsterReplay-v0, default day: selling {LOTS} lots at market every {STEP:g} s"
    )
    price.legend(loc="lower right", fontsize=8)
    lots.set_ylabel("lots sold")
    lots.set_xlabel("seconds from the start of the episode (grey: selling)")
    figure.tight_layout()
    args.out.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.out / "replay_impact.png")
    print(f"wrote {args.out / 'replay_impact.png'}")


if __name__ == "__main__":
    main()
