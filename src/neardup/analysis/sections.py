"""The report sections on the link graph (5), growth (6) and the simhash distribution (7).

Each builds a :class:`~neardup.analysis.model.Section` from one dedup run, or an omitted section
with a one-line reason when the run lacks what the measurement needs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from neardup._types import BOOL, F64, I64
from neardup.analysis.dedupdir import DedupRun, column_array, column_list
from neardup.analysis.distribution import (
    Spike,
    bucket_counts,
    find_spikes,
    leading_bit_histogram,
    parse_hex64,
)
from neardup.analysis.growth import Growth, GrowthEstimate, estimate_from_prefix, read_growth
from neardup.analysis.model import (
    SECTION_TITLES,
    Figure,
    Section,
    Series,
    Stat,
    Table,
    repeat_unit,
)
from neardup.analysis.replication import dense_labels, size_distribution
from neardup.analysis.webgraph import (
    ConnectedCoverage,
    PartStats,
    connected_coverage,
    crawl,
    default_seeds,
    link_graph,
    part_stats,
    seeds_for_urls,
)
from neardup.errors import SourceError
from neardup.features.shingles import distinct

__all__ = ["distribution_section", "growth_section", "links_section"]

#: The shares of the iterations Pereira et al. estimate the final count from.
ESTIMATE_FRACTIONS = (0.2, 0.5)
#: Spikes marked on the bucket figure at most.
MAX_SPIKES = 8


def _omitted(key: str, reason: str) -> Section:
    return Section(key, SECTION_TITLES[key], omitted=reason)


def links_section(run: DedupRun, label: str, seed_urls: Sequence[str], top: int) -> Section:
    """Pereira's Tables 4-6 and Figures 2-4 from the links table and a simulated crawl."""
    assert run.links is not None
    urls = column_list(run.documents, "url")
    graph = link_graph(urls, column_array(run.links, "doc").astype(np.int64).tolist(),
                       column_list(run.links, "url"))
    if graph.edges == 0:
        return _omitted("links", f"{run.path}: no out-link points to a document of the input")
    sources = (column_list(run.documents, "source") if "source" in run.documents.column_names
               else [""] * run.count)
    seeds = (seeds_for_urls(urls, seed_urls) if seed_urls
             else default_seeds(graph, dense_labels(sources)))
    reached = crawl(graph, seeds)
    seed_urls_shown = list(dict.fromkeys(urls[s] or f"doc {s}" for s in seeds.tolist()))
    labels = run.cluster
    parts = {"complete": part_stats(labels, np.ones(run.count, dtype=bool)),
             "connected": part_stats(labels, reached),
             "disconnected": part_stats(labels, ~reached)}
    cover = connected_coverage(labels, reached)
    how = "the given --seed URLs" if seed_urls else "the most linked-to page of each input file"
    return Section(
        "links", SECTION_TITLES["links"],
        run.describe(label, f"links ({run.links.num_rows:,} out-links, {graph.edges:,} between "
                            "documents), documents (url, source), clusters"),
        caption=f"A crawler simulated from {_seed_words(len(seeds), len(seed_urls_shown))} "
                f"({how}) follows every link; "
                "what it reaches is the connected part. Compare the duplicate bars: Pereira et "
                "al. found far more duplicates in the part a link-following crawler never "
                "reaches (.cl 2003: 25.9% connected, 43.0% disconnected).",
        stats=_link_stats(parts, cover),
        tables=(_parts_table(parts),
                Table("Seeds", ("seed URL",), ("text",),
                      tuple((url,) for url in seed_urls_shown[:top]),
                      note=f"{min(top, len(seed_urls_shown))} of {len(seed_urls_shown)} "
                           "distinct seed URLs")),
        figures=_link_figures(parts, labels, reached))


def _seed_words(documents: int, distinct: int) -> str:
    """``5 seed pages`` (``6 seed documents at 5 distinct URLs`` when URLs repeat)."""
    if documents == distinct:
        return f"{documents} seed page{'s' if documents != 1 else ''}"
    return f"{documents} seed documents at {distinct} distinct URLs"


