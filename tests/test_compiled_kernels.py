"""Kernels run interpreted (small runs) or compiled by numba give the same results, and a small
run imports neither numba nor pandas."""

from __future__ import annotations

import gzip
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import neardup.text.compiled as compiled_module
from neardup.cluster.unionfind import components
from neardup.config import MinHashConfig
from neardup.features.shingles import shingle_hashes, token_hashes
from neardup.fingerprints.minhash import MinHash
from neardup.text.canonical import canonical_bytes
from neardup.text.compiled import Kernel, kernel_mode, njit
from neardup.text.extract import extract

SRC = Path(__file__).resolve().parents[1] / "src"


def _prints(text: str) -> tuple[bytes, list[np.ndarray]]:
    """Canonical form, token hashes, shingles (two widths and seeds) and min-hash signatures."""
    canonical = canonical_bytes(text)
    arrays = [token_hashes(canonical), shingle_hashes(canonical, 5, 0),
              shingle_hashes(canonical, 3, 2**64 - 7),
              MinHash().of_canonical(canonical),
              MinHash(MinHashConfig(num_perm=30, seed=11)).of_canonical(canonical)]
    return canonical, arrays


def _same_both_ways(text: str) -> bool:
    with kernel_mode("interpret"):
        canonical, interpreted = _prints(text)
    with kernel_mode("compile"):
        expected, compiled = _prints(text)
    assert canonical == expected
    for one, other in zip(interpreted, compiled, strict=True):
        assert one.dtype == other.dtype
        np.testing.assert_array_equal(one, other)
    return any(byte >= 0x80 for byte in canonical)


def _real_texts(shared_data: Path, every: int) -> list[str]:
    pages = sorted((shared_data / "html" / "trafilatura-eval" / "pages").glob("*.html.gz"))
    assert pages
    return [extract(gzip.decompress(path.read_bytes()), "full") for path in pages[::every]]


@pytest.mark.slow
def test_interpreted_kernels_match_compiled_ones_on_real_pages(shared_data: Path) -> None:
    texts = _real_texts(shared_data, every=20)
    non_ascii = sum(_same_both_ways(text) for text in texts)
    assert non_ascii > 0  # the multi-byte paths of the canonical scan ran


@pytest.mark.slow
def test_interpreted_kernels_match_compiled_ones_on_every_real_page(shared_data: Path) -> None:
    assert sum(_same_both_ways(text) for text in _real_texts(shared_data, every=1)) > 0


def test_interpreted_kernels_match_on_edge_cases() -> None:
    for text in ["", " ", "a", "ä", "日本語のテキスト", "𠀀𠀁 x", "one two", "x " * 700,
                 "Ǆ ﬁ \uff21\uff11 ß café cafe\u0301"]:  # full-width A1, decomposed é
        _same_both_ways(text)


def test_union_find_is_the_same_both_ways() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.integers(0, 500, 400), rng.integers(0, 500, 400)
    with kernel_mode("interpret"):
        interpreted = components(500, a, b)
    with kernel_mode("compile"):
        compiled = components(500, a, b)
    np.testing.assert_array_equal(interpreted, compiled)
    assert len(np.unique(compiled)) < 500


@njit(cache=False, interpretable=True)
def _wrapping_product(values: np.ndarray) -> np.uint64:
    total = np.uint64(1)
    for value in values:
        total *= value
    return total


def test_interpreted_arithmetic_wraps_silently_and_returns_python_numbers() -> None:
    values = np.array([2**63 + 5, 3, 2**40 + 1], dtype=np.uint64)
    with kernel_mode("interpret"):
        interpreted = _wrapping_product(values)
    with kernel_mode("compile"):
        compiled = _wrapping_product(values)
    assert type(interpreted) is type(compiled) is int
    assert interpreted == compiled == (2**63 + 5) * 3 * (2**40 + 1) % 2**64


def test_a_kernel_not_declared_interpretable_always_compiles() -> None:
    kernel = njit(cache=False)(lambda values: values.sum())
    assert isinstance(kernel, Kernel)
    with kernel_mode("interpret"):
        assert kernel(np.arange(4)) == 6
    assert kernel._compiled is not None


