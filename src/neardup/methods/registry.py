"""The registry of dedup methods: the only list of them.

Each method is one unit in its own module (:mod:`.exact`, :mod:`.simhash`, :mod:`.minhash`,
:mod:`.sketch`, :mod:`.supershingle`, :mod:`.chunks`, :mod:`.smfa`, :mod:`.paragraphs`,
:mod:`.keyword`): its config-side spec (name, tags, default threshold, checks), its typed
per-document features, its join kind (:mod:`.joins`) or its ``find``, its verification rule and
its evaluation scorer. The engine, Spark, ``dedup``, ``evaluate``, the presets and the command
line read this registry. On import it declares every unit's spec to the config layer (which
cannot import it), in the order of :data:`BUILTIN`: the order of the pair codes.

To add a method: write its module with its spec and its
:class:`~neardup.methods.unit.NearMethod` (its parameters in a frozen config of
:mod:`neardup.config`, or an existing one), and list it in :data:`BUILTIN`; or, from your own
code, :func:`register` it at run time.
"""

from __future__ import annotations

from typing import Any

from neardup.config import DedupConfig, MinHashConfig, declare_method, withdraw_method
from neardup.errors import ConfigError
from neardup.methods import (
    chunks,
    exact,
    keyword,
    minhash,
    oph,
    paragraphs,
    simhash,
    sketch,
    smfa,
)
from neardup.methods import supershingle as supershingle_unit
from neardup.methods.joins import Join, SignatureBands, Signer
from neardup.methods.scoring import Scorer
from neardup.methods.unit import ExactMethod, NearMethod

__all__ = ["BUILTIN", "EVALUATED", "EXACT", "NearMethod", "join_of", "method_names", "near_method",
           "near_methods", "register", "scorers", "signer_of", "unregister"]

EXACT: ExactMethod = exact.UNIT
BUILTIN: tuple[NearMethod[Any], ...] = (
    simhash.UNIT, minhash.UNIT, sketch.UNIT, supershingle_unit.UNIT, chunks.UNIT, smfa.UNIT,
    paragraphs.UNIT, keyword.UNIT,
    oph.UNIT,
)
"""The built-in near methods, in the order of their pair codes (after ``exact``, ``revisit``)."""
_NEAR: dict[str, NearMethod[Any]] = {method.name: method for method in BUILTIN}
for _spec in (EXACT.spec, *(method.spec for method in BUILTIN)):
    declare_method(_spec)


EVALUATED: tuple[str, ...] = (EXACT.name, simhash.UNIT.name, minhash.UNIT.name)
"""The methods ``evaluate`` scores when none is named: the exact levels and the two fixed-width
fingerprints of the online path (beside the exact Jaccard baseline)."""


def near_methods() -> tuple[NearMethod[Any], ...]:
    """Every near method: the built-in ones, then those registered."""
    return tuple(_NEAR.values())


def method_names() -> tuple[str, ...]:
    """Every method ``dedup`` runs: ``exact`` (no near stage), then the near methods."""
    return (EXACT.name, *_NEAR)


def near_method(name: str) -> NearMethod[Any] | None:
    """The method called ``name``; None for ``exact`` (no near stage)."""
    if name == EXACT.name:
        return None
    if name not in _NEAR:
        raise ConfigError(f"method={name!r}: no such near-duplicate method")
    return _NEAR[name]


def join_of(config: DedupConfig) -> Join | None:
    """The join kind the engine runs for ``config.method`` (None: ``exact``, or a method whose
    near stage runs in memory through its ``find``)."""
    method = near_method(config.method)
    return None if method is None else method.join


def signer_of(config: DedupConfig) -> Signer | None:
    """The signer of ``config.method`` when its candidates come from signature bands."""
    join = join_of(config)
    return join.signer(config.of(MinHashConfig)) if isinstance(join, SignatureBands) else None


def scorers() -> tuple[Scorer, ...]:
    """The evaluation scorer of every method, in the registry's order."""
    return (EXACT.scorer, *(method.scorer for method in _NEAR.values()))


def register(method: NearMethod[Any]) -> None:
    """Add a near method at run time: ``dedup``, the engine, ``evaluate`` and the command line
    offer it from now on (its spec is declared to the config layer)."""
    if method.name in _NEAR or method.name == EXACT.name:
        raise ConfigError(f"method {method.name!r} is already registered")
    declare_method(method.spec)
    _NEAR[method.name] = method


def unregister(name: str) -> None:
    """Remove a method added by :func:`register` (the built-in ones stay)."""
    if name not in _NEAR or _NEAR[name] in BUILTIN:
        raise ConfigError(f"method {name!r} was not registered at run time")
    withdraw_method(name)
    del _NEAR[name]
