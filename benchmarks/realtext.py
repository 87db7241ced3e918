"""A real-text benchmark corpus: JSONL documents built from the text of the shared real pages.

    python benchmarks/realtext.py --documents 100000 [--seed 1] [--out FOLDER]

The text of every page of the shared HTML sets (``html/trafilatura-eval/pages`` and
``html/zyte-article-benchmark/html``, about 1,100 pages in a dozen languages) is extracted once
(neardup's ``full`` extractor, resiliparse) and cached in the scratch folder as ``pages.json``.
Each page is put in a *group* by the script most of its letters are written in (Latin split into
plain-ASCII and accented, Cyrillic, CJK, Greek, Arabic, ...), and its text is cut into
paragraphs (its lines).

A document is made of runs of 1 to 8 consecutive paragraphs, each run from a page of one group
(the group of a page drawn uniformly), until it holds at least a target length drawn uniformly
from 1,000 to 6,000 characters: real sentences, real languages and real boilerplate lines, but
no two originals the same page. ``COPY_SHARE`` of the documents are planted copies of an earlier
original: exact copies, or copies with a share (the edit level, one of ``EDIT_LEVELS``) of their
white-space separated words replaced by words of the same group (for CJK text a "word" is a run
between spaces, so the share of changed characters is larger there).

Every draw of document ``i`` comes from a generator seeded by ``(seed, i)``, and a copy
regenerates its original from that original's number: the corpus of N documents is the first N
lines of any larger corpus of the same seed. The labels (per document: its original's number,
its edit level, -1 for an original) go to ``labels.npz`` in the layout of ``scale_corpus.py``
(``origin``, ``level``, ``original_doc``), so :func:`scale.quality` reads them; ids are
``d<number>``. The corpus is written to a scratch folder outside the repository (default
``../scratch/realtext-<N>`` next to it), once: a finished corpus (``labels.npz`` present) is
reused.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common import DATA_DIR, REPO_DIR, skip

__all__ = ["COPY_SHARE", "EDIT_LEVELS", "PAGE_SETS", "Pool", "corpus_folder", "load_pool",
           "make_corpus", "script_group"]

PAGE_SETS = (("trafilatura-eval", "pages"), ("zyte-article-benchmark", "html"))
COPY_SHARE = 0.20
EDIT_LEVELS = (0.0, 0.01, 0.02, 0.05, 0.10)
TARGET_CHARS = (1_000, 6_000)
RUN_PARAGRAPHS = (1, 8)
MIN_PAGE_CHARS = 200
SCRATCH = REPO_DIR.parent / "scratch"
_CJK = {"CJK", "HIRAGANA", "KATAKANA", "HANGUL"}


def corpus_folder(documents: int, root: Path = SCRATCH) -> Path:
    return root / f"realtext-{documents}"


def _letter_script(char: str) -> str:
    name = unicodedata.name(char, "")
    script = name.split(" ", 1)[0] if name else "OTHER"
    return "CJK" if script in _CJK else script


def script_group(text: str) -> str:
    """The script most letters of ``text`` are written in, lower case; Latin is ``latin-ascii``
    when under 1% of its letters are non-ASCII, else ``latin-accented``."""
    scripts = Counter(_letter_script(c) for c in text if c.isalpha())
    if not scripts:
        return "none"
    script = scripts.most_common(1)[0][0]
    if script != "LATIN":
        return script.lower()
    accented = sum(1 for c in text if c.isalpha() and not c.isascii())
    return "latin-ascii" if accented < 0.01 * scripts["LATIN"] else "latin-accented"


def _page_paths() -> list[Path]:
    paths: list[Path] = []
    for name, folder in PAGE_SETS:
        where = DATA_DIR / "html" / name / folder
        if where.is_dir():
            paths += sorted(where.glob("*.html.gz"))
    if not paths:
        skip(f"no pages under {DATA_DIR / 'html'} ({', '.join(n for n, _ in PAGE_SETS)})")
    return paths


def _extract_pages(cache: Path) -> list[str]:
    """The text of every shared page (neardup's full extractor), extracted once into ``cache``."""
    if cache.exists():
        texts: list[str] = json.loads(cache.read_text(encoding="utf-8"))
        return texts
    from neardup.text.extract import extract

    texts = [extract(gzip.decompress(path.read_bytes()), "full") for path in _page_paths()]
    cache.parent.mkdir(parents=True, exist_ok=True)
    temporary = cache.with_suffix(".tmp")
    temporary.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    temporary.replace(cache)
    return texts


@dataclass(frozen=True, slots=True)
class Pool:
    """The paragraphs of the pages, by page, the pages of each group, and each group's words."""

    paragraphs: list[list[str]]
    groups: list[str]
    pages_of: dict[str, list[int]]
    words_of: dict[str, list[str]]

    def group_sizes(self) -> dict[str, int]:
        return {group: len(pages) for group, pages in sorted(self.pages_of.items())}


def load_pool(root: Path = SCRATCH) -> Pool:
    """The paragraph pool of the shared pages (pages under ``MIN_PAGE_CHARS`` left out)."""
    paragraphs: list[list[str]] = []
    groups: list[str] = []
    for text in _extract_pages(root / "realtext-pages.json"):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if sum(map(len, lines)) >= MIN_PAGE_CHARS:
            paragraphs.append(lines)
            groups.append(script_group(text))
    pages_of: dict[str, list[int]] = {}
    words_of: dict[str, list[str]] = {}
    for page, group in enumerate(groups):
        pages_of.setdefault(group, []).append(page)
        words_of.setdefault(group, []).extend(" ".join(paragraphs[page]).split())
    return Pool(paragraphs, groups, pages_of, words_of)


def _rng(seed: int, document: int) -> random.Random:
    return random.Random((seed << 40) ^ document)


def _original(pool: Pool, seed: int, number: int) -> tuple[str, str]:
    """(text, group) of original ``number``: runs of consecutive paragraphs of one group."""
    rng = _rng(seed, number)
    group = pool.groups[rng.randrange(len(pool.groups))]
    pages = pool.pages_of[group]
    target = rng.randint(*TARGET_CHARS)
    parts: list[str] = []
    size = 0
    while size < target:
        lines = pool.paragraphs[pages[rng.randrange(len(pages))]]
        start = rng.randrange(len(lines))
        for line in lines[start:start + rng.randint(*RUN_PARAGRAPHS)]:
            parts.append(line)
            size += len(line) + 1
    return "\n".join(parts), group


def _edited(text: str, words: Sequence[str], level: float, rng: random.Random) -> str:
    """``text`` with ``level`` of its white-space separated words replaced (lines kept)."""
    lines = [line.split(" ") for line in text.split("\n")]
    places = [(i, j) for i, line in enumerate(lines) for j in range(len(line))]
    for i, j in rng.sample(places, max(1, round(level * len(places)))):
        lines[i][j] = words[rng.randrange(len(words))]
    return "\n".join(" ".join(line) for line in lines)


def documents(pool: Pool, count: int, seed: int) -> Iterator[tuple[str, int, float]]:
    """(text, original number, edit level or -1) of each document, in order."""
    originals: list[int] = []
    for number in range(count):
        rng = _rng(seed, number)
        is_copy = bool(originals) and rng.random() < COPY_SHARE
        if not is_copy:
            originals.append(number)
            yield _original(pool, seed, number)[0], len(originals) - 1, -1.0
            continue
        origin = rng.randrange(len(originals))
        level = EDIT_LEVELS[rng.randrange(len(EDIT_LEVELS))]
        text, group = _original(pool, seed, originals[origin])
        if level > 0:
            text = _edited(text, pool.words_of[group], level, rng)
        yield text, origin, level


def make_corpus(count: int, seed: int = 1, folder: Path | None = None,
                root: Path = SCRATCH) -> Path:
    """Write (once) ``corpus.jsonl`` and ``labels.npz`` of ``count`` documents; the folder."""
    folder = folder or corpus_folder(count, root)
    labels = folder / "labels.npz"
    if labels.exists():
        return folder
    pool = load_pool(root)
    folder.mkdir(parents=True, exist_ok=True)
    origin = np.empty(count, dtype=np.int64)
    level = np.empty(count)
    temporary = folder / "corpus.jsonl.tmp"
    with open(temporary, "w", encoding="utf-8") as out:
        for number, (text, original, edit) in enumerate(documents(pool, count, seed)):
            origin[number], level[number] = original, edit
            out.write(json.dumps({"id": f"d{number}", "text": text}, ensure_ascii=False) + "\n")
    temporary.replace(folder / "corpus.jsonl")
    original_doc = np.flatnonzero(level < 0)
    np.savez(folder / "labels.tmp.npz", origin=origin, level=level, original_doc=original_doc)
    (folder / "labels.tmp.npz").replace(labels)
    return folder


def describe(folder: Path) -> dict[str, object]:
    """Documents, bytes, share of copies per edit level, of a written corpus."""
    labels = np.load(folder / "labels.npz")
    level = labels["level"]
    size = (folder / "corpus.jsonl").stat().st_size
    return {"documents": int(level.size), "jsonl_bytes": size,
            "mean_bytes_per_line": round(size / level.size),
            "copies_by_edit_level": {f"{v:.2f}": int((level == v).sum()) for v in EDIT_LEVELS}}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="the corpus folder")
    args = parser.parse_args(argv)
    folder = make_corpus(args.documents, args.seed, args.out)
    print(json.dumps({"folder": str(folder), **describe(folder),
                      "groups": load_pool().group_sizes()}, indent=2))


if __name__ == "__main__":
    main()
