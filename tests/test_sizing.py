"""``neardup plan --documents``: run estimates from measured per-document costs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.cli.plan import disk_advice
from neardup.engine.sizing import COSTS, estimate_run, load_costs
from neardup.errors import ConfigError

COST = {"documents": 1000, "mean_bytes": 4000, "workers": 2, "fingerprint_core_s": 0.001,
        "serial_s": 0.0001, "startup_s": 2.0, "work_bytes": 9000.0, "output_bytes": 300.0,
        "peak_tree_rss_mb": [[1000, 500.0], [11000, 600.0]]}
COSTS_OF = {"machine": "test", "measured_by": "hand", "methods": {"minhash": COST}}


def test_estimate_is_linear_in_documents_and_size_and_shared_by_the_cores() -> None:
    one = estimate_run(10_000, "minhash", workers=1, costs=COSTS_OF)
    assert one.work_bytes == pytest.approx(10_000 * 9000)
    assert one.output_bytes == pytest.approx(10_000 * 300)
    assert one.wall_seconds == pytest.approx(2.0 + 10.0 + 1.0)
    assert one.cpu_seconds == pytest.approx(13.0)
    double = estimate_run(10_000, "minhash", workers=1, mean_bytes=8000, costs=COSTS_OF)
    assert double.work_bytes == pytest.approx(2 * one.work_bytes)
    assert double.wall_seconds == pytest.approx(2.0 + 20.0 + 1.0)
    shared = estimate_run(10_000, "minhash", workers=64, costs=COSTS_OF)
    cores = os.cpu_count() or 1
    assert shared.wall_seconds == pytest.approx(2.0 + 10.0 / cores + 1.0)
    assert one.peak_memory_bytes == pytest.approx((500 + 0.01 * 9000) * 2**20)


def test_the_work_directory_is_sized_at_its_peak_when_measured() -> None:
    peaked = {**COSTS_OF, "methods": {"minhash": {**COST, "work_peak_bytes": 9500.0}}}
    estimate = estimate_run(10_000, "minhash", workers=1, costs=peaked)
    assert estimate.work_bytes == pytest.approx(10_000 * 9500)
    assert estimate.kept_work_bytes == pytest.approx(10_000 * 9000)
    assert estimate_run(10_000, "minhash", costs=COSTS_OF).kept_work_bytes == pytest.approx(
        estimate_run(10_000, "minhash", costs=COSTS_OF).work_bytes)


def test_the_compact_work_directory_is_sized_where_measured() -> None:
    compact = {**COSTS_OF, "methods": {"minhash": {
        **COST, "work_peak_bytes": 9500.0, "compact_work_bytes": 3000.0,
        "compact_work_peak_bytes": 3500.0}}}
    estimate = estimate_run(10_000, "minhash", mean_bytes=8000, costs=compact)
    assert estimate.compact_work_bytes == pytest.approx(2 * 10_000 * 3500)
    assert estimate.compact_kept_work_bytes == pytest.approx(2 * 10_000 * 3000)
    assert estimate.work_bytes == pytest.approx(2 * 10_000 * 9500)
    unmeasured = estimate_run(10_000, "minhash", costs=COSTS_OF)
    assert unmeasured.compact_work_bytes is None and unmeasured.compact_kept_work_bytes is None


def test_plan_says_to_use_compact_work_when_only_it_fits() -> None:
    compact = {**COSTS_OF, "methods": {"minhash": {**COST, "compact_work_bytes": 3000.0}}}
    estimate = estimate_run(1000, "minhash", costs=compact)  # 9 MB, compact 3 MB
    assert disk_advice(estimate, 10_000_000) is None
    assert "--compact-work" in str(disk_advice(estimate, 5_000_000))
    assert "neither" in str(disk_advice(estimate, 1_000_000))
    assert "larger disk" in str(disk_advice(estimate_run(1000, "minhash", costs=COSTS_OF),
                                            5_000_000))


@pytest.mark.skipif(not COSTS.exists(), reason=f"no measured costs at {COSTS}")
def test_plan_sets_both_forms_against_the_free_disk_of_the_work_folder(tmp_path: Path) -> None:
    """Sized so that the work directory of stored sets exceeds the free space of the folder's
    disk and that of token sequences fits (the committed costs: about 2.4x apart)."""
    unit = load_costs()["methods"]["minhash"]
    folder = tmp_path / "not-made-yet" / "work"
    free = shutil.disk_usage(tmp_path).free
    documents = int(2 * free / (unit["work_peak_bytes"] + unit["compact_work_peak_bytes"]))
    result = CliRunner().invoke(cli, ["plan", "--documents", str(documents), "--method",
                                      "minhash", "--work", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["work_folder"] == str(tmp_path)
    assert found["compact_work_bytes"] < found["free_bytes"] < found["work_bytes"]
    assert "--compact-work" in found["disk_advice"]
    text = CliRunner().invoke(cli, ["plan", "--documents", str(documents), "--method",
                                    "minhash", "--work", str(folder)]).output
    assert "with --compact-work" in text and f"free on the disk of {tmp_path}" in text
    assert "run dedup with --compact-work" in text
    small = CliRunner().invoke(cli, ["plan", "--documents", "1000", "--method", "minhash",
                                     "--work", str(folder), "--json"]).output
    assert json.loads(small)["disk_advice"] is None


def test_unknown_method_is_refused() -> None:
    with pytest.raises(ConfigError, match="simhash"):
        estimate_run(10, "simhash", costs=COSTS_OF)


@pytest.mark.skipif(not COSTS.exists(), reason=f"no measured costs at {COSTS}")
def test_plan_command_sizes_a_run_from_the_committed_costs() -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["plan", "--documents", "1e6", "--method", "simhash", "--json"])
    assert result.exit_code == 0, result.output
    estimate = json.loads(result.output)
    unit = load_costs()["methods"]["simhash"]
    assert estimate["work_bytes"] == pytest.approx(
        1e6 * unit.get("work_peak_bytes", unit["work_bytes"]), rel=1e-3)
    assert estimate["kept_work_bytes"] == pytest.approx(1e6 * unit["work_bytes"], rel=1e-3)
    assert estimate["wall_seconds"] > 0
    text = runner.invoke(cli, ["plan", "--documents", "2^20"])
    assert "disk: work directory" in text.output and "peak memory" in text.output
    both = runner.invoke(cli, ["plan", "--documents", "10", "--fingerprints", "10"])
    assert both.exit_code != 0 and "exactly one" in both.output


def test_memory_is_joined_between_the_measured_sizes_and_extended_from_the_last_two() -> None:
    """The engine's memory levels off: a plateau measured at 1M and 2.5M is not overstated at
    10M by a line through the smallest size."""
    points = [[100_000, 700.0], [1_000_000, 1100.0], [2_500_000, 1150.0]]
    costs = {**COSTS_OF, "methods": {"minhash": {**COST, "peak_tree_rss_mb": points}}}
    at = {n: estimate_run(n, "minhash", costs=costs).peak_memory_bytes / 2**20
          for n in (10_000, 100_000, 550_000, 2_500_000, 10_000_000)}
    assert at[10_000] == pytest.approx(700.0)
    assert at[100_000] == pytest.approx(700.0)
    assert at[550_000] == pytest.approx(900.0)
    assert at[2_500_000] == pytest.approx(1150.0)
    assert at[10_000_000] == pytest.approx(1150.0 + 50.0 / 1.5e6 * 7.5e6)
    falling = {**COSTS_OF, "methods": {"minhash": {**COST, "peak_tree_rss_mb": [
        [1000, 900.0], [2000, 800.0]]}}}
    assert estimate_run(10**6, "minhash", costs=falling).peak_memory_bytes == \
        pytest.approx(800.0 * 2**20)
