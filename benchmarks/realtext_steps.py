"""Per document on real text: each step of the fingerprint path, before and after, interleaved.

    python benchmarks/realtext_steps.py --before SRC [--docs 2000] [--repeat 5]

The documents are the first ``--docs`` of :mod:`realtext`'s 100,000-document corpus. The steps
of the default (min-hash) fingerprint path, each timed alone on the previous step's output:
decode (the UTF-8 payload to ``str``), canonical form and token hashes, the verification shingle
set (5-word shingles of the token hashes, sorted and distinct), the exact prints, the min-hash
signature (128). "before" runs the canonical form the two-step way (the NFKC step of the source
tree ``--before``, e.g. a ``git archive`` of the base commit's ``src``, loaded beside this
checkout's in the same process, then the token scan and the token hashes, each a pass of its
own) and the min-hash loop of that tree; "after" runs :func:`neardup.features.tokens.
canonical_tokens` (one pass). Around them: reading the JSONL lines into documents (this tree's
reader, its runs parsed by pyarrow, before, or scanned by the compiled kernel of
:mod:`neardup.sources.jsonscan`, after) and writing the documents' partition (this tree's
writer, fsync included). The calls alternate (before, after, before, ...) and each keeps its
best of ``--repeat``; process CPU time per document. Both sides' outputs are checked equal
first.
Results go to ``benchmarks/results/realtext_steps.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from itertools import islice
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

import neardup.sources.jsonruns as jsonruns
from common import (
    RESULTS_DIR,
    environment,
    interleaved_calls,
    load_average,
    markdown_table,
    pin_single_core,
    write_results,
)
from neardup.config import DedupConfig
from neardup.document import Document
from neardup.engine.partition import layout_for, write_partition
from neardup.features.shingles import shingle_set_of_tokens, token_hashes
from neardup.features.tokens import canonical_tokens
from neardup.fingerprints.exact import exact_prints
from neardup.fingerprints.minhash import MinHash, _signature
from neardup.methods.fingerprinter import DocumentPrints, Fingerprinter
from neardup.sources.context import ReadContext
from neardup.sources.jsonl import read_lines
from neardup.sources.stats import SourceStats
from neardup.text.canonical import _canonicalize, _code_point_classes, canonical_bytes
from realtext import make_corpus


def _load(path: Path, name: str) -> ModuleType:
    """The module of file ``path`` as ``name``, loaded from a copy: numba caches a kernel
    beside its file, under the module's name, and a cache entry of ``before_nfkc`` beside the
    before tree's ``nfkc.py`` would break that tree's own runs (the module is not found)."""
    copy = Path(tempfile.mkdtemp(prefix="realtext-steps-")) / path.name
    shutil.copyfile(path, copy)
    spec = importlib.util.spec_from_file_location(name, copy)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _lines(docs: int) -> list[bytes]:
    with open(make_corpus(100_000) / "corpus.jsonl", "rb") as lines:
        return list(islice(lines, docs))


def _read(lines: list[bytes], scan: bool) -> list[Document]:
    """The documents of ``lines`` as the JSONL reader gives them, its runs scanned by the
    compiled kernel or (not ``scan``) parsed by pyarrow."""
    kept = jsonruns.scan_run
    if not scan:
        jsonruns.scan_run = lambda *args: None  # the kernel declines every run
    try:
        return list(read_lines(lines, "corpus.jsonl", ReadContext(SourceStats())))
    finally:
        jsonruns.scan_run = kept


def _write(prints: list[DocumentPrints]) -> None:
    """One partition of ``prints`` written as the fingerprint stage writes it, then removed."""
    folder = Path(tempfile.mkdtemp(prefix="realtext-steps-")) / "partition"
    folder.mkdir()
    try:
        write_partition(folder, prints, layout_for(DedupConfig(), features=False))
    finally:
        shutil.rmtree(folder.parent)


def reading_and_writing(lines: list[bytes]) -> dict[str, Callable[[], object]]:
    """The steps around the fingerprints: reading the JSONL lines into documents (pyarrow's
    reader against the compiled scan, outputs checked equal) and writing their partition."""
    scanned = _read(lines, True)
    assert [dataclasses.astuple(d) for d in scanned] == \
        [dataclasses.astuple(d) for d in _read(lines, False)]
    fingerprinter = Fingerprinter(DedupConfig())
    prints = [fingerprinter(doc) for doc in scanned]
    return {"read JSONL (pyarrow runs, before)": lambda: _read(lines, False),
            "read JSONL (compiled scan, after)": lambda: _read(lines, True),
            "write the partition": lambda: _write(prints)}


def steps(before: Path, texts: list[str]) -> dict[str, Callable[[], object]]:
    old_nfkc = _load(before / "neardup" / "text" / "nfkc.py", "before_nfkc")
    old_minhash = _load(before / "neardup" / "fingerprints" / "minhash.py", "before_minhash")
    classes = _code_point_classes()

    def old_canonical(text: str) -> tuple[bytes, np.ndarray]:
        raw = old_nfkc.nfkc_casefold(text)
        canonical = bytes(_canonicalize(np.frombuffer(raw, dtype=np.uint8), classes)) \
            if raw else b""
        return canonical, token_hashes(canonical)

    raws = [t.encode("utf-8") for t in texts]
    both = [canonical_tokens(t) for t in texts]
    canon = [c for c, _ in both]
    sets = [shingle_set_of_tokens(tokens, 5, 0) for _, tokens in both]
    signer = MinHash()
    a, b = signer.multipliers, signer.offsets
    assert canon == [canonical_bytes(t) for t in texts]
    assert all(old == new and (old_tokens == tokens).all() for (old, old_tokens), (new, tokens)
               in zip((old_canonical(t) for t in texts), both, strict=True))
    assert all((old_minhash._signature(s, a, b) == _signature(s, a, b)).all() for s in sets)
    return {
        "decode": lambda: [r.decode("utf-8") for r in raws],
        "canonical + token hashes (before)": lambda: [old_canonical(t) for t in texts],
        "canonical + token hashes (after)": lambda: [canonical_tokens(t) for t in texts],
        "shingle set": lambda: [shingle_set_of_tokens(tokens, 5, 0) for _, tokens in both],
        "exact prints": lambda: [exact_prints(r, c, s) for r, c, s in zip(raws, canon, sets,
                                                                             strict=True)],
        "min-hash (before)": lambda: [old_minhash._signature(s, a, b) for s in sets],
        "min-hash (after)": lambda: [_signature(s, a, b) for s in sets],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the old source tree (src)")
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "realtext_steps.json")
    args = parser.parse_args(argv)
    lines = _lines(args.docs)
    texts = [json.loads(line)["text"] for line in lines]
    cpu = pin_single_core()
    runs = steps(args.before, texts) | reading_and_writing(lines)
    for run in runs.values():
        run()  # warm up
    load = load_average()
    calls = interleaved_calls(runs, args.repeat)
    per_doc = {name: round(min(t.cpu for t in found) / len(texts) * 1e6, 1)
               for name, found in calls.items()}
    rows = [[name, f"{value:.1f}"] for name, value in per_doc.items()]
    non_ascii = sum(not t.isascii() for t in texts)
    payload: dict[str, Any] = {
        "environment": environment(["numpy", "numba"]), "cpu": cpu, "docs": len(texts),
        "non_ascii_docs": non_ascii, "mean_utf8_bytes": round(
            sum(len(t.encode()) for t in texts) / len(texts)),
        "load_average_before": load, "load_average_after": load_average(),
        "us_per_doc_best_cpu": per_doc}
    write_results(args.out, payload, markdown_table(["step", "µs/doc (CPU, best)"], rows))


if __name__ == "__main__":
    main()
