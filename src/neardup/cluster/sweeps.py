"""Lost and found across dated sweeps (Broder et al., section 6.2), over plain sightings.

A *sighting* is one URL seen in one sweep: ``(url, sweep, fetched, cluster)``, the cluster coming
from clustering all sweeps together. Sweeps are ordered oldest to newest, by an explicit order or
else by the latest fetch date seen in each (then by label); within a sweep a later ``fetched``
(ISO-8601) is more recent. Ties go to the smaller URL, so the answers are deterministic.

- :func:`most_recent_url`: for a URL (typically one that vanished), the most recent *other* URL of
  the cluster its last sighting belongs to: where its content went.
- :func:`lost_and_found_report`: every URL seen in an earlier sweep but not in the latest one, with
  its best replacement: the most recent URL of its cluster that the latest sweep still has (None
  when the content is gone too).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from neardup.errors import ConfigError

__all__ = ["Replacement", "Sighting", "lost_and_found_report", "most_recent_url", "sweep_order"]


@dataclass(frozen=True, slots=True)
class Sighting:
    """One URL seen in one sweep, with its fetch time and cluster."""

    url: str
    sweep: str
    fetched: str | None
    cluster: int


@dataclass(frozen=True, slots=True)
class Replacement:
    """A URL gone from the latest sweep, where it was last seen, and what replaces it."""

    url: str
    last_seen: Sighting
    replacement: Sighting | None


def sweep_order(sightings: Iterable[Sighting]) -> list[str]:
    """Sweeps oldest first: by the latest fetch date seen in each (undated sweeps first), then by
    label."""
    latest: dict[str, str] = {}
    for s in sightings:
        latest[s.sweep] = max(latest.get(s.sweep, ""), s.fetched or "")
    return sorted(latest, key=lambda sweep: (latest[sweep], sweep))


def _ranks(sightings: Sequence[Sighting], order: Sequence[str] | None) -> dict[str, int]:
    chosen = list(order) if order is not None else sweep_order(sightings)
    ranks = {sweep: rank for rank, sweep in enumerate(chosen)}
    unknown = {s.sweep for s in sightings} - ranks.keys()
    if unknown:
        raise ConfigError(f"order={chosen!r}: lacks sweep {sorted(unknown)[0]!r}")
    return ranks


def _most_recent(candidates: Iterable[Sighting], ranks: dict[str, int]) -> Sighting | None:
    """The most recent sighting (latest sweep, then latest fetch); ties: the smaller URL."""
    best: Sighting | None = None
    for s in sorted(candidates, key=lambda s: s.url):
        if best is None or (ranks[s.sweep], s.fetched or "") > (ranks[best.sweep],
                                                                best.fetched or ""):
            best = s
    return best


def _by_cluster(sightings: Sequence[Sighting]) -> dict[int, list[Sighting]]:
    groups: dict[int, list[Sighting]] = {}
    for s in sightings:
        groups.setdefault(s.cluster, []).append(s)
    return groups


def most_recent_url(sightings: Sequence[Sighting], url: str,
                    order: Sequence[str] | None = None) -> Sighting | None:
    """The most recent other URL in the cluster of ``url``'s last sighting (None if there is
    none, or if ``url`` was never seen)."""
    ranks = _ranks(sightings, order)
    last = _most_recent((s for s in sightings if s.url == url), ranks)
    if last is None:
        return None
    return _most_recent((s for s in sightings if s.cluster == last.cluster and s.url != url),
                        ranks)


def lost_and_found_report(sightings: Sequence[Sighting],
                          order: Sequence[str] | None = None) -> list[Replacement]:
    """URLs seen before but absent from the latest sweep, each with its best replacement (the
    most recent URL of its cluster present in the latest sweep), sorted by URL."""
    ranks = _ranks(sightings, order)
    if not ranks:
        return []
    latest = max(ranks, key=ranks.__getitem__)
    alive = {s.url for s in sightings if s.sweep == latest}
    last_seen: dict[str, list[Sighting]] = {}
    for s in sightings:
        if s.url not in alive:
            last_seen.setdefault(s.url, []).append(s)
    clusters = _by_cluster([s for s in sightings if s.sweep == latest])
    report = []
    for url in sorted(last_seen):
        last = _most_recent(last_seen[url], ranks)
        assert last is not None
        replacement = _most_recent(clusters.get(last.cluster, []), ranks)
        report.append(Replacement(url, last, replacement))
    return report
