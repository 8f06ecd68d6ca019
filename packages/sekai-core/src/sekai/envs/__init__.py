"""Built-in environments; each distribution adds its own subpackage (``sekai.envs.finance``)."""

from sekai import _extend_path

_extend_path(__path__, "sekai", "envs")
