"""The env registry: ids -> ``EnvSpec``, filled by plugins and by ``register``.

The registry also holds the vectorization modes that plugins register (name -> vector env class,
as ``VectorizationMode``), which ``make_vec`` looks up by name, and the public names they add to
``sekai`` and ``sekai.testing`` (``PublicName``).

Plugins are modules named by entry points in the ``sekai.plugins`` group; each implements hooks
of ``sekai.hookspecs`` (``sekai_register_envs``, ``sekai_register_vectorization_modes``,
``sekai_register_names``, ``sekai_add_commands``).
They are loaded the first time the registry is used (``make``, ``spec``,
``register``, reading ``registry``, ``sekai list``, ``make_vec``), never at
``import sekai``, so importing sekai stays cheap and a broken third-party plugin only costs a
warning.
"""

from __future__ import annotations

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
    "PublicName",
    "RESERVED_MODES",
    "Registry",
    "UnknownEnvError",
    "VectorizationMode",
    "load_entry_point",
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

_NAMESPACES = frozenset({"sekai", "sekai.testing"})
"""Where a plugin may add public names (``sekai_register_names``)."""
_FAMILY = "sekai"
"""The meta-distribution that installs every sekai distribution."""
_PROVIDED_BY: dict[str, str] = {
    "sekai.vector": "sekai-vector",
    **{
        f"sekai.{name}": "sekai-vector"
        for name in [
            "VecEnv",
            "SyncVecEnv",
            "AsyncVecEnv",
            "ProcVecEnv",
            "NativeVecEnv",
            "VecEnvWorkerError",
            "VecEnvClosed",
            "VecResetResult",
            "VecStepResult",
            "make_vec",
            "stack_infos",
            "VecWrapper",
            "VecObservationWrapper",
            "VecRewardWrapper",
            "VecActionWrapper",
            "VecRecordEpisodeStatistics",
            "VecNormalizeObservation",
            "VecNormalizeReward",
            "VecTransformObservation",
            "VecTransformReward",
        ]
    },
    **{
        f"sekai.testing.{name}": "sekai-vector"
        for name in [
            "check_native_vec_env",
            "check_vec_env",
            "check_vectorization_mode",
            "native_env_ids",
            "vectorization_modes",
        ]
    },
    "sekai.finance": "sekai-finance",
    "sekai.compat": "sekai-compat",
}
"""The public names the sekai distributions' plugins add (``sekai_register_names``) -> the
distribution that adds each: what an error names when that distribution is not installed.
Kept equal to what the plugins register by tests/integration/test_missing_distributions.py."""


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


