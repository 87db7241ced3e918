"""What the config layer knows of each dedup method: its name, tags, default threshold and checks.

A method is one unit (:mod:`neardup.methods`): its module declares the prints, the features,
the candidate search, the verification and the scorer, and finds here, by name, the part of it
that configs need (this layer imports nothing above it, so it cannot read the registry).
:data:`BUILTIN_SPECS` is the config layer's list of the built-in methods, in the order of their
pair codes; ``neardup.methods.registry`` is checked against it by a test, and
``neardup.methods.registry.register`` declares the spec of a method added at run time
(:func:`declare_method`). :func:`method_names` is the live list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from neardup.config.checks import require
from neardup.errors import ConfigError

if TYPE_CHECKING:
    from neardup.config.dedup import DedupConfig

__all__ = ["BUILTIN_SPECS", "DEFAULT_MIN_RESEMBLANCE", "MethodSpec", "declare_method",
           "method_names", "method_spec", "threshold_methods", "withdraw_method"]

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
    ``relations``: ``write_relations`` is allowed; ``check``: further checks of a config that
    runs it.
    """

    name: str
    tags: Callable[[DedupConfig], dict[str, str]] = _no_tags
    threshold: bool = False
    default_threshold: float = 0.8
    estimates: bool = False
    containment: bool = False
    relations: bool = False
    check: Callable[[DedupConfig], None] = _no_check


def _supershingle_check(config: DedupConfig) -> None:
    require(config.sketch.adaptive == 0, "sketch.adaptive", config.sketch.adaptive,
            "super-shingles need one modulus for every document")


def _sketch_check(config: DedupConfig) -> None:
    if config.relation == "contained":
        require(config.sketch.kind == "mod", "relation", config.relation,
                "needs method 'sketch' with MOD sketches (containment)")


BUILTIN_SPECS: tuple[MethodSpec, ...] = (
    MethodSpec("exact"),
    MethodSpec("simhash", lambda c: {"simhash": c.simhash.tag}),
    MethodSpec("minhash", lambda c: {"minhash": c.minhash.tag}, threshold=True, estimates=True),
    MethodSpec("sketch", lambda c: {"sketch": c.sketch.tag}, threshold=True,
               default_threshold=0.5, estimates=True, containment=True, check=_sketch_check),
    MethodSpec("supershingle", lambda c: {"sketch": c.sketch.tag, "supershingle":
                                          f"supershingle:n{c.supershingle_size}"},
               check=_supershingle_check),
    MethodSpec("chunks", lambda c: {"chunks": c.overlap.tag(c.chunks)}, relations=True),
    MethodSpec("smfa", lambda c: {"smfa": c.smfa.tag}),
    MethodSpec("shingle-paragraphs", lambda c: {"paragraphs": c.paragraphs.tag}),
    MethodSpec("keyword", lambda c: {"keyword": f"{c.keyword.tag}:cos{c.threshold}"},
               threshold=True, default_threshold=0.9),
)
"""The built-in methods (``exact`` runs no near stage), in the order of their pair codes."""
_SPECS: dict[str, MethodSpec] = {spec.name: spec for spec in BUILTIN_SPECS}


def method_names() -> tuple[str, ...]:
    """Every method ``DedupConfig.method`` accepts: the built-in ones, then those declared."""
    return tuple(_SPECS)


def threshold_methods() -> tuple[str, ...]:
    """The methods that read ``DedupConfig.threshold`` (resemblance; cosine for keyword)."""
    return tuple(name for name, spec in _SPECS.items() if spec.threshold)


def method_spec(name: str) -> MethodSpec:
    if name not in _SPECS:
        raise ConfigError(f"method={name!r}: one of {', '.join(_SPECS)}")
    return _SPECS[name]


def declare_method(spec: MethodSpec) -> None:
    """Accept a method added at run time (called by ``neardup.methods.registry.register``)."""
    if spec.name in _SPECS and _SPECS[spec.name] is not spec:
        raise ConfigError(f"method {spec.name!r} is already declared")
    _SPECS[spec.name] = spec


def withdraw_method(name: str) -> None:
    """Forget a method added at run time (the built-in ones stay)."""
    if name in {spec.name for spec in BUILTIN_SPECS}:
        raise ConfigError(f"method {name!r} is built in")
    _SPECS.pop(name, None)
