"""The method registry is the only list of methods: the config layer, ``dedup`` (in memory and
through the command line's engine), ``evaluate``'s scorers and the presets all read it, and a
method registered at run time appears everywhere without editing any other list."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.config import (
    DedupConfig,
    MethodSpec,
    ParagraphConfig,
    method_names,
    method_spec,
)
from neardup.document import Document
from neardup.errors import ConfigError
from neardup.evaluation.documents import PairDocuments
from neardup.evaluation.labeled import LabeledPair
from neardup.evaluation.scorers import scorer, scorer_names
from neardup.methods import registry
from neardup.methods.pairs import Pairs, pair_methods
from neardup.methods.prints import Prints
from neardup.methods.scoring import Rule, ScoredPairs, Scorer
from neardup.methods.unit import FeatureExtractor, NearMethod, NearStage
from neardup.methods.verify import verified_pairs
from neardup.pipeline import find_duplicates
from neardup.presets import PRESETS

FAKE = "same-length"
WORDS = [f"w{i}" for i in range(2000)]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _corpus() -> list[Document]:
    """Pairs of HTML pages that differ in one word (near-copies of every method's liking), and
    unrelated pages."""
    rng = random.Random(7)
    docs = []
    for i in range(4):
        lines = [_text(rng, 30) + "." for _ in range(3)] + [_text(rng, 12) + "." for _ in range(97)]
        edited = list(lines)
        edited[50] = _text(rng, 12) + "."
        for side, body in (("a", lines), ("b", edited)):
            html = "".join(f"<p>{line}</p>" for line in body)
            docs.append(Document(f"d{i}{side}", f"<html><body>{html}</body></html>".encode()))
    return docs


def _length_features(config: DedupConfig) -> FeatureExtractor[int]:
    def extract(doc: Document, text: str, canonical: bytes) -> int:
        return canonical.count(b" ") + 1 if canonical else 0

    return extract


def _find_same_length(config: DedupConfig, prints: list[Prints[int]],
                      survivors: np.ndarray) -> NearStage:
    """Candidates: documents with the same number of tokens, each paired with the first."""
    first: dict[int, int] = {}
    a, b = [], []
    for position, doc in enumerate(survivors.tolist()):
        length = prints[doc].features
        assert length is not None
        head = first.setdefault(length, position)
        if head != position:
            a.append(head)
            b.append(position)
    ia, ib = np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)
    pairs, rejected = verified_pairs(config, prints, survivors, ia, ib,
                                     np.zeros(ia.size, dtype=np.int64))
    return NearStage(pairs, int(ia.size), rejected, {"lengths": len(first)})


def _length_gaps(documents: ScoredPairs, config: DedupConfig) -> np.ndarray:
    lengths = np.array([tokens.count(b" ") + 1 for tokens in documents.canonical], dtype=float)
    view = documents.text
    return np.asarray(np.abs(lengths[view.first] - lengths[view.second]), dtype=np.float64)


FAKE_METHOD: NearMethod[int] = NearMethod(
    spec=MethodSpec(FAKE, lambda c: {"same-length": "same-length:v1"}),
    find=_find_same_length, features=_length_features,
    verification="equal token counts, then resemblance >= the floor",
    scorer=Scorer(FAKE, _length_gaps, Rule("token count gap", "gap", at_most=True)))


@pytest.fixture
def fake_method() -> Iterator[NearMethod[int]]:
    registry.register(FAKE_METHOD)
    try:
        yield FAKE_METHOD
    finally:
        registry.unregister(FAKE)


def test_registry_and_config_layer_list_the_same_methods() -> None:
    assert registry.method_names() == method_names()
    assert registry.method_names() == (registry.EXACT.name,
                                       *(unit.name for unit in registry.BUILTIN))
    for unit in (registry.EXACT, *registry.near_methods()):
        assert unit.spec is method_spec(unit.name)
        assert unit.scorer.name == unit.name
        assert unit.verification
    assert pair_methods() == ("exact", "revisit", *registry.method_names()[1:])


@pytest.mark.parametrize("name", registry.method_names())
def test_every_registered_method_runs_through_dedup_evaluate_and_tags(name: str) -> None:
    # Pereira's default level (100%) pairs only equal shingle paragraphs: one edit breaks it
    config = (DedupConfig(method=name, params=ParagraphConfig(level=90))
              if name == "shingle-paragraphs" else DedupConfig(method=name))
    result = find_duplicates(_corpus(), config)
    found = set(result.pairs.method_names())
    expected = set() if name == "exact" else {name}  # no two pages are equal
    assert found == expected and len(result.pairs) == 4 * len(expected)
    assert set(config.tags) >= {"text", "exact", "verify", "templates"}
    pairs = [LabeledPair(f"p{i}", "yes" if i == 0 else "no", text_a="a b c d e f " * (i + 3),
                         text_b="a b c d e f " * 3,
                         html_a="<p>" + "a b c d e f " * (i + 3) + "</p>",
                         html_b="<p>" + "a b c d e f " * 3 + "</p>") for i in range(3)]
    values = scorer(name).values(PairDocuments(pairs), config)
    assert values.shape == (3,) and np.isfinite(values).all()


def test_presets_name_registered_methods_and_scorers() -> None:
    for preset in PRESETS.values():
        assert preset.dedup.method in registry.method_names()
        for name in preset.evaluate:
            assert scorer(name).name == name


def test_a_registered_method_appears_everywhere_without_another_list(
        fake_method: NearMethod[int], tmp_path: Path) -> None:
    help_text = CliRunner().invoke(cli, ["dedup", "--help"]).output
    assert FAKE in help_text
    config = DedupConfig(method=FAKE)
    assert config.tags["same-length"] == "same-length:v1"
    assert FAKE in scorer_names() and scorer(FAKE) is fake_method.scorer
    result = find_duplicates(_corpus(), config)
    assert isinstance(result.pairs, Pairs)
    assert FAKE in result.pairs.method_names()
    inputs = tmp_path / "docs.jsonl"
    inputs.write_text("".join(json.dumps({"id": d.id, "text": d.raw.decode()}) + "\n"
                              for d in _corpus()))
    run = CliRunner().invoke(cli, ["dedup", str(inputs), "--out", str(tmp_path / "out"),
                                   "--method", FAKE, "--workers", "1", "--format", "jsonl"])
    assert run.exit_code == 0, run.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["config"]["same-length"] == "same-length:v1"
    methods = {json.loads(line)["method"]
               for line in (tmp_path / "out" / "pairs.jsonl").read_text().splitlines()}
    assert FAKE in methods


def test_an_unregistered_method_is_gone_and_builtins_stay(fake_method: NearMethod[int]) -> None:
    registry.unregister(FAKE)
    try:
        with pytest.raises(ConfigError, match=FAKE):
            DedupConfig(method=FAKE)
        assert FAKE not in CliRunner().invoke(cli, ["dedup", "--help"]).output
        with pytest.raises(ConfigError):
            registry.unregister("simhash")
        with pytest.raises(ConfigError):
            registry.register(registry.BUILTIN[0])
    finally:
        registry.register(FAKE_METHOD)
