"""A small synthetic web crawl with planted duplicates, written as a WARC.

:func:`generate_crawl` writes a WARC of ``pages`` HTML responses (plus revisit records) over nine
to twelve hosts. Each host has a short template (header, nav, footer) around long bodies (300-800
words) of prose from a seeded vocabulary; pages link within and across hosts. Planted, with the
truth returned as a :class:`PlantedTruth`: ``mirror`` (a host served again, path for path, under
another name with a banner), ``exact`` (byte-identical pages at ``/`` and ``/index.html``, or with
``?sessionid=``), ``near`` (a copy with an ad block, another date, another view count, or a few
words edited), ``lexical`` (same words, other markup, case, punctuation and whitespace),
``contained`` (a page quoted whole in a longer commentary: high containment, lower resemblance)
and ``revisit`` (a URL captured again a week later, written as a WARC revisit record). All other
pages are ``unrelated``: they share only template text. The same seed gives the same bytes.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from neardup.demo import KINDS, Kind, PlantedGroup, PlantedTruth
from neardup.demo.warcwriter import WarcWriter, sha1_digest
from neardup.errors import ConfigError

__all__ = ["KINDS", "MIN_PAGES", "Kind", "PlantedGroup", "PlantedTruth", "generate_crawl"]

MIN_PAGES = 60
CRAWL_START = datetime(2024, 3, 4, 9, 0, 0, tzinfo=UTC)
REVISIT_DELAY = timedelta(days=7)


def _words(text: str, sep: str | None = None) -> list[str]:
    return text.split(sep)


_FUNCTION = _words(
    "the of and to a in is that for it as was with be by on not this are or from at which but "
    "have an they more can their all would there when than into its most some these between "
    "through each under while also"
)
_WORDS = _words(
    "time year people way day world life part place case week company system program question "
    "work number night point home water room area money story fact month study book job word "
    "business issue side kind house service power hour game line member law city name team idea "
    "body level office door health art history party result change morning reason research air "
    "teacher force river garden market harbor valley winter signal engine village bridge report "
    "season station museum library council island forest letter field country road coast paper "
    "record table window train trade weather answer voice stone light music science network "
    "model energy process theory culture kitchen journey evening summer harvest county mountain "
    "canal ferry lantern archive ledger orchard meadow quarry tower chapel mill factory workshop "
    "builds carries opens measures follows explains offers shows grows holds moves writes small "
    "early local public recent quiet narrow ancient northern careful simple bright heavy open"
)
_ONSETS = _words("b br c ch cl d dr f fl g gr h j k l m n p pl pr r s sh sk st t th tr v w z")
_VOWELS = _words("a e i o u a e o ai ea ou io")
_CODAS = ["", "", "", "n", "r", "s", "l", "t", "nd", "st", "m", "ck"]
_FIRST = _words("Anna Marek Lena Tomas Ruth Oskar Ines Pavel Greta Hugo Mira Jonas Clara Felix")
_SURNAME = _words("son er berg man ova ski ley ton")
_SUFFIXES = _words("Review Journal Notes Gazette Weekly Times Digest Post Chronicle Observer")
_SECTIONS = _words("Science Travel Sports Culture Technology Gardening Music Food History Local")
_MONTHS = _words("January February March April May June July August September October November")
_MONTHS.append("December")
_TAGLINES = _words(
    "Independent reporting since 1998|Stories worth reading|Notes from the field|News and views "
    "from the valley|Writing about things that matter|Read more, worry less",
    "|",
)
_PATHS = _words("/{y}/{m:02d}/{slug}.html /articles/{slug} /blog/{slug}/ /docs/{slug}.html")
_PATHS += ["/news/{y}/{slug}", "/p/{n}/{slug}"]
_BRANDS: tuple[str, ...] = ('<a class="brand" href="/">{}</a>', '<h2 class="logo">{}</h2>')
_BRANDS += ('<div class="title"><a href="/">{}</a></div>',)
_AD = (
    "Advertisement. Save 20 percent on {} garden tools this week only. Free shipping on every "
    "order over 50 dollars. Shop the spring sale now and get a second item half price."
)


class _Prose:
    """Seeded prose: Zipf-distributed content words mixed with English function words."""

    def __init__(self, rng: random.Random, size: int = 3000) -> None:
        self.rng = rng
        pseudo: dict[str, None] = {}
        while len(pseudo) < size - len(_WORDS):
            pseudo[self.pseudo_word()] = None
        self.content = _WORDS + list(pseudo)
        fw = [1.0 / (r + 2) for r in range(len(_FUNCTION))]
        cw = [1.0 / (r + 20) for r in range(len(self.content))]
        scale = 1.5 * sum(fw) / sum(cw)  # function words make 40% of running text
        self._all = _FUNCTION + self.content
        self._all_cum = list(itertools.accumulate(fw + [w * scale for w in cw]))
        self._content_cum = list(itertools.accumulate(cw))

    def pseudo_word(self) -> str:
        n = self.rng.choice((1, 2, 2, 2, 3))
        parts = [self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) for _ in range(n)]
        return "".join(parts) + self.rng.choice(_CODAS)

    def words(self, k: int) -> list[str]:
        return self.rng.choices(self.content, cum_weights=self._content_cum, k=k)

    def sentence(self) -> str:
        rng = self.rng
        toks = rng.choices(self._all, cum_weights=self._all_cum, k=rng.randint(7, 20))
        toks[0] = toks[0].capitalize()
        if len(toks) > 10 and rng.random() < 0.5:
            toks[rng.randint(3, len(toks) - 4)] += ","
        return " ".join(toks) + ("?" if rng.random() < 0.05 else ".")

    def body(self, n_words: int) -> list[list[str]]:
        """Paragraphs (lists of sentences) of at least ``n_words`` words in all."""
        paras: list[list[str]] = []
        while _count_words(paras) < n_words:
            para: list[str] = []
            target = self.rng.randint(40, 120)
            while _count_words([para]) < target:
                para.append(self.sentence())
            paras.append(para)
        return paras

    def title(self) -> str:
        words = [w.capitalize() for w in self.words(self.rng.randint(3, 6))]
        if self.rng.random() < 0.5:
            words.insert(self.rng.randint(1, len(words) - 1), self.rng.choice(("of", "and", "in")))
        return " ".join(words)

    def person(self) -> str:
        surname = self.pseudo_word().capitalize() + self.rng.choice(_SURNAME)
        return f"{self.rng.choice(_FIRST)} {surname}"


def _count_words(paragraphs: list[list[str]]) -> int:
    return sum(s.count(" ") + 1 for p in paragraphs for s in p)


@dataclass(frozen=True, slots=True)
class _Site:
    host: str
    name: str
    style: int
    sections: tuple[str, ...]
    tagline: str
    path_fmt: str
    banner: str = ""


@dataclass(slots=True)
class _Page:
    site: _Site
    path: str
    slug: str
    title: str
    author: str
    published: date
    views: int
    paragraphs: list[list[str]]
    links: list[tuple[str, str]] = field(default_factory=list)
    home: bool = False

    @property
    def url(self) -> str:
        return f"http://{self.site.host}{self.path}"


@dataclass(slots=True)
class _Capture:
    url: str
    html: bytes
    refers_to: _Capture | None = None
    record_id: str = ""
    date: datetime = CRAWL_START


# --- rendering ---------------------------------------------------------------------------------


def _header(site: _Site, style: int, upper: bool) -> str:
    items = [("/", "Home"), ("/about.html", "About"), ("/archive/", "Archive")]
    items += [(f"/{s.lower()}/", s) for s in site.sections] + [("/contact.html", "Contact")]
    links = [f'<a href="{h}">{t.upper() if upper else t}</a>' for h, t in items]
    if style == 1:
        nav = '<ul class="menu">\n<li>' + "</li>\n<li>".join(links) + "</li>\n</ul>"
    else:
        nav = f'<nav class="s{style}">' + (" | " if style == 2 else "\n").join(links) + "</nav>"
    name = site.name.upper() if upper else site.name
    brand = _BRANDS[style].format(name)
    banner = f'<div class="banner">{site.banner}</div>\n' if site.banner else ""
    return f'{banner}<header class="site-{style}">\n{brand}\n{nav}\n</header>\n'


def _meta(page: _Page, lexical: bool) -> str:
    day = page.published
    if lexical:
        when = f"{_MONTHS[day.month - 1].lower()} {day.day} {day.year}"
        return f"<div class=byline>posted on {when} by {page.author} -- {page.views} views</div>"
    when = f"{_MONTHS[day.month - 1]} {day.day}, {day.year}"
    return f'<p class="meta">Posted on {when} by {page.author} · {page.views} views</p>'


def _paragraph(sentences: list[str], lexical: bool) -> str:
    if not lexical:
        return "<p>" + " ".join(sentences) + "</p>"
    lines = [s.replace(",", "").replace("?", ".") for s in sentences]
    return '<div class="text">\n  ' + " <br>\n  ".join(lines) + "\n</div>"


def _related(page: _Page, lexical: bool) -> str:
    head = "Latest articles" if page.home else "Related reading"
    items = "".join(f'<li><a href="{h}">{t}</a></li>\n' for h, t in page.links)
    if lexical:
        return f"<h3>{head.upper()}</h3>\n<ul class=links>\n{items}</ul>"
    return f'<section class="related">\n<h2>{head}</h2>\n<ul>\n{items}</ul>\n</section>'


def _article(page: _Page, lexical: bool = False, ad: str = "", quote: _Page | None = None) -> str:
    title = f"<h1>{page.title.upper() if lexical else page.title}</h1>"
    blocks = [_paragraph(p, lexical) for p in page.paragraphs]
    if ad:
        blocks.insert(len(blocks) // 2, f'<aside class="ad"><p>{ad}</p></aside>')
    if quote is not None:
        quoted = f'<blockquote cite="{quote.url}">\n{_article(quote)}</blockquote>'
        blocks.insert(max(1, len(blocks) // 3), quoted)
    return "\n".join([title, _meta(page, lexical), *blocks, _related(page, lexical)]) + "\n"


def _render(
    page: _Page, *, lexical: bool = False, ad: str = "", quote: _Page | None = None
) -> bytes:
    """The page as served; ``lexical`` renders the same words with other markup and case."""
    site = page.site
    style = (site.style + 1) % 3 if lexical else site.style
    title = f"{page.title.upper()} - {site.name}" if lexical else f"{page.title} | {site.name}"
    head = '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    head += f'<title>{title}</title>\n<link rel="stylesheet" href="/static/s{style}.css">\n'
    main = f"<main>\n<article>\n{_article(page, lexical, ad, quote)}</article>\n</main>\n"
    foot = f"<footer><p>© {CRAWL_START.year} {site.name}. {site.tagline}.</p></footer>\n"
    body = _header(site, style, lexical) + main + foot
    return f"{head}</head>\n<body>\n{body}</body>\n</html>\n".encode()


# --- planning ----------------------------------------------------------------------------------


def _make_sites(rng: random.Random, prose: _Prose, n: int) -> list[_Site]:
    sites: dict[str, _Site] = {}
    while len(sites) < n:
        word, suffix = prose.words(1)[0], rng.choice(_SUFFIXES)
        host = f"www.{word}{suffix.lower()}.{rng.choice(('com', 'org', 'net', 'info'))}"
        sections, tagline = tuple(rng.sample(_SECTIONS, 2)), rng.choice(_TAGLINES)
        name = f"{word.capitalize()} {suffix}"
        site = _Site(host, name, rng.randrange(3), sections, tagline, rng.choice(_PATHS))
        sites.setdefault(host, site)
    return list(sites.values())


def _new_page(rng: random.Random, prose: _Prose, site: _Site, home: bool, words: int = 0) -> _Page:
    title = prose.title()
    slug = "-".join(title.lower().split())
    published = date(2022, 1, 1) + timedelta(days=rng.randrange(790))
    n = rng.randrange(1000, 99999)
    path = site.path_fmt.format(y=published.year, m=published.month, slug=slug, n=n)
    body = prose.body(words or rng.randint(300, 800))
    views = rng.randint(40, 98000)
    return _Page(
        site, "/" if home else path, slug, title, prose.person(), published, views, body, [], home
    )


def _plan(
    rng: random.Random, prose: _Prose, sites: list[_Site], n: int, mirror: int
) -> list[list[_Page]]:
    """``n`` original pages: ``mirror`` on ``sites[0]``, the rest spread over the others.
    The first page of each site is its home page; paths are unique within a site."""
    sizes = [mirror] + [2] * (len(sites) - 1)
    weights = [rng.uniform(0.5, 2.0) for _ in sites[1:]]
    for i in rng.choices(range(1, len(sites)), weights=weights, k=n - sum(sizes)):
        sizes[i] += 1
    by_site: list[list[_Page]] = []
    for site, size in zip(sites, sizes, strict=True):
        pages = [_new_page(rng, prose, site, i == 0) for i in range(size)]
        seen: set[str] = set()
        for page in pages:
            while page.path in seen:
                page.path = page.path.rstrip("/") + "-2"
            seen.add(page.path)
        by_site.append(pages)
    return by_site


def _link(rng: random.Random, by_site: list[list[_Page]]) -> None:
    """Fill every page's links: pages of its own host (relative) and of other hosts."""
    homes = [pages[0] for pages in by_site]
    for pages in by_site:
        for page in pages:
            own = [p for p in pages if p is not page]
            others = [*rng.sample(homes, 3), rng.choice(rng.choice(by_site))]
            others = [p for p in others if p.site is not page.site][: rng.randint(1, 3)]
            k = min(len(own), 10 if page.home else rng.randint(3, 6))
            page.links = [(p.path, p.title) for p in rng.sample(own, k)]
            page.links += [(p.url, p.title) for p in others]


