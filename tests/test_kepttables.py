"""The Unicode tables kept on disk between processes (neardup.text.kepttables)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neardup.text import canonical, nfkc
from neardup.text.kepttables import kept_tables


def _module(folder: Path, source: str = "TABLE = 1\n") -> str:
    module = folder / "builder.py"
    module.write_text(source)
    return str(module)


class _Builder:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> dict[str, np.ndarray]:
        self.calls += 1
        return {"codes": np.arange(1000, dtype=np.int32),
                "flags": (np.arange(1000) % 7 == 0).astype(np.uint8)}


def _equal(found: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> bool:
    return found.keys() == expected.keys() and all(
        found[k].dtype == expected[k].dtype and np.array_equal(found[k], expected[k])
        for k in expected)


def _kept_file(folder: Path) -> Path:
    (found,) = (folder / "__pycache__").glob("neardup-test-*.npz")
    return found


def test_built_once_then_read_back_equal(tmp_path: Path) -> None:
    module, build = _module(tmp_path), _Builder()
    first = kept_tables("test", module, build)
    second = kept_tables("test", module, build)
    assert build.calls == 1
    assert _equal(second, build())
    assert _equal(first, second)
    assert _kept_file(tmp_path).stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty"])
def test_a_damaged_file_is_built_again_and_replaced(tmp_path: Path, damage: str) -> None:
    module, build = _module(tmp_path), _Builder()
    kept_tables("test", module, build)
    path = _kept_file(tmp_path)
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[len(data) // 3] ^= 0xFF      # inside the first array: its CRC no longer matches
    elif damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    assert _equal(kept_tables("test", module, build), _Builder()())
    assert build.calls == 2
    assert _equal(kept_tables("test", module, build), _Builder()())
    assert build.calls == 2                # the replaced file reads back whole


def test_a_changed_builder_source_is_not_served_the_old_tables(tmp_path: Path) -> None:
    module = _module(tmp_path)
    kept_tables("test", module, lambda: {"codes": np.zeros(3, dtype=np.int32)})
    _module(tmp_path, "TABLE = 2\n")
    changed = kept_tables("test", module, lambda: {"codes": np.ones(3, dtype=np.int32)})
    assert changed["codes"].tolist() == [1, 1, 1]


def test_the_user_cache_serves_when_the_module_folder_cannot(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    package = tmp_path / "package"
    package.mkdir()
    (package / "__pycache__").write_text("a file where the folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    module, build = _module(package), _Builder()
    kept_tables("test", module, build)
    kept_tables("test", module, build)
    assert build.calls == 1
    assert len(list((tmp_path / "user-cache" / "neardup").glob("neardup-test-*.npz"))) == 1


def test_the_canonical_forms_kept_tables_equal_freshly_built_ones() -> None:
    assert np.array_equal(canonical._code_point_classes(), canonical._built_classes()["classes"])
    built = nfkc._built_tables()
    assert _equal(nfkc._tables(), built)
    table = nfkc.fold_table()
    assert np.array_equal(table.pool, built["pool"]) and np.array_equal(table.dirty,
                                                                        built["dirty"])
