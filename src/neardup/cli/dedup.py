"""``neardup dedup``: find and cluster exact and near-duplicate documents in a batch."""

from __future__ import annotations

import glob
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from neardup.cli.chunk_options import CHUNK_OPTIONS, chunk_options, pairs_memory
from neardup.cli.field_options import FIELD_OPTIONS, field_options, row_fields
from neardup.cli.help import GroupedCommand
from neardup.cli.interrupt import exit_interrupted
from neardup.cli.method_option import MethodChoice
from neardup.cli.preset_option import PRESET_OPTION, preset_dedup_config, record_preset
from neardup.cli.summary import no_documents_message, render_summary
from neardup.cli.text_options import (
    article_view_option,
    extract_options,
    template_config,
    template_options,
    text_config,
)
from neardup.config import (
    DEFAULT_MEMORY_LIMIT,
    DedupConfig,
    MinHashConfig,
    ShingleConfig,
    SimHashConfig,
    SimHashMethod,
    SketchConfig,
    SketchMethod,
    method_spec,
    threshold_refusal,
)
from neardup.engine.result import DedupResult
from neardup.errors import NeardupError, SourceError
from neardup.methods.workers import default_workers
from neardup.output import OUTPUT_FORMATS
from neardup.output.folder import WORK_DIR, claim_output
from neardup.sources import DEFAULT_FIELDS, RowFields
from neardup.sources.location import is_url

__all__ = ["ESSENTIALS", "SECTIONS", "WORK_DIR", "NoDocumentsError", "dedup_command",
           "render_summary", "run_dedup"]

DEFAULTS = DedupConfig()
"""The defaults of every dedup option that sets the config: the library's too."""
SIMHASH, SKETCH = SimHashMethod(), SketchMethod()
"""The defaults of the simhash and sketch options (their methods' configs)."""


class NoDocumentsError(NeardupError):
    """A run read no document; the message says what was found instead."""


SECTIONS = {
    "Input and output": ("out", "write", "fmt", "force", "media", "links", *FIELD_OPTIONS),
    "Text": ("extract", "main_content", "article_view", "thai_words", "templates",
             "template_min_pages", "template_share"),
    "Method": ("preset", "method", "keep", "min_resemblance", "shingle_width"),
    "simhash": ("max_hamming", "simhash_width", "simhash_weights", "simhash_stop_words",
                "simhash_stem"),
    "minhash, sketch and keyword": ("threshold",),
    "sketch and supershingle": ("sketch_spec", "sketch_width", "sketch_bits", "sketch_adaptive",
                                "supershingle_size", "drop_common", "relation"),
    "chunks, smfa and shingle-paragraphs": ("chunk_spec", "min_shared", "algorithm", "buckets",
                                            "hashes", "pilot", "segments", "level",
                                            "min_chars", "iterations", "write_relations"),
    "Running": ("workers", "work", "compact_work", "memory_limit", "partition_docs", "against",
                "quiet", "help_all", "help"),
    "Engine": ("engine", "spark_master", "partitions"),
}
"""The headings of ``neardup dedup --help-all``."""

ESSENTIALS = {
    "out": "Folder of the tables (documents, pairs, clusters) and summary.json.",
    "write": "Also write the input rows that are kept, removed, or all annotated "
             "(kept,removed,annotated), in the input's format and file names.",
    "text_field": "Column of JSONL or Parquet rows holding the text [default: text].",
    "id_field": "Column holding the document id [default: id].",
    "method": "Near-duplicate method run after the exact levels [default: minhash].",
    "threshold": "minhash, sketch, keyword: how similar a pair must be [default: 0.8 for "
                 "minhash].",
    "keep": "Which member of a cluster survives: first, longest, earliest, shortest-url.",
    "preset": "A paper's settings by name (see --help-all).",
    "fmt": "Format of the tables: parquet (default) or jsonl.",
    "workers": "Worker processes [default: one per core; none for one input file under 4 MiB].",
    "memory_limit": "Memory the run may use, e.g. 2G (default), 512M.",
    "work": "Work directory: the same command resumes a killed run [default: OUT/.neardup-work].",
    "quiet": "No progress display and no report.",
}
"""The options ``neardup dedup --help`` shows, with a one-line text each."""

def _check_threshold(method: str, threshold: float | None) -> None:
    """--threshold is read by some methods only: refuse it elsewhere, never ignore it."""
    if (refusal := threshold_refusal(method, threshold)) is not None:
        raise click.UsageError(refusal)


