"""Upgrading a store of format version 3, built by the code of that version (an export of the
last commit writing it, run in a subprocess): a writer upgrades it on open with the same
answers, a reader refuses it naming the fix, and a process killed at any step of the upgrade
leaves the version-3 store or the version-4 one, never a broken one."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
from collections.abc import Callable
from io import BytesIO
from pathlib import Path

import pytest

from neardup.errors import CorruptDataError, StoreError
from neardup.store import open_store
from neardup.store.formats import _body_checksum
from neardup.store.hosts import recount, stored_counts
from store_v3_builder import CONFIG, FLUSH_EVERY, answers, pages
from test_store_faults import _child, _lines
from test_store_templates import _stored_pages

V3_COMMIT = "84971d6"
"""The last commit of main whose store is format version 3."""
TESTS = Path(__file__).parent


@pytest.fixture(scope="module")
def v3_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """A version-3 store built by version 3's code, and the answers that code gave."""
    base = tmp_path_factory.mktemp("v3")
    try:
        archive = subprocess.run(["git", "archive", V3_COMMIT, "src"], cwd=TESTS.parent, check=True,
                                 capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"no export of commit {V3_COMMIT} (version 3's code): {error}")
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(base / "code", filter="data")
    store, expected = base / "store", base / "answers.json"
    subprocess.run([sys.executable, str(TESTS / "store_v3_builder.py"), str(store),
                    str(expected)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(base / "code" / "src")})
    assert json.loads((store / "manifest.json").read_text())["version"] == 3
    return store, json.loads(expected.read_text())


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def _tables(store: Path) -> set[str]:
    with sqlite3.connect(store / "meta.sqlite") as db:
        return {name for (name,) in db.execute("SELECT name FROM sqlite_master "
                                                "WHERE type = 'table'")}


@pytest.mark.slow
def test_a_writer_upgrades_a_version_3_store_with_the_same_answers(
        tmp_path: Path, v3_store: tuple[Path, dict[str, object]]) -> None:
    store_dir = _copy(v3_store[0], tmp_path / "store")
    with pytest.raises(StoreError, match="format version 3; a writer upgrades it"):
        open_store(store_dir, read_only=True)
    assert json.loads((store_dir / "manifest.json").read_text())["version"] == 3
    with open_store(store_dir) as store:
        assert not store.postings and not len(store.tallies)   # the log became a segment
        assert answers(store) == v3_store[1]
        assert stored_counts(store.db, store.meta_path, store.tally()) == \
            recount(_stored_pages(store))
    assert {"postings", "host_values"}.isdisjoint(_tables(store_dir))
    with open_store(store_dir, read_only=True) as reader:
        assert answers(reader) == v3_store[1]


@pytest.mark.slow  # the version-3 store of the module fixture takes about 20 s to build
def test_an_upgraded_store_goes_on_as_one_built_by_this_version(
        tmp_path: Path, v3_store: tuple[Path, dict[str, object]]) -> None:
    docs = pages()
    with open_store(tmp_path / "fresh", CONFIG, flush_every=FLUSH_EVERY) as fresh:
        for start in range(0, 90, 10):
            fresh.add(docs[start:start + 10])
        fresh.add(docs[90:110])
        assert answers(fresh) == v3_store[1]
        fresh.add(docs[110:])
        fresh.compact()
        expected = answers(fresh)
    with open_store(_copy(v3_store[0], tmp_path / "upgraded"), flush_every=FLUSH_EVERY) as up:
        up.add(docs[110:])
        up.compact()
        assert answers(up) == expected
        assert stored_counts(up.db, up.meta_path, up.tally()) == recount(_stored_pages(up))


def _upgrade_killed_at(store_dir: Path, call: int, after: bool = False) -> list[str]:
    """Upgrade in a forked child killed (os._exit, nothing closed) just before its
    ``call``-th rename (just after it with ``after``); returns what the child said."""

    def work(say: Callable[[str], None]) -> None:
        real, calls = os.replace, [0]

        def replace(source: object, target: object) -> None:
            calls[0] += 1
            if calls[0] == call and not after:
                os._exit(9)
            real(source, target)  # type: ignore[arg-type]
            if calls[0] == call:
                os._exit(9)

        os.replace = replace  # type: ignore[assignment]
        open_store(store_dir).close()
        say(f"done after {calls[0]} renames")

    pid, read = _child(work)
    said = _lines(read)
    os.waitpid(pid, 0)
    return said


@pytest.mark.slow
def test_an_upgrade_killed_at_any_rename_leaves_one_whole_version(
        tmp_path: Path, v3_store: tuple[Path, dict[str, object]]) -> None:
    said = _upgrade_killed_at(_copy(v3_store[0], tmp_path / "whole"), 0)
    assert said and said[0].startswith("done after")
    renames = int(said[0].split()[2])
    assert renames >= 5                  # two per segment written, then the manifest
    versions = []
    for call, after in [*((n, False) for n in range(1, renames + 1)), (renames, True)]:
        store_dir = _copy(v3_store[0], tmp_path / f"killed-{call}-{after}")
        assert _upgrade_killed_at(store_dir, call, after) == []
        version = json.loads((store_dir / "manifest.json").read_text())["version"]
        versions.append(version)
        if version == 3:                 # untouched: the old tables are all there
            assert {"postings", "host_values"} <= _tables(store_dir)
            with pytest.raises(StoreError, match="format version 3"):
                open_store(store_dir, read_only=True)
        else:
            with open_store(store_dir, read_only=True) as reader:   # whole before cleanup
                assert answers(reader) == v3_store[1]
        with open_store(store_dir) as store:          # upgrades, or cleans up after one
            assert answers(store) == v3_store[1]
        assert {"postings", "host_values"}.isdisjoint(_tables(store_dir))
        assert sorted(p.name for p in (store_dir / "segments").iterdir()) == \
            [s["name"] for s in json.loads((store_dir / "manifest.json").read_text())
             ["segments"]]
    assert versions == [3] * renames + [4]      # the manifest's rename is the commit point


def test_a_store_of_an_unknown_version_is_refused(tmp_path: Path) -> None:
    with open_store(tmp_path / "store"):
        pass
    manifest = tmp_path / "store" / "manifest.json"
    body = json.loads(manifest.read_text())
    body["version"] = 2
    body["checksum"] = _body_checksum(body)
    manifest.write_text(json.dumps(body))
    with pytest.raises(CorruptDataError, match="store format version 2, this neardup reads "
                                        "version 4"):
        open_store(tmp_path / "store")
