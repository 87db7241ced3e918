"""What the config layer knows of a dedup method: its name, tags, default threshold and checks.

A method is one unit (:mod:`neardup.methods`): its module declares its :class:`MethodSpec`
beside its prints, features, join, verification and scorer; ``neardup.methods.registry``, the
only list of methods, declares each unit's spec here (:func:`declare_method`), in the order of
the pair codes. This layer imports nothing above it, so the package init tells it how to load
the registry (:func:`provide_methods`) and the first lookup does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neardup.errors import ConfigError

if TYPE_CHECKING:
    from neardup.config.dedup import DedupConfig

__all__ = ["DEFAULT_MIN_RESEMBLANCE", "MethodSpec", "declare_method", "method_names",
           "method_spec", "provide_methods", "threshold_methods", "threshold_refusal",
           "withdraw_method"]

DEFAULT_MIN_RESEMBLANCE = 0.5
"""The verification rule of the methods whose candidates carry no resemblance threshold of their
own (simhash, supershingle, chunks, smfa, shingle-paragraphs): a pair is kept when the exact
resemblance of its two shingle sets is at least this (measured: see the README's "Verification")."""


def _no_tags(config: DedupConfig) -> dict[str, str]:
    return {}


def _no_check(config: DedupConfig) -> None:
    return None


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """A method as configs see it.

    ``tags``: the tags of the parameters that change its fingerprints (beside the common ones);
    ``threshold``: it reads ``DedupConfig.threshold`` (the others refuse one from the user);
    ``default_threshold``: ``DedupConfig.threshold`` when it is left at 0; ``estimates``: the
    threshold is an estimated resemblance, so verified pairs need that exact resemblance (else
    :data:`DEFAULT_MIN_RESEMBLANCE`); ``containment``: ``relation="contained"`` is allowed;
    ``params``: the type of its config (``DedupConfig.params``; None: it takes none);
    ``check``: further checks of a config that runs it; ``hint``: what to use instead of a
    threshold (for a method that reads none).
    """

    name: str
    tags: Callable[[DedupConfig], dict[str, str]] = _no_tags
    threshold: bool = False
    default_threshold: float = 0.8
    estimates: bool = False
    containment: bool = False
    params: type[Any] | None = None
    check: Callable[[DedupConfig], None] = _no_check
    hint: str = ""


_SPECS: dict[str, MethodSpec] = {}
_LOADERS: list[Callable[[], object]] = []


def provide_methods(load: Callable[[], object]) -> None:
    """Have ``load`` declare the methods before the first lookup (``neardup``'s package
    init passes the import of ``neardup.methods.registry``, whose units declare their specs:
    this layer cannot import it)."""
    _LOADERS.append(load)


def _specs() -> dict[str, MethodSpec]:
    while _LOADERS:
        _LOADERS.pop()()
    return _SPECS


def method_names() -> tuple[str, ...]:
    """Every method ``DedupConfig.method`` accepts, in the order they were declared (the
    registry's, which gives the pair codes)."""
    return tuple(_specs())


def threshold_methods() -> tuple[str, ...]:
    """The methods that read ``DedupConfig.threshold`` (resemblance; cosine for keyword)."""
    return tuple(name for name, spec in _specs().items() if spec.threshold)


def threshold_refusal(name: str, threshold: float | None) -> str | None:
    """Why ``threshold``, given for method ``name``, is refused (None: the method reads it or
    none is given): the library and the command line refuse it in these words."""
    if threshold is None or name in threshold_methods():
        return None
    readers = threshold_methods()
    hint = method_spec(name).hint
    return (f"threshold {threshold} has no effect with method {name}: it is read by "
            f"{', '.join(readers[:-1])} and {readers[-1]}" + (f" ({hint})" if hint else ""))


def method_spec(name: str) -> MethodSpec:
    specs = _specs()
    if name not in specs:
        raise ConfigError(f"method={name!r}: one of {', '.join(specs)}")
    return specs[name]


def declare_method(spec: MethodSpec) -> None:
    """Accept a method (called by ``neardup.methods.registry`` for each of its units, and by
    its ``register`` for a method added at run time)."""
    if spec.name in _SPECS and _SPECS[spec.name] is not spec:
        raise ConfigError(f"method {spec.name!r} is already declared")
    _SPECS[spec.name] = spec


def withdraw_method(name: str) -> None:
    """Forget a method added at run time (the registry keeps its built-in ones)."""
    _SPECS.pop(name, None)
