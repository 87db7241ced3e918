"""Labeled pairs of documents: reading them, and mapping their labels to two classes.

A labeled JSONL file has one pair per line: ``text_a`` and ``text_b`` (plain text) or ``html_a``
and ``html_b`` (raw HTML; a line may have both kinds), a ``label``, and optionally ``pair_id``
(else ``line-<n>``), ``group`` (a finer category reported per method; by default the label
itself). Every other numeric field is kept as another system's score, which the evaluation can
treat as a method (``field:webis_s3``).

Labels are compared as text after normalisation: a number (``3``, ``"3"``, ``3.0``) becomes its
shortest decimal form (``"3"``), anything else its string (``"unknown"``, ``"cut"``). A
:class:`LabelMap` says which labels are positive and which negative; pairs with any other label are
dropped and counted.

:func:`read_clough_stevenson` reads the Clough & Stevenson corpus of short answers (a directory
with ``file_information.csv``): one pair per answer, (answer, its Wikipedia source), labelled with
the answer's category (``cut``, ``light``, ``heavy``, ``non``).
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from neardup._types import BOOL
from neardup.errors import ConfigError, SourceError

__all__ = [
    "LabelMap",
    "LabeledPair",
    "LabeledSet",
    "labeled_set",
    "normalize_label",
    "read_clough_stevenson",
    "read_labeled",
]

CLOUGH_INDEX = "file_information.csv"


def normalize_label(value: object) -> str:
    """The text a label is compared as: numbers in shortest form, anything else as a string."""
    if isinstance(value, bool):
        return str(value).lower()
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return f"{number:g}" if np.isfinite(number) else text


@dataclass(frozen=True, slots=True)
class LabelMap:
    """Which labels are positive, which negative; every other label is dropped."""

    positive: frozenset[str] = frozenset({"1", "true"})
    negative: frozenset[str] = frozenset({"0", "false"})

    def __post_init__(self) -> None:
        if not self.positive:
            raise ConfigError("positive=(): at least one label must be positive")
        both = self.positive & self.negative
        if both:
            raise ConfigError(f"labels {sorted(both)!r} are both positive and negative")

    @classmethod
    def parse(cls, positive: str, negative: str) -> LabelMap:
        """From comma-separated lists, e.g. ``parse("3", "0.5,1")``."""
        return cls(frozenset(normalize_label(p) for p in positive.split(",") if p.strip()),
                   frozenset(normalize_label(n) for n in negative.split(",") if n.strip()))

    def classify(self, label: str) -> bool | None:
        if label in self.positive:
            return True
        return False if label in self.negative else None


@dataclass(frozen=True, slots=True)
class LabeledPair:
    """One judged pair: its documents (text and/or HTML), its raw label and its group."""

    pair_id: str
    label: str
    text_a: str | None = None
    text_b: str | None = None
    html_a: str | None = None
    html_b: str | None = None
    group: str | None = None
    extra: dict[str, float] = field(default_factory=dict)

    def documents(self, kind: str) -> tuple[str, str] | None:
        """The pair's two documents of ``kind`` (``text`` or ``html``), or None if absent."""
        first, second = (self.html_a, self.html_b) if kind == "html" else (self.text_a, self.text_b)
        return None if first is None or second is None else (first, second)


@dataclass(frozen=True, slots=True)
class LabeledSet:
    """The pairs kept after label mapping, their classes, and what was dropped."""

    source: str
    pairs: tuple[LabeledPair, ...]
    positive: BOOL
    dropped: dict[str, int]

    def __len__(self) -> int:
        return len(self.pairs)

    @property
    def groups(self) -> list[str]:
        return [p.group if p.group is not None else p.label for p in self.pairs]

    def counts(self) -> dict[str, int]:
        positives = int(self.positive.sum())
        return {"pairs": len(self), "positive": positives, "negative": len(self) - positives,
                "dropped": sum(self.dropped.values())}


