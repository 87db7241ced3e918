"""``neardup demo``: write a synthetic crawl with planted duplicates, dedup it, score the result."""

from __future__ import annotations

from pathlib import Path

import click

from neardup.cli.dedup import render_summary, run_dedup
from neardup.cli.method_option import MethodChoice
from neardup.cli.summary import count
from neardup.config import DEFAULT_METHOD, DedupConfig
from neardup.demo.compare import Scorecard, score_against_truth
from neardup.demo.synthetic import generate_crawl

__all__ = ["demo_command"]

_NOTES = {"contained": "quoted inside a longer page: high containment, low resemblance, "
                       "so a resemblance method is not expected to cluster it"}


def render_scorecard(card: Scorecard) -> str:
    lines = ["", f"{'planted kind':<12} {'pairs':>6} {'found':>6} {'recall':>7}"]
    for kind in card.kinds:
        note = f"  ({_NOTES[kind.kind]})" if kind.kind in _NOTES else ""
        lines.append(f"{kind.kind:<12} {kind.planted:>6} {kind.found:>6} {kind.recall:>7.0%}{note}")
    lines.append(f"pairs clustered: {card.found_pairs}; not planted: {card.false_pairs} "
                 f"(precision {card.precision:.0%})")
    return "\n".join(lines)


@click.command("demo")
@click.option("--out", type=click.Path(path_type=Path), default=Path("neardup-demo"),
              show_default=True, help="Directory for the crawl, the truth and the outputs.")
@click.option("--method", type=MethodChoice(), default=DEFAULT_METHOD,
              show_default=True, help="The dedup method run on the crawl.")
@click.option("--pages", type=click.IntRange(60, 100_000), default=400, show_default=True,
              help="HTML pages in the synthetic crawl.")
@click.option("--seed", type=int, default=7, show_default=True,
              help="Seed of the generator (the same seed writes the same crawl).")
def demo_command(out: Path, method: str, pages: int, seed: int) -> None:
    """Write a synthetic crawl (WARC) with planted duplicates, run dedup on it, and print what
    was found against what was planted."""
    out.mkdir(parents=True, exist_ok=True)
    warc = out / "crawl.warc.gz"
    truth = generate_crawl(warc, seed=seed, pages=pages)
    (out / "truth.json").write_text(truth.to_json())
    click.echo(f"wrote {warc}: {count(truth.responses, 'page')} on "
               f"{count(len(truth.hosts), 'host')}, {count(truth.revisits, 'revisit')}; "
               f"planted groups in {out / 'truth.json'}")
    config = DedupConfig(method=method, links=True)
    result, summary = run_dedup((str(warc),), out / "dedup", config, workers=1)
    click.echo(render_summary(summary, out / "dedup"))
    click.echo(render_scorecard(score_against_truth(truth, result)))
