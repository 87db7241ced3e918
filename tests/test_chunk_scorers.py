"""The evaluation's pair scorers of the chunk-overlap methods: chunks, smfa, shingle-paragraphs."""

from __future__ import annotations

from neardup.config import ChunkMethod, DedupConfig, ParagraphConfig
from neardup.evaluation.documents import PairDocuments
from neardup.evaluation.labeled import LabeledPair
from neardup.evaluation.run import EvaluationConfig
from neardup.evaluation.scorers import scorer
from neardup.fingerprints.chunkprint import chunk_fingerprints


def values(name: str, pairs: list[LabeledPair], config: DedupConfig | None = None) -> list[float]:
    given = config or DedupConfig()
    params = () if given.params is None else (given.params,)
    method_config = EvaluationConfig(dedup=given, params=params).config_for(name)
    found = scorer(name).values(PairDocuments(pairs), method_config)
    return [float(v) for v in found.tolist()]


def text_pair(a: str, b: str) -> LabeledPair:
    return LabeledPair(pair_id="p", label="1", text_a=a, text_b=b)


def lines(start: int, count: int) -> str:
    return "\n".join(f"line {i} of the page with words" for i in range(start, start + count))


def test_shared_chunks_count_the_common_fingerprints() -> None:
    base = lines(0, 80)  # 20 chunks of 4 lines
    pairs = [text_pair(base, base), text_pair(base, lines(0, 64) + "\n" + lines(500, 16)),
             text_pair(base, lines(1000, 80))]
    assert values("chunks", pairs) == [20.0, 16.0, 0.0]
    assert chunk_fingerprints(base, ChunkMethod().chunks).size == 20
    assert scorer("chunks").rule.default == 15.0


def test_smfa_equality_needs_html() -> None:
    main = ("<p>The main paragraph of this page, the longest one.</p><p>Another paragraph, "
            "the second longest.</p><p>And a third one.</p>")  # all longer than the navigation
    html = [LabeledPair("h", "1", html_a=f"<nav>Home</nav>{main}",
                        html_b=f"<nav>Start | Contact</nav>{main}"),
            LabeledPair("i", "0", html_a=main, html_b="<p>Something else entirely.</p>")]
    assert values("smfa", html) == [1.0, 0.0]
    assert scorer("smfa").needs == "html"


def test_shingle_paragraph_percentage_relative_to_both() -> None:
    sentences = [f"Sentence {i} of this text." for i in range(30)]  # ten shingle paragraphs
    base = " ".join(sentences)
    pairs = [text_pair(base, base), text_pair(base, " ".join(sentences[:24])),
             text_pair(base, "short")]
    config = DedupConfig(method="shingle-paragraphs", params=ParagraphConfig(min_chars=100))
    assert values("shingle-paragraphs", pairs, config) == [100.0, 80.0, 0.0]
