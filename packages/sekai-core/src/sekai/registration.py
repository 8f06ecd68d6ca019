"""The env registry: ids -> ``EnvSpec``, filled by plugins and by ``register``.

The registry also holds the vectorization modes that plugins register (name -> vector env class,
as ``VectorizationMode``), which ``make_vec`` looks up by name.

Plugins are modules named by entry points in the ``sekai.plugins`` group; each implements hooks
of ``sekai.hookspecs`` (``sekai_register_envs``, ``sekai_register_vectorization_modes``).
They are loaded the first time the registry is used (``make``, ``spec``,
``register``, reading ``registry``, ``sekai list``, ``make_vec``), never at
``import sekai``, so importing sekai stays cheap and a broken third-party plugin only costs a
warning.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import importlib
import importlib.metadata
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import pluggy

from sekai import hookspecs
from sekai._warnings import warn
from sekai.checks import check_positive_int

__all__ = [
    "EnvSpec",
    "PluginWarning",
    "RESERVED_MODES",
    "Registry",
    "UnknownEnvError",
    "VectorizationMode",
    "load_entry_point",
    "make",
    "register",
    "registry",
    "spec",
]

PLUGIN_GROUP = "sekai.plugins"

EntryPoint = Callable[..., Any] | str
"""A callable that builds the env, or ``"module:Attr"`` naming one (imported when first made)."""

_ID_FORM = "[namespace/]Name[-vN], e.g. 'CartPole-v1' or 'demo/Drift-v0'"
_ID_PATTERN = re.compile(
    r"(?:(?P<namespace>[A-Za-z0-9_][\w.-]*)/)?(?P<name>[A-Za-z0-9_][\w.-]*?)(?:-v(?P<version>\d+))?",
    re.ASCII,
)
_MODE_PATTERN = re.compile(r"[A-Za-z0-9][\w-]*", re.ASCII)
RESERVED_MODES = frozenset({"native", "vector_entry_point"})
"""Vectorization mode names that mean an env's own ``vector_entry_point``, not a plugin's mode."""
_ENTRY_POINT_PATTERN = re.compile(
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
)

# distribution -> names of the envs it registers, for the "pip install ..." hint on unknown ids
_OPTIONAL_ENVS = {
    "sekai-finance": frozenset({"Trading", "Portfolio", "MarketMaking", "OptimalExecution"}),
}


class UnknownEnvError(KeyError, ValueError):
    """No env is registered under the requested id.

    A ``KeyError`` because the registry is a mapping (``registry.get(id)`` works), and a
    ``ValueError`` because an unknown id is a bad argument to ``make``.
    """

    def __str__(self) -> str:
        return str(self.args[0])


class PluginWarning(UserWarning):
    """A ``sekai.plugins`` entry point failed to load or to register its envs."""


@dataclasses.dataclass(frozen=True, repr=False)
class EnvSpec:
    """How to build one registered env.

    ``kwargs`` are the env's default keyword arguments; the spec that ``make`` puts on
    ``env.spec`` also holds the caller's overrides. ``distribution`` names the package whose
    plugin registered the id (None for ``register`` calls). The repr shows the id and the
    time limit only, so printing ``env.spec`` stays short.
    """

    id: str
    entry_point: EntryPoint
    vector_entry_point: EntryPoint | None = None
    max_episode_steps: int | None = None
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict, hash=False)
    distribution: str | None = None

    def __post_init__(self) -> None:
        _parse_id(self.id)
        _check_entry_point(self.entry_point, "entry_point", self.id)
        if self.vector_entry_point is not None:
            _check_entry_point(self.vector_entry_point, "vector_entry_point", self.id)
        _check_max_episode_steps(self.max_episode_steps, self.id)
        if self.max_episode_steps is not None:  # a NumPy integer is stored as a plain int
            object.__setattr__(self, "max_episode_steps", int(self.max_episode_steps))
        object.__setattr__(self, "kwargs", _kwargs_dict(self.kwargs, self.id))

    @property
    def namespace(self) -> str | None:
        """The part of the id before ``/``, or None."""
        return _parse_id(self.id)[0]

    @property
    def name(self) -> str:
        """The id without namespace and version."""
        return _parse_id(self.id)[1]

    @property
    def version(self) -> int | None:
        """The N of ``-vN``, or None for an unversioned id."""
        return _parse_id(self.id)[2]

    def make(self, *, max_episode_steps: int | None = None, **kwargs: Any) -> Any:
        """Build this env; see ``make``."""
        return make(self, max_episode_steps=max_episode_steps, **kwargs)

    def __repr__(self) -> str:
        fields = f"id={self.id!r}"
        if self.max_episode_steps is not None:
            fields += f", max_episode_steps={self.max_episode_steps!r}"
        return f"EnvSpec({fields})"


@dataclasses.dataclass(frozen=True)
class VectorizationMode:
    """A vectorization mode a plugin registered: ``make_vec(..., vectorization_mode=name)``
    builds ``entry_point`` (a ``"module:Class"`` string naming a VecEnv class) from the sub-env
    factories. ``distribution`` names the package whose plugin registered it."""

    name: str
    entry_point: str
    distribution: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _MODE_PATTERN.fullmatch(self.name):
            raise ValueError(
                f"a vectorization mode name must be a str of ASCII letters, digits, '_' and '-', "
                f"got {self.name!r}"
            )
        if self.name in RESERVED_MODES:
            raise ValueError(
                f"the vectorization mode name {self.name!r} is reserved for envs' own vector "
                "entry points; choose another name"
            )
        if not isinstance(self.entry_point, str) or not _ENTRY_POINT_PATTERN.fullmatch(
            self.entry_point
        ):
            raise ValueError(
                f"the entry point of vectorization mode {self.name!r} must be a "
                f"'package.module:Class' string, got {self.entry_point!r}"
            )


def _parse_id(env_id: str) -> tuple[str | None, str, int | None]:
    """Split an id into (namespace, name, version); ValueError names a malformed id."""
    _check_id_type(env_id)
    return _parse_str_id(env_id)


def _check_id_type(env_id: object) -> None:
    if not isinstance(env_id, str):
        raise TypeError(f"an env id must be a str of the form {_ID_FORM}, got {env_id!r}")


@functools.cache
def _parse_str_id(env_id: str) -> tuple[str | None, str, int | None]:
    match = _ID_PATTERN.fullmatch(env_id)
    if match is None:
        raise ValueError(
            f"malformed env id {env_id!r}: ids have the form {_ID_FORM}, made of ASCII "
            "letters, digits, '_', '.' and '-'"
        )
    version = match["version"]
    return match["namespace"], match["name"], None if version is None else int(version)


def _check_entry_point(entry_point: object, field: str, env_id: str) -> None:
    if isinstance(entry_point, str):
        if not _ENTRY_POINT_PATTERN.fullmatch(entry_point):
            raise ValueError(
                f"{field} of {env_id!r} is {entry_point!r}; a string entry point has the form "
                "'package.module:Attr'"
            )
    elif not callable(entry_point):
        raise TypeError(
            f"{field} of {env_id!r} must be a callable or a 'module:Attr' string, "
            f"got {entry_point!r}"
        )


def _check_max_episode_steps(steps: object, env_id: str) -> None:
    if steps is None:
        return
    try:
        check_positive_int(steps, "max_episode_steps")
    except (TypeError, ValueError) as error:  # a bad registration value, whatever its type
        raise ValueError(f"{error}, for {env_id!r}; pass a positive int or None") from None


def _kwargs_dict(kwargs: Mapping[str, Any] | None, env_id: str) -> dict[str, Any]:
    """A copy of an entry's default keyword arguments; TypeError if they cannot be keywords."""
    if kwargs is None:
        return {}
    if not isinstance(kwargs, Mapping):
        raise TypeError(f"kwargs of {env_id!r} must be a mapping, got {kwargs!r}")
    for key in kwargs:
        if not isinstance(key, str):
            raise TypeError(
                f"kwargs of {env_id!r} must map keyword-argument names (str) to values, "
                f"got the key {key!r}"
            )
    return dict(kwargs)


