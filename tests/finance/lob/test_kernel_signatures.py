"""The replay's and the LOB's compiled kernels compile once: one signature each, whatever
drives them (one window or a batch, one day or several, one agent or several, the replay's
views or the simulated books'). Each extra signature is a whole compile again, up to tens of
seconds for the window kernels, on a user's first step and in every fresh environment.

Run in a fresh process, so that the signatures counted are those of the envs below alone.
(Kernels the cache holds load without compiling their callees, so a callee's signatures are
not counted: ``_window`` compiles once because the parallel loops cast prange's index.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SCRIPT = """
import json
import numpy as np
import sekai
from sekai.envs.finance import LimitOrderBookMarket
from sekai.envs.finance.lobster_replay_market import LobsterReplayMarket
from sekai.finance.lob import _replay_view, _replay_windows, _trader_rows
from sekai.finance.lob.replay_model import synthetic_day

day = synthetic_day()
for messages in (day, [day, day]):  # one day's tape, and two days joined
    env = sekai.make("LobsterReplay-v0", messages=messages, episode_steps=5)  # one window
    env.reset(seed=0)
    env.unwrapped.action_mask()
    env.step(np.zeros(3, np.int64))
    vec = sekai.make_vec("LobsterReplay-v0", 64, messages=messages, episode_steps=5)  # a batch
    vec.reset(seed=0)
    vec.step(np.zeros((64, 3), np.int64))
market = LobsterReplayMarket(2, messages=day, episode_steps=5)  # two agents per window
observations, _ = market.reset(seed=0)
market.action_mask("agent_0")
market.step({agent: np.zeros(3, np.int64) for agent in observations})
book = LimitOrderBookMarket(2)  # the simulated books' views
observations, _ = book.reset(seed=0)
book.action_mask("trader_0")
book.step({agent: np.zeros(3, np.int64) for agent in observations})
kernels = {
    "serial": _replay_windows._serial,
    "parallel": _replay_windows._parallel,
    "decide": _trader_rows.decide,
    "masks": _trader_rows.masks,
    "observe": _replay_view.observe,
    "observe_parallel": _replay_view.observe_parallel,
}
print(json.dumps({name: len(kernel.signatures) for name, kernel in kernels.items()}))
"""


@pytest.mark.needs("sekai-vector")  # make_vec
def test_each_kernel_compiles_one_signature() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr
    signatures = json.loads(done.stdout.splitlines()[-1])
    assert signatures == dict.fromkeys(signatures, 1)