def _counts(rng: random.Random, pages: int, n_sites: int) -> tuple[int, int, list[int], int, int]:
    """Mirrored pages, index.html groups, copies per sessionid group, near groups, and the
    number of lexical, contained and revisit groups (each)."""
    exact, few = max(2, pages // 40), max(1, pages // 50)
    index = min(n_sites - 1, (exact + 1) // 2)
    session = [rng.choice((1, 1, 2)) for _ in range(exact - index)]
    return max(3, pages // 40), index, session, max(4, pages // 20), few


# --- planting ----------------------------------------------------------------------------------


class _Crawl:
    """The captures being built (originals first) and the groups planted among them."""

    def __init__(self, rng: random.Random, prose: _Prose, by_site: list[list[_Page]]) -> None:
        self.rng, self.prose, self.by_site = rng, prose, by_site
        self.captures = {p.url: _Capture(p.url, _render(p)) for ps in by_site for p in ps}
        self.revisits: list[_Capture] = []
        self.groups: list[tuple[Kind, str, list[_Capture]]] = []
        self.articles = [p for pages in by_site[1:] for p in pages[1:]]
        rng.shuffle(self.articles)

    def add(self, kind: Kind, detail: str, page: _Page, copies: list[tuple[str, bytes]]) -> None:
        group = [self.captures[page.url]]
        for url, html in copies:
            while url in self.captures:
                url += "&v=2" if "?" in url else "?v=2"
            group.append(_Capture(url, html))
            self.captures[url] = group[-1]
        self.groups.append((kind, detail, group))

    def other_site(self, page: _Page) -> list[_Page]:
        return self.rng.choice([ps for ps in self.by_site[1:] if ps[0].site is not page.site])


def _plant_mirror(crawl: _Crawl, mirror_host: str) -> None:
    site = crawl.by_site[0][0].site
    mirror = replace(site, host=mirror_host, banner=f"Mirror of {site.host}, updated daily")
    for page in crawl.by_site[0]:
        copy = replace(page, site=mirror)
        crawl.add("mirror", f"{site.host} -> {mirror_host}", page, [(copy.url, _render(copy))])


def _plant_exact(crawl: _Crawl, index: int, session: list[int]) -> None:
    for pages in crawl.by_site[1 : 1 + index]:
        home = pages[0]
        crawl.add("exact", "index.html", home, [(home.url + "index.html", _render(home))])
    for n in session:
        page = crawl.articles.pop()
        urls = [f"{page.url}?sessionid={crawl.rng.getrandbits(64):016X}" for _ in range(n)]
        crawl.add("exact", "sessionid", page, [(url, _render(page)) for url in urls])


def _edit(crawl: _Crawl, paragraphs: list[list[str]], n: int) -> list[list[str]]:
    """A copy of ``paragraphs`` with ``n`` words replaced by other words."""
    rng, paras = crawl.rng, [list(p) for p in paragraphs]
    for _ in range(n):
        para = rng.choice(paras)
        i = rng.randrange(len(para))
        toks = para[i].split(" ")
        j = rng.randrange(len(toks))
        core = toks[j].rstrip(",.?")
        new = next(w for w in iter(lambda: crawl.prose.words(1)[0], None) if w != core.lower())
        toks[j] = (new.capitalize() if core[0].isupper() else new) + toks[j][len(core) :]
        para[i] = " ".join(toks)
    return paras


def _near_copy(crawl: _Crawl, page: _Page, detail: str) -> tuple[str, bytes]:
    """A near-copy of ``page`` (by ``detail``) and the URL it is served at."""
    rng, elsewhere = crawl.rng, crawl.other_site(page)[0].site.host
    if detail == "ad":
        ad = _AD.format(crawl.prose.words(1)[0].capitalize())
        return f"http://{elsewhere}/stories/{page.slug}.html", _render(page, ad=ad)
    if detail == "date":
        copy = replace(page, published=page.published + timedelta(days=rng.randint(1, 300)))
        return f"http://{page.site.host}/archive{page.path}", _render(copy)
    if detail == "counter":
        copy = replace(page, views=page.views + rng.randint(1, 900))
        return page.url + "?utm_source=newsletter", _render(copy)
    edits = rng.randint(2, max(2, _count_words(page.paragraphs) // 60))
    copy = replace(page, paragraphs=_edit(crawl, page.paragraphs, edits))
    return f"http://{elsewhere}/repost/{page.slug}", _render(copy)


def _plant_near(crawl: _Crawl, n: int) -> None:
    for i in range(n):
        page, detail = crawl.articles.pop(), ("ad", "date", "counter", "edit")[i % 4]
        crawl.add("near", detail, page, [_near_copy(crawl, page, detail)])


def _plant_lexical(crawl: _Crawl, n: int) -> None:
    for _ in range(n):
        page = crawl.articles.pop()
        url = f"http://{page.site.host}/print{page.path}"
        crawl.add("lexical", "print version", page, [(url, _render(page, lexical=True))])


def _plant_contained(crawl: _Crawl, n: int) -> None:
    rng = crawl.rng
    for _ in range(n):
        page = crawl.articles.pop()
        pages = crawl.other_site(page)
        words = int(_count_words(page.paragraphs) * rng.uniform(1.0, 1.5))
        quoting = _new_page(rng, crawl.prose, pages[0].site, False, words)
        quoting.links = [(page.url, page.title)]
        quoting.links += [(p.path, p.title) for p in rng.sample(pages, min(3, len(pages)))]
        copy = (quoting.url, _render(quoting, quote=page))
        crawl.add("contained", "quoted in commentary", page, [copy])


def _plant_revisits(crawl: _Crawl, n: int) -> None:
    for _ in range(n):
        capture = crawl.captures[crawl.articles.pop().url]
        revisit = _Capture(capture.url, capture.html, refers_to=capture)
        crawl.revisits.append(revisit)
        crawl.groups.append(("revisit", "identical-payload-digest", [capture, revisit]))


def _write(path: Path, seed: int, crawl: _Crawl) -> list[_Capture]:
    """Write the responses in crawl order, then the revisits a week later; return the order."""
    order = list(crawl.captures.values())
    crawl.rng.shuffle(order)
    with WarcWriter(path, seed=seed) as warc:
        info = {"description": f"neardup synthetic crawl, seed {seed}", "isPartOf": "neardup-demo"}
        warc.write_warcinfo(CRAWL_START, fields=info)
        when = CRAWL_START
        for cap in order:
            when = cap.date = when + timedelta(seconds=crawl.rng.randint(1, 30))
            cap.record_id = warc.write_response(cap.url, cap.html, when)
        when = CRAWL_START + REVISIT_DELAY
        for rev in crawl.revisits:
            orig = rev.refers_to
            assert orig is not None
            when = rev.date = when + timedelta(seconds=crawl.rng.randint(1, 30))
            digest, size = sha1_digest(orig.html), len(orig.html)
            args = (rev.url, orig.record_id, orig.url, orig.date, digest, when)
            rev.record_id = warc.write_revisit(*args, payload_length=size)
    return order


def generate_crawl(path: Path, *, seed: int = 7, pages: int = 400) -> PlantedTruth:
    """Write a synthetic crawl of ``pages`` HTML responses to the WARC ``path``; return the truth.

    Deterministic in ``seed`` (the same seed and file name give the same bytes). Raises
    :class:`~neardup.errors.ConfigError` when ``pages`` is below :data:`MIN_PAGES`.
    """
    if pages < MIN_PAGES:
        raise ConfigError(f"pages={pages}: a synthetic crawl needs at least {MIN_PAGES} pages")
    rng = random.Random(seed)
    prose = _Prose(rng)
    sites = _make_sites(rng, prose, rng.randint(8, 11))
    mirror, index, session, near, few = _counts(rng, pages, len(sites))
    extra = mirror + index + sum(session) + near + 2 * few  # responses beyond the originals
    by_site = _plan(rng, prose, sites, pages - extra, mirror)
    _link(rng, by_site)
    crawl = _Crawl(rng, prose, by_site)
    mirror_host = f"mirror.{prose.words(1)[0]}.net"
    _plant_mirror(crawl, mirror_host)
    _plant_exact(crawl, index, session)
    _plant_near(crawl, near)
    _plant_lexical(crawl, few)
    _plant_contained(crawl, few)
    _plant_revisits(crawl, few)
    order = _write(Path(path), seed, crawl)
    return _truth(seed, Path(path), crawl, order, (sites[0].host, mirror_host))


def _truth(
    seed: int, path: Path, crawl: _Crawl, order: list[_Capture], mirror: tuple[str, str]
) -> PlantedTruth:
    groups = tuple(
        PlantedGroup(kind, detail, tuple(c.url for c in g), tuple(c.record_id for c in g))
        for kind, detail, g in crawl.groups
    )
    grouped = {url for g in groups for url in g.urls}
    hosts = sorted({pages[0].site.host for pages in crawl.by_site} | {mirror[1]})
    links = sum(c.html.count(b"<a href=") for c in order)
    unrelated = tuple(c.url for c in order if c.url not in grouped)
    counts = (len(order), len(crawl.revisits), links)
    return PlantedTruth(seed, str(path), tuple(hosts), (mirror,), groups, unrelated, *counts)