def load_entry_point(entry_point: EntryPoint) -> Callable[..., Any]:
    """The callable an entry point names; ``"module:Attr"`` strings are imported once and cached."""
    if isinstance(entry_point, str):
        return _import_entry_point(entry_point)
    return entry_point


@functools.cache
def _import_entry_point(entry_point: str) -> Callable[..., Any]:
    module_name, _, attribute_path = entry_point.partition(":")
    target: Any = importlib.import_module(module_name)
    for attribute in attribute_path.split("."):
        try:
            target = getattr(target, attribute)
        except AttributeError:
            raise AttributeError(
                f"entry point {entry_point!r}: {module_name!r} has no attribute {attribute_path!r}"
            ) from None
    if not callable(target):
        raise TypeError(
            f"entry point {entry_point!r} names {type(target).__name__} {target!r:.80}, "
            "which is not callable"
        )
    return target  # type: ignore[no-any-return]


def _plugin_entry_points() -> Iterable[importlib.metadata.EntryPoint]:
    """The installed ``sekai.plugins`` entry points, in a stable order."""
    entry_points = importlib.metadata.entry_points(group=PLUGIN_GROUP)
    return sorted(entry_points, key=lambda ep: (_distribution_name(ep) or "", ep.name))


def _distribution_name(entry_point: importlib.metadata.EntryPoint) -> str | None:
    distribution = entry_point.dist
    return None if distribution is None else distribution.name


