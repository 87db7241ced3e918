"""The same article in other sites' frames: a corpus of loose HTML files with labelled pairs, and
``neardup dedup`` on it with the defaults and each ``--extract``.

``python benchmarks/syndication.py [--scratch DIR] [--seed N] [--runs NAME,...]`` writes the
corpus to ``DIR/pages/<host>/<n>.html`` (outside the repository; default
``/tmp/neardup-syndication``) with its truth file ``DIR/truth.json``, runs ``neardup dedup
DIR/pages --out DIR/out-<run>`` once per run (this checkout's ``src``), reads each run's
``documents``, ``pairs`` and ``clusters`` tables, and scores them against the truth.

- **Articles**: the article bodies of ``../shared/data/html/zyte-article-benchmark/`` (its
  ground truth; bodies of at least 120 words), cut into paragraphs. Each article belongs to one
  group of pages only, so two pages are a true pair exactly when they hold the same article.
- **Frames**: real pages of ``../shared/data/html/trafilatura-eval/pages/``; in each, the element
  whose ``<p>`` children hold the most text is emptied and receives the article (see
  ``templates.py``); navigation, sidebars, related lists and footers stay. A page whose frame
  still holds one of its labelled main-text snippets (``evaldata.json``, ``with``) is not used:
  its story was not in that one element, and a real frame carries no second story. The frame's own
  canonical link, ``og:url`` and ``<base>`` are removed, its title becomes the article's first
  words, and every page declares ``<link rel=canonical href=https://<host>/story/<n>>``, so
  that loose files have hosts. One frame is one site: ``big`` sites (``BIG_PAGES`` pages, enough
  for per-host template removal) and ``small`` ones (at most ``SMALL_PAGES`` pages, too few:
  the usual case of a syndicated story in a crawl).
- **Kinds of positive pair** (both pages hold one article):
  ``other-frame`` the article on two sites (second copy edited as a syndicated copy is: unchanged,
  up to three words changed, a by-line, its last paragraph dropped, a sentence appended);
  ``template-swap`` one site's page before and after a redesign (two frames, one host);
  ``ads`` one page fetched twice with other advertisements (in the article and atop the page);
  ``dates`` one page fetched twice, the dates of its frame and its date line changed;
  ``edit`` one page fetched twice, its article changed a little (words, a by-line, the last
  paragraph dropped or a sentence appended).
- **Negative pairs**: every other pair; labelled ``same-frame-big`` and ``same-frame-small``
  when the two pages are different articles in one site's frame (the pairs that must never
  merge), ``other`` otherwise.
- **Scoring**: a pair is found when the run puts both pages in one cluster (``clusters``), and
  found directly when ``pairs`` holds it. Per positive kind: recall, and precision over the
  found pairs touching a page of that kind; per negative kind: pairs merged; over all: precision
  and recall. Cost: wall and CPU seconds of the whole ``neardup`` process tree.

Writes ``results/syndication.json`` and prints the table.
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import lxml.html
import pyarrow.parquet as pq

from common import (
    REPO_DIR,
    RESULTS_DIR,
    TreeSampler,
    environment,
    load_average,
    markdown_table,
    require_data,
    write_results,
)
from neardup.text.canonical import canonical_text
from templates import articles, container
from templates import edited as template_edit

BIG_SITES, BIG_PAGES, SMALL_PAGES = 3, 14, 3
PAIRS = {"other-frame": 60, "template-swap": 12, "ads": 12, "dates": 12, "edit": 12}
ON_BIG = {"other-frame": 12, "ads": 3, "dates": 3, "edit": 3}
POSITIVE_KINDS = tuple(PAIRS)
NEGATIVE_KINDS = ("same-frame-big", "same-frame-small", "other")
RUNS = {"defaults": [], "one-view": ["--no-article-view"], "main": ["--extract", "main"],
        "article": ["--extract", "article"], "trafilatura": ["--extract", "trafilatura"],
        "no-templates": ["--no-templates"]}
SYNDICATION_EDITS = ("none", "words", "byline", "drop-last", "append")
SLOT = "{ARTICLE}"
TITLE = "{TITLE}"


# -- articles and frames --------------------------------------------------------------------------


_DECLARATIONS = ("//link[contains(concat(' ', translate(@rel, 'CANONIL', 'canonil'), ' '), "
                 "' canonical ')] | //meta[@property='og:url' or @name='og:url'] | //base")


def _frame(raw: bytes, snippets: list[str]) -> str | None:
    """A page as a frame: its article container emptied into ``{ARTICLE}``, its title
    ``{TITLE}``, its own address declarations removed; None when it does not make one, or
    when the frame still holds one of ``snippets`` (the page's own main text, as labelled by
    the trafilatura evaluation: a real frame does not carry another story)."""
    try:
        tree = lxml.html.fromstring(raw)
    except (ValueError, lxml.etree.ParserError):
        return None
    box = container(tree)
    if box is None or tree.find("head") is None:
        return None
    for child in list(box):
        box.remove(child)
    box.text = SLOT
    for element in tree.xpath(_DECLARATIONS):
        element.getparent().remove(element)
    title = tree.find(".//title")
    if title is None:
        title = lxml.html.Element("title")
        tree.find("head").insert(0, title)
    title.text = TITLE
    text = lxml.html.tostring(tree, encoding="unicode")
    visible = " " + canonical_text(lxml.html.fromstring(text).text_content()) + " "
    words = visible.count(" ") - 1
    ok = text.count(SLOT) == 1 and text.count(TITLE) == 1 and 150 <= words <= 4000
    left = any(f" {canonical_text(snippet)} " in visible for snippet in snippets)
    return text if ok and snippets and not left else None


def frames(seed: int) -> Iterator[tuple[str, str]]:
    """(source file name, frame) of the trafilatura pages, in a seeded order."""
    root = require_data("html", "trafilatura-eval")
    labels = {entry["file"]: entry["with"] for entry in
              json.loads((root / "evaldata.json").read_text()).values()}
    paths = sorted((root / "pages").glob("*.html.gz"))
    random.Random(seed).shuffle(paths)
    for path in paths:
        frame = _frame(gzip.decompress(path.read_bytes()),
                       labels.get(path.name.removesuffix(".gz"), []))
        if frame is not None:
            yield path.name, frame


# -- variants of a page ---------------------------------------------------------------------------


def edited(body: list[str], rng: random.Random, kinds: tuple[str, ...]) -> tuple[list[str], str]:
    """``body`` edited as a syndicated copy is (the by-line carries no "updated")."""
    return template_edit(body, rng, kinds, "By staff writers, {day} May {year}")


_BRANDS = ("Northwind", "Contoso", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Acme")
_GOODS = ("mattresses", "running shoes", "home insurance", "solar panels", "coffee machines",
          "city breaks", "electric bikes", "phone plans", "garden tools", "online courses")
_OFFERS = ("up to 40% off this week only", "free delivery on every order",
           "compare prices in seconds", "book now and save", "try it free for 30 days",
           "limited stock, order today")


def advert(rng: random.Random) -> str:
    return (f'<div class="advertisement">Advertisement. {rng.choice(_BRANDS)} '
            f"{rng.choice(_GOODS)}: {rng.choice(_OFFERS)}. Shop now</div>")


_YEAR = re.compile(r"\b(19[5-9]\d|20[0-3]\d)\b")
_NUMERIC_DATE = re.compile(r"\b(\d{1,2})([./])(\d{1,2})\2(\d{2,4})\b")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def redated(frame: str, rng: random.Random) -> str:
    """The frame with its years and numeric dates moved (another fetch, another day)."""
    shift = rng.randint(1, 3)
    frame = _YEAR.sub(lambda m: str(int(m.group(1)) + shift), frame)
    return _NUMERIC_DATE.sub(
        lambda m: f"{rng.randint(1, 28)}{m.group(2)}{m.group(3)}{m.group(2)}{m.group(4)}", frame)


def dateline(rng: random.Random) -> str:
    return (f"Updated {rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(2019, 2024)}, "
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}")


@dataclass(slots=True)
class Look:
    """How one copy of an article is dressed: frame changes, ads, date line."""

    ads: int = 0
    redate: bool = False
    dateline: bool = False


def render(frame: str, body: list[str], host: str, number: int, look: Look,
           rng: random.Random) -> bytes:
    if look.redate:
        frame = redated(frame, rng)
    paragraphs = [f"<p>{html.escape(p)}</p>" for p in body]
    if look.dateline:
        paragraphs.insert(0, f'<p class="dateline">{dateline(rng)}</p>')
    for _ in range(look.ads):
        paragraphs.insert(rng.randint(1, len(paragraphs)), advert(rng))
    title = html.escape(" ".join(" ".join(body).split()[:10]))
    page = frame.replace(SLOT, "".join(paragraphs)).replace(TITLE, title)
    canonical = f'<link rel="canonical" href="https://{host}/story/{number}">'
    page = re.sub(r"<head[^>]*>", lambda m: m.group(0) + canonical, page, count=1)
    if look.ads:
        page = re.sub(r"<body[^>]*>", lambda m: m.group(0) + advert(rng), page, count=1)
    return page.encode("utf-8")


# -- the corpus -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Site:
    host: str
    frame: str
    source: str
    capacity: int
    big: bool
    pages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def free(self) -> int:
        return self.capacity - len(self.pages)


@dataclass(slots=True)
class Corpus:
    """Sites and their pages, built group by group from the articles and the frames."""

    rng: random.Random
    bodies: list[list[str]]
    frames: Iterator[tuple[str, str]]
    sites: list[Site] = field(default_factory=list)
    used: int = 0
    groups: int = 0

    def article(self) -> int:
        if self.used == len(self.bodies):
            raise SystemExit(f"only {len(self.bodies)} articles: fewer pairs needed")
        self.used += 1
        return self.used - 1

    def site(self, big: bool, capacity: int) -> Site:
        try:
            source, frame = next(self.frames)
        except StopIteration:
            raise SystemExit("not enough frames among the trafilatura pages") from None
        prefix = "big" if big else "site"
        site = Site(f"{prefix}{len(self.sites):03d}.example", frame, source, capacity, big)
        self.sites.append(site)
        return site

    def small(self, need: int, avoid: Site | None = None) -> Site:
        for site in self.sites:
            if not site.big and site is not avoid and site.free >= need and \
                    site.capacity == SMALL_PAGES:
                return site
        return self.site(False, SMALL_PAGES)

    def big(self, need: int) -> Site:
        bigs = [s for s in self.sites if s.big and s.free >= need]
        return max(bigs, key=lambda s: s.free)

    def place(self, site: Site, kind: str, article: int, body: list[str], look: Look,
              edit: str = "none") -> None:
        site.pages.append({"kind": kind, "group": self.groups, "article": article,
                           "body": body, "look": look, "edit": edit})


def _pair_group(corpus: Corpus, kind: str, on_big: bool) -> None:
    rng, article = corpus.rng, corpus.article()
    body = corpus.bodies[article]
    if kind == "other-frame":
        first = corpus.big(1) if on_big else corpus.small(1)
        second = corpus.small(1, avoid=first)
        copy, edit = edited(body, rng, SYNDICATION_EDITS)
        corpus.place(first, kind, article, body, Look())
        corpus.place(second, kind, article, copy, Look(), edit)
    elif kind == "template-swap":
        for _ in range(2):
            corpus.place(corpus.site(False, 1), kind, article, body, Look())
        corpus.sites[-1].host = corpus.sites[-2].host  # one site, two designs
    else:
        site = corpus.big(2) if on_big else corpus.small(2)
        looks = {"ads": (Look(ads=rng.randint(2, 4)), Look(ads=rng.randint(2, 4))),
                 "dates": (Look(dateline=True), Look(redate=True, dateline=True)),
                 "edit": (Look(), Look())}[kind]
        copy, edit = (edited(body, rng, SYNDICATION_EDITS[1:]) if kind == "edit"
                      else (body, "none"))
        corpus.place(site, kind, article, body, looks[0])
        corpus.place(site, kind, article, copy, looks[1], edit)
    corpus.groups += 1


def build(seed: int) -> Corpus:
    rng = random.Random(seed)
    corpus = Corpus(rng, articles(seed), frames(seed))
    for _ in range(BIG_SITES):
        corpus.site(True, BIG_PAGES)
    plan = [(kind, index < ON_BIG.get(kind, 0)) for kind, count in PAIRS.items()
            for index in range(count)]
    rng.shuffle(plan)
    for kind, on_big in sorted(plan, key=lambda item: not item[1]):  # big sites first
        _pair_group(corpus, kind, on_big)
    for site in corpus.sites:  # the rest of each site: articles of their own
        while site.capacity > 1 and site.free and corpus.used < len(corpus.bodies):
            article = corpus.article()
            corpus.place(site, "single", article, corpus.bodies[article], Look())
            corpus.groups += 1
    return corpus


def write(corpus: Corpus, folder: Path, seed: int) -> list[dict[str, Any]]:
    """Write the pages (``folder/pages/<host>/<n>.html``); their records, in file order."""
    rng = random.Random(seed + 1)
    records: list[dict[str, Any]] = []
    numbers: dict[str, int] = {}
    for site in corpus.sites:
        for page in site.pages:
            number = numbers.get(site.host, 0)
            numbers[site.host] = number + 1
            path = folder / "pages" / site.host / f"{number}.html"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(render(site.frame, page["body"], site.host, number, page["look"],
                                    rng))
            records.append({"file": str(path.relative_to(folder / "pages")), "host": site.host,
                            "big": site.big, "frame": site.source, "kind": page["kind"],
                            "group": page["group"], "article": page["article"],
                            "edit": page["edit"]})
    return records


def labelled_pairs(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The positive pairs and the negatives of one frame (every other pair is negative)."""
    out = []
    for a, b in combinations(range(len(records)), 2):
        first, second = records[a], records[b]
        if first["article"] == second["article"]:
            out.append({"a": first["file"], "b": second["file"], "kind": first["kind"],
                        "positive": True})
        elif first["frame"] == second["frame"] and first["host"] == second["host"]:
            kind = "same-frame-big" if first["big"] else "same-frame-small"
            out.append({"a": first["file"], "b": second["file"], "kind": kind,
                        "positive": False})
    return out


