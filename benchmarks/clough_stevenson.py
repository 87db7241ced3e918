"""Containment of each Clough & Stevenson answer in its source: does it rank cut > light > heavy >
non?

For every answer (95: 38 non, 19 each of heavy, light, cut), the containment of the answer in its
Wikipedia source, exact on w-shingle sets and estimated from Broder's MOD_m sketches, then
Spearman's rho against the level (cut 3, light 2, heavy 1, non 0) and the mean per level.

    python benchmarks/clough_stevenson.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import RESULTS_DIR, environment, markdown_table, require_data, write_results
from neardup.config import ShingleConfig, SketchConfig
from neardup.evaluation.graded import REUSE_LEVELS, containment_scores, graded_ranking
from neardup.evaluation.labeled import read_clough_stevenson

WIDTHS = (3, 5, 10)
MODULI = (1, 4, 25)


def measure(directory: Path) -> list[dict[str, object]]:
    pairs = read_clough_stevenson(directory)
    levels = [p.label for p in pairs]
    rows: list[dict[str, object]] = []
    for width in WIDTHS:
        shingles = ShingleConfig(width=width)
        configs: list[tuple[str, SketchConfig | None]] = [("exact", None)]
        configs += [(f"MOD_{m} estimate", SketchConfig(size=m, shingles=shingles))
                    for m in MODULI]
        for name, sketch in configs:
            ranking = graded_ranking(containment_scores(pairs, shingles, sketch), levels)
            rows.append({"width": width, "score": name, "rho": round(ranking.rho, 3),
                         "ordered": ranking.ordered,
                         "means": {k: round(v, 3) for k, v in ranking.means.items()}})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "clough_stevenson.json")
    args = parser.parse_args()
    directory = require_data("labeled", "clough-stevenson")
    rows = measure(directory)
    table = markdown_table(
        ["shingle width", "containment", "Spearman rho", *(f"mean {k}" for k in REUSE_LEVELS),
         "cut > light > heavy > non"],
        [[r["width"], r["score"], f"{r['rho']:.3f}",
          *(f"{r['means'][k]:.3f}" for k in REUSE_LEVELS), "yes" if r["ordered"] else "no"]
         for r in rows if isinstance(r["means"], dict)])
    write_results(args.out, {"benchmark": "clough_stevenson", "answers": 95,
                             "environment": environment(["numpy"]), "rows": rows}, table)


if __name__ == "__main__":
    main()
