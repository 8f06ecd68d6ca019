"""ProcVecEnv works whatever TMPDIR is: the forkserver's socket path stays short enough.

Each test runs its ProcVecEnvs in a subprocess whose TMPDIR is 150 characters long: the
forkserver and tempfile's choice of directory are process-wide.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
LENGTH = 150

# Prints, as JSON: the short directory while the ProcVecEnv ran, its mode, the rewards, and
# what was left once it was closed (the directory, worker processes, shared memory segments).
SCRIPT = """
import json, multiprocessing, os, sys, tempfile
from pathlib import Path

import numpy as np

from proc_envs import CounterEnv
from sekai.vector import _forkserver
from sekai.vector.errors import VecEnvWorkerError
from sekai.vector.proc import ProcVecEnv

made = []  # every directory tempfile.mkdtemp made
_mkdtemp = tempfile.mkdtemp
tempfile.mkdtemp = lambda *args, **kwargs: made.append(_mkdtemp(*args, **kwargs)) or made[-1]


def broken():
    raise RuntimeError("this factory builds no env")


def leftovers(directory):
    return {
        "directory": os.path.exists(directory),
        "children": len(multiprocessing.active_children()),
        "segments": sorted(p.name for p in Path("/dev/shm").glob(f"sekai_{os.getpid()}_*")),
    }


def one_run():
    with ProcVecEnv([CounterEnv] * 2, num_workers=2) as vec:
        directory = _forkserver._directory
        mode = oct(os.stat(directory).st_mode & 0o777)
        vec.reset(seed=0)
        rewards = vec.step([0, 1]).rewards.tolist()
    return {"directory": directory, "mode": mode, "rewards": rewards, "left": leftovers(directory)}


if __name__ == "__main__":
    report = {"first": one_run(), "second": one_run()}  # the forkserver starts again
    before = len(made)
    try:  # fails in a worker, once the forkserver runs from its directory
        ProcVecEnv([CounterEnv, broken], num_workers=2)
    except VecEnvWorkerError:
        pass
    report["failed construction"] = [leftovers(directory) for directory in made[before:]]
    print(json.dumps(report))
"""


@pytest.fixture
def long_tmpdir() -> Iterator[Path]:
    """A directory of LENGTH characters under the temp dir, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="sekai-long-") as base:
        path = Path(base)
        path = path / ("t" * max(1, LENGTH - len(str(path)) - 1))
        path.mkdir()
        assert len(str(path)) >= LENGTH  # exactly LENGTH, unless the tests' TMPDIR is longer
        yield path


def run_in(tmpdir: Path, source: str, script_dir: Path) -> subprocess.CompletedProcess[str]:
    script = script_dir / "long_tmpdir_script.py"
    script.write_text(textwrap.dedent(source))
    environment = {**os.environ, "TMPDIR": str(tmpdir)}
    environment["PYTHONPATH"] = os.pathsep.join([str(HERE), environment.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=environment, timeout=120
    )


def test_proc_vec_env_steps_and_closes_under_a_150_character_tmpdir(long_tmpdir, tmp_path):
    done = run_in(long_tmpdir, SCRIPT, tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    for run in ("first", "second"):
        assert report[run]["rewards"] == [1.0, 1.0]
        assert len(report[run]["directory"]) < 40  # e.g. /tmp/sekai-abcd1234
        assert report[run]["mode"] == "0o700"
        assert report[run]["left"] == {"directory": False, "children": 0, "segments": []}
    assert report["first"]["directory"] != report["second"]["directory"]
    # the failure path made its own directory and removed it too
    assert report["failed construction"] == [{"directory": False, "children": 0, "segments": []}]
    assert list(long_tmpdir.iterdir()) == []  # nothing left where TMPDIR points


def test_a_short_tmpdir_needs_no_directory_of_its_own(tmp_path):
    source = """
        from sekai.vector import _forkserver
        from sekai.vector.proc import ProcVecEnv
        from proc_envs import CounterEnv

        if __name__ == "__main__":
            with ProcVecEnv([CounterEnv] * 2, num_workers=2) as vec:
                print(_forkserver._directory, vec.reset(seed=0).observations.shape)
    """
    short = Path(tempfile.mkdtemp(prefix="s", dir="/tmp"))
    try:
        done = run_in(short, source, tmp_path)
    finally:
        os.rmdir(short)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "(2,", "3)"]


def test_the_directory_goes_even_when_the_parent_is_killed(long_tmpdir, tmp_path):
    source = """
        import os, signal
        from sekai.vector import _forkserver
        from sekai.vector.proc import ProcVecEnv
        from proc_envs import CounterEnv

        if __name__ == "__main__":
            vec = ProcVecEnv([CounterEnv] * 2, num_workers=2)
            print(_forkserver._directory, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)  # no close, no exit handlers
    """
    done = run_in(long_tmpdir, source, tmp_path)
    assert done.returncode == -9, done.stderr
    directory = Path(done.stdout.split()[0])
    deadline = time.monotonic() + 30  # the workers notice the dead parent, then the forkserver
    while directory.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not directory.exists()
