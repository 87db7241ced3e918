"""The cost of NFKC in the canonical form, single core.

    python benchmarks/canonical_nfkc.py [--docs N] [--repeat R]

The input is the benchmark text of ``fingerprints.py``: 5,000-character texts cut from what
resiliparse extracts from the trafilatura evaluation pages. Three versions of the canonical form
run round-robin over the same texts, best of ``--repeat``:

- ``casefold`` (before NFKC): ``str.casefold`` then the compiled token scan;
- ``nfkc always``: NFKC, casefold, NFKC, then the scan, with no fast path;
- ``neardup`` (now): :func:`neardup.text.canonical.canonical_bytes`, which skips the
  normalisation for ASCII texts and for texts ``unicodedata.is_normalized`` finds in NFKC.

Also: how many texts are ASCII, and how many canonical forms NFKC changed.
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from common import (
    RESULTS_DIR,
    environment,
    interleaved_calls,
    load_average,
    markdown_table,
    pin_single_core,
    require_data,
    write_results,
)
from fingerprints import load_texts
from neardup.text.canonical import _canonicalize, _code_point_classes, canonical_bytes


def _scan(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    if not raw:
        return b""
    return bytes(_canonicalize(np.frombuffer(raw, dtype=np.uint8), _code_point_classes()))


def casefold_only(text: str) -> bytes:
    return _scan(text.casefold())


def nfkc_always(text: str) -> bytes:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _scan(unicodedata.normalize("NFKC", folded))


VERSIONS: dict[str, Callable[[str], bytes]] = {
    "casefold (before)": casefold_only, "nfkc always": nfkc_always,
    "neardup (now)": canonical_bytes}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "canonical_nfkc.json")
    args = parser.parse_args(argv)
    texts, used = load_texts(require_data("html", "trafilatura-eval", "pages"), args.docs)
    cpu = pin_single_core()
    for version in VERSIONS.values():  # warm up the JIT and the class table
        version(texts[0])
    runs = {name: (lambda f=f: [f(t) for t in texts]) for name, f in VERSIONS.items()}
    calls = interleaved_calls(runs, args.repeat)
    best = {name: min(t.wall for t in timings) for name, timings in calls.items()}
    chars = sum(len(t) for t in texts)
    changed = sum(casefold_only(t) != canonical_bytes(t) for t in texts)
    rows = [[name, f"{len(texts) / best[name]:,.0f}", f"{chars / best[name] / 1e6:.1f}",
             f"{best[name] / best['casefold (before)']:.2f}"] for name in VERSIONS]
    table = markdown_table(["canonical form", "texts/s", "M chars/s", "time vs before"], rows)
    payload = {"environment": environment(["numpy", "numba"]), "load_average": load_average(),
               "cpu": cpu, "texts": len(texts), "pages": used, "characters": chars,
               "ascii_texts": sum(t.isascii() for t in texts), "changed_by_nfkc": changed,
               "best_seconds": best}
    write_results(args.out, payload, table)
    print(f"{payload['ascii_texts']} of {len(texts)} texts are ASCII; NFKC changed the canonical "
          f"form of {changed}")


if __name__ == "__main__":
    sys.exit(main())
