"""``neardup index``, ``query`` and ``compact``: a persistent store of fingerprints."""

from __future__ import annotations

import dataclasses
import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from neardup.cli.field_options import field_options, row_fields
from neardup.cli.interrupt import exit_interrupted
from neardup.cli.plan import count_option
from neardup.cli.preset_option import PRESET_OPTION, preset_store_config
from neardup.cli.progress import progress_counter
from neardup.cli.summary import count as _count
from neardup.cli.text_options import extract_options, text_config
from neardup.cluster.sweeps import lost_and_found_report, most_recent_url
from neardup.config import EXTRACTORS, StoreConfig, TableSpec, TemplateConfig, TextConfig
from neardup.document import Document
from neardup.errors import OutputError, SourceError
from neardup.index.planner import plan
from neardup.methods.workers import default_workers
from neardup.sources import RowFields, open_sources
from neardup.sources.location import is_url
from neardup.store import Store, StoreMatch, open_store
from neardup.store.urls import sightings as store_sightings
from neardup.store.urls import similar_to_url, url_cluster

if TYPE_CHECKING:
    from neardup.engine.query import SparkOptions

__all__ = ["compact_command", "index_command", "lost_and_found_command", "query_command"]

COLLECT_EVERY = 50_000
"""Allocations between two young-generation collections while ``index`` adds documents."""

STORE_OPTION = click.option("--store", "store_dir", required=True,
                            type=click.Path(path_type=Path), help="The store directory.")


def _store_config(k: int, no_sketch: bool, keep_shingles: bool, text: TextConfig,
                  compress: bool, design: tuple[TableSpec, ...]) -> StoreConfig:
    if no_sketch:
        return StoreConfig(text=text, max_k=k, compress=compress, sketch=None, tables=design)
    return StoreConfig(text=text, max_k=k, compress=compress, tables=design,
                       keep_shingles=keep_shingles)


def _design(k: int, expected: int, tables: int | None,
            min_prefix: int | None) -> tuple[TableSpec, ...]:
    """The planner's tables for ``expected`` fingerprints (none asked: the default design)."""
    if tables is None and min_prefix is None:
        return ()
    chosen = plan(64, k, expected, tables=tables, min_prefix=min_prefix)
    return tuple((t.segments, t.prefix_bits) for t in chosen.tables)


@click.command("index")
@click.argument("inputs", nargs=-1, required=True)
@STORE_OPTION
@click.option("--sweep", default=None, help="Label the documents with this crawl sweep.")
@click.option("--k", "max_k", type=click.IntRange(0, 16), default=None,
              help="New store: the largest Hamming distance it answers [default: 3].")
@click.option("--compress", is_flag=True, default=None,
              help="New store: compress the tables (Manku, section 3.2).")
@click.option("--tables", type=click.IntRange(1, 10_000), default=None,
              help="New store: the planner's design with at most this many tables "
                   "(see neardup plan) [default: k + 1 blocks, one table each].")
@click.option("--min-prefix", type=click.IntRange(1, 64), default=None,
              help="New store: the planner's design whose prefixes all have this many bits.")
@click.option("--expected", callback=count_option, default="10000000", show_default=True,
              help="New store: fingerprints the planner designs for (2^30, 1e9, ...).")
@click.option("--no-sketch", is_flag=True, default=None,
              help="New store: keep no Broder sketches (no resemblance or containment scores).")
@click.option("--keep-shingles", is_flag=True, default=None,
              help="New store: keep every document's shingle set, so that queries report exact "
                   "resemblance and containment beside the estimates.")
@extract_options
@click.option("--templates/--no-templates", "templates", default=None,
              help="New store: leave each host's template values (its frame) out when two "
                   "pages are compared [default: on; the counts are kept either way].")
@click.option("--template-share", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
              default=None, help="New store: a value on more than this share of one host's "
                                 "pages is template [default: 0.5].")
@click.option("--template-min-pages", type=click.IntRange(2, None), default=None,
              help="New store: hosts with fewer pages keep every value [default: 10].")
@click.option("--sketch-clusters", type=click.FloatRange(0.0, 1.0, min_open=True), default=None,
              help="New store: cluster by Broder's sketches (estimated resemblance at least "
                   "this, Broder: 0.5) instead of simhash; lost-and-found follows them.")
@click.option("--media", type=click.Choice(["html", "text", "any"]), default="html",
              show_default=True, help="Which responses become documents (as for dedup).")