def _link_figures(parts: dict[str, PartStats], labels: I64,
                  reached: BOOL) -> tuple[Figure, ...]:
    shares = Series("duplicates", tuple(parts), tuple(p.duplicate_share for p in parts.values()))
    return (Figure("bars", "Duplicates per part (Pereira Table 4)", "",
                   "duplicates, share of the part's documents", (shares,), percent=True),
            Figure("loglog", "Documents per cluster, per part (Pereira Figures 2-4)",
                   "documents in the cluster", "number of clusters", _part_series(labels, reached)))


def _link_stats(parts: dict[str, PartStats], cover: ConnectedCoverage) -> tuple[Stat, ...]:
    total = parts["complete"].documents
    stats = [Stat("connected_share", "documents in the connected part",
                  parts["connected"].documents / total if total else 0.0, "share")]
    stats += [Stat(f"duplicates:{name}", f"duplicates, {name}", p.duplicate_share, "share")
              for name, p in parts.items()]
    stats += [
        Stat("clusters_reached", "clusters with a connected member (Table 5)",
             cover.clusters_reached / cover.clusters if cover.clusters else 0.0, "share"),
        Stat("unique_reached", "unique documents in the connected part (Table 6)",
             cover.unique_reached / cover.unique if cover.unique else 0.0, "share"),
        Stat("useful_reached", "useful documents (unique + one per cluster) reached",
             cover.useful_share, "share")]
    return tuple(stats)


def _parts_table(parts: dict[str, PartStats]) -> Table:
    return Table("Documents, clusters and duplicates per part",
                 ("part", "documents", "clusters", "duplicates", "share", "unique"),
                 ("text", "count", "count", "count", "share", "count"),
                 tuple((name, p.documents, p.clusters, p.duplicates, p.duplicate_share, p.unique)
                       for name, p in parts.items()))


def _part_series(labels: I64, reached: BOOL) -> tuple[Series, ...]:
    series = []
    for name, mask in (("complete", np.ones(labels.size, dtype=bool)), ("connected", reached),
                       ("disconnected", ~reached)):
        sizes, counts = size_distribution(labels[mask])
        series.append(Series(name, tuple(float(s) for s in sizes), tuple(float(c)
                                                                          for c in counts)))
    return tuple(series)


def growth_section(run: DedupRun, label: str) -> Section:
    """Pereira's Figure 5 and the estimate of the final duplicates from 20% and 50%."""
    assert run.growth is not None
    try:
        growth = read_growth(run.growth)
    except SourceError as error:
        return _omitted("growth", f"{run.path}: {error}")
    labels = run.cluster
    estimates = [estimate_from_prefix(labels, growth.m, f) for f in ESTIMATE_FRACTIONS]
    actual = int(labels.size - distinct(labels).size)
    return Section(
        "growth", SECTION_TITLES["growth"],
        run.describe(label, f"growth ({growth.m} iterations), clusters"),
        caption="Clusters and duplicates found after each iteration. A curve that flattens "
                "early means the large clusters were found first (Pereira et al.: 90% of the "
                "duplicates after half the iterations). The vertical lines mark 20% and 50% "
                "of the iterations, from which the final count is estimated.",
        stats=_growth_stats(growth, estimates, actual, labels.size),
        tables=(_estimates_table(growth, estimates, actual, labels.size),),
        figures=(Figure("lines", "Growth per iteration (Pereira Figure 5)", "iteration", "count",
                        tuple(Series(name, tuple(float(i) for i in growth.iterations),
                                     tuple(float(v) for v in values))
                              for name, values in growth.series.items()),
                        marks=tuple((float(e.iteration), f"{e.fraction:.0%}")
                                    for e in estimates)),))


def _growth_stats(growth: Growth, estimates: Sequence[GrowthEstimate], actual: int,
                  count: int) -> tuple[Stat, ...]:
    stats = [Stat("iterations", "iterations", growth.m)]
    for name, values in growth.series.items():
        stats.append(Stat(f"final:{name}", f"{name} after the last iteration", float(values[-1])))
    duplicates = growth.series.get("duplicates")
    for e in estimates:
        tag = f"{e.fraction:.0%}"
        if duplicates is not None and duplicates[-1] > 0:
            stats.append(Stat(f"found:{tag}", f"duplicates found after {tag} of the iterations",
                              float(duplicates[e.iteration - 1] / duplicates[-1]), "share"))
        error = (e.duplicates_estimate - actual) / count if count else 0.0
        stats.append(Stat(f"error:{tag}", f"estimate from {tag}: error in points of duplicates",
                          round(100 * error, 2), "number"))
    return tuple(stats)