# -- runs and scores ------------------------------------------------------------------------------


def run_dedup(pages: Path, out: Path, extra: list[str]) -> dict[str, float]:
    """``neardup dedup pages --out out [extra]`` from this checkout; its tree's wall and CPU."""
    env = {**os.environ, "PYTHONPATH": str(REPO_DIR / "src")}
    command = [sys.executable, "-c", "from neardup.cli.main import main; main()", "dedup",
               str(pages), "--out", str(out), "--quiet", "--force", *extra]
    sampler, started = TreeSampler(), time.perf_counter()
    process = subprocess.Popen(command, env=env)
    while process.poll() is None:
        sampler.poll(process.pid)
        time.sleep(0.05)
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode})")
    return {"wall_s": round(time.perf_counter() - started, 2),
            "cpu_s": round(sampler.cpu_seconds, 2)}


def found_pairs(out: Path, pages: Path) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(pairs in the same cluster, pairs of the pairs table), as sorted file names."""
    ids = pq.read_table(out / "documents.parquet", columns=["doc", "id"]).to_pydict()
    name = {doc: str(Path(path).relative_to(pages)) for doc, path in zip(ids["doc"], ids["id"],
                                                                          strict=True)}
    table = pq.read_table(out / "pairs.parquet", columns=["a", "b"]).to_pydict()
    direct = {tuple(sorted((name[a], name[b]))) for a, b in zip(table["a"], table["b"],
                                                                strict=True)}
    clusters = pq.read_table(out / "clusters.parquet", columns=["doc", "cluster"]).to_pydict()
    members: dict[int, list[str]] = {}
    for doc, cluster in zip(clusters["doc"], clusters["cluster"], strict=True):
        members.setdefault(cluster, []).append(name[doc])
    clustered = {tuple(sorted(pair)) for group in members.values()
                 for pair in combinations(group, 2)}
    return clustered, direct  # type: ignore[return-value]


def score(found: set[tuple[str, str]], truth: list[dict[str, Any]],
          kind_of: dict[str, str]) -> dict[str, Any]:
    labels = {tuple(sorted((p["a"], p["b"]))): p for p in truth}
    out: dict[str, Any] = {}
    for kind in POSITIVE_KINDS:
        wanted = {pair for pair, p in labels.items() if p["kind"] == kind}
        touching = {pair for pair in found if kind in (kind_of[pair[0]], kind_of[pair[1]])}
        hits = len(wanted & found)
        out[kind] = {"pairs": len(wanted), "found": hits,
                     "recall": round(hits / len(wanted), 4) if wanted else None,
                     "precision": round(hits / len(touching), 4) if touching else 1.0}
    for kind in NEGATIVE_KINDS[:2]:
        wanted = {pair for pair, p in labels.items() if p["kind"] == kind}
        out[kind] = {"pairs": len(wanted), "merged": len(wanted & found)}
    positives = {pair for pair, p in labels.items() if p["positive"]}
    true_found = len(found & positives)
    out["other"] = {"merged": len(found - set(labels))}
    out["all"] = {"found": len(found), "true": true_found,
                  "precision": round(true_found / len(found), 4) if found else 1.0,
                  "recall": round(true_found / len(positives), 4)}
    return out


def table(results: dict[str, Any], pages: int) -> str:
    rows = []
    for name, r in results.items():
        c = r["clusters"]
        rows.append([name, *(f"{c[k]['recall']:.3f}" for k in POSITIVE_KINDS),
                     f"{c['same-frame-big']['merged']} / {c['same-frame-small']['merged']}",
                     f"{c['all']['precision']:.3f}", f"{c['all']['recall']:.3f}",
                     f"{1000 * r['cost']['cpu_s'] / pages:.1f}"])
    return markdown_table(["run", *(f"{k} R" for k in POSITIVE_KINDS),
                           "same frame merged (big / small hosts)", "precision", "recall",
                           "CPU ms per page"], rows)


def shingles(text: str, width: int = 5) -> set[tuple[str, ...]]:
    words = canonical_text(text).split()
    return {tuple(words[i:i + width]) for i in range(max(1, len(words) - width + 1))}


def resemblance(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def spread(values: list[float]) -> dict[str, float]:
    """Minimum, quartiles and maximum of ``values``."""
    ordered = sorted(values)
    at = [ordered[round(q * (len(ordered) - 1))] for q in (0.0, 0.25, 0.5, 0.75, 1.0)]
    return dict(zip(("min", "q1", "median", "q3", "max"), (round(v, 3) for v in at),
                    strict=True))


def views(scratch: Path, thresholds: tuple[float, ...] = (0.8, 0.6)) -> dict[str, Any]:
    """Each extractor of ``article_extractors.py`` as a view of the pages, the labelled pairs
    decided by exact 5-word resemblance (no fingerprints, no templates): recall per positive
    kind, same-frame pairs passing, per threshold; and the spread of the resemblances per
    kind (``spread``)."""
    from article_extractors import CANDIDATES

    truth = json.loads((scratch / "truth.json").read_text())
    out: dict[str, Any] = {}
    for name, run in CANDIDATES.items():
        sets = {r["file"]: shingles(run((scratch / "pages" / r["file"]).read_bytes()))
                for r in truth["pages"]}
        scores = [(p["kind"], resemblance(sets[p["a"]], sets[p["b"]])) for p in truth["pairs"]]
        out[name] = {str(t): {kind: round(sum(s >= t for k, s in scores if k == kind)
                                          / sum(k == kind for k, _ in scores), 4)
                              for kind in (*POSITIVE_KINDS, *NEGATIVE_KINDS[:2])}
                     for t in thresholds}
        out[name]["spread"] = {kind: spread([s for k, s in scores if k == kind])
                               for kind in (*POSITIVE_KINDS, *NEGATIVE_KINDS[:2])}
        print(name, json.dumps(out[name]), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/neardup-syndication"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", default=",".join(RUNS))
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "syndication.json")
    parser.add_argument("--views", action="store_true",
                        help="Score each extractor's text of an existing --scratch corpus by "
                             "exact resemblance instead; add it to --out as 'views'.")
    args = parser.parse_args()
    if args.views:
        payload = json.loads(args.out.read_text())
        payload["views"] = views(args.scratch.resolve())
        payload["views_load_average"] = load_average()
        write_results(args.out, payload, payload.pop("markdown"))
        return
    if args.scratch.resolve().is_relative_to(REPO_DIR.resolve()):
        raise SystemExit(f"--scratch {args.scratch}: must be outside the repository")
    args.scratch = args.scratch.resolve()
    pages = args.scratch / "pages"
    if pages.exists():
        raise SystemExit(f"{pages} exists: remove it or choose another --scratch")
    corpus = build(args.seed)
    records = write(corpus, args.scratch, args.seed)
    truth = labelled_pairs(records)
    (args.scratch / "truth.json").write_text(json.dumps(
        {"note": "every pair of pages not listed is negative", "pages": records,
         "pairs": truth}, indent=1))
    kind_of = {r["file"]: r["kind"] for r in records}
    results: dict[str, Any] = {}
    for name in filter(None, args.runs.split(",")):
        out = args.scratch / f"out-{name.replace(', ', '-').replace(' ', '-')}"
        cost = run_dedup(pages, out, RUNS[name])
        clustered, direct = found_pairs(out, pages)
        results[name] = {"args": RUNS[name], "cost": cost,
                         "clusters": score(clustered, truth, kind_of),
                         "pairs": score(direct, truth, kind_of)}
        print(name, json.dumps(results[name]["clusters"]["all"]), cost, flush=True)
    counts: dict[str, int] = {}
    for pair in truth:
        counts[pair["kind"]] = counts.get(pair["kind"], 0) + 1
    payload = {"corpus": {"pages": len(records), "sites": len({r["host"] for r in records}),
                          "big_sites": BIG_SITES, "pages_per_big_site": BIG_PAGES,
                          "pages_per_small_site": SMALL_PAGES, "seed": args.seed,
                          "labelled_pairs": counts, "scratch": str(args.scratch)},
               "results": results, "load_average": load_average(),
               "environment": environment(["resiliparse", "trafilatura"])}
    write_results(args.out, payload, table(results, len(records)))


if __name__ == "__main__":
    main()
