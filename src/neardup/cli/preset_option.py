"""``--preset NAME`` of ``dedup``, ``index`` and ``evaluate``: a paper's parameters by name.

The preset fixes every method option; giving one of them as well is refused (one line naming
the options), so a run called ``broder1997`` always runs Broder's parameters. What the papers
do not fix stays free: ``--keep``, ``--links``, ``--main-content``, ``--thai-words``,
``--write-relations``, ``--memory-limit``. ``summary.json`` gets the preset's name, paper and
parameters under ``preset``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from neardup.config import ChunkMethod, DedupConfig, StoreConfig
from neardup.errors import ConfigError

if TYPE_CHECKING:
    from neardup.presets import Preset

__all__ = ["PRESET_OPTION", "PresetChoice", "preset_dedup_config", "preset_store_config",
           "record_preset", "refuse_with_preset"]


class PresetChoice(click.Choice[str]):
    """``--preset``: the presets' names, read when the option is used or shown (the presets,
    five configs built and checked, load only then)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from neardup.presets import preset_names

        return preset_names()

    @choices.setter
    def choices(self, value: object) -> None:
        pass  # the presets decide


PRESET_OPTION = click.option(
    "--preset", type=PresetChoice(), default=None,
    help="Run a paper's own parameters (shingles, bits, sampling, thresholds, chunking, stop "
         "words, stemming); the method options are then fixed. summary.json lists them.")
FREE = frozenset({"keep", "links", "main_content", "thai_words", "memory_limit", "preset",
                  "write_relations"})


def refuse_with_preset(name: str, options: Iterable[str], free: frozenset[str] = FREE) -> None:
    """Refuse the method options given on the command line together with ``--preset name``."""
    ctx = click.get_current_context()
    given = [option for option in options if option not in free
             and ctx.get_parameter_source(option) in (ParameterSource.COMMANDLINE,
                                                      ParameterSource.ENVIRONMENT)]
    if given:
        flags = ", ".join(sorted(_flag(ctx, option) for option in given))
        raise click.UsageError(f"--preset {name} fixes {flags}; leave them out (or the preset)")


def _flag(ctx: click.Context, name: str) -> str:
    for param in ctx.command.params:
        if param.name == name and param.opts:
            return max(param.opts, key=len)
    return "--" + name.replace("_", "-")


def preset_dedup_config(name: str, options: dict[str, Any],
                        pairs_memory: int | None) -> DedupConfig:
    """The preset's DedupConfig with the free options applied."""
    from neardup.presets import preset

    refuse_with_preset(name, options)
    base = preset(name).dedup
    text = dataclasses.replace(base.text, main_content=bool(options.get("main_content")),
                               thai_words=bool(options.get("thai_words")))
    params = base.params
    if options.get("write_relations") and not isinstance(params, ChunkMethod):
        raise ConfigError(f"--write-relations has no effect with --preset {name}: the "
                          "FPrint-DocID relation is method chunks's")
    if isinstance(params, ChunkMethod):
        params = dataclasses.replace(
            params, overlap=dataclasses.replace(params.overlap, memory_limit=pairs_memory),
            write_relations=bool(options.get("write_relations")))
    return dataclasses.replace(base, text=text, params=params, keep=options["keep"],
                               links=bool(options.get("links")))


def preset_store_config(name: str, main_content: bool) -> StoreConfig:
    """``index --preset``: the preset's StoreConfig (the other new-store options refused)."""
    from neardup.presets import PRESETS, preset

    refuse_with_preset(name, ("max_k", "compress", "tables", "min_prefix", "no_sketch",
                              "keep_shingles", "expected"))
    chosen = preset(name)
    if chosen.store is None:
        with_store = ", ".join(p.name for p in PRESETS.values() if p.store is not None)
        raise click.UsageError(f"--preset {name}: the store keeps simhashes and Broder "
                               f"sketches, not {chosen.dedup.method} prints; use dedup --preset "
                               f"{name}, or index with {with_store}")
    text = dataclasses.replace(chosen.store.text, main_content=main_content)
    return dataclasses.replace(chosen.store, text=text)


def record_preset(out: Path, summary: dict[str, Any], chosen: Preset) -> dict[str, Any]:
    """``summary`` with the preset under ``preset``, written back to ``out/summary.json``."""
    from neardup.engine.workdir import write_atomic

    summary = {"preset": chosen.as_dict(), **summary}
    write_atomic(out / "summary.json", (json.dumps(summary, indent=2) + "\n").encode())
    return summary