def _check_inputs(inputs: tuple[str, ...], *, uris: bool = False) -> None:
    """A missing local path is an error; URLs are read through fsspec (a missing one is counted
    as an unreadable file), and with ``uris`` (the Spark engine) URIs are left to Spark."""
    for path in inputs:
        if is_url(path) or (uris and re.match(r"[A-Za-z][A-Za-z0-9+.-]+:/", path)):
            continue
        if path != "-" and not glob.has_magic(path) and not Path(path).exists():
            raise SourceError(path, "no such file or directory")


def run_dedup(
    inputs: tuple[str, ...], out: Path, config: DedupConfig, *, workers: int = 1,
    show_progress: bool | None = None, media: str = "html",
) -> tuple[DedupResult, dict[str, Any]]:
    """Run the engine in this process (and ``workers`` processes), writing the outputs into
    ``out`` (its work directory inside); returns the result read back and the summary."""
    from neardup.cli.progress import stage_progress
    from neardup.engine import EngineOptions, run_engine

    _check_inputs(inputs)
    claim_output(out)
    options = EngineOptions(work=out / WORK_DIR, workers=workers, replace_other=True)
    with stage_progress(show_progress) as progress:
        summary = run_engine(list(inputs), out, config, options,
                             media=media,  # type: ignore[arg-type]
                             progress=progress)
    if not summary["documents"]:
        raise NoDocumentsError(no_documents_message(summary))
    return DedupResult.read(out), summary


@click.command("dedup", cls=GroupedCommand, sections=SECTIONS, essentials=ESSENTIALS)
@click.argument("inputs", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="Folder for documents, pairs, clusters and summary.json; a previous run's "
                   "tables there are all replaced, a folder holding other files is refused.")
@click.option("--write", "write", multiple=True, metavar="kept|removed|annotated",
              callback=lambda _ctx, _param, value: _parse_write(value),
              help="Also write the input rows of the kept documents, of the removed ones, or "
                   "all of them annotated with their cluster, into OUT/kept, OUT/removed, "
                   "OUT/annotated: same format and file names as the inputs (Parquet, JSONL, "
                   "JSONL.gz; WARC records for kept and removed). Repeat it or give a comma "
                   "list.")
@click.option("--force", is_flag=True,
              help="Write into an --out folder that holds files of no neardup run (they are "
                   "left alone; the run's tables are replaced).")
@click.option("--method", type=MethodChoice(), default=DEFAULTS.method,
              show_default=True, help="Near-duplicate method run after the exact levels.")
@click.option("--k", "max_hamming", type=click.IntRange(0, 16), default=SIMHASH.max_hamming,
              show_default=True,
              help="simhash: largest Hamming distance of a near-duplicate pair.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0, min_open=True),
              default=None,
              help="minhash: resemblance threshold of LSH (1: only equal shingle sets); sketch: "
                   "estimated resemblance (or containment, --relation contained) of a pair "
                   "[default: 0.8 for minhash, 0.5 for sketch]; keyword: cosine of the keyword "
                   "vectors [default: 0.9]; refused by the other methods.")
@click.option("--min-resemblance", type=click.FloatRange(0.0, 1.0), default=None,
              help="Verification rule: drop pairs whose exact resemblance is below this "
                   "[default: the threshold for minhash and sketch, 0.5 for the other "
                   "methods].")
@click.option("--shingle-width", type=click.IntRange(1, 64),
              default=DEFAULTS.verify_shingles.width, show_default=True,
              help="Words per shingle for min-hash and for verifying pairs.")
@click.option("--simhash-width", type=click.IntRange(1, 64),
              default=SIMHASH.simhash.shingles.width, show_default=True,
              help="Words per simhash feature.")
@click.option("--simhash-weights", type=click.Choice(["binary", "tf"]),
              default=SIMHASH.simhash.weighting,
              show_default=True, help="Weight of a simhash feature: once, or per occurrence.")
@click.option("--sketch", "sketch_spec", default="mod:25", show_default=True,
              callback=lambda _ctx, _param, value: _parse_sketch(value),
              help="sketch, supershingle: min:S keeps the S smallest permuted shingles, mod:M "
                   "those divisible by M (Broder: mod:25).")
@click.option("--sketch-width", type=click.IntRange(1, 64),
              default=SKETCH.sketch.shingles.width, show_default=True,
              help="sketch, supershingle: words per shingle.")
