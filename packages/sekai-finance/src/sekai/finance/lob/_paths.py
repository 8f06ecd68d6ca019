"""The check every reader (and the store) makes of the path it is given: local, never a URL."""

from __future__ import annotations

import os
from pathlib import Path


def local_name(path: object, what: str, why: str) -> str:
    """``path``'s text (``path`` named ``what`` in errors), refused if it is not path-like
    text or is a URL (``why`` says why a URL is not taken)."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"{what} must be a str or a path, got {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str):
        raise TypeError(f"{what} must be text, got {text!r}")
    if "://" in text:
        raise ValueError(f"{text}: not a local path ({why})")
    return text


def local_file(path: object) -> Path:
    """``path`` as a local file's Path: URLs and what is not a file are refused here, so no
    reader ever fetches or guesses."""
    text = local_name(path, "path", "sekai's readers do not fetch URLs")
    local = Path(text)
    if not local.exists():
        raise FileNotFoundError(f"{text}: no such file")
    if not local.is_file():
        raise ValueError(f"{text}: not a file")
    return local
