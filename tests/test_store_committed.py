"""What a store committed is never silently lost: a damaged or missing WAL holding rows no
segment holds yet, a damaged or missing commit record, and an add whose flush fails after its
commit. Writers run in forked children killed without closing, so that the rows stay in the
WAL (see test_store_faults)."""

from __future__ import annotations

import json
import os
import shutil
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from neardup.errors import CorruptDataError, NeardupError
from neardup.store import open_store
from test_store_faults import ROUND, _child, _lines, _round_docs

UNSEGMENTED = (1, 2, 3)
"""The rounds added after the last flush: in the WAL only, in no segment."""


def _killed_store(tmp_path: Path) -> Path:
    """A store with one flushed round, then one add per round of UNSEGMENTED, its writer
    killed without closing (no checkpoint: the WAL holds those rows)."""
    store_dir = tmp_path / "pristine"

    def work(say: Callable[[str], None]) -> None:
        store = open_store(store_dir)
        store.add(_round_docs(0))
        store.flush()
        for number in UNSEGMENTED:
            store.add(_round_docs(number))
        say("done")

    pid, read = _child(work)
    assert _lines(read) == ["done"]
    os.waitpid(pid, 0)
    assert (store_dir / "meta.sqlite-wal").stat().st_size > 0
    return store_dir


def _frames(wal: bytes) -> list[tuple[int, int]]:
    """(start, end) of each WAL frame: a 24-byte header, then a page."""
    page = struct.unpack(">I", wal[8:12])[0]
    size = 24 + page
    return [(start, start + size) for start in range(32, len(wal) - size + 1, size)]


def _unsegmented_frames(store_dir: Path) -> list[tuple[int, int]]:
    """The WAL frames whose page holds a row of an unsegmented document."""
    wal = (store_dir / "meta.sqlite-wal").read_bytes()
    ids = [f"d{1000 + n}-".encode() for n in UNSEGMENTED]
    return [(start, end) for start, end in _frames(wal)
            if any(key in wal[start + 24:end] for key in ids)]


def _flip(offset: int) -> Callable[[Path], None]:
    def apply(path: Path) -> None:
        with path.open("r+b") as data:
            data.seek(offset)
            byte = data.read(1)[0]
            data.seek(offset)
            data.write(bytes([byte ^ 0x10]))
    return apply


def _truncate(size: int) -> Callable[[Path], None]:
    def apply(path: Path) -> None:
        os.truncate(path, size)
    return apply


