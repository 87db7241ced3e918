"""How recall of super-shingles falls for short documents and for containment, against the
plain sketch (Broder et al., section 5.3).

Generated shingle sets (no text needed), fixed seeds, ``--pairs`` pairs per cell:

- *resemblance*: two sets of n shingles with resemblance r (n = 50 .. 3,000; r = 0.35, 0.6,
  0.8, 0.9). The plain sketch finds a pair when its estimate is >= 0.5 (``--method sketch``'s
  default); super-shingles when the two documents share at least one (``--method
  supershingle``), for 4, 6 and 8 sketch values per super-shingle. r = 0.35 shows false
  positives;
- *containment*: a set of ``inner`` shingles wholly inside one of ``outer``; the plain sketch
  finds it when the estimated containment is >= 0.8 (``--relation contained``).

Both sketch kinds: MOD_25 (Broder's; its size grows with the document) and MIN_100 (fixed
size; no containment estimate, so resemblance >= 0.5 is shown for it).

    python benchmarks/supershingle_recall.py [--pairs 300]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from common import RESULTS_DIR, environment, markdown_table, write_results
from neardup.config import SketchConfig
from neardup.evaluation.planted import containing_pair, resembling_pair
from neardup.fingerprints.sketch import Sketcher, estimate_containment, estimate_resemblance
from neardup.fingerprints.supershingle import supershingles

LENGTHS = (50, 100, 200, 400, 1000, 3000)
RESEMBLANCES = (0.35, 0.6, 0.8, 0.9)
WINDOWS = (4, 6, 8)
CONTAINED = ((100, 1000), (200, 1000), (500, 2000), (1000, 10000))
SKETCHES = {"MOD_25": SketchConfig(), "MIN_100": SketchConfig(kind="min", size=100)}


def found(pairs: list[tuple[np.ndarray, np.ndarray]], config: SketchConfig,
          containment: bool) -> dict[str, float]:
    """Share of pairs found by the plain sketch and by super-shingles of each window size."""
    sketcher = Sketcher(config)
    hits = dict.fromkeys(["plain", *(f"super-{n}" for n in WINDOWS)], 0)
    for a, b in pairs:
        sa, sb = sketcher.of_shingles(a), sketcher.of_shingles(b)
        if containment and config.kind == "mod":
            hits["plain"] += estimate_containment(sa, sb, config) >= 0.8
        else:
            hits["plain"] += estimate_resemblance(sa, sb, config) >= 0.5
        for n in WINDOWS:
            shared = np.intersect1d(supershingles(sa, n), supershingles(sb, n))
            hits[f"super-{n}"] += shared.size > 0
    return {key: round(value / len(pairs), 3) for key, value in hits.items()}


def measure(pairs: int) -> list[dict[str, Any]]:
    rows = []
    for name, config in SKETCHES.items():
        rng = np.random.default_rng(2024)
        for length in LENGTHS:
            for r in RESEMBLANCES:
                sample = [resembling_pair(length, r, rng) for _ in range(pairs)]
                rows.append({"sketch": name, "case": "resemblance", "shingles": length,
                             "resemblance": r, **found(sample, config, False)})
        for inner, outer in CONTAINED:
            sample = [containing_pair(inner, outer, rng) for _ in range(pairs)]
            rows.append({"sketch": name, "case": "contained", "shingles": f"{inner} in {outer}",
                         "resemblance": round(inner / outer, 3), **found(sample, config, True)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "supershingle_recall.json")
    args = parser.parse_args()
    rows = measure(args.pairs)
    keys = ["plain", *(f"super-{n}" for n in WINDOWS)]
    table = markdown_table(
        ["sketch", "case", "shingles", "resemblance", "plain sketch",
         *(f"super-shingles of {n}" for n in WINDOWS)],
        [[r["sketch"], r["case"], r["shingles"], r["resemblance"], *(r[k] for k in keys)]
         for r in rows])
    write_results(args.out, {"benchmark": "supershingle_recall", "pairs": args.pairs,
                             "environment": environment(["numpy"]), "rows": rows}, table)


if __name__ == "__main__":
    main()
