"""The version of every sekai distribution, bumped together by `nox -s bump -- X.Y.Z`."""

__version__ = "0.1.0"
