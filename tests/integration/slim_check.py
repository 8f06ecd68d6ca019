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

# a name of the absent sekai-vector names it and its install
for name in ["SyncVecEnv", "make_vec", "vector"]:
    try:
        getattr(sekai, name)
    except AttributeError as error:
        expected = f"sekai.{name} is provided by sekai-vector, which is not installed: pip install"
        assert f"{expected} sekai-vector" in str(error), error
    else:
        raise AssertionError(f"sekai.{name} resolved without sekai-vector installed")
namespace: dict[str, object] = {}
exec("from sekai import *", namespace)  # only the installed distributions' names
assert "Box" in namespace and "make_vec" not in namespace, sorted(namespace)

# the command line: `sekai list` needs only the core; `sekai bench` is sekai-vector's command
with contextlib.redirect_stdout(io.StringIO()) as listed:
    assert main(["list"]) == 0
assert "  CartPole-v1 " in listed.getvalue(), listed.getvalue()
with contextlib.redirect_stderr(io.StringIO()) as error:
    assert main(["bench", "CartPole-v1"]) == 2
assert "no command 'bench'" in error.getvalue(), error.getvalue()
assert "pip install sekai installs them all" in error.getvalue(), error.getvalue()

print("slim install OK: spaces, make() and a clear error for missing distributions")
