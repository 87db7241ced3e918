"""The papers' own parameters, selectable by name: ``--preset broder1997 | sgm1998 | manku2007 |
smfa | pereira`` on ``dedup``, ``index`` and ``evaluate``.

A preset is data: the :class:`~neardup.config.DedupConfig` of the paper's batch method, the
:class:`~neardup.config.StoreConfig` of its store where the store can hold it, the ``evaluate``
methods of its comparison, and the list of the parameters the paper names, each as a path into
those configs (so that what ``summary.json`` prints is read from the config that ran, never
restated). Where the paper is silent the choice is said in ``notes``.
"""

from __future__ import annotations

from dataclasses import dataclass

from neardup.config import (
    ChunkConfig,
    ChunkMethod,
    DedupConfig,
    OverlapConfig,
    ParagraphConfig,
    ShingleConfig,
    SimHashConfig,
    SimHashMethod,
    SketchConfig,
    SketchMethod,
    SmfaConfig,
    StoreConfig,
)
from neardup.errors import ConfigError

__all__ = ["PRESETS", "Preset", "preset", "preset_names"]


@dataclass(frozen=True, slots=True)
class Preset:
    """One paper's parameters. ``named``: (what the paper calls it, path into ``dedup``, or into
    ``store`` after ``store.``); ``fixed``: (name, value) of what the implementation fixes (no
    option changes it)."""

    name: str
    paper: str
    dedup: DedupConfig
    store: StoreConfig | None
    evaluate: tuple[str, ...]
    named: tuple[tuple[str, str], ...]
    fixed: tuple[tuple[str, object], ...] = ()
    notes: str = ""

    def parameters(self) -> dict[str, object]:
        """Every named parameter with its value in this preset's configs."""
        values: dict[str, object] = {}
        for label, path in self.named:
            root: object = self.dedup
            if path.startswith("store."):
                root, path = self.store, path.removeprefix("store.")
            values[label] = _resolve(root, path)
        return values | dict(self.fixed)

    def as_dict(self) -> dict[str, object]:
        """What ``summary.json`` prints under ``preset``."""
        return {"name": self.name, "paper": self.paper, "parameters": self.parameters(),
                "notes": self.notes}


def _resolve(root: object, path: str) -> object:
    value = root
    for part in path.split("."):
        value = getattr(value, part)
    return value


_BRODER_SKETCH = SketchConfig(kind="mod", size=25, shingles=ShingleConfig(width=10), bits=40)
_MANKU_SIMHASH = SimHashConfig(ShingleConfig(width=1), "tf", 64, stop_words="english",
                               stemming="english")

PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset(
        "broder1997", "Broder, Glassman, Manasse & Zweig 1997, Syntactic clustering of the Web",
        DedupConfig(method="sketch", params=SketchMethod(_BRODER_SKETCH, drop_common=1000),
                    threshold=0.5, verify_shingles=ShingleConfig(width=10)),
        StoreConfig(sketch=_BRODER_SKETCH, sketch_clusters=0.5),
        ("sketch", "supershingle", "containment"),
        (("shingle width (words)", "params.sketch.shingles.width"),
         ("shingle fingerprint bits", "params.sketch.bits"), ("sampling", "params.sketch.kind"),
         ("sampling modulus m (1 in m shingles)", "params.sketch.size"),
         ("resemblance threshold", "threshold"),
         ("ignore shingles shared by more documents than", "params.drop_common"),
         ("super-shingle size (sketch values)", "params.supershingle_size"),
         ("whole-document levels hash", "exact.hash"),
         ("store: sketch", "store.sketch.tag"),
         ("store: clusters at estimated resemblance", "store.sketch_clusters")),
        (("whole-document levels", "identical, lexically equivalent, shingle-equivalent"),),
        "Pairs are verified on the same 10-word shingles. Super-shingle size: the paper gives "
        "none; 6 sketch values (dedup's default)."),
    Preset(
        "sgm1998", "Shivakumar & Garcia-Molina 1998, Finding near-replicas of documents on the web",
        DedupConfig(method="chunks", params=ChunkMethod(
            ChunkConfig("lines", 4), OverlapConfig(min_shared=15, algorithm="coarse", hashes=2))),
        None, ("chunks",),
        (("chunking", "params.chunks.spec"), ("T (shared chunks)", "params.overlap.min_shared"),
         ("all-pairs algorithm", "params.overlap.algorithm"),
         ("coarse-counting hash functions", "params.overlap.hashes")),
        (("chunk fingerprint bits", 32),),
        "The paper's other chunking, 2-line chunks with T = 25, is --method chunks --chunk "
        "lines:2 (T follows the chunking). The store keeps no chunk prints: no index form."),
    Preset(
        "manku2007", "Manku, Jain & Das Sarma 2007, Detecting near-duplicates for web crawling",
        DedupConfig(method="simhash", params=SimHashMethod(_MANKU_SIMHASH, max_hamming=3)),
        StoreConfig(simhash=_MANKU_SIMHASH, max_k=3, compress=True),
        ("simhash",),
        (("fingerprint bits f", "params.simhash.bits"),
         ("k (Hamming distance)", "params.max_hamming"),
         ("features: words per feature", "params.simhash.shingles.width"),
         ("feature weights", "params.simhash.weighting"),
         ("stop-word removal", "params.simhash.stop_words"),
         ("stemming", "params.simhash.stemming"), ("store: k", "store.max_k"),
         ("store: compressed tables", "store.compress")),
        (),
        "Weights: term frequency (the paper names weighted features without the formula; idf "
        "needs corpus statistics an online crawler lacks). Store tables: k + 1 = 4 blocks of "
        "16 bits, one table each (Example 3.1's 4-table design); neardup plan prints the "
        "others."),
    Preset(
        "smfa", "Wang & Chen, near-replica detection based on a single MD5 fingerprint (SMFA)",
        DedupConfig(method="smfa", params=SmfaConfig(segments=3, stop_words=True)),
        None, ("smfa", "keyword", "chunks"),
        (("longest segments n", "params.segments"), ("stop-word removal", "params.stop_words")),
        (("fingerprint", "MD5 (128 bits)"),
         ("segments split at", "HTML block tags (p and the other block elements)")),
        "The evaluate methods are the paper's comparison: SMFA, the keyword vectors and S&GM "
        "chunks."),
    Preset(
        "pereira", "Pereira, Baeza-Yates & Ziviani, Where and how duplicates occur in the web",
        DedupConfig(method="shingle-paragraphs",
                    params=ParagraphConfig(sentences=3, cut=150, min_chars=450, level=100,
                                               iterations=15)),
        None, ("shingle-paragraphs",),
        (("sentences per shingle paragraph", "params.sentences"),
         ("sentence cut (characters)", "params.cut"),
         ("only documents longer than (characters)", "params.min_chars"),
         ("level (% identical shingle paragraphs)", "params.level"),
         ("sub-collections m", "params.iterations")),
        (),
        "Level 100 gives the paper's clusters (equal shingle paragraphs); its near-duplicate "
        "levels are --method shingle-paragraphs --level 90, 70, 50. m = 15, the paper's value "
        "for its 2003 collection."),
)}


def preset_names() -> tuple[str, ...]:
    return tuple(PRESETS)


def preset(name: str) -> Preset:
    """The preset called ``name``."""
    if name not in PRESETS:
        raise ConfigError(f"preset={name!r}: one of {', '.join(PRESETS)}")
    return PRESETS[name]
