"""Any supported order-level file as order events, its format told by its name: what the
replay env and ``sekai data convert`` read when given a path.

- ``*.dbn``, ``*.dbn.zst``: Databento DBN, MBO schema (``databento.read_dbn``);
- a name with ``ITCH`` in it (``12302019.NASDAQ_ITCH50.gz``): NASDAQ TotalView-ITCH 5.0
  (``itch.read_itch``);
- ``*.csv``, also compressed (``.gz``, ``.bz2``, ``.xz``, ``.zip``): a LOBSTER message file
  (``lobster.read_messages``, then ``lobster.to_events``).
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path
from typing import Any, Literal

from numpy.typing import NDArray

Format = Literal["dbn", "itch", "lobster"]
FORMATS: tuple[Format, ...] = ("dbn", "itch", "lobster")
_COMPRESSED = (".gz", ".bz2", ".xz", ".zip")


def format_of(path: str | os.PathLike[str]) -> Format:
    """The format of the file at ``path``, by its name; a ValueError naming the names known."""
    name = Path(os.fspath(path)).name.lower()
    if name.endswith((".dbn", ".dbn.zst")):
        return "dbn"
    if "itch" in name:
        return "itch"
    plain = next((name[: -len(s)] for s in _COMPRESSED if name.endswith(s)), name)
    if plain.endswith(".csv"):
        return "lobster"
    raise ValueError(
        f"{os.fspath(path)}: cannot tell the format from the name: expected *.dbn or *.dbn.zst "
        "(Databento MBO), a name with ITCH in it (NASDAQ ITCH 5.0) or *.csv (a LOBSTER "
        "message file)"
    )


def read_events(
    path: str | os.PathLike[str],
    *,
    symbol: str | None = None,
    date: datetime.date | str | None = None,
) -> NDArray[Any]:
    """The order events (``events.EVENT_DTYPE``) of the file at ``path``, read by the reader
    of its format (``format_of``). ``symbol`` chooses the instrument of a file that holds
    several: required for ITCH, optional for DBN (as ``read_dbn`` takes it), and for LOBSTER
    checked against the file name's (``AAPL_2012-06-21_...``). ``date`` dates ITCH and LOBSTER
    times, which count from midnight, where the file name gives no date."""
    kind = format_of(path)
    if symbol is not None and not isinstance(symbol, str):
        raise TypeError(f"symbol must be a str, got {type(symbol).__name__}")
    if kind == "dbn":
        if date is not None:
            raise ValueError("date: a DBN file's times are dated already; give no date")
        from sekai.finance.lob.databento import read_dbn

        return read_dbn(path, symbol=symbol)
    if kind == "itch":
        if symbol is None:
            raise ValueError(f"{os.fspath(path)}: an ITCH file holds every stock: give symbol=")
        from sekai.finance.lob.itch import read_itch

        return read_itch(path, symbol, date=date)
    from sekai.finance.lob.lobster import date_of, read_messages, to_events

    named = re.match(r"([^_]+)_\d{4}-\d{2}-\d{2}_", Path(os.fspath(path)).name)
    if symbol is not None and named is not None and named.group(1) != symbol:
        raise ValueError(
            f"{os.fspath(path)}: a LOBSTER file of {named.group(1)}, not of symbol {symbol!r}"
        )
    return to_events(read_messages(path), date=date if date is not None else date_of(path))
