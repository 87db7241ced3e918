"""Pages inside templates: a labeled crawl built from real article texts and real page frames.

``python benchmarks/templates.py [--quick]`` builds a crawl and runs ``dedup``'s in-memory path
(:func:`neardup.find_duplicates`) on it for every method, extractor and template setting:

- **Articles**: the article bodies of ``../shared/data/html/zyte-article-benchmark/`` (ground
  truth of that benchmark), cut into paragraphs.
- **Frames**: real pages of ``../shared/data/html/trafilatura-eval/pages/``. In each, the element
  holding the most paragraph text is the article container: its children are replaced by the
  new article's paragraphs; everything else (navigation, sidebars, related lists, footers, the
  original title) stays as it was. One frame is one site (``siteNN.example``).
- **The crawl**: ``SITES`` sites of ``PAGES`` pages each. ``SYNDICATED`` articles appear on two
  different sites (the second copy lightly edited: unchanged, up to three words changed, a
  by-line added, its last paragraph dropped, or a sentence appended), every other page holds an
  article of its own. Positive pairs: the two copies of a syndicated article. Every other pair
  of pages is negative; among them every two articles inside one site's frame.
- **Scoring**: the near pairs dedup reports (any pair not of the exact levels) and the pairs of
  its clusters, against the positives: precision, recall, F1.

Writes ``results/templates.json`` and prints the table.
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import random
import time
from pathlib import Path
from typing import Any

import lxml.html

from common import (
    RESULTS_DIR,
    environment,
    load_average,
    markdown_table,
    require_data,
    write_results,
)
from neardup.config import DedupConfig, TemplateConfig, TextConfig
from neardup.document import Document
from neardup.pipeline import find_duplicates

SITES, PAGES, SYNDICATED = 12, 20, 72
METHODS = ("simhash", "minhash", "sketch", "supershingle", "chunks", "smfa",
           "shingle-paragraphs")
EXTRACTORS = ("full", "main", "trafilatura")
EDITS = ("none", "words", "byline", "drop-last", "append")


def articles(seed: int) -> list[list[str]]:
    root = require_data("html", "zyte-article-benchmark")
    truth = json.loads((root / "ground-truth.json").read_text())
    bodies = [[p.strip() for p in truth[name]["articleBody"].split("\n") if p.strip()]
              for name in sorted(truth)]
    bodies = [b for b in bodies if sum(len(p.split()) for p in b) >= 120]
    random.Random(seed).shuffle(bodies)
    return bodies


def container(tree: Any) -> Any:
    """The element whose direct <p> children hold the most text."""
    best, score = None, 0
    for element in tree.iter():
        if not isinstance(element.tag, str):
            continue
        text = sum(len(child.text_content()) for child in element if child.tag == "p")
        if text > score:
            best, score = element, text
    return best


def frames(count: int, seed: int) -> list[tuple[str, bytes]]:
    """``count`` real frames: (name, HTML with a ``{ARTICLE}`` slot)."""
    root = require_data("html", "trafilatura-eval", "pages")
    paths = sorted(root.glob("*.html.gz"))
    random.Random(seed).shuffle(paths)
    found = []
    for path in paths:
        try:
            tree = lxml.html.fromstring(gzip.decompress(path.read_bytes()))
        except (ValueError, lxml.etree.ParserError):
            continue
        box = container(tree)
        if box is None:
            continue
        for child in list(box):
            box.remove(child)
        box.text = "{ARTICLE}"
        text = lxml.html.tostring(tree, encoding="unicode")
        frame_words = len(lxml.html.fromstring(text).text_content().split())
        if text.count("{ARTICLE}") == 1 and 150 <= frame_words <= 4000:
            found.append((path.name, text.encode("utf-8")))
        if len(found) == count:
            break
    return found


def edited(body: list[str], rng: random.Random, kinds: tuple[str, ...] = EDITS,
           byline: str = "By staff writers, updated {day} May {year}") -> tuple[list[str], str]:
    """``body`` with one edit of a kind drawn from ``kinds``; ``byline`` is the line a by-line
    edit puts first (``day`` and ``year`` drawn)."""
    kind = rng.choice(kinds)
    out = list(body)
    if kind == "words":
        for _ in range(rng.randint(1, 3)):
            index = rng.randrange(len(out))
            words = out[index].split()
            words[rng.randrange(len(words))] = rng.choice(["reportedly", "latest", "official"])
            out[index] = " ".join(words)
    elif kind == "byline":
        day, year = rng.randint(1, 28), rng.randint(2019, 2024)
        out.insert(0, byline.format(day=day, year=year))
    elif kind == "drop-last" and len(out) > 3:
        out.pop()
    elif kind == "append":
        out.append("This story was first published by a partner news agency.")
    return out, kind


def page(frame: bytes, body: list[str]) -> bytes:
    paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in body)
    return frame.replace(b"{ARTICLE}", paragraphs.encode("utf-8"))


def crawl(seed: int, sites: int, pages: int, syndicated: int) -> tuple[list[Document],
                                                                        set[tuple[int, int]],
                                                                        dict[str, int]]:
    """The documents, the positive pairs (doc numbers, low first) and the edit counts."""
    rng = random.Random(seed)
    bodies = articles(seed)
    chosen_frames = frames(sites, seed)
    slots = [(site, index) for site in range(len(chosen_frames)) for index in range(pages)]
    rng.shuffle(slots)
    assignment: dict[tuple[int, int], tuple[int, list[str]]] = {}
    edits: dict[str, int] = {}
    article = 0
    free = list(slots)
    for _ in range(syndicated):
        first = free.pop()
        second = next(s for s in reversed(free) if s[0] != first[0])
        free.remove(second)
        copy, kind = edited(bodies[article], rng)
        edits[kind] = edits.get(kind, 0) + 1
        assignment[first] = (article, bodies[article])
        assignment[second] = (article, copy)
        article += 1
    if syndicated + len(free) > len(bodies):
        raise SystemExit(f"{syndicated + len(free)} articles needed, {len(bodies)} available")
    for slot in free:
        assignment[slot] = (article, bodies[article])
        article += 1
    docs, owner = [], []
    for site, index in sorted(assignment):
        number, body = assignment[(site, index)]
        host = f"site{site:02d}.example"
        docs.append(Document(f"{host}/{index}", page(chosen_frames[site][1], body),
                             url=f"http://{host}/story/{index}", host=host))
        owner.append(number)
    positives = {(a, b) for a in range(len(docs)) for b in range(a + 1, len(docs))
                 if owner[a] == owner[b]}
    return docs, positives, edits


def score(found: set[tuple[int, int]], positives: set[tuple[int, int]]) -> dict[str, float]:
    tp = len(found & positives)
    precision = tp / len(found) if found else 1.0
    recall = tp / len(positives) if positives else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"pairs": len(found), "tp": tp, "precision": round(precision, 4),
            "recall": round(recall, 4), "f1": round(f1, 4)}


def cluster_pairs(cluster: Any) -> set[tuple[int, int]]:
    groups: dict[int, list[int]] = {}
    for doc, label in enumerate(cluster.tolist()):
        groups.setdefault(label, []).append(doc)
    return {(a, b) for members in groups.values() for i, a in enumerate(members)
            for b in members[i + 1:]}


def run(docs: list[Document], positives: set[tuple[int, int]], config: DedupConfig) -> dict[str,
                                                                                         Any]:
    started = time.perf_counter()
    result = find_duplicates(docs, config)
    seconds = time.perf_counter() - started
    pairs = {(min(a, b), max(a, b)) for a, b in zip(result.pairs.a.tolist(),
                                                   result.pairs.b.tolist(), strict=True)}
    templates = result.stats.get("templates", {})
    return {"pairs": score(pairs, positives), "clusters": score(cluster_pairs(result.cluster),
                                                                positives),
            "seconds": round(seconds, 2),
            "template_shingles": templates.get("template_shingles", 0)
            if isinstance(templates, dict) else 0}


def configs(methods: tuple[str, ...], extractors: tuple[str, ...]) -> list[tuple[str, DedupConfig]]:
    out = []
    for method in methods:
        for extractor in extractors:
            for templates in (True, False):
                name = f"{method}/{extractor}/{'templates' if templates else 'no-templates'}"
                out.append((name, DedupConfig(method=method,
                                              text=TextConfig(extract=extractor),  # type: ignore[arg-type]
                                              templates=TemplateConfig(enabled=templates))))
    return out


def sweep_configs() -> list[tuple[str, DedupConfig]]:
    """The verification floor of the methods without a threshold of their own, and min-hash's
    threshold, on full text with templates removed."""
    out = []
    for floor in (0.3, 0.4, 0.5, 0.6, 0.7):
        for method in ("chunks", "smfa", "supershingle", "simhash"):
            out.append((f"{method}/full/templates/min-resemblance {floor}",
                        DedupConfig(method=method, min_resemblance=floor)))
    for threshold in (0.5, 0.6, 0.7, 0.8, 0.9):
        out.append((f"minhash/full/templates/threshold {threshold}",
                    DedupConfig(method="minhash", threshold=threshold)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--extractors", default=",".join(EXTRACTORS))
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "templates.json")
    parser.add_argument("--sweep", action="store_true",
                        help="Sweep the verification floor and min-hash's threshold instead "
                             "(results/templates_sweep.json).")
    parser.add_argument("--write-crawl", type=Path, default=None,
                        help="Also write the crawl as JSONL (id, url, html) and its positives.")
    args = parser.parse_args()
    docs, positives, edits = crawl(args.seed, SITES, PAGES, SYNDICATED)
    if args.write_crawl is not None:
        args.write_crawl.mkdir(parents=True, exist_ok=True)
        with open(args.write_crawl / "crawl.jsonl", "w") as out:
            for doc in docs:
                out.write(json.dumps({"id": doc.id, "url": doc.url,
                                      "html": doc.raw.decode("utf-8")}) + "\n")
        (args.write_crawl / "positives.json").write_text(json.dumps(sorted(positives)))
    results = {}
    chosen = sweep_configs() if args.sweep else configs(tuple(args.methods.split(",")),
                                                         tuple(args.extractors.split(",")))
    if args.sweep and args.out == RESULTS_DIR / "templates.json":
        args.out = RESULTS_DIR / "templates_sweep.json"
    for name, config in chosen:
        results[name] = run(docs, positives, config)
        print(name, results[name], flush=True)
    rows = [[name, r["pairs"]["precision"], r["pairs"]["recall"], r["pairs"]["f1"],
             r["clusters"]["precision"], r["clusters"]["recall"], r["clusters"]["f1"],
             r["pairs"]["pairs"]] for name, r in results.items()]
    table = markdown_table(["method / extractor / templates", "pair precision", "pair recall",
                            "pair F1", "cluster precision", "cluster recall", "cluster F1",
                            "pairs reported"], rows)
    payload = {"crawl": {"sites": SITES, "pages_per_site": PAGES, "documents": len(docs),
                         "syndicated_articles": SYNDICATED, "positive_pairs": len(positives),
                         "edits": edits, "seed": args.seed},
               "results": results, "load_average": load_average(),
               "environment": environment(["resiliparse", "trafilatura"])}
    write_results(args.out, payload, table)


if __name__ == "__main__":
    main()