@click.option("--workers", type=click.IntRange(0, 256), default=0,
              help="Worker processes [default: 0 = one per core].")
@field_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@PRESET_OPTION
def index_command(inputs: tuple[str, ...], store_dir: Path, sweep: str | None,
                  max_k: int | None, compress: bool | None, tables: int | None,
                  min_prefix: int | None, expected: int, no_sketch: bool | None,
                  keep_shingles: bool | None, main_content: bool | None, extract: str | None,
                  media: str, workers: int, as_json: bool, preset: str | None,
                  sketch_clusters: float | None, templates: bool | None,
                  template_share: float | None, template_min_pages: int | None,
                  **names: str) -> None:
    """Add the documents of INPUTS to the store (created if absent; append only). A new
    store's --extract [default: full] is fixed with it."""
    template = _template_config(templates, template_share, template_min_pages)
    chosen = (max_k, compress, no_sketch, keep_shingles, main_content, extract, tables,
              min_prefix, sketch_clusters, template)
    config = None
    if preset is not None:
        config = preset_store_config(preset, bool(main_content))
        config = config if template is None else dataclasses.replace(config, templates=template)
    elif not (store_dir / "manifest.json").exists() or any(v is not None for v in chosen):
        k = 3 if max_k is None else max_k
        config = _store_config(k, bool(no_sketch), bool(keep_shingles),
                               text_config(extract, main_content),
                               bool(compress), _design(k, expected, tables, min_prefix))
        if sketch_clusters is not None:
            config = dataclasses.replace(config, sketch_clusters=sketch_clusters)
        if template is not None:
            config = dataclasses.replace(config, templates=template)
    for path in inputs:
        if path != "-" and not is_url(path) and not Path(path).exists() and "*" not in path:
            raise SourceError(path, "no such file or directory")
    reader = open_sources(list(inputs), media=media,  # type: ignore[arg-type]
                          fields=row_fields(**names))
    before: list[int] = []
    try:
        with open_store(store_dir, config) as store:
            before.append(len(store))
            with progress_counter("index") as progress, _rare_collections():
                report = store.add(reader, sweep=sweep, workers=workers or default_workers(),
                                   progress=progress)
            for warning in report.warnings:
                click.echo(f"neardup: warning: {warning}", err=True)
            try:
                store.flush()
            except OutputError as error:
                raise OutputError(f"{error}; this run added {report.added:,} documents, all "
                                  "committed (they stay in the store's insert log)") from error
            summary: dict[str, Any] = {"store": str(store_dir), **report.as_dict(),
                                       "documents_in_store": len(store),
                                       "segments": len(store.segments),
                                       "sources": reader.stats.as_dict()}
    except KeyboardInterrupt:
        _interrupted_index(store_dir, before)
    if preset is not None:
        from neardup.presets import preset as named

        summary["preset"] = named(preset).as_dict()
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(f"added {_count(report.added, 'document')} to {store_dir} "
                   f"({_count(summary['documents_in_store'], 'document')} stored, "
                   f"{_count(summary['segments'], 'segment')}); {report.already_stored:,} "
                   f"already-stored (same id and bytes, skipped); {report.matched_stored:,} had a "
                   f"near-copy stored before, {report.matched_in_batch:,} one added with them")


