"""The one check every reader makes of the path it is given: a local file, never a URL."""

from __future__ import annotations

import os
from pathlib import Path


def local_file(path: object) -> Path:
    """``path`` as a local file's Path: URLs and what is not a file are refused here, so no
    reader ever fetches or guesses."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a str or a path, got {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str):
        raise TypeError(f"path must be text, got {text!r}")
    if "://" in text:
        raise ValueError(f"{text}: not a local path (sekai's readers do not fetch URLs)")
    local = Path(text)
    if not local.exists():
        raise FileNotFoundError(f"{text}: no such file")
    if not local.is_file():
        raise ValueError(f"{text}: not a file")
    return local
