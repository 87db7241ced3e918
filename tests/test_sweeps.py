"""Lost and found over dated sweeps: where a vanished URL's content went."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.cluster.sweeps import (
    Sighting,
    lost_and_found_report,
    most_recent_url,
    sweep_order,
)
from neardup.errors import ConfigError

S = Sighting
SIGHTINGS = [
    # cluster 1: a page that moved twice
    S("http://a.example/old", "1996-04", "1996-04-02T10:00:00Z", 1),
    S("http://a.example/old", "1996-10", "1996-10-05T08:00:00Z", 1),
    S("http://a.example/mid", "1996-10", "1996-10-07T09:00:00Z", 1),
    S("http://b.example/new", "1997-04", "1997-04-01T12:00:00Z", 1),
    S("http://mirror.example/new", "1997-04", "1997-04-03T12:00:00Z", 1),
    # cluster 2: a page that is still there
    S("http://c.example/stable", "1996-04", "1996-04-02T11:00:00Z", 2),
    S("http://c.example/stable", "1997-04", "1997-04-02T11:00:00Z", 2),
    # cluster 3: gone for good
    S("http://d.example/gone", "1996-10", "1996-10-01T00:00:00Z", 3),
    # a URL whose content changed: its last sighting is in cluster 5, not 4
    S("http://e.example/page", "1996-04", "1996-04-03T00:00:00Z", 4),
    S("http://e.example/page", "1996-10", "1996-10-03T00:00:00Z", 5),
    S("http://f.example/copy-of-old-e", "1997-04", "1997-04-05T00:00:00Z", 4),
    S("http://g.example/copy-of-new-e", "1997-04", "1997-04-04T00:00:00Z", 5),
]


def test_sweeps_are_ordered_by_date() -> None:
    assert sweep_order(SIGHTINGS) == ["1996-04", "1996-10", "1997-04"]
    undated = [S("u", "beta", None, 1), S("v", "alpha", None, 2), S("w", "gamma", "2001", 3)]
    assert sweep_order(undated) == ["alpha", "beta", "gamma"]


def test_most_recent_url_of_a_vanished_url() -> None:
    found = most_recent_url(SIGHTINGS, "http://a.example/old")
    assert found is not None and found.url == "http://mirror.example/new"
    mid = most_recent_url(SIGHTINGS, "http://a.example/mid")
    assert mid is not None and mid.url == "http://mirror.example/new"
    assert most_recent_url(SIGHTINGS, "http://d.example/gone") is None
    assert most_recent_url(SIGHTINGS, "http://never.example/") is None
    changed = most_recent_url(SIGHTINGS, "http://e.example/page")
    assert changed is not None and changed.url == "http://g.example/copy-of-new-e"


def test_an_explicit_order_overrides_the_dates() -> None:
    order = ["1997-04", "1996-10", "1996-04"]
    found = most_recent_url(SIGHTINGS, "http://b.example/new", order)
    assert found is not None and found.url == "http://a.example/old"
    with pytest.raises(ConfigError, match="1996-04"):
        most_recent_url(SIGHTINGS, "http://b.example/new", ["1997-04", "1996-10"])


def test_report_lists_urls_gone_from_the_latest_sweep() -> None:
    report = {r.url: r for r in lost_and_found_report(SIGHTINGS)}
    assert sorted(report) == ["http://a.example/mid", "http://a.example/old",
                              "http://d.example/gone", "http://e.example/page"]
    old = report["http://a.example/old"]
    assert old.last_seen.sweep == "1996-10"
    assert old.replacement is not None and old.replacement.url == "http://mirror.example/new"
    assert report["http://d.example/gone"].replacement is None
    page = report["http://e.example/page"].replacement
    assert page is not None and page.url == "http://g.example/copy-of-new-e"
    assert lost_and_found_report([]) == []


def test_ties_go_to_the_smaller_url() -> None:
    rows = [S("http://x/", "s1", None, 1), S("http://z/", "s2", "2000", 1),
            S("http://y/", "s2", "2000", 1)]
    found = most_recent_url(rows, "http://x/")
    assert found is not None and found.url == "http://y/"


@given(st.randoms(use_true_random=False))
@settings(max_examples=20, deadline=None)
def test_answers_do_not_depend_on_row_order(rnd: random.Random) -> None:
    rows = list(SIGHTINGS)
    rnd.shuffle(rows)
    assert lost_and_found_report(rows) == lost_and_found_report(SIGHTINGS)
    assert most_recent_url(rows, "http://a.example/old") == most_recent_url(
        SIGHTINGS, "http://a.example/old")
