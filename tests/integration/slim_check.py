"""Run in a venv holding only the sekai-core wheel (nox -s slim): the core works on its own."""

import contextlib
import io

import numpy as np

import sekai
from sekai.cli import main

space = sekai.Box(0.0, 1.0, shape=(3,), seed=0)
assert space.sample() in space
assert sekai.spaces.flatdim(sekai.Dict(a=sekai.Discrete(3), b=space)) == 6

env = sekai.make("CartPole-v1")
result = env.reset(seed=0)
assert result.observation in env.observation_space
result = env.step(np.int64(1))
assert result.info["elapsed_steps"] == 1
env.close()

for name, distribution in [("SyncVecEnv", "sekai-vector"), ("make_vec", "sekai-vector")]:
    try:
        getattr(sekai, name)
    except ModuleNotFoundError as error:
        assert distribution in str(error) and "pip install" in str(error), error
    else:
        raise AssertionError(f"sekai.{name} resolved without {distribution} installed")
namespace: dict[str, object] = {}
exec("from sekai import *", namespace)  # only the installed distributions' names
assert "Box" in namespace and "make_vec" not in namespace, sorted(namespace)

# the command line: `sekai list` needs only the core; `sekai bench` names what to install
with contextlib.redirect_stdout(io.StringIO()) as listed:
    assert main(["list"]) == 0
assert "  CartPole-v1 " in listed.getvalue(), listed.getvalue()
with contextlib.redirect_stderr(io.StringIO()) as error:
    assert main(["bench", "CartPole-v1"]) == 2
assert "pip install sekai-vector" in error.getvalue(), error.getvalue()

print("slim install OK: spaces, make() and a clear error for missing distributions")
