"""The config of a batch ``dedup`` run: method, parameters, verification, keep policy.

Method-specific rules (default threshold, tags, checks) come from the method's spec
(:mod:`neardup.config.methods`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeVar

from neardup.config.checks import require as _require
from neardup.config.method_configs import DedupRelation
from neardup.config.methods import DEFAULT_MIN_RESEMBLANCE, method_names, method_spec
from neardup.config.prints import ExactConfig, ShingleConfig
from neardup.config.text import TemplateConfig, TextConfig
from neardup.errors import ConfigError

__all__ = ["DEFAULT_METHOD", "DedupConfig", "KeepPolicy"]

KeepPolicy = Literal["first", "longest", "earliest", "shortest-url"]
DEFAULT_METHOD = "minhash"
"""The method of a run that names none (every door: library, command line, demo, plan)."""
P = TypeVar("P")


@dataclass(frozen=True, slots=True)
class DedupConfig:
    """Everything a batch `dedup` run depends on: the fields every method shares, and
    ``params``, the config of the chosen method (the type its spec names: e.g.
    :class:`~neardup.config.MinHashConfig` for ``minhash``, :class:`~neardup.config.SketchMethod`
    for ``sketch``; None: that type's defaults; ``exact`` takes none).

    The defaults (min-hash at 0.8 over full text, site templates removed) were chosen on the
    template benchmark, Webis CopyCat and the demo together (README, "Choosing the defaults").
    """

    method: str = DEFAULT_METHOD
    params: object | None = None
    text: TextConfig = field(default_factory=TextConfig)
    exact: ExactConfig = field(default_factory=ExactConfig)
    verify_shingles: ShingleConfig = field(default_factory=ShingleConfig)
    threshold: float = 0.0
    """Resemblance (or, with ``relation="contained"``, containment) threshold; 0 means the
    method's default (its spec's ``default_threshold``: min-hash 0.8, sketch 0.5, keyword
    0.9), set at construction."""
    min_resemblance: float | None = None
    keep: KeepPolicy = "first"
    links: bool = False
    """Extract the out-links of HTML pages (the ``links`` table); not part of any tag: links
    change no fingerprint."""
    templates: TemplateConfig = field(default_factory=TemplateConfig)
    """Per-host template shingles left out of the near methods' evidence."""

    def __post_init__(self) -> None:
        names = method_names()
        _require(self.method in names, "method", self.method, f"one of {', '.join(names)}")
        spec = method_spec(self.method)
        self._set_params(spec.params)
        if self.threshold == 0.0:
            object.__setattr__(self, "threshold", spec.default_threshold)
        _require(0.0 < self.threshold <= 1.0, "threshold", self.threshold, "must be in (0, 1]")
        _require(self.relation == "resemblance" or spec.containment, "relation", self.relation,
                 "needs method 'sketch' with MOD sketches (containment)")
        if self.min_resemblance is not None:
            _require(0.0 <= self.min_resemblance <= 1.0, "min_resemblance",
                     self.min_resemblance, "must be in [0, 1]")
        _require(self.keep in ("first", "longest", "earliest", "shortest-url"), "keep", self.keep,
                 "one of first, longest, earliest, shortest-url")
        spec.check(self)

    def _set_params(self, kind: type[object] | None) -> None:
        if kind is None:
            if self.params is not None:
                raise ConfigError(f"method {self.method!r} takes no params (given "
                                  f"{type(self.params).__name__})")
            return
        if self.params is None:
            object.__setattr__(self, "params", kind())
        elif not isinstance(self.params, kind):
            raise ConfigError(f"method {self.method!r} takes params of type {kind.__name__}, "
                              f"not {type(self.params).__name__}")

    def of(self, kind: type[P]) -> P:
        """The method's config, as ``kind`` (a method that takes another type is refused)."""
        if not isinstance(self.params, kind):
            raise ConfigError(f"method {self.method!r} has no {kind.__name__} (its params: "
                              f"{type(self.params).__name__})")
        return self.params

    @property
    def relation(self) -> DedupRelation:
        """How a near pair is related: ``contained`` when the method's config says so (Broder's
        containment), else ``resemblance``."""
        relation = getattr(self.params, "relation", "resemblance")
        return "contained" if relation == "contained" else "resemblance"

    @property
    def resemblance_floor(self) -> float:
        """The resemblance a candidate pair needs to be kept after verification: the given
        ``min_resemblance``, else the threshold of the methods that estimate resemblance
        (min-hash, sketch), else :data:`DEFAULT_MIN_RESEMBLANCE`."""
        if self.min_resemblance is not None:
            return self.min_resemblance
        if method_spec(self.method).estimates:
            return self.threshold
        return DEFAULT_MIN_RESEMBLANCE

    @property
    def verification(self) -> dict[str, object]:
        """The rule every near pair passes on the real shingle sets, by the pair's relation:
        ``near`` pairs need resemblance >= the floor; ``contained`` pairs (``relation=
        "contained"``) need the exact containment of one document in the other >= threshold."""
        if self.relation == "contained":
            return {"relation": "contained", "rule": "containment",
                    "threshold": self.threshold}
        return {"relation": "near", "rule": "resemblance", "threshold": self.resemblance_floor}

    @property
    def tags(self) -> dict[str, str]:
        tags = {"text": self.text.tag, "exact": self.exact.tag,
                "verify": f"shingles:{self.verify_shingles.tag}",
                "templates": self.templates.tag}
        tags.update(method_spec(self.method).tags(self))
        return tags
