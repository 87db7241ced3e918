"""A store's config as its manifest records it, and the table design it implies."""

from __future__ import annotations

import dataclasses
from typing import Any

from neardup.config import (
    ExactConfig,
    ShingleConfig,
    SimHashConfig,
    SketchConfig,
    StoreConfig,
    TemplateConfig,
    TextConfig,
)
from neardup.index.hamming import HammingDesign, TablePlan

__all__ = ["config_from_dict", "config_to_dict", "differences", "plans"]


def config_from_dict(data: dict[str, Any]) -> StoreConfig:
    """The StoreConfig a manifest recorded."""
    simhash = dict(data["simhash"])
    simhash["shingles"] = ShingleConfig(**simhash["shingles"])
    sketch = None
    if data.get("sketch") is not None:
        fields = dict(data["sketch"])
        fields["shingles"] = ShingleConfig(**fields["shingles"])
        sketch = SketchConfig(**fields)
    tables = tuple((tuple(tuple(seg) for seg in segments), int(bits))
                   for segments, bits in data["tables"])
    return StoreConfig(text=TextConfig(**data["text"]), exact=ExactConfig(**data["exact"]),
                       simhash=SimHashConfig(**simhash), max_k=int(data["max_k"]),
                       tables=tables, compress=bool(data["compress"]), sketch=sketch,
                       keep_shingles=bool(data.get("keep_shingles", False)),
                       sketch_clusters=data.get("sketch_clusters"),
                       templates=TemplateConfig(**data.get("templates", {})))


def config_to_dict(config: StoreConfig) -> dict[str, Any]:
    data: dict[str, Any] = _json_ready(dataclasses.asdict(config))
    return data


def _json_ready(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    return value


def plans(config: StoreConfig) -> list[TablePlan]:
    """The permuted tables of a store: its planned design, or k + 1 blocks, each leading one."""
    if config.tables:
        return [TablePlan(tuple(segments), bits) for segments, bits in config.tables]
    base, extra = divmod(64, config.max_k + 1)
    blocks = tuple(base + 1 if i < extra else base for i in range(config.max_k + 1))
    return HammingDesign(blocks, 1).plans()


def differences(stored: dict[str, Any], wanted: dict[str, Any], prefix: str = "") -> list[str]:
    """Each field where two recorded configs differ, as ``path: store has X, asked for Y``."""
    keys = sorted(set(stored) | set(wanted))
    out = []
    for key in keys:
        a, b = stored.get(key), wanted.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += differences(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key}: store has {a!r}, asked for {b!r}")
    return out