class Registry(Mapping[str, EnvSpec]):
    """Registered env ids mapped to their ``EnvSpec``; loads the plugins on first use."""

    def __init__(self) -> None:
        self._specs: dict[str, EnvSpec] = {}
        self._modes: dict[str, VectorizationMode] = {}
        self._lock = threading.RLock()
        self._loaded = False
        self._loading = False

    def add(self, env_spec: EnvSpec) -> None:
        """Register ``env_spec`` under its id, replacing (with a warning) an existing entry."""
        self._load_plugins()
        replaced = self._store(env_spec)
        if replaced is not None:
            warn(replaced, UserWarning)

    def __getitem__(self, env_id: str) -> EnvSpec:
        _check_id_type(env_id)
        self._load_plugins()
        try:
            return self._specs[env_id]
        except KeyError:
            raise UnknownEnvError(self._unknown_message(env_id)) from None

    def __contains__(self, env_id: object) -> bool:
        self._load_plugins()
        return env_id in self._specs

    def __iter__(self) -> Iterator[str]:
        self._load_plugins()
        return iter(list(self._specs))

    def __len__(self) -> int:
        self._load_plugins()
        return len(self._specs)

    @property
    def vectorization_modes(self) -> dict[str, VectorizationMode]:
        """The vectorization modes plugins registered, by name (a copy, sorted by name)."""
        self._load_plugins()
        return dict(sorted(self._modes.items()))

    def _store(self, env_spec: EnvSpec) -> str | None:
        """Store ``env_spec``; if it replaces an entry, return the warning that says so."""
        previous = self._specs.get(env_spec.id)
        self._specs[env_spec.id] = env_spec
        if previous is None:
            return None
        return (
            f"env id {env_spec.id!r} was already registered{_by(previous.distribution)}; "
            f"replacing it with the new registration{_by(env_spec.distribution)}"
        )

    def _load_plugins(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded or self._loading:  # another thread finished, or a plugin re-entered
                return
            self._loading = True
            problems: list[tuple[str, type[Warning]]] = []
            before, modes_before = dict(self._specs), dict(self._modes)
            try:
                manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
                manager.add_hookspecs(hookspecs)
                for plugin_entry_point in _plugin_entry_points():
                    problems += self._load_plugin(manager, plugin_entry_point)
            except BaseException:  # Ctrl-C while loading: the next use loads them all again
                self._specs, self._modes = before, modes_before
                raise
            else:
                self._loaded = True
            finally:
                self._loading = False
        # warned only once every plugin is in: with warnings as errors the first use raises,
        # and later uses still see every plugin that loaded
        for message, category in problems:
            warn(message, category)

    def _load_plugin(
        self, manager: pluggy.PluginManager, plugin_entry_point: importlib.metadata.EntryPoint
    ) -> list[tuple[str, type[Warning]]]:
        """Register one plugin's envs and modes, all or nothing; return the warnings to give.

        A failure becomes a PluginWarning; an id or mode registered again, a UserWarning.
        """
        distribution = _distribution_name(plugin_entry_point)
        staged: list[EnvSpec] = []  # in call order, so an id registered twice warns
        staged_modes: list[VectorizationMode] = []

        def register_mode(name: str, entry_point: str) -> None:
            staged_modes.append(VectorizationMode(name, entry_point, distribution))

        def register_from_plugin(
            id: str,
            entry_point: EntryPoint,
            *,
            vector_entry_point: EntryPoint | None = None,
            max_episode_steps: int | None = None,
            kwargs: Mapping[str, Any] | None = None,
        ) -> None:
            staged.append(
                EnvSpec(
                    id,
                    entry_point,
                    vector_entry_point=vector_entry_point,
                    max_episode_steps=max_episode_steps,
                    kwargs=_kwargs_dict(kwargs, id),
                    distribution=distribution,
                )
            )

        plugin = None
        try:
            plugin = plugin_entry_point.load()
            manager.register(plugin, name=f"{distribution}:{plugin_entry_point.name}")
            _check_hooks(manager, plugin)
            others = [other for other in manager.get_plugins() if other is not plugin]
            register_envs = manager.subset_hook_caller("sekai_register_envs", others)
            register_envs(register=register_from_plugin)
            register_modes = manager.subset_hook_caller(
                "sekai_register_vectorization_modes", others
            )
            register_modes(register=register_mode)
        except (Exception, SystemExit) as error:  # sys.exit() in a plugin must not end the caller
            if plugin is not None and manager.is_registered(plugin):
                manager.unregister(plugin)
            failure = (
                f"sekai plugin {plugin_entry_point.name!r} ({plugin_entry_point.value}) from "
                f"distribution {distribution!r} failed, so its envs are not registered: "
                f"{type(error).__name__}: {error}"
            )
            return [(failure, PluginWarning)]
        replaced = [self._store(env_spec) for env_spec in staged]
        replaced += [self._store_mode(mode) for mode in staged_modes]
        return [(message, UserWarning) for message in replaced if message is not None]

    def _store_mode(self, mode: VectorizationMode) -> str | None:
        """Store ``mode``; if it replaces one, return the warning that says so."""
        previous = self._modes.get(mode.name)
        self._modes[mode.name] = mode
        if previous is None:
            return None
        return (
            f"vectorization mode {mode.name!r} was already registered"
            f"{_by(previous.distribution)}; replacing it with {mode.entry_point!r}"
            f"{_by(mode.distribution)}"
        )

    def _unknown_message(self, env_id: str) -> str:
        message = f"no env registered with id {env_id!r}."
        matches = difflib.get_close_matches(env_id, self._specs, n=3, cutoff=0.6)
        if matches:
            message += f" Did you mean {', '.join(map(repr, matches))}?"
        missing = _missing_distribution(env_id)
        if missing is not None:
            message += (
                f" {env_id!r} is provided by the {missing} distribution, which is not "
                f"installed; install it with: pip install {missing}"
            )
        else:
            message += " Run `sekai list` to see every registered id."
        return message


def _check_hooks(manager: pluggy.PluginManager, plugin: object) -> None:
    """A plugin without a (correctly named) hook would silently register nothing: refuse it."""
    manager.check_pending()  # a misspelt hook name, unless marked optionalhook
    if not manager.get_hookcallers(plugin):
        raise TypeError(
            "it implements no sekai hook; define sekai_register_envs(register) (or "
            "sekai_register_vectorization_modes(register)) and decorate it with "
            "sekai.hookspecs.hookimpl"
        )


def _by(distribution: str | None) -> str:
    return "" if distribution is None else f" by {distribution}"


def _missing_distribution(env_id: str) -> str | None:
    """The optional distribution that would provide ``env_id``, if it is not installed."""
    try:
        namespace, name, _ = _parse_id(env_id)
    except (TypeError, ValueError):
        return None
    for distribution, names in _OPTIONAL_ENVS.items():
        if namespace is None and name in names:
            try:
                importlib.metadata.distribution(distribution)
            except importlib.metadata.PackageNotFoundError:
                return distribution
    return None


registry = Registry()
"""The process-wide registry behind ``register``, ``spec`` and ``make``."""


def register(
    id: str,
    entry_point: EntryPoint,
    *,
    vector_entry_point: EntryPoint | None = None,
    max_episode_steps: int | None = None,
    kwargs: Mapping[str, Any] | None = None,
) -> None:
    """Register an env under ``id`` (``[namespace/]Name[-vN]``).

    ``entry_point`` builds the env: a callable, or ``"module:Attr"`` imported when first made.
    ``vector_entry_point`` optionally builds a native vector version (used by ``make_vec``).
    ``max_episode_steps`` makes ``make`` wrap the env in ``TimeLimit``; ``kwargs`` are the
    env's default keyword arguments. Re-registering an id replaces it with a warning.
    """
    registry.add(
        EnvSpec(
            id,
            entry_point,
            vector_entry_point=vector_entry_point,
            max_episode_steps=max_episode_steps,
            kwargs=_kwargs_dict(kwargs, id),
        )
    )


def spec(id: str) -> EnvSpec:
    """The ``EnvSpec`` registered under ``id``; raises ``UnknownEnvError`` if none."""
    return registry[id]


def make(id: str | EnvSpec, *, max_episode_steps: int | None = None, **kwargs: Any) -> Any:
    """Build the env registered under ``id`` (or described by an ``EnvSpec``).

    The entry point is called with a deep copy of the registered kwargs updated by ``kwargs``,
    and must return a sekai.Env or MultiAgentEnv. The env's ``spec`` is set to a copy of the
    spec it was built from, overrides included. When the spec or the caller gives
    ``max_episode_steps`` (the caller's wins) the env is wrapped in ``TimeLimit``. A sekai.Env
    is then wrapped in ``OrderEnforcing``, which enforces the episode lifecycle: no step before
    reset (``ResetNeeded``), a warning for a step after the episode ended, and no reset or step
    after close (``EnvClosed``).
    """
    base = id if isinstance(id, EnvSpec) else registry[id]
    steps = base.max_episode_steps if max_episode_steps is None else max_episode_steps
    # each env gets its own copy of the registered defaults (a list default is not shared
    # between envs) and its own spec (changing env.spec.kwargs does not change the registry)
    env_spec = dataclasses.replace(
        base, kwargs={**copy.deepcopy(base.kwargs), **kwargs}, max_episode_steps=steps
    )
    try:
        env = load_entry_point(base.entry_point)(**env_spec.kwargs)
    except Exception as error:  # keep the type, say which env and arguments it came from
        error.add_note(f"raised by sekai.make({base.id!r}) with kwargs {env_spec.kwargs!r}")
        raise
    from sekai.core import Env  # here, so that listing and discovering envs needs no numpy
    from sekai.multi_agent import MultiAgentEnv

    if not isinstance(env, Env | MultiAgentEnv):
        raise TypeError(
            f"the entry point {base.entry_point!r} of {base.id!r} returned "
            f"{type(env).__name__} {env!r:.80}, not a sekai.Env or sekai.MultiAgentEnv"
        )
    env.unwrapped.spec = env_spec
    if not isinstance(env, Env):
        if steps is None:
            return env
        env.close()
        raise TypeError(
            f"{base.id!r} has max_episode_steps={steps}, but its entry point built a "
            f"{type(env).__name__}, not a sekai.Env: TimeLimit is a single-agent wrapper, so "
            "register and make multi-agent envs without max_episode_steps"
        )
    from sekai.wrappers import OrderEnforcing, TimeLimit

    return OrderEnforcing(env if steps is None else TimeLimit(env, steps))
