"""Handing freed heap memory back starts no process (a fork would copy the whole engine)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from neardup.engine import heap


def test_release_freed_forks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a process was started")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    heap._trim.cache_clear()
    heap.release_freed()
    assert (heap._trim() is not None) == sys.platform.startswith("linux")