def _modules_after(*args: str) -> list[str]:
    """The heavy modules a fresh ``neardup`` process holds after the command ``args``."""
    code = ("import sys\nfrom neardup.cli.main import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numba', 'pandas') if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, check=True)
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1].replace("'", '"'))
    return loaded


def test_a_one_document_dedup_imports_neither_numba_nor_pandas(tmp_path: Path) -> None:
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({"id": "d0", "text": "The quick brown fox jumps over the dog. "
                                "Über die Brücke."}) + "\n", encoding="utf-8")
    assert _modules_after("dedup", str(data), "--out", str(tmp_path / "out"), "--quiet") == []
    assert (tmp_path / "out" / "documents.parquet").exists()


def test_dedup_help_imports_no_numba() -> None:
    assert _modules_after("dedup", "--help") == []


def _fresh_sum() -> Kernel:
    def total(values: np.ndarray) -> int:
        result = 0
        for value in values:
            result += value
        return result

    kernel = njit(cache=False, interpretable=True)(total)
    assert isinstance(kernel, Kernel)
    return kernel


def test_the_rule_interprets_small_calls_until_numba_is_loaded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiled_module, "_bought", [False])
    monkeypatch.setattr(compiled_module, "_spent", [0.0])
    kernel = _fresh_sum()
    assert kernel(np.arange(10)) == 45
    assert kernel._compiled is None  # interpreted
    assert compiled_module._spent[0] > 0
    big = np.arange(compiled_module.SMALL_CALL + 1)
    assert kernel(big) == big.sum()  # too large to interpret: compiled, and numba is loaded
    assert kernel._compiled is not None and compiled_module._bought[0]
    other = _fresh_sum()
    assert other(np.arange(3)) == 3
    assert other._compiled is not None  # once one kernel compiled, every kernel does


def test_the_rule_compiles_once_the_interpreted_time_is_spent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiled_module, "_bought", [False])
    monkeypatch.setattr(compiled_module, "_spent", [compiled_module.INTERPRET_SECONDS])
    kernel = _fresh_sum()
    assert kernel(np.arange(4)) == 6
    assert kernel._compiled is not None


def test_a_kernel_pickles_by_name() -> None:
    from neardup.fingerprints import minhash

    kernel = minhash._signature
    assert pickle.loads(pickle.dumps(kernel)) is kernel


@njit(cache=False)
def _compiled_only(value: int) -> int:
    return value + 1


@njit(cache=False, interpretable=True)
def _calls_compiled_only(values: np.ndarray) -> int:
    return _compiled_only(values.size)


def test_an_interpreted_kernel_may_call_only_interpretable_ones() -> None:
    with kernel_mode("interpret"), pytest.raises(TypeError, match="not declared interpretable"):
        _calls_compiled_only(np.arange(3))


def _llvm_resident_kb() -> int:
    """Resident KB of the read-only mappings of LLVM's library in this process."""
    total, mine = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if not fields[0].endswith(":"):
                mine = len(fields) > 5 and fields[5].endswith("libllvmlite.so") and \
                    "w" not in fields[1]
            elif fields[0] == "Rss:" and mine:
                total += int(fields[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux only")
def test_compiler_pages_are_released_after_a_compile_and_kernels_still_run() -> None:
    script = """
import numpy as np
from neardup.features.tokens import canonical_tokens
from neardup.text.compiled import kernel_mode, njit
import test_compiled_kernels as t

@njit(cache=False)
def fresh(values):
    return values.sum() * 3

with kernel_mode("compile"):
    canonical_tokens("Grüße, Welt: ein Text")
    after_load = t._llvm_resident_kb()
    assert fresh.compiled(np.arange(10)) == 135  # LLVM compiles after its pages were dropped
    after_compile = t._llvm_resident_kb()
    assert fresh(np.arange(4)) == 18  # the kernel's first call through its wrapper releases
    print(after_load, after_compile, t._llvm_resident_kb())
"""
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{Path(__file__).parent}"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=True)
    after_load, after_compile, released = map(int, done.stdout.split())
    assert after_compile > 10_000  # compiling read LLVM back in...
    assert after_load < after_compile // 4 and released < after_compile // 4  # ...and it went