def _estimates_table(growth: Growth, estimates: Sequence[GrowthEstimate], actual: int,
                     count: int) -> Table:
    own = sorted(growth.estimates)
    rows = []
    for e in estimates:
        theirs = tuple(_at(growth.estimates[name], e.iteration) for name in own)
        rows.append((f"{e.fraction:.0%}", e.iteration, e.processed, e.duplicates_found,
                     e.duplicates_estimate, e.duplicates_estimate / count if count else 0.0,
                     actual / count if count else 0.0, *theirs))
    return Table("Final duplicates estimated from the first iterations",
                 ("iterations", "up to", "documents loaded", "duplicates found", "estimated",
                  "estimated share", "actual share", *own),
                 ("text", "count", "share", "count", "number", "share", "share",
                  *repeat_unit("number", len(own))), tuple(rows))


def _at(values: F64, iteration: int) -> float | None:
    value = float(values[iteration - 1])
    return None if math.isnan(value) else value


def distribution_section(run: DedupRun, label: str, top: int) -> Section:
    """Manku et al. Figure 2: leading 1-bit of successive XORs, and 128 buckets with spikes."""
    fingerprints = parse_hex64(column_list(run.documents, "simhash"))
    if fingerprints.size < 2:
        return _omitted("distribution", f"{run.path}: fewer than two simhash fingerprints")
    tokens = (column_array(run.documents, "tokens").astype(np.int64)
              if "tokens" in run.documents.column_names else np.ones(run.count, dtype=np.int64))
    positions, equal = leading_bit_histogram(fingerprints)
    buckets = bucket_counts(fingerprints)
    spikes = find_spikes(fingerprints, tokens, column_list(run.documents, "url"),
                         top=min(top, MAX_SPIKES))
    return Section(
        "distribution", SECTION_TITLES["distribution"],
        run.describe(label, "documents (simhash, tokens, url)"),
        caption="First figure: were the fingerprints random, the bars would peak near "
                "63 - log2(n) and halve with each step to either side; extra weight on the "
                "low positions comes from pages whose fingerprints differ in a few low bits: "
                "near-duplicates. Second: fingerprints over 128 equal buckets; the marked "
                "spikes (#1 the fullest, see the table) are pages sharing one fingerprint, or "
                "similar pages sharing its high bits (Manku et al.: empty pages at simhash 0, "
                "'File not Found' pages, bulletin-board logins). Equal successive fingerprints "
                "have no 1-bit: they are counted in the numbers, not drawn.",
        stats=(Stat("fingerprints", "fingerprints", int(fingerprints.size)),
               Stat("equal_successive", "successive fingerprints that are equal", equal),
               Stat("peak", "most common leading-bit position", int(np.argmax(positions))),
               Stat("expected_peak", "peak expected if random (63 - log2 n)",
                    round(63 - math.log2(fingerprints.size), 1), "number"),
               Stat("spikes", "spikes", len(spikes)),
               Stat("largest_bucket", "fingerprints in the fullest bucket (mean "
                    f"{fingerprints.size / 128:.1f})", int(buckets.max()))),
        tables=(Table("Spikes", ("mark", "bucket", "fingerprints", "what", "example URL"),
                      ("text", "count", "count", "text", "text"),
                      tuple((f"#{rank}", s.bucket, s.documents, s.name, s.example or "")
                            for rank, s in enumerate(spikes, 1))),),
        figures=_distribution_figures(positions, buckets, spikes))


def _counts(name: str, values: I64) -> Series:
    return Series(name, tuple(float(i) for i in range(values.size)),
                  tuple(float(v) for v in values))


def _distribution_figures(positions: I64, buckets: I64,
                          spikes: Sequence[Spike]) -> tuple[Figure, ...]:
    return (Figure("histogram", "Leading 1-bit of successive XORs (Manku Fig. 2a)",
                   "bit position (0 = lowest)", "successive pairs", (_counts("pairs", positions),),
                   log_y=True),
            Figure("histogram", "Fingerprints in 128 buckets (Manku Fig. 2b)", "bucket",
                   "fingerprints", (_counts("fingerprints", buckets),),
                   marks=tuple((float(s.bucket), f"#{rank}") for rank, s in enumerate(spikes, 1))))