@click.option("--sketch-bits", type=click.Choice(["40", "64"]), default="40", show_default=True,
              help="sketch, supershingle: bits of a shingle fingerprint.")
@click.option("--sketch-adaptive", type=click.IntRange(0, 65536), default=0, show_default=True,
              help="sketch with mod:M: N > 0 gives each document the modulus M * 2**i that "
                   "keeps about N to 2N samples (Broder: mod:1 with 50); 0: one modulus.")
@click.option("--supershingle-size", type=click.IntRange(1, 64),
              default=SKETCH.supershingle_size,
              show_default=True, help="supershingle: sketch values per super-shingle.")
@click.option("--drop-common", type=click.IntRange(0, None), default=None,
              help="sketch, supershingle: ignore shingles shared by more documents than this "
                   "[default: 1000]; chunks: ignore chunks shared by more documents than this "
                   "[default: keep all]; 0: keep all.")
@click.option("--relation", type=click.Choice(["resemblance", "contained"]),
              default=DEFAULTS.relation, show_default=True,
              help="sketch: pair by estimated resemblance, or link each document to the one "
                   "that contains at least --threshold of it.")
@click.option("--keep", type=click.Choice(["first", "longest", "earliest", "shortest-url"]),
              default=DEFAULTS.keep, show_default=True, help="Which member of a cluster survives.")
@extract_options
@article_view_option
@template_options
@click.option("--thai-words", is_flag=True,
              help="Cut Thai text into words (PyThaiNLP, extra 'thai') before fingerprinting.")
@click.option("--links", is_flag=True,
              help="Extract the out-links of HTML pages into a links table (doc, url), for "
                   "the link graph of neardup report.")
@click.option("--media", type=click.Choice(["html", "text", "any"]), default="html",
              show_default=True,
              help="Which responses become documents: HTML and plain text; every textual type "
                   "(CSS, JavaScript, XML, SVG...); or any payload (binary ones compared at the "
                   "identical level only).")
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="parquet",
              show_default=True, help="Format of the output tables.")
@click.option("--workers", type=click.IntRange(0, 256), default=0,
              help="Worker processes [default: 0 = one per core, or this process alone for "
                   "one input file under 4 MiB].")
@click.option("--work", "work", type=click.Path(path_type=Path), default=None,
              help="Work directory of the run's stages: re-running the same command with it "
                   "resumes where a killed run stopped [default: OUT/.neardup-work].")
@click.option("--compact-work", is_flag=True,
              help="Smaller work directory, about 2.4x less disk, for some more CPU (a sixth "
                   "to a third more on real text): each document's words stored instead of its "
                   "shingle set, which is rebuilt when read; same outputs (see neardup plan).")
@click.option("--memory-limit", default=DEFAULT_MEMORY_LIMIT, show_default=True,
              help="Memory the run may use (e.g. 2G, 512M; none: no limit): the stages split "
                   "their work into buckets that fit it (chunks, sort: a quarter of it holds "
                   "pairs before spilling sorted runs to disk).")
@click.option("--partition-docs", type=click.IntRange(1, None), default=10_000,
              show_default=True,
              help="Documents per fingerprint partition (the unit a resumed run keeps).")
@click.option("--against", "against", type=click.Path(path_type=Path, file_okay=False),
              default=None,
              help="Work directory of an earlier run (same method options): compare INPUTS "
                   "with its documents too, reusing its fingerprints; the outputs keep what "
                   "touches the new documents, and the against table says for each whether "
                   "to drop it and why.")
@click.option("--quiet", is_flag=True, help="No progress display and no report.")
@click.option("--simhash-stop-words", default=None, metavar="LANGUAGE",
              help="simhash: remove this language's stop words first (e.g. english).")
@click.option("--simhash-stem", default=None, metavar="LANGUAGE",
              help="simhash: stem the words with this language's Snowball stemmer first.")
@click.option("--write-relations", is_flag=True,
              help="chunks: also write S&GM98's FPrint-DocID relation (fprint_docid) and the URL "
                   "and server maps (url_map, server_map) as tables.")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local",
              show_default=True,
              help="Run the stages in local worker processes, or as Apache Spark jobs (extra "
                   "'spark'; same outputs; see docs/spark.md).")
@click.option("--spark-master", default="local[2]", show_default=True,
              help="--engine spark: the Spark master (local[N], yarn, spark://HOST:PORT...).")