@dataclasses.dataclass(frozen=True)
class PublicName:
    """A name a plugin added: ``<namespace>.<name>`` is ``getattr(module, name)``, or ``module``
    itself when ``module`` is ``"<namespace>.<name>"``."""

    name: str
    module: str
    namespace: str = "sekai"
    distribution: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier() or self.name[0] == "_":
            raise ValueError(
                f"a public name must be an identifier not starting with '_', got {self.name!r}"
            )
        if not isinstance(self.module, str) or not all(
            part.isidentifier() for part in self.module.split(".")
        ):
            raise ValueError(
                f"the module of public name {self.name!r} must be a dotted module name, "
                f"got {self.module!r}"
            )
        if self.namespace not in _NAMESPACES:
            raise ValueError(
                f"public name {self.name!r}: namespace must be one of {sorted(_NAMESPACES)}, "
                f"got {self.namespace!r}"
            )

    def load(self) -> Any:
        """The object this name stands for (its module is imported now)."""
        module = importlib.import_module(self.module)
        if self.module == f"{self.namespace}.{self.name}":
            return module
        return getattr(module, self.name)


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
        self._names: dict[tuple[str, str], PublicName] = {}
        self._manager: pluggy.PluginManager | None = None
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

    def names(self, namespace: str = "sekai") -> dict[str, PublicName]:
        """The public names plugins added to ``namespace`` (``"sekai"`` or ``"sekai.testing"``)."""
        self._load_plugins()
        return {name: entry for (space, name), entry in self._names.items() if space == namespace}

    def call_hook(self, name: str, **kwargs: Any) -> list[Any]:
        """Call hook ``name`` of ``sekai.hookspecs`` on every loaded plugin; return the results.

        A plugin whose implementation raises gives a ``PluginWarning`` naming it, and the
        others are still called (a broken plugin's command must not take ``sekai list`` down).
        """
        self._load_plugins()
        if self._manager is None:  # the plugins are being loaded: none is ready
            return []
        results = []
        for implementation in getattr(self._manager.hook, name).get_hookimpls():
            arguments = {argument: kwargs[argument] for argument in implementation.argnames}
            try:
                results.append(implementation.function(**arguments))
            except Exception as error:
                warn(
                    f"sekai plugin {implementation.plugin_name!r} failed in {name}: "
                    f"{type(error).__name__}: {error}",
                    PluginWarning,
                )
        return results

    def _store(self, env_spec: EnvSpec) -> str | None:
        """Store ``env_spec``; if it replaces an entry, return the warning that says so."""
        return _put(self._specs, env_spec.id, env_spec, f"env id {env_spec.id!r}")

    def _load_plugins(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded or self._loading:  # another thread finished, or a plugin re-entered
                return
            self._loading = True
            problems: list[tuple[str, type[Warning]]] = []
            before = dict(self._specs), dict(self._modes), dict(self._names)
            try:
                manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
                manager.add_hookspecs(hookspecs)
                for plugin_entry_point in _plugin_entry_points():
                    problems += self._load_plugin(manager, plugin_entry_point)
            except BaseException:  # Ctrl-C while loading: the next use loads them all again
                self._specs, self._modes, self._names = before
                raise
            else:
                self._manager = manager
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
        staged_names: list[PublicName] = []

        def register_mode(name: str, entry_point: str) -> None:
            staged_modes.append(VectorizationMode(name, entry_point, distribution))

        def register_name(name: str, module: str, *, namespace: str = "sekai") -> None:
            staged_names.append(PublicName(name, module, namespace, distribution))

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
            register_names = manager.subset_hook_caller("sekai_register_names", others)
            register_names(register=register_name)
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
        for mode in staged_modes:
            what = f"vectorization mode {mode.name!r}"
            replaced.append(_put(self._modes, mode.name, mode, what, mode.entry_point))
        for entry in staged_names:
            key, what = (entry.namespace, entry.name), f"the name {entry.namespace}.{entry.name}"
            replaced.append(_put(self._names, key, entry, what, entry.module))
        return [(message, UserWarning) for message in replaced if message is not None]

    def _unknown_message(self, env_id: str) -> str:
        message = f"no env registered with id {env_id!r}."
        matches = difflib.get_close_matches(env_id, self._specs, n=3, cutoff=0.6)
        if matches:
            message += f" Did you mean {', '.join(map(repr, matches))}?"
        return message + " Run `sekai list` to see every registered id." + missing_family_hint()


def _check_hooks(manager: pluggy.PluginManager, plugin: object) -> None:
    """A plugin without a (correctly named) hook would silently register nothing: refuse it."""
    manager.check_pending()  # a misspelt hook name, unless marked optionalhook
    if not manager.get_hookcallers(plugin):
        raise TypeError(
            "it implements no sekai hook; define sekai_register_envs(register) (or "
            "sekai_register_vectorization_modes(register)) and decorate it with "
            "sekai.hookspecs.hookimpl"
        )


def _put(
    table: dict[Any, Any], key: Any, entry: Any, what: str, new: str | None = None
) -> str | None:
    """Put ``entry`` (with a ``distribution``) in ``table``; if it replaces one, return the
    warning that says so, naming the new entry by ``new`` (its entry point or module)."""
    previous = table.get(key)
    table[key] = entry
    if previous is None:
        return None
    replacement = "the new registration" if new is None else repr(new)
    return (
        f"{what} was already registered{_by(previous.distribution)}; "
        f"replacing it with {replacement}{_by(entry.distribution)}"
    )


def _by(distribution: str | None) -> str:
    return "" if distribution is None else f" by {distribution}"


def missing_family_hint() -> str:
    """A sentence pointing to ``pip install sekai`` unless every sekai distribution is installed.

    Core cannot know what a distribution that is not installed would provide (nothing of it is
    on the machine), so the hint for an unknown id, name or command is the install that brings
    them all: the meta-distribution ``sekai``, whose presence means the whole family is here.
    """
    try:
        importlib.metadata.distribution(_FAMILY)
    except importlib.metadata.PackageNotFoundError:
        return (
            " Envs, names and commands of sekai distributions that are not installed are "
            f"missing; pip install {_FAMILY} installs them all."
        )
    return ""


def _missing_name_message(namespace: str, name: str) -> str:
    """The error message for ``<namespace>.<name>``, which no installed plugin registered.

    A name of the sekai family says which distribution provides it and how to install it;
    any other name gets the family hint.
    """
    qualified = f"{namespace}.{name}"
    distribution = _PROVIDED_BY.get(qualified)
    if distribution is None:
        return f"module {namespace!r} has no attribute {name!r}.{missing_family_hint()}"
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return (
            f"{qualified} is provided by {distribution}, which is not installed: "
            f"pip install {distribution}"
        )
    return (
        f"{qualified} is provided by {distribution}, which is installed but did not add it: "
        "its plugin failed to load (see the PluginWarning) or it is an older version"
    )


registry = Registry()
"""The process-wide registry behind ``register``, ``spec`` and ``sekai.make``."""


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
