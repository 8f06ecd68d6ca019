"""Spaces: the sets of valid observations and actions, and the utilities that batch them.

One space per module; the operations across spaces (flattening, batching, zero samples) are
``functools.singledispatch`` functions in ``sekai.spaces.utils``, so a custom space opts in by
registering implementations.
"""

from sekai.spaces import utils
from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.discrete import Discrete
from sekai.spaces.masked_box import MaskedBox
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete
from sekai.spaces.sequence import Sequence
from sekai.spaces.space import Space, register_space_type, space_from_jsonable
from sekai.spaces.tuple import Tuple
from sekai.spaces.utils import (
    batch_space,
    concatenate,
    flatdim,
    flatten,
    flatten_space,
    iterate,
    unflatten,
    zero_sample,
)

__all__ = [
    "Box",
    "Dict",
    "Discrete",
    "MaskedBox",
    "MultiBinary",
    "MultiDiscrete",
    "Sequence",
    "Space",
    "Tuple",
    "batch_space",
    "concatenate",
    "flatdim",
    "flatten",
    "flatten_space",
    "iterate",
    "register_space_type",
    "space_from_jsonable",
    "unflatten",
    "utils",
    "zero_sample",
]