@click.option("--partitions", type=click.IntRange(1, None), default=None,
              help="--engine spark: shuffle partitions of the Spark stages [default: twice "
                   "Spark's default parallelism].")
@field_options
@PRESET_OPTION
@chunk_options
def dedup_command(inputs: tuple[str, ...], out: Path, write: tuple[str, ...], force: bool,
                  media: str, fmt: str,
                  workers: int, quiet: bool, work: Path | None, compact_work: bool,
                  memory_limit: str,
                  partition_docs: int, against: Path | None, engine: str, spark_master: str,
                  partitions: int | None, **options: Any) -> None:
    """Find exact and near-duplicate documents in INPUTS (WARC, ARC, JSONL, Parquet, HTML/text
    files or directories; - for stdin) and write the clusters to --out.

    Exits with status 1 when the inputs hold no document, saying what they held instead."""
    from neardup.cli.progress import stage_progress
    from neardup.config import parse_bytes
    from neardup.engine.run import LEAST_LIMIT, SMALL_INPUT_BYTES, EngineOptions, run_engine

    _check_inputs(inputs, uris=engine == "spark")
    if write and "-" in inputs:
        raise click.UsageError("--write copies rows from the input files: name the files "
                               "instead of - (stdin)")
    _check_threshold(options["method"], options["threshold"])
    fields = row_fields(**{name: options.pop(name) for name in FIELD_OPTIONS})
    reading = _engine_fields(fields, engine)
    claim_output(out, force=force)
    options["memory_limit"] = memory_limit
    name = options.pop("preset")
    config = (preset_dedup_config(name, options, pairs_memory(options.get("memory_limit")))
              if name else config_from_options(options))
    running = EngineOptions(work=work or out / WORK_DIR,
                           memory_limit=parse_bytes(memory_limit) or 1 << 40,
                           workers=workers or default_workers(), chunk_docs=partition_docs,
                           replace_other=work is None,
                           small_input_bytes=0 if workers else SMALL_INPUT_BYTES,
                           compact_sets=compact_work)
    if not running.limit_kept:
        click.echo(f"neardup: warning: --memory-limit {memory_limit} is below what the stages "
                   f"can keep to ({LEAST_LIMIT >> 20}M: below it their buckets stay at their "
                   "least size): the run may use more", err=True)
    try:
        with stage_progress(False if quiet else None) as progress:
            if engine == "spark":
                summary = _run_spark(list(inputs), out, config, running, spark_master,
                                     partitions, media=media, fmt=fmt, progress=progress,
                                     against=against)
            else:
                summary = run_engine(list(inputs), out, config, running,
                                     media=media,  # type: ignore[arg-type]
                                     fmt=fmt, progress=progress, against=against, **reading)
    except KeyboardInterrupt:
        exit_interrupted(f"no table written to {out}; the finished steps stay in "
                         f"{running.work}, and the same command resumes from them")
    if not summary["documents"]:
        raise NoDocumentsError(no_documents_message(summary))
    if name:
        from neardup.presets import preset

        summary = record_preset(out, summary, preset(name))
    summary = _write_dataset(out, write, summary)
    if not quiet:
        click.echo(render_summary(summary, out))


def _engine_fields(fields: RowFields, engine: str) -> dict[str, Any]:
    """The keyword that gives the engine other column names (none for the default names)."""
    if fields == DEFAULT_FIELDS:
        return {}
    if engine == "spark":
        raise click.UsageError("--engine spark reads the columns text, html, id and url: "
                               "--text-field, --html-field, --id-field and --url-field go "
                               "with --engine local")
    return {"fields": fields}


def _run_spark(inputs: list[str], out: Path, config: DedupConfig, running: Any, master: str,
               partitions: int | None, **keywords: Any) -> dict[str, Any]:
    """The run on Spark (imported only then: PySpark is an optional extra)."""
    from neardup.engine.spark.run import SparkOptions, run_spark

    summary: dict[str, Any] = run_spark(inputs, out, config, running,
                                        SparkOptions(master, partitions), **keywords)
    return summary