def _wal_damages(store_dir: Path) -> list[tuple[str, Callable[[Path], None]]]:
    cases: list[tuple[str, Callable[[Path], None]]] = [
        ("deleted", lambda path: path.unlink()),
        ("header flipped", _flip(20)),
    ]
    frames = _unsegmented_frames(store_dir)
    assert len(frames) >= len(UNSEGMENTED)
    for start, end in frames:
        cases.append((f"frame at {start}: page byte flipped", _flip((start + 24 + end) // 2)))
        cases.append((f"frame at {start}: header byte flipped", _flip(start + 2)))
        cases.append((f"truncated at the frame at {start}", _truncate(start)))
    return cases


@pytest.mark.slow
@pytest.mark.parametrize("read_only", [True, False])
def test_damaged_wal_frames_of_unsegmented_rows_refuse_the_open(tmp_path: Path,
                                                                read_only: bool) -> None:
    pristine = _killed_store(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(pristine, copy)
    with open_store(copy, read_only=True) as store:
        stored = len(store)
    assert stored == ROUND * (1 + len(UNSEGMENTED))
    bad = []
    cases = _wal_damages(pristine)
    for what, damage in cases:
        shutil.rmtree(copy)
        shutil.copytree(pristine, copy)
        damage(copy / "meta.sqlite-wal")
        try:
            with open_store(copy, read_only=read_only) as store:
                bad.append(f"{what}: opened with {len(store)} of {stored} documents")
        except NeardupError as error:
            if not (isinstance(error, CorruptDataError) and "committed data lost" in str(error)
                    and str(error).startswith(f"{copy / 'meta.sqlite'}")):
                bad.append(f"{what}: {type(error).__name__}: {error}")
                continue
            with pytest.raises(CorruptDataError, match="committed data lost"):
                open_store(copy, read_only=True)     # refused again: the record stays
    assert bad == [], f"{len(bad)} of {len(cases)}: {bad}"


def test_a_damaged_or_missing_commit_record_is_named(tmp_path: Path) -> None:
    store_dir = tmp_path / "s"
    with open_store(store_dir) as store:
        store.add(_round_docs(0))
    record = store_dir / "committed"
    whole = record.read_bytes()
    for damage in (_truncate(0), _truncate(20), lambda path: path.unlink()):
        damage(record)
        with pytest.raises(CorruptDataError, match=f"^{record}: "):
            open_store(store_dir, read_only=True)
        with pytest.raises(CorruptDataError, match=f"^{record}: "):
            open_store(store_dir)
        record.write_bytes(whole)
    with open_store(store_dir, read_only=True) as store:
        assert len(store) == ROUND


def test_a_record_behind_the_database_is_brought_up_to_date(tmp_path: Path) -> None:
    """A writer killed between a commit and its record leaves the record one commit behind:
    the database holds more, which is not a loss; the next writer records it."""
    store_dir = tmp_path / "s"
    with open_store(store_dir) as store:
        store.add(_round_docs(0))
        behind = (store_dir / "committed").read_bytes()
        store.add(_round_docs(1))
    (store_dir / "committed").write_bytes(behind)
    with open_store(store_dir, read_only=True) as store:
        assert len(store) == 2 * ROUND
    with open_store(store_dir) as store:
        assert (store.commits, len(store)) == (2, 2 * ROUND)
    (store_dir / "committed").write_bytes(behind)
    os.truncate(store_dir / "committed", 64)     # only the older slot: still whole
    with open_store(store_dir, read_only=True) as store:
        assert len(store) == 2 * ROUND


def test_an_add_whose_flush_fails_reports_its_committed_documents(tmp_path: Path) -> None:
    store_dir = tmp_path / "s"
    open_store(store_dir).close()
    (store_dir / "segments").mkdir()
    in_the_way = store_dir / "segments" / ".00000001.tmp"   # where the first segment is written
    in_the_way.write_text("a file where a folder must go: the segment cannot be written")
    docs = _round_docs(1)
    with open_store(store_dir, flush_every=ROUND) as store:
        report = store.add(docs)                 # commits, then its automatic flush fails
        assert (report.added, report.first_doc, report.last_doc) == (ROUND, 0, ROUND - 1)
        assert len(report.warnings) == 1, report.warnings
        assert "the flush after the add failed" in report.warnings[0]
        assert f"{store_dir / 'segments'}" in report.warnings[0]
        assert report.as_dict()["warnings"] == report.warnings
        assert any(m.id == docs[4].id for m in store.query(docs[4]))
        again = store.add(docs)
        assert (again.added, again.already_stored) == (0, ROUND)
        with pytest.raises(NeardupError, match="segments"):
            store.flush()                        # an explicit flush still raises
    in_the_way.unlink()
    with open_store(store_dir) as store:
        assert len(store) == ROUND and store.flush() is not None
        assert any(m.id == docs[7].id for m in store.query(docs[7]))


def test_a_segment_folder_that_is_a_file_is_named(tmp_path: Path) -> None:
    store_dir = tmp_path / "s"
    with open_store(store_dir) as store:
        store.add(_round_docs(0))
    (store_dir / "segments").write_text("not a folder")
    with pytest.raises(CorruptDataError, match=f"^{store_dir / 'segments'}: "):
        open_store(store_dir)


def _ids(matches: list) -> list[tuple[str, int]]:  # type: ignore[type-arg]
    return [(m.id, m.distance) for m in matches]


def test_a_reader_refreshed_sees_every_commit_flush_and_merge(tmp_path: Path) -> None:
    store_dir = tmp_path / "s"
    with open_store(store_dir, flush_every=10**6) as writer:
        writer.add(_round_docs(0))
        reader = open_store(store_dir, read_only=True)
        try:
            assert reader.refresh() is False                  # nothing new
            probes = []
            for number in range(1, 9):
                writer.add(_round_docs(number))
                if number % 3 == 0:
                    writer.flush()                             # a new segment, merges
                if number == 7:
                    writer.compact()
                assert reader.refresh() is True
                assert (len(reader), reader.commits) == (len(writer), writer.commits)
                assert [s.name for s in reader.segments] == [s.name for s in writer.segments]
                probes += _round_docs(number)[::6]
                for doc in probes:
                    assert _ids(reader.query(doc)) == _ids(writer.query(doc)), doc.id
                assert reader.document(probes[-1].id) == writer.document(probes[-1].id)
        finally:
            reader.close()


def test_index_whose_flush_fails_says_what_it_committed(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from neardup.cli.main import cli

    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(f'{{"id": "{d.id}", "text": "{d.raw.decode()}"}}\n'
                              for d in _round_docs(4)))
    store_dir = tmp_path / "s"
    open_store(store_dir).close()
    (store_dir / "segments").mkdir()
    in_the_way = store_dir / "segments" / ".00000001.tmp"
    in_the_way.write_text("a file where a folder must go")
    runner = CliRunner()
    failed = runner.invoke(cli, ["index", str(corpus), "--store", str(store_dir)])
    assert failed.exit_code == 1, failed.output
    assert f"{store_dir / 'segments'}" in failed.output
    assert f"this run added {ROUND} documents, all committed" in failed.output
    in_the_way.unlink()
    again = runner.invoke(cli, ["index", str(corpus), "--store", str(store_dir), "--json"])
    assert again.exit_code == 0, again.output
    report = json.loads(again.output[again.output.index("{"):])
    assert (report["added"], report["already_stored"]) == (0, ROUND)
    assert report["warnings"] == []