def labeled_set(pairs: Iterable[LabeledPair], labels: LabelMap, source: str) -> LabeledSet:
    """Keep the pairs whose label is positive or negative under ``labels``; count the rest."""
    kept: list[LabeledPair] = []
    classes: list[bool] = []
    dropped: Counter[str] = Counter()
    for pair in pairs:
        decision = labels.classify(pair.label)
        if decision is None:
            dropped[pair.label] += 1
        else:
            kept.append(pair)
            classes.append(decision)
    return LabeledSet(source, tuple(kept), np.array(classes, dtype=np.bool_), dict(dropped))


def _numbers(row: dict[str, object]) -> dict[str, float]:
    """Every numeric field but the label: scores of other systems (baselines)."""
    return {name: float(value) for name, value in row.items()
            if name != "label" and isinstance(value, int | float) and not isinstance(value, bool)}


def _text_field(row: dict[str, object], name: str, where: str) -> str | None:
    value = row.get(name)
    if value is None or isinstance(value, str):
        return value
    raise ConfigError(f"{where}: field {name!r} must be a string, not {type(value).__name__}")


def _pair_of_row(row: dict[str, object], number: int, where: str) -> LabeledPair:
    if "label" not in row:
        raise ConfigError(f"{where}: no 'label' field")
    pair = LabeledPair(
        pair_id=str(row.get("pair_id", f"line-{number}")), label=normalize_label(row["label"]),
        text_a=_text_field(row, "text_a", where), text_b=_text_field(row, "text_b", where),
        html_a=_text_field(row, "html_a", where), html_b=_text_field(row, "html_b", where),
        group=None if row.get("group") is None else str(row["group"]),
        extra=_numbers(row))
    if pair.documents("text") is None and pair.documents("html") is None:
        raise ConfigError(f"{where}: needs text_a and text_b, or html_a and html_b")
    return pair


def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise SourceError(str(path), f"line {number}: not JSON ({error.msg})") from None
            if not isinstance(row, dict):
                raise SourceError(str(path), f"line {number}: not a JSON object")
            yield number, row


def read_labeled(path: str | Path, labels: LabelMap = LabelMap()) -> LabeledSet:
    """Read a labeled JSONL file, or a Clough-Stevenson directory (see the module docstring)."""
    location = Path(path)
    if not location.exists():
        raise SourceError(str(location), "no such file or directory")
    pairs = []
    try:
        if location.is_dir():
            return labeled_set(read_clough_stevenson(location), labels, str(location))
        for number, row in _jsonl_rows(location):
            where = f"{location}: line {number}"
            pairs.append(_pair_of_row(row, number, where))
    except (OSError, UnicodeDecodeError) as error:
        raise SourceError(str(location), str(error)) from None
    except ConfigError as error:
        raise SourceError(str(location), str(error).removeprefix(f"{location}: ")) from None
    return labeled_set(pairs, labels, str(location))


def _read_text(path: Path) -> str:
    """UTF-8, else Windows-1252 (several of the corpus's answers are in it)."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def read_clough_stevenson(directory: str | Path) -> list[LabeledPair]:
    """One pair per answer: (answer text, source text of its task), label = the category."""
    root = Path(directory)
    index = root / CLOUGH_INDEX
    if not index.is_file():
        raise SourceError(str(root), f"not a Clough-Stevenson directory (no {CLOUGH_INDEX})")
    with index.open(encoding="utf-8", newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row.get("Category") != "orig"]
    sources: dict[str, str] = {}
    pairs = []
    for row in rows:
        task = row["Task"].strip()
        if task not in sources:
            sources[task] = _read_text(root / f"orig_task{task}.txt")
        answer = _read_text(root / row["File"].strip())
        category = row["Category"].strip()
        pairs.append(LabeledPair(pair_id=row["File"].strip(), label=category, text_a=answer,
                                 text_b=sources[task]))
    return pairs
