"""A run's summary in plain words: counts with their nouns, skips with their meaning.

``render_summary`` prints what ``dedup`` (and ``demo``) found; ``no_documents_message`` says why
a run read no document, from the same ``summary.json`` numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["SKIP_WORDS", "count", "no_documents_message", "render_summary", "skipped_words"]

SKIP_WORDS = {
    "non-response": "not a captured response (warcinfo, request, metadata)",
    "not-200": "an HTTP status other than 200",
    "not-html": "neither HTML nor plain text (see --media)",
    "bad-http": "damaged HTTP headers",
    "bad-encoding": "a content encoding that cannot be undone",
    "empty-payload": "an empty payload",
    "bad-target-uri": "no usable URL",
    "not-web-uri": "not a web URL (dns:, metadata://)",
    "truncated-record": "cut short by the end of the file",
    "bad-record": "damaged records or data between records",
    "revisit-of-skipped": "a revisit of a skipped record",
    "revisit-unresolved": "a revisit of a record not in the input",
    "unreadable-file": "a file that cannot be opened",
    "no-match": "a pattern that matches no file",
    "unknown-format": "a file of no known format",
    "binary": "a binary file",
    "unsupported-stdin": "a format stdin cannot carry (Parquet)",
    "json-error": "a line that is not a JSON object",
    "missing-text": "a row with no string in its text or html field",
    "too-large": "a JSONL line too long to read",
    "repeated-input": "an input file named again, read once",
}
"""What each skip reason of :mod:`neardup.sources.stats` means, for a reader of the summary."""

_PLURALS = {"copy": "copies", "was": "were"}


def count(number: int, noun: str) -> str:
    """``1 segment``, ``2 segments``, ``0 documents`` (a few irregular nouns known)."""
    if number == 1:
        return f"{number} {noun}"
    return f"{number:,} {_PLURALS.get(noun, noun + 's')}"


def skipped_words(skipped: dict[str, int], explain: bool = False) -> str:
    """``not-200 3, bad-http 1`` (with ``explain``: each reason's meaning in brackets)."""
    if not skipped:
        return "none"
    parts = []
    for reason, number in sorted(skipped.items(), key=lambda item: (-item[1], item[0])):
        meaning = SKIP_WORDS.get(reason)
        parts.append(f"{reason} {number:,}" + (f" ({meaning})" if explain and meaning else ""))
    return ", ".join(parts)


def _exact_line(groups: dict[str, int]) -> str:
    levels = ", ".join(f"{number:,} {level}" for level, number in groups.items())
    return f"exact groups: {levels or 'none'}"


def _hostless_line(pages: int) -> str:
    return (f"templates: not removed from {count(pages, 'page')} without a host (no URL, "
            "canonical link, og:url or <base href>)")


def _near_lines(near: dict[str, Any]) -> list[str]:
    lines = [f"near pairs: {near['verified']:,} kept; candidate pairs checked on their shingles: "
             f"{near['candidates']:,}, rejected: {near['rejected']:,}"]
    direct = near["verified"] - (near["candidates"] - near["rejected"])
    if direct > 0:  # the sketch methods pair documents of equal sketches without a candidate
        lines[0] += f"; paired for equal sketches: {direct:,}"
    if "views" in near:
        views = near["views"]
        lines.append(f"views: {views['article_views']:,} pages compared on their article text "
                     f"too; pairs on the full text: {views['pairs']['full']:,}, on the article "
                     f"text: {views['pairs']['article']:,}")
    if near.get("not_html"):
        lines.append(f"smfa: {count(near['not_html'], 'document')} not HTML got no fingerprint "
                     "(SMFA reads HTML block segments)")
    return lines


def render_summary(summary: dict[str, Any], out: Path) -> str:
    """The lines ``dedup`` prints after a run."""
    sources = summary["sources"]
    lines = [f"preset {summary['preset']['name']}: {summary['preset']['paper']}"] \
        if "preset" in summary else []
    lines += [f"documents: {summary['documents']:,} from {count(sources['records'], 'record')} in "
             f"{count(sources['files'], 'file')}; skipped: {skipped_words(sources['skipped'])}"]
    if sources.get("truncated_payloads"):
        from neardup.sources.context import DEFAULT_MAX_BYTES

        lines.append(f"truncated: {count(sources['truncated_payloads'], 'payload')} longer than "
                     f"{DEFAULT_MAX_BYTES >> 20} MiB, cut to it (kept as documents)")
    if sources.get("errors"):
        lines.append(f"input problems: {count(len(sources['errors']), 'line')} in "
                     f"{out / 'summary.json'} (sources.errors), first: {sources['errors'][0]}")
    if sources.get("pages_without_host") and summary.get("templates", {}).get("enabled"):
        lines.append(_hostless_line(sources["pages_without_host"]))
    if summary.get("repeated_ids"):
        repeats = summary["repeated_ids"]
        lines.append(f"ids: {count(repeats, 'document')} {'repeats' if repeats == 1 else 'repeat'}"
                     " the id of an earlier one (the doc column tells them apart)")
    if "against" in summary:
        lines.append(_against_line(summary["against"]))
    lines.append(_exact_line(summary["exact_groups"]))
    if "near" in summary:
        lines.extend(_near_lines(summary["near"]))
    lines.append(f"clusters: {summary['clusters']:,} holding "
                 f"{count(summary['documents_in_clusters'], 'document')}; duplicates: "
                 f"{summary['duplicates']:,}; kept: {summary['kept']:,}")
    for mode, written in summary.get("written", {}).items():
        lines.append(_written_line(mode, written))
    lines.append(f"time: {summary['seconds']['total']:.2f} s; outputs in {out}")
    return "\n".join(lines)


def _written_line(mode: str, written: dict[str, Any]) -> str:
    """What ``--write`` wrote for one mode."""
    line = (f"{mode}: {count(written['rows'], 'row')} in "
            f"{count(written['files_written'], 'file')} written to {written['folder']}")
    if written["files_reused"]:
        line += f" ({written['files_reused']:,} more complete from an earlier run)"
    if written["left_out"]:
        line += f"; {count(written['left_out'], 'line')} not a JSON object, left out"
    return line


def _against_line(against: dict[str, Any]) -> str:
    """What a run ``--against`` an earlier one says about the new documents."""
    return (f"against {against['run']}: {count(against['old_documents'], 'old document')}; "
            f"of the new ones, {against['duplicate-of-old']:,} duplicate an old one, "
            f"{against['duplicate-of-new']:,} another new one, {against['keep']:,} kept")


def no_documents_message(summary: dict[str, Any]) -> str:
    """Why a run read no document, in one line (then the first input problems, if any)."""
    sources = summary["sources"]
    inputs = ", ".join(summary.get("inputs", [])) or "the inputs"
    if not sources["files"] and not sources["skipped"]:
        cause = "no file found there"
    else:
        cause = (f"{count(sources['files'], 'file')} read, "
                 f"{count(sources['records'], 'record')}; skipped: "
                 f"{skipped_words(sources['skipped'], explain=True)}")
    lines = [f"no document read from {inputs}: {cause}"]
    lines.extend(f"  {line}" for line in sources.get("errors", [])[:3])
    return "\n".join(lines)