@contextmanager
def _rare_collections() -> Iterator[None]:
    """Python's cyclic garbage collector run less often while documents stream in: an add
    allocates millions of small objects that reference counting frees, and at the default
    threshold (700 allocations) the collector ran 2,300 times over 100k documents, 1.9 of 29
    CPU s. A process setting: the command's, not the library's."""
    before = gc.get_threshold()
    gc.set_threshold(COLLECT_EVERY, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _template_config(enabled: bool | None, share: float | None,
                     min_pages: int | None) -> TemplateConfig | None:
    """The template rule of a new store's options (None when none was given)."""
    if enabled is None and share is None and min_pages is None:
        return None
    default = TemplateConfig()
    return TemplateConfig(enabled=default.enabled if enabled is None else enabled,
                          share=default.share if share is None else share,
                          min_pages=default.min_pages if min_pages is None else min_pages)


def _when(sweep: str | None, fetched: str | None) -> str:
    """``sweep 2024, fetched 2024-05-01T...``, leaving out what is unknown."""
    parts = [f"sweep {sweep}" if sweep else "no sweep", f"fetched {fetched}" if fetched else ""]
    return ", ".join(part for part in parts if part)


def _interrupted_index(store_dir: Path, before: list[int]) -> NoReturn:
    """Ctrl-C during ``index``: say what the store kept (every committed batch), exit 130."""
    if not before:
        exit_interrupted("before the store was opened")
    with open_store(store_dir, read_only=True) as store:
        stored = len(store)  # read back from the insert log: what was acknowledged
    exit_interrupted(f"{store_dir} keeps {stored - before[0]:,} added by this run, "
                     f"{stored:,} documents in all (committed batches stay; the rest was not "
                     "added)")


def _query_document(path: str | None, text: str | None, fields: RowFields) -> Document:
    if text is not None:
        return Document(id="query", raw=text.encode("utf-8"), kind="text")
    assert path is not None
    if path != "-" and not is_url(path) and not Path(path).exists():
        raise SourceError(path, "no such file or directory")
    docs = list(open_sources([path], media="any", fields=fields))
    if not docs:
        raise SourceError(path, "holds no document to query with")
    return docs[0]


@click.command("query")
@click.argument("files", nargs=-1)
@STORE_OPTION
@click.option("--batch", is_flag=True,
              help="Manku's batch mode: every document of FILES... (any input dedup reads: "
                   "WARC, ARC, JSONL, Parquet, HTML, globs) against the store at once.")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local",
              show_default=True, help="With --batch: scan the stored fingerprints in this "
                                      "process, or in parallel Spark tasks.")
@click.option("--spark-master", default="local[2]", show_default=True,
              help="With --engine spark: the master URL (local[N], spark://..., yarn).")
@click.option("--partitions", type=click.IntRange(1, 100_000), default=None,
              help="With --engine spark: slices of the stored fingerprints [default: Spark's "
                   "parallelism].")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="With --batch: write the matches to this file (.parquet, else JSON lines).")
@click.option("--workers", type=click.IntRange(0, 256), default=0,
              help="With --batch: processes that fingerprint the new documents [default: 0 = "
                   "one per core].")
@click.option("--media", type=click.Choice(["html", "text", "any"]), default="html",
              show_default=True, help="With --batch: which responses become documents.")
@click.option("--text", default=None, help="Query with this text instead of a file.")
@click.option("--url", default=None, help="Query with the document stored under this URL.")
@click.option("--k", type=click.IntRange(0, 16), default=None,
              help="Largest Hamming distance [default: the store's].")
@click.option("--resemblance", type=click.FloatRange(0.0, 1.0), default=None,
              help="Search the sketches instead: stored documents whose estimated resemblance "
                   "to the query is at least this.")
@click.option("--containment", type=click.FloatRange(0.0, 1.0), default=None,
              help="Search the sketches instead: stored documents that contain at least this "
                   "share of the query (estimated).")
@click.option("--explain", is_flag=True, help="List the shared shingles behind each match.")
@click.option("--cluster", "cluster", is_flag=True,
              help="With --url: every URL of its cluster, per sweep (Broder's URL -> cluster "
                   "-> URLs).")
@click.option("--no-templates", "no_templates", is_flag=True,
              help="Compare on every value, the hosts' template values included [default: "
                   "the store's rule leaves them out].")
@click.option("--host-templates", is_flag=True,
              help="Instead of a query: per host, its pages and template values.")
@click.option("--json", "as_json", is_flag=True, help="Print the matches as JSON.")
@click.option("--extract", type=click.Choice(EXTRACTORS), default=None,
              help="Check that the store extracts text this way (a query page is always "
                   "extracted as the store's pages were) [default: the store's].")
