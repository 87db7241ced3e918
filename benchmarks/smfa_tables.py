"""Wang & Chen's comparison (SMFA, their tables 2 and 3) run on the same pages: SMFA, the
keyword-vector method ("TW", WebGather's vector-space method) and S&GM98's chunks ("CB").

    python benchmarks/smfa_tables.py [--sizes 300 1000 0] [--variants 2] [--seed 0]

Pages: the trafilatura evaluation pages and the Zyte article pages (``../shared/data/html``),
1,104 HTML pages. Each page gets ``--variants`` near-copies, the edits cycling through:

- ``ad``: a 30-word paragraph of random words inserted after ``<body>`` (an advertisement);
- ``template``: a navigation list of 8 random links inserted after ``<body>`` and another title;
- ``edit``: 3 words replaced in one text node of at least 60 characters.

A page and its near-copies form a family: the ground truth is "same family" for every pair of the
collection (no sampling of negatives). Each method runs ``find_duplicates`` (one worker, one
core) with its paper's parameters (the ``smfa`` and ``sgm1998`` presets; keyword vectors: the 20
most frequent non-stop-word terms, cosine >= 0.9); a pair is decided a near-replica when both
documents end in one cluster. Table 3: precision and recall over all pairs, and recall per edit.
Besides, the precision of the pairs each method links directly (before clusters join them
transitively). Table 2: seconds per page for the whole run (HTML extraction included) and for
the method's own work (per-document fingerprinting and its pairing stage), at each size
(0 = every page). Pages of the same site may really be near-replicas of each other (shared
templates); they count as false positives here.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from common import (
    RESULTS_DIR,
    environment,
    load_average,
    markdown_table,
    pin_single_core,
    require_data,
    write_results,
)
from neardup.config import DedupConfig
from neardup.document import Document
from neardup.pipeline import find_duplicates
from neardup.presets import preset

EDITS = ("ad", "template", "edit")
METHODS = {"SMFA (smfa preset)": preset("smfa").dedup,
           "TW (keyword vectors)": DedupConfig(method="keyword"),
           "CB (S&GM chunks, sgm1998 preset)": preset("sgm1998").dedup}
PAPER_TIME = {"TW": "3M / 110M / 253M", "CB": "2M / 420M / 1386M", "SMFA": "2M / 80M / 140M"}
PAPER_PR = {"TW": (0.966, 0.718), "CB": (0.974, 0.813), "SMFA": (0.983, 0.846)}
WORDS = [f"word{i}" for i in range(5000)]


def load_pages() -> list[bytes]:
    folders = [require_data("html", "trafilatura-eval", "pages"),
               require_data("html", "zyte-article-benchmark", "html")]
    return [gzip.decompress(path.read_bytes()) for folder in folders
            for path in sorted(folder.glob("*.html.gz"))]


def _after_body(text: str, insert: str) -> str:
    body = re.search(r"<body[^>]*>", text, re.I)
    at = body.end() if body else 0
    return text[:at] + insert + text[at:]


def variant(html: bytes, edit: str, rng: np.random.Generator) -> bytes:
    text = html.decode("utf-8", "replace")
    if edit == "ad":
        text = _after_body(text, "<p>" + " ".join(rng.choice(WORDS, 30).tolist()) + "</p>")
    elif edit == "template":
        links = "".join(f'<li><a href="/{w}">{w}</a></li>' for w in rng.choice(WORDS, 8).tolist())
        text = _after_body(text, f"<ul>{links}</ul>")
        text = re.sub(r"<title>.*?</title>", "<title>another title</title>", text, count=1,
                      flags=re.S | re.I)
    else:
        nodes = [m for m in re.finditer(r">([^<>]{60,})<", text)]
        if nodes:
            node = nodes[int(rng.integers(len(nodes)))]
            words = node.group(1).split(" ")
            for at in rng.choice(len(words), min(3, len(words)), replace=False).tolist():
                words[at] = str(rng.choice(WORDS))
            text = text[: node.start(1)] + " ".join(words) + text[node.end(1):]
    return text.encode("utf-8")


def collection(pages: list[bytes], variants: int, seed: int) -> tuple[list[Document], list[int],
                                                                       list[str]]:
    """Documents (each page, then its near-copies), their family and their edit."""
    rng = np.random.default_rng(seed)
    docs, family, edits = [], [], []
    for index, page in enumerate(pages):
        for copy in range(variants + 1):
            edit = "original" if copy == 0 else EDITS[(index + copy - 1) % len(EDITS)]
            raw = page if copy == 0 else variant(page, edit, rng)
            docs.append(Document(id=f"{index}.{copy}", raw=raw, kind="html", source="bench"))
            family.append(index)
            edits.append(edit)
    return docs, family, edits


def _cluster_pairs(cluster: np.ndarray) -> set[tuple[int, int]]:
    members: dict[int, list[int]] = {}
    for doc, label in enumerate(cluster.tolist()):
        members.setdefault(label, []).append(doc)
    return {(a, b) for group in members.values()
            for i, a in enumerate(group) for b in group[i + 1:]}


def quality(cluster: np.ndarray, family: list[int], edits: list[str]) -> dict[str, Any]:
    predicted = _cluster_pairs(cluster)
    truth = _cluster_pairs(np.array(family))
    found = predicted & truth
    per_edit = Counter(edits[b] for a, b in truth if edits[a] == "original")
    hit = Counter(edits[b] for a, b in found if edits[a] == "original")
    return {"predicted_pairs": len(predicted), "true_pairs": len(truth), "found": len(found),
            "precision": len(found) / len(predicted) if predicted else 1.0,
            "recall": len(found) / len(truth) if truth else 1.0,
            "recall_per_edit": {e: hit[e] / per_edit[e] for e in EDITS if per_edit[e]}}


def run(docs: list[Document], config: DedupConfig) -> tuple[np.ndarray, dict[str, float],
                                                            list[tuple[int, int]]]:
    started = time.perf_counter()
    result = find_duplicates(docs, config)
    wall = time.perf_counter() - started
    pairs = list(zip(result.pairs.a.tolist(), result.pairs.b.tolist(), strict=True))
    seconds = result.stats["seconds"]
    assert isinstance(seconds, dict)
    near = float(seconds.get("near_candidates_and_verification", 0.0))
    return result.cluster, {"wall": wall, "near": near,
                            "fingerprint_seconds": float(seconds["fingerprint_summed"]),
                            "extract_seconds": float(seconds["extract_summed"])}, pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 0])
    parser.add_argument("--variants", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "smfa_tables.json")
    args = parser.parse_args()
    pages = load_pages()
    cpu = pin_single_core()
    docs, family, edits = collection(pages, args.variants, args.seed)
    for config in METHODS.values():  # JIT warm-up
        find_duplicates(docs[:30], config)
    timing: dict[str, dict[str, Any]] = {}
    qualities: dict[str, Any] = {}
    for size in args.sizes:
        count = len(docs) if size == 0 else min(size, len(docs))
        for name, config in METHODS.items():
            cluster, seconds, pairs = run(docs[:count], config)
            timing.setdefault(name, {})[str(count)] = seconds
            if count == len(docs):
                qualities[name] = quality(cluster, family, edits)
                right = sum(family[a] == family[b] for a, b in pairs)
                qualities[name]["pairs_found"] = len(pairs)
                qualities[name]["pair_precision"] = right / len(pairs) if pairs else 1.0
    payload = {"environment": environment(["numpy", "resiliparse"]), "load_average":
               load_average(), "cpu": cpu, "pages": len(pages), "documents": len(docs),
               "variants_per_page": args.variants, "timing": timing, "quality": qualities}
    write_results(args.out, payload, tables(payload))


def _own(seconds: dict[str, float]) -> float:
    """The method's own work: per-document fingerprinting (features included) and its stage."""
    return seconds["fingerprint_seconds"] + seconds["near"]


