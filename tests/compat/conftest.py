"""The compat tests reuse the space strategies of tests/core/spaces and the envs of tests/vector."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
for folder in ("core/spaces", "vector"):
    if str(TESTS / folder) not in sys.path:
        sys.path.append(str(TESTS / folder))