@field_options
def query_command(files: tuple[str, ...], store_dir: Path, text: str | None, url: str | None,
                  k: int | None, resemblance: float | None, containment: float | None,
                  explain: bool, as_json: bool, extract: str | None, cluster: bool,
                  no_templates: bool, host_templates: bool,
                  batch: bool, engine: str, spark_master: str, partitions: int | None,
                  out: Path | None, workers: int, media: str, **names: str) -> None:
    """The stored near-duplicates of FILE (its first document), of --text, or of --url; with
    --batch, of every document of FILES.

    By default: stored documents within --k bits of the query's simhash (Manku's tables). With
    --resemblance or --containment: every stored document sharing a sketch shingle with the
    query, kept when Broder's estimates reach the floors. --url U --cluster: every URL of U's
    cluster, per sweep. --batch [--engine spark]: Manku's batch mode, the stored fingerprints
    scanned in chunks (in parallel Spark tasks with --engine spark)."""
    if batch:
        if text is not None or url is not None or resemblance is not None or \
                containment is not None or cluster or explain or host_templates or not files:
            raise click.UsageError("--batch takes input FILES... (no --text, --url, sketch "
                                   "search, --cluster or --explain)")
        from neardup.engine.query import SparkOptions  # the batch engine: not for index

        spark = SparkOptions(spark_master, partitions)
        _batch(files, store_dir, k, engine, spark, out, workers, media, as_json,
               row_fields(**names))
        return
    if engine != "local" or out is not None:
        raise click.UsageError("--engine and --out go with --batch")
    if len(files) > 1:
        raise click.UsageError("one FILE (or --batch for many)")
    file = files[0] if files else None
    if host_templates:
        if any(x is not None for x in (file, text, url)):
            raise click.UsageError("--host-templates takes no FILE, --text or --url")
        _host_templates(store_dir, as_json)
        return
    if sum(x is not None for x in (file, text, url)) != 1:
        raise click.UsageError("give exactly one of FILE, --text or --url")
    content = not no_templates
    sketch_search = resemblance is not None or containment is not None
    if cluster:
        _query_cluster(store_dir, url, sketch_search, as_json)
        return
    with open_store(store_dir, read_only=True) as store:
        if extract is not None and extract != store.config.text.extract:
            raise click.UsageError(f"--extract {extract}: the store {store_dir} extracts "
                                   f"{store.config.text.extract} (fixed when it was created)")
        if sketch_search and url is not None:
            matches = _by_url(store_dir, url, lambda: similar_to_url(
                store, url, resemblance or 0.0, containment or 0.0, explain, content)[1])
        elif sketch_search:
            matches = store.similar(_query_document(file, text, row_fields(**names)),
                                    resemblance=resemblance or 0.0,
                                    containment=containment or 0.0, explain=explain,
                                    templates=content)
        elif url is not None:
            matches = _by_url(store_dir, url, lambda: store.query_url(url, k, content)[1])
        else:
            matches = store.query(_query_document(file, text, row_fields(**names)), k,
                                  explain=explain,
                                  templates=content)
        _render(store, matches, as_json, explain)


def _batch(files: tuple[str, ...], store_dir: Path, k: int | None, engine: str,
           spark: SparkOptions, out: Path | None, workers: int, media: str,
           as_json: bool, fields: RowFields) -> None:
    from neardup.engine.query import batch_query, write_matches

    for path in files:
        if path != "-" and not is_url(path) and not Path(path).exists() and "*" not in path:
            raise SourceError(path, "no such file or directory")
    reader = open_sources(list(files), media=media, fields=fields)  # type: ignore[arg-type]
    with open_store(store_dir, read_only=True) as store:
        report = batch_query(store, reader, k=k, engine=engine,  # type: ignore[arg-type]
                             spark=spark, workers=workers or default_workers())
    if out is not None:
        write_matches(report.matches, out)
    counts = report.counts()
    if as_json:
        matches = [] if out is not None else [m.as_dict() for m in report.matches]
        click.echo(json.dumps({**counts, "out": None if out is None else str(out),
                               "rows": matches}, indent=2))
        return
    if out is None:
        for m in report.matches:
            click.echo(f"query {m.query} {m.query_url or m.query_id}  {m.distance:2d} bits  "
                       f"{m.relation:9s} doc {m.doc}  {m.url or m.id}")
    skipped = counts["skipped_records"]
    click.echo(f"{report.queries:,} queries ({report.indexed:,} with text) against "
               f"{_count(report.stored, 'stored document')} on {engine}: "
               f"{len(report.matches):,} matches for "
               f"{counts['queries_matched']:,} queries; {skipped:,} input records skipped"
               + ("" if out is None else f"; matches written to {out}"))


def _by_url(store_dir: Path, url: str, run: Callable[[], list[StoreMatch]]) -> list[StoreMatch]:
    try:
        return run()
    except KeyError:
        raise SourceError(url, f"no document with this URL in {store_dir}") from None


