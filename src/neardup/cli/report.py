"""``neardup report``: the replication report (HTML, optionally JSON) of one or more dedup runs."""

from __future__ import annotations

from pathlib import Path

import click

from neardup.cli.summary import count

__all__ = ["report_command"]


@click.command("report")
@click.option("--from", "sources", multiple=True,
              type=click.Path(path_type=Path),
              help="A dedup --out directory; repeat it to compare methods run over the same "
                   "input (one bar group per run; sections 1-3 read the first run, sections 6, "
                   "8, 9 and 10 the first run that has what they need).")
@click.option("--store", "stores", multiple=True, type=click.Path(path_type=Path),
              help="A store directory (neardup index), as a run of its own (repeatable).")
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The HTML file to write (self-contained: figures embedded).")
@click.option("--json", "with_json", is_flag=True,
              help="Also write the same numbers as JSON, next to the HTML (same name, .json).")
@click.option("--seed", "seeds", multiple=True, metavar="URL",
              help="Seed of the crawl simulator (repeatable) [default: the most linked-to page "
                   "of each input file].")
@click.option("--top", type=click.IntRange(1, 100), default=10, show_default=True,
              help="Rows of the ranked tables (largest clusters, rates, collections, server "
                   "pairs, spikes).")
@click.option("--browser-pages", type=click.IntRange(0, 10_000), default=200, show_default=True,
              help="Clusters given a page in the cluster browser, the folder <output name>-"
                   "clusters/ written next to the HTML (0: no browser). Each page shows the "
                   "texts of its first 12 members, read again from the run's inputs.")
def report_command(sources: tuple[Path, ...], stores: tuple[Path, ...], output: Path,
                   with_json: bool,
                   seeds: tuple[str, ...], top: int, browser_pages: int) -> None:
    """Write the replication report of dedup output directories: the largest clusters and their
    kept copy, duplicate rates per file, host and date, non-content pages, replicas per
    document, cluster sizes, replicated collections and mirrors, crawl savings, link graph,
    growth and the simhash distribution, each section omitted with its reason when its input is
    missing; and the cluster browser, a folder of static pages showing pairs side by side."""
    from neardup.analysis import build_report, read_dedup_dir
    from neardup.analysis.browser import BrowserLimits, check_browser_folder, write_browser
    from neardup.analysis.copies import gather_copies
    from neardup.analysis.dedupdir import read_store, run_labels
    from neardup.analysis.render import write_report

    if not sources and not stores:
        raise click.UsageError("give at least one --from DIR or --store DIR")
    runs = [read_dedup_dir(path) for path in sources] + [read_store(path) for path in stores]
    json_path = output.with_suffix(".json") if with_json else None
    if json_path == output:
        raise click.UsageError(f"{output}: the HTML output needs another suffix than .json")
    limits = BrowserLimits(pages=browser_pages)
    folder = output.with_name(f"{output.stem}-clusters")
    if browser_pages:
        check_browser_folder(folder)
    copies = gather_copies(runs[0], run_labels(runs)[0], max(top, limits.index_limit),
                           limits.member_rows, text_clusters=browser_pages,
                           text_members=limits.text_members, snippets=top)
    report = build_report(runs, seeds=seeds, top=top, copies=copies,
                          browser=folder.name if browser_pages else None)
    written = write_report(report, output, json_path)
    if browser_pages:
        pages = write_browser(copies, folder, limits)
        written.append(folder / "index.html")
        click.echo(f"cluster browser: {count(pages, 'cluster page')}")
    for problem in copies.problems:
        click.echo(f"note: {problem}")
    for section in report.sections:
        state = (f"omitted: {section.omitted}" if section.omitted is not None
                 else f"{count(len(section.figures), 'figure')}, "
                      f"{count(len(section.stats), 'number')}")
        click.echo(f"{section.title}: {state}")
    click.echo(f"wrote {', '.join(str(p) for p in written)}")
