"""Real market data shipped with sekai-finance, for examples, tests and a first experiment.

>>> from sekai.finance import datasets
>>> datasets.names()
('EURUSD', 'GOOGL')
>>> prices = datasets.load("GOOGL").close

- ``GOOGL``: Alphabet daily bars, 2009-05-22 to 2018-08-29, 2,335 rows (open, high, low,
  close, volume).
- ``EURUSD``: EUR/USD hourly ask bars of 2017, 6,225 rows (open, high, low, close, volume).

Both files come from gym-anytrading (MIT licence; its notice ships beside them as
``LICENSE-gym-anytrading.txt``).
"""

from __future__ import annotations

import functools
from pathlib import Path

from sekai.finance.data import Bars, load_csv

__all__ = ["load", "names", "path"]

_FILES = {"EURUSD": "FOREX_EURUSD_1H_ASK.csv", "GOOGL": "STOCKS_GOOGL.csv"}
_FOLDER = Path(__file__).parent / "_data"


def names() -> tuple[str, ...]:
    """The datasets' names, for ``load`` (case-insensitive there)."""
    return tuple(sorted(_FILES))


def path(name: str) -> Path:
    """The CSV file of dataset ``name``: for ``data=``, or to read it with another tool."""
    if not isinstance(name, str) or name.strip().upper() not in _FILES:
        raise ValueError(f"no dataset {name!r}; the datasets are {', '.join(names())}")
    return _FOLDER / _FILES[name.strip().upper()]


def load(name: str) -> Bars:
    """Dataset ``name`` (case-insensitive, one of ``names()``) as ``Bars``, read once."""
    return _load(path(name))


@functools.cache
def _load(file: Path) -> Bars:
    return load_csv(file)
