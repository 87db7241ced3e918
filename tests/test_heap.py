"""Handing freed heap memory back starts no process (a fork would copy the whole engine)."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref

import pytest

from neardup.engine import heap


def test_release_freed_forks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a process was started")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    heap._trim.cache_clear()
    heap.release_freed()
    assert (heap._trim() is not None) == sys.platform.startswith("linux")


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_sparing_older_objects_sets_aside_what_was_alive_and_hands_it_back() -> None:
    assert gc.get_freeze_count() == 0
    before = _Cycle()
    gone = weakref.ref(before)
    with heap.sparing_older_objects():
        assert gc.get_freeze_count() > 0
        del before
        gc.collect()
        assert gone() is not None  # set aside: not collected inside the block
        inside = _Cycle()
        made = weakref.ref(inside)
        del inside
        gc.collect()
        assert made() is None  # what the block made is collected as always
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert gone() is None  # handed back: collected after the block


def test_sparing_older_objects_leaves_a_callers_freeze_alone() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with heap.sparing_older_objects():
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
