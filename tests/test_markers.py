"""A file's seal (size and xxh3_64 checksum) is that of its whole bytes, whatever its size
against the block hashed per read."""

from __future__ import annotations

from pathlib import Path

import pytest
import xxhash

from neardup.engine import markers


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 64, 1000])
def test_the_digest_covers_every_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      size: int) -> None:
    monkeypatch.setattr(markers, "BLOCK", 8)  # files under, at and over one block
    data = bytes((index * 37 + 11) % 256 for index in range(size))
    path = tmp_path / "part.bin"
    path.write_bytes(data)
    assert markers.file_digest(path) == (size, xxhash.xxh3_64_hexdigest(data))


def test_a_changed_byte_changes_the_digest(tmp_path: Path) -> None:
    path = tmp_path / "part.bin"
    path.write_bytes(b"a" * 100)
    before = markers.file_digest(path)
    path.write_bytes(b"a" * 99 + b"b")
    assert markers.file_digest(path)[0] == before[0]
    assert markers.file_digest(path)[1] != before[1]