def tables(payload: dict[str, Any]) -> str:
    sizes = sorted({int(s) for t in payload["timing"].values() for s in t})
    rows2 = []
    for name, by_size in payload["timing"].items():
        short = name.split()[0]
        cells = [f"{by_size[str(s)]['wall'] / s * 1e3:.2f} / {_own(by_size[str(s)]) / s * 1e3:.2f}"
                 for s in sizes]
        rows2.append([name, *cells, PAPER_TIME[short]])
    table2 = markdown_table(["method", *(f"{s} pages: ms/page, whole / own" for s in sizes),
                             "paper (10K / 100K / 1M pages)"], rows2)
    rows3 = []
    for name, q in payload["quality"].items():
        precision, recall = PAPER_PR[name.split()[0]]
        per_edit = ", ".join(f"{e} {v:.2f}" for e, v in q["recall_per_edit"].items())
        rows3.append([name, f"{q['precision']:.3f}", f"{q['recall']:.3f}", per_edit,
                      str(q["predicted_pairs"]),
                      f"{q['pair_precision']:.3f} of {q['pairs_found']}",
                      f"{precision:.3f} / {recall:.3f}"])
    table3 = markdown_table(["method", "precision", "recall", "recall per edit",
                             "pairs decided (clusters)", "precision of the pairs found",
                             "paper: precision / recall"], rows3)
    return f"Table 2 (time)\n\n{table2}\n\nTable 3 (precision and recall)\n\n{table3}"


if __name__ == "__main__":
    sys.exit(main())
