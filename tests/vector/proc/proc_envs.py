"""Small envs for the ProcVecEnv tests; importable by the worker processes (light imports only)."""

from __future__ import annotations

import os
import signal
import socket
import threading
from typing import Any

import numpy as np

import sekai
from sekai.spaces import Box, Dict, Discrete, MaskedBox, Sequence, Tuple

INTERRUPT = 2  # CounterEnv action: send SIGINT to the pid given at construction
KILL = 9  # CounterEnv action: SIGKILL its own process


class CounterEnv(sekai.Env):
    """Counts steps; observations and episode ends are drawn from the env's seeded rng."""

    def __init__(self, parent_pid: int | None = None) -> None:
        self.observation_space = Box(-np.inf, np.inf, shape=(3,))
        self.action_space = Discrete(2)  # INTERRUPT and KILL are test hooks outside the space
        self.parent_pid = parent_pid
        self.pid = os.getpid()
        self.count = 0
        self.closed = False

    def _observation(self) -> np.ndarray:
        noise = self.rng.normal(size=2)
        return np.array([self.count, *noise], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._set_rng(seed)
        self.count = (options or {}).get("start", 0)
        return sekai.ResetResult(self._observation(), {"seed": seed})

    def step(self, action: Any) -> sekai.StepResult:
        if action == INTERRUPT:
            os.kill(self.parent_pid, signal.SIGINT)
        elif action == KILL:
            os.kill(os.getpid(), signal.SIGKILL)
        self.count += 1
        terminated = bool(self.rng.random() < 0.2)
        info = {"count": self.count, "action": int(action)}
        return sekai.StepResult(self._observation(), float(self.count), terminated, False, info)

    def add(self, a: int, b: int = 0) -> int:
        return self.count + a + b

    def close(self) -> None:
        self.closed = True


class FragileEnv(sekai.Env):
    """Raises ValueError on action 1 (the spec's example)."""

    def __init__(self) -> None:
        self.observation_space = Box(-1.0, 1.0, shape=(2,))
        self.action_space = Discrete(2)

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(2, np.float32), {})

    def step(self, action):
        if action == 1:
            raise ValueError("action 1 is not supported")
        return sekai.StepResult(np.zeros(2, np.float32), 0.0, False, False, {})


class FragileCounterEnv(CounterEnv):
    """A CounterEnv that raises ValueError on action 1, before counting the step."""

    def step(self, action: Any) -> sekai.StepResult:
        if action == 1:
            raise ValueError("action 1 is not supported")
        return super().step(action)


class HangingEnv(CounterEnv):
    """A step that takes 30 seconds: far longer than any test should wait for it."""

    def step(self, action: Any) -> sekai.StepResult:
        threading.Event().wait(30.0)
        return super().step(action)


class StubbornEnv(CounterEnv):
    """Ignores SIGTERM and never returns from close(): only SIGKILL stops its worker."""

    def __init__(self) -> None:
        super().__init__()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def close(self) -> None:
        threading.Event().wait()


class InterruptedCloseEnv(CounterEnv):
    """Its close() sends SIGINT to the parent pid, then never returns."""

    def close(self) -> None:
        os.kill(self.parent_pid, signal.SIGINT)
        threading.Event().wait()


class FailingCloseEnv(CounterEnv):
    def close(self) -> None:
        raise RuntimeError(f"cannot close sub-env in pid {self.pid}")


class CompositeEnv(sekai.Env):
    """A Dict observation with a Box, a Discrete, a MaskedBox and a Tuple inside."""

    def __init__(self) -> None:
        self.observation_space = Dict(
            prices=Box(-np.inf, np.inf, shape=(2, 3)),
            regime=Discrete(3),
            book=MaskedBox(-1.0, 1.0, shape=(2,), max_size=4),
            pair=Tuple([Discrete(2), Box(0, 255, shape=(2,), dtype=np.uint8)]),
        )
        self.action_space = Discrete(2)

    def _observation(self) -> dict[str, Any]:
        rng = self.rng
        return {
            "prices": rng.normal(size=(2, 3)).astype(np.float32),
            "regime": rng.integers(3),
            "book": {
                "values": rng.uniform(-1, 1, size=(4, 2)).astype(np.float32),
                "mask": rng.integers(0, 2, size=4).astype(np.int8),
            },
            "pair": (rng.integers(2), rng.integers(0, 256, size=2).astype(np.uint8)),
        }

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        return sekai.ResetResult(self._observation(), {})

    def step(self, action):
        return sekai.StepResult(self._observation(), 1.0, False, False, {})


class SequenceEnv(CounterEnv):
    """An observation of variable length, which cannot live in shared memory."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = Sequence(Box(-np.inf, np.inf, shape=(3,)))

    def _observation(self) -> tuple[np.ndarray, ...]:
        return (super()._observation(),) * (self.count % 3)


class EchoEnv(sekai.Env):
    """Returns each action it gets in its info, to compare what backends hand to sub-envs."""

    def __init__(self, action_space: Any) -> None:
        self.observation_space = Box(-1.0, 1.0, shape=(1,))
        self.action_space = action_space

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action):
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {"action": action})


GATE = 1  # GatedEnv action: wait inside step() until the test's event loop opens the gate


class GatedEnv(CounterEnv):
    """On action GATE, step() connects to the unix socket at ``path`` and waits for one byte.

    Only a coroutine of the test's event loop sends that byte, so the step finishes only if the
    loop stays free while the parent awaits it. After ``timeout`` seconds without it (the loop
    is blocked), step() raises TimeoutError instead of hanging.
    """

    def __init__(self, path: str, timeout: float = 20.0) -> None:
        super().__init__()
        self.path = path
        self.timeout = timeout

    def step(self, action: Any) -> sekai.StepResult:
        if action == GATE:
            self.wait_at_gate()
        return super().step(action)

    def wait_at_gate(self) -> None:
        with socket.socket(socket.AF_UNIX) as gate:
            gate.settimeout(self.timeout)
            gate.connect(self.path)
            try:
                opened = gate.recv(1) == b"x"
            except TimeoutError:
                raise TimeoutError(
                    "the gate was never opened: is the event loop blocked?"
                ) from None
            if not opened:
                raise ConnectionError("the gate closed without opening")


class ThreadPoolsEnv(CounterEnv):
    """A CounterEnv that reports the native thread pools of the process it runs in."""

    def thread_pools(self) -> dict[str, Any]:
        from threadpoolctl import threadpool_info

        return {
            "threads": {pool["internal_api"]: pool["num_threads"] for pool in threadpool_info()},
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        }