def _parse_write(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--write kept --write removed`` or ``--write kept,removed``, each mode once."""
    from neardup.output.dataset import WRITE_MODES

    modes = [mode.strip() for value in values for mode in value.split(",") if mode.strip()]
    for mode in modes:
        if mode not in WRITE_MODES:
            raise click.BadParameter(f"{mode!r}: use {', '.join(WRITE_MODES)} (or a comma "
                                     "list of them)")
    return tuple(dict.fromkeys(modes))


def _write_dataset(out: Path, modes: tuple[str, ...], summary: dict[str, Any]) -> dict[str, Any]:
    """The rows of ``--write`` (a run without it removes the files an earlier one wrote); the
    counts go into summary.json."""
    from neardup.engine.workdir import write_atomic
    from neardup.output.dataset import write_rows

    written = write_rows(out, modes)
    if not written:
        return summary
    summary = summary | {"written": written}
    write_atomic(out / "summary.json", (json.dumps(summary, indent=2) + "\n").encode())
    return summary


def _simhash_method(options: dict[str, Any]) -> SimHashMethod:
    simhash = SimHashConfig(ShingleConfig(width=options["simhash_width"]),
                            options["simhash_weights"],
                            stop_words=options.get("simhash_stop_words"),
                            stemming=options.get("simhash_stem"))
    return SimHashMethod(simhash, options["max_hamming"])


def _minhash_config(options: dict[str, Any]) -> MinHashConfig:
    return MinHashConfig(shingles=ShingleConfig(width=options["shingle_width"]))


METHOD_OPTIONS: dict[type[Any], tuple[Callable[[dict[str, Any]], object], tuple[str, ...]]] = {
    SimHashMethod: (_simhash_method, ("max_hamming", "simhash_width", "simhash_weights",
                                      "simhash_stop_words", "simhash_stem")),
    MinHashConfig: (_minhash_config, ()),
    SketchMethod: (lambda options: _sketch_method(options),
                   ("sketch_spec", "sketch_width", "sketch_bits", "sketch_adaptive",
                    "supershingle_size", "drop_common", "relation")),
    **CHUNK_OPTIONS,
}
"""Per type of method config: how the options build it, and the options it reads."""


def _refuse_other_methods_options(method: str, kind: type[Any] | None) -> None:
    """An option of another method's config, given on the command line, is refused: it would
    have no effect."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    mine = set(METHOD_OPTIONS[kind][1]) if kind in METHOD_OPTIONS else set()
    flags = {param.name: param.opts[0] for param in ctx.command.params}
    for other, (_build, names) in METHOD_OPTIONS.items():
        for name in names:
            if other is not kind and name not in mine and \
                    ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE:
                raise click.UsageError(f"{flags.get(name, name)} has no effect with "
                                       f"--method {method}")


def method_params(method: str, options: dict[str, Any]) -> object | None:
    """The config of ``method`` from the options (None: it takes none, or none the options
    set: its defaults)."""
    kind = method_spec(method).params
    _refuse_other_methods_options(method, kind)
    if kind not in METHOD_OPTIONS:
        return None
    return METHOD_OPTIONS[kind][0](options)


def config_from_options(options: dict[str, Any]) -> DedupConfig:
    """The DedupConfig of the method options (every option not about input or output)."""
    return DedupConfig(
        method=options["method"], params=method_params(options["method"], options),
        text=text_config(options.get("extract"), options.get("main_content"),
                         thai_words=options.get("thai_words", False),
                         article_view=options.get("article_view")),
        templates=template_config(options),
        verify_shingles=ShingleConfig(width=options["shingle_width"]),
        threshold=options["threshold"] or 0.0,
        min_resemblance=options["min_resemblance"], keep=options["keep"],
        links=options.get("links", False))


def _parse_sketch(value: str) -> tuple[str, int]:
    """``min:S`` or ``mod:M`` as (kind, size)."""
    kind, _, size = value.partition(":")
    if kind not in ("min", "mod") or not size.isdigit() or int(size) < 1:
        raise click.BadParameter(f"{value!r}: use min:S or mod:M with a positive integer")
    return kind, int(size)


def _sketch_method(options: dict[str, Any]) -> SketchMethod:
    """The config of the sketch and supershingle methods."""
    kind, size = options.get("sketch_spec") or ("mod", 25)
    sketch = SketchConfig(kind="min" if kind == "min" else "mod", size=size,
                          shingles=ShingleConfig(width=options.get("sketch_width", 10)),
                          bits=int(options.get("sketch_bits", 40)),
                          adaptive=options.get("sketch_adaptive", 0))
    drop = options.get("drop_common")
    return SketchMethod(sketch, options.get("supershingle_size", 6),
                        1000 if drop is None else drop, options.get("relation", "resemblance"))