def _query_cluster(store_dir: Path, url: str | None, sketch_search: bool, as_json: bool) -> None:
    if url is None or sketch_search:
        raise click.UsageError("--cluster takes --url only")
    with open_store(store_dir, read_only=True) as store:
        try:
            found = url_cluster(store, url)
        except KeyError:
            raise SourceError(url, f"no document with this URL in {store_dir}") from None
    if as_json:
        click.echo(json.dumps(found.as_dict(), indent=2))
        return
    click.echo(f"{url}: doc {found.doc}, {found.clustered_by} cluster {found.cluster}, "
               f"{len(found.members)} documents")
    for sweep, urls in found.by_sweep().items():
        click.echo(f"  sweep {sweep or '(none)'}: " + " ".join(urls))


def _host_templates(store_dir: Path, as_json: bool) -> None:
    """``query --host-templates``: the per-host template counts of the store."""
    with open_store(store_dir, read_only=True) as store:
        found = store.host_templates()
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    click.echo(f"{_count(int(str(found['hosts'])), 'host')}, "
               f"{found['hosts_with_enough_pages']} with at least {found['min_pages']} pages, "
               f"{found['hosts_with_templates']} with template values (share > "
               f"{found['share']}{'' if found['enabled'] else ', not applied: off'})")
    per_host = found["per_host"]
    assert isinstance(per_host, dict)
    for host, counts in per_host.items():
        click.echo(f"  {host}: {counts['pages']:,} pages, "
                   f"{counts.get('sketch_values', 0):,} sketch values"
                   + (f", {counts['shingles']:,} shingles" if counts.get("shingles") else ""))


def _render(store: Store, matches: list[StoreMatch], as_json: bool,
            explain: bool = False) -> None:
    if as_json:
        click.echo(json.dumps([m.as_dict() for m in matches], indent=2))
        return
    if not matches:
        click.echo("no near-duplicate stored")
    for m in matches:
        scores = "" if m.resemblance is None else (
            f"  resemblance~{m.resemblance:.2f}" + (
                "" if m.containment is None else
                f" containment~{m.containment:.2f}/{m.containment_reverse:.2f}"))
        exact = "" if m.exact_resemblance is None else (
            f"  exact: resemblance {m.exact_resemblance:.2f} containment "
            f"{m.exact_containment:.2f}/{m.exact_containment_reverse:.2f}")
        click.echo(f"{m.distance:2d} bits  {m.relation:9s} doc {m.doc}  {m.url or m.id}"
                   f"{scores}{exact}")
        if explain and (m.template_values or m.template_shingles):
            click.echo(f"      templates: {m.template_values} sketch values"
                       + (f", {m.template_shingles} shingles" if m.template_shingles else "")
                       + " left out (the hosts' frames)")
        for shingle in m.shared_shingles[:10]:
            click.echo(f"      shares: {shingle}")


@click.command("compact")
@STORE_OPTION
def compact_command(store_dir: Path) -> None:
    """Merge the store's segments into one."""
    with open_store(store_dir, create=False) as store:
        merged = store.compact()
        click.echo(f"{store_dir}: {_count(merged, 'segment')} merged into "
                   f"{_count(len(store.segments), 'segment')}; {_count(len(store), 'document')}")


@click.command("lost-and-found")
@click.argument("url", required=False)
@STORE_OPTION
@click.option("--report", is_flag=True, help="Every URL gone from the latest sweep, with its "
                                             "best replacement.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def lost_and_found_command(url: str | None, store_dir: Path, report: bool,
                           as_json: bool) -> None:
    """Where did URL go? The most recent URL of its cluster across the store's sweeps
    (Broder et al., section 6.2); --report lists every URL gone from the latest sweep."""
    if (url is None) == (not report):
        raise click.UsageError("give a URL or --report")
    with open_store(store_dir, read_only=True) as store:
        sightings, order = store_sightings(store)
    if url is not None:
        if not any(s.url == url for s in sightings):
            raise SourceError(url, f"no document with this URL in {store_dir}")
        found = most_recent_url(sightings, url, order)
        if as_json:
            click.echo(json.dumps(None if found is None else dataclasses.asdict(found)))
        else:
            click.echo("no other URL holds this content" if found is None else
                       f"{found.url}  ({_when(found.sweep, found.fetched)})")
        return
    gone = lost_and_found_report(sightings, order)
    if as_json:
        click.echo(json.dumps([dataclasses.asdict(r) for r in gone], indent=2))
        return
    for item in gone:
        to = item.replacement.url if item.replacement else "(gone)"
        click.echo(f"{item.url}  ->  {to}")
    click.echo(f"{_count(len(gone), 'URL')} gone from the latest sweep; "
               f"{sum(r.replacement is not None for r in gone)} found elsewhere")
