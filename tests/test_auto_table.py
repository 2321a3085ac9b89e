"""The tables `auto` picks from: lookup rules, the shipped H200 table, and `tune` writing one."""

import itertools
import json
import math
import random

import pytest
import torch

import softmax_bench
from softmax_bench import auto_table
from softmax_bench.auto_table import AutoTable, read_table, table_for, table_name

from .conftest import MODE, assert_usage_error, flat, invoke

ENTRIES = [
    {"dtype": "bf16", "M": 4096, "N": 4096, "variant": "fused", "ms": {"fused": 1.0, "two_pass": 2.0}},
    {"dtype": "bf16", "M": 512, "N": 262144, "variant": "split", "ms": {"split": 1.0, "two_pass": 1.5}},
    {"dtype": "fp32", "M": 512, "N": 262144, "variant": "two_pass", "ms": {"split": 2.0, "two_pass": 1.5}},
]


def supports(N, dtype):
    return lambda name: softmax_bench.variants()[name].supports(N, dtype)


def test_table_names_its_file_after_the_gpu_and_triton():
    assert table_name("NVIDIA H200", "3.8") == "nvidia-h200-triton3.8.json"
    assert table_name("NVIDIA GeForce RTX 4090 (x2)", "3.6") == "nvidia-geforce-rtx-4090-x2-triton3.6.json"


def test_pick_exact_width_then_nearest_that_supports_the_row():
    table = AutoTable("Test GPU", ENTRIES, source="test.json")
    assert table.pick(262144, "bf16", supports(262144, torch.bfloat16))[0] == "split"
    assert table.pick(262144, "fp32", supports(262144, torch.float32))[0] == "two_pass"
    variant, why = table.pick(5000, "bf16", supports(5000, torch.bfloat16))
    assert variant == "fused" and "N = 4096" in why  # 5000 is nearer 4096 than 262144 by ratio
    # fused cannot hold 100000 elements: the nearest entry whose variant supports the row
    assert table.pick(100000, "bf16", supports(100000, torch.bfloat16))[0] == "split"
    assert table.pick(4096, "fp32", lambda name: name == "online") is None  # no entry's variant runs the row


def test_an_entry_added_after_a_pick_is_picked_from():
    """The entries are grouped by form and dtype at the first pick (a call of a new width scans one group); tune
    appends to a table as it measures, and a pick after that sees what it added, or entries put in their place."""
    table = AutoTable("Test GPU", ENTRIES[:1], source="test.json")
    assert table.pick(262144, "bf16", lambda name: True)[0] == "fused"  # the one entry, the nearest there is
    table.entries.append(ENTRIES[1])
    assert table.pick(262144, "bf16", lambda name: True)[0] == "split"
    table.entries.append({**ENTRIES[1], "form": "causal", "variant": "two_pass"})
    assert table.pick(262144, "bf16", lambda name: True, "causal")[0] == "two_pass"
    table.entries = [{**entry, "variant": "online"} for entry in table.entries]  # replaced, as many
    assert table.pick(262144, "bf16", lambda name: True)[0] == "online"


def test_the_nearest_entry_is_the_nearest_by_ratio_that_runs_at_every_width():
    """Rule 2 walks out from N over the widths measured: the entry it takes is, at every width, the one nearest by
    ratio among those whose variant runs the row (the narrower of two as near, the first in the table of one width),
    as a scan of every entry finds it. The shipped H200 table's groups and one with ties, over widths 1–300000 and
    every set of variants that run."""
    shipped = read_table(auto_table.PACKAGED / "nvidia-h200-triton3.8.json")
    tied = AutoTable("Test GPU", [{"dtype": "bf16", "N": n, "variant": v, "M": 1} for n, v in
                                  ((64, "fused"), (256, "two_pass"), (256, "fused"), (1024, "split"), (16, "online"))])
    rng = random.Random(0)
    widths = sorted({1, 2, 32, 128, 4000, 4096, 262144, 300000, *(rng.randrange(1, 300000) for _ in range(300))})
    for table, form, dtype in ((shipped, "softmax", "bf16"), (shipped, "causal", "fp32"), (tied, "softmax", "bf16")):
        entries = table._of(form, dtype)
        names = sorted({e["variant"] for e in entries})
        for running in itertools.chain.from_iterable(itertools.combinations(names, k) for k in range(len(names) + 1)):
            for width in widths:
                measured = [e for e in entries if e["variant"] in running]
                scanned = min(measured, key=lambda e: (abs(math.log(e["N"] / width)), e["N"]), default=None)
                picked = table._grouped()[1][(form, dtype)].nearest(width, running.__contains__)
                assert picked is scanned, (form, dtype, running, width)
    assert tied.pick(128, "bf16", lambda name: True)[0] == "fused"  # 64 and 256 as near: the narrower
    assert tied.pick(256, "bf16", lambda name: True)[0] == "two_pass"  # one width's entries: the first


def test_fused_within_the_tie_of_the_fastest_is_taken():
    """A difference under TIE (1 %) is one reruns do not keep: fused, which the fused forms want, is taken there,
    as at the shipped H200 table's fp32 rows of 2048 (two_pass 0.45 % ahead); past it, the fastest."""
    close = {"dtype": "fp32", "M": 65536, "N": 2048, "variant": "two_pass", "ms": {"fused": 1.009, "two_pass": 1.0}}
    far = {**close, "N": 1024, "ms": {"fused": 1.02, "two_pass": 1.0}}
    table = AutoTable("Test GPU", [close, far], source="test.json")
    variant, why = table.pick(2048, "fp32", supports(2048, torch.float32))
    assert variant == "fused" and "within 0.9% of two_pass" in why and "a tie" in why
    assert table.pick(1024, "fp32", supports(1024, torch.float32))[0] == "two_pass"
    assert table.pick(2048, "fp32", lambda name: name == "two_pass")[0] == "two_pass"  # fused does not run here
    shipped = read_table(auto_table.PACKAGED / "nvidia-h200-triton3.8.json")
    assert shipped.pick(2048, "fp32", supports(2048, torch.float32))[0] == "fused"


def test_a_16_bit_dtype_not_measured_takes_the_other_ones_entries():
    """fp16 is not in the default grid that `tune` measures: it moves bf16's bytes, so it takes bf16's entries
    (on the H200, rule 3's fused ran fp16 rows of 24576 at 66 % of a copy, bf16's cluster at 98 %)."""
    table = AutoTable("Test GPU", ENTRIES, source="test.json")
    variant, why = table.pick(262144, "fp16", supports(262144, torch.float16))
    assert variant == "split" and "fp16 was not measured, bf16 moves the same bytes" in why
    assert table.pick(262144, "fp32", supports(262144, torch.float32))[0] == "two_pass"  # fp32 keeps its own
    fp16_only = AutoTable("Test GPU", [{**ENTRIES[0], "dtype": "fp16"}], source="test.json")
    assert fp16_only.pick(4096, "fp16", supports(4096, torch.float16))[1].startswith("measured fastest for fp16 ")
    assert fp16_only.pick(4096, "bf16", supports(4096, torch.bfloat16))[0] == "fused"


def test_a_fused_form_takes_its_own_entries_where_measured_else_the_plain_softmaxs():
    """On the H200 fp32 rows of 16384 tie fused with cluster for a plain softmax (fused is taken), where a causal
    softmax ran at 87 % of a copy in fused and 101 % in cluster: causal calls take `tune --op causal`'s entries."""
    causal = {"dtype": "fp32", "M": 8192, "N": 16384, "variant": "cluster", "ms": {"fused": 0.29, "cluster": 0.25},
              "form": "causal"}
    plain = {"dtype": "fp32", "M": 8192, "N": 16384, "variant": "fused", "ms": {"fused": 0.257, "cluster": 0.258}}
    plain_bf16 = {**plain, "dtype": "bf16", "variant": "cluster", "ms": {"fused": 0.135, "cluster": 0.130}}
    table = AutoTable("Test GPU", [plain, causal, plain_bf16], source="test.json")
    anything = lambda name: True  # noqa: E731
    assert table.pick(16384, "fp32", anything)[0] == "fused"
    variant, why = table.pick(16384, "fp32", anything, "causal")
    assert variant == "cluster" and why.startswith("causal rows measured fastest for fp32 rows of N = 16384"), why
    assert table.pick(16384, "fp32", anything, "masked")[0] == "fused"  # no masked entries: the plain softmax's
    assert table.pick(16384, "bf16", anything, "causal")[0] == "cluster"  # no 16-bit causal ones: bf16's plain
    assert table.forms() == {"softmax", "causal"}


def test_tune_of_a_form_joins_the_table_and_keeps_its_other_forms(tmp_path):
    path = tmp_path / "cpu.json"
    from softmax_bench.device import device_info

    path.write_text(AutoTable(device_info(bool(MODE))["name"], ENTRIES, {"command": "tune"}).to_json())  # tune's GPU
    result = invoke("tune", *MODE, "--op", "causal", "--shape", "4x64", "--dtype", "fp32", "--rep-ms", "2",
                    "--warmup-ms", "1", "--table", str(path))
    assert result.exit_code == 0, result.output
    table = read_table(path)
    assert table.entries[:3] == ENTRIES  # the plain softmax's entries kept
    [causal] = table.entries[3:]
    assert (causal["form"], causal["dtype"], causal["N"]) == ("causal", "fp32", 64)
    assert set(table.meta["forms"]) == {"softmax", "causal"} and table.meta["forms"]["softmax"] == "tune"
    assert f"kept the softmax entries of {path}" in flat(result.stderr)
    refused = invoke("tune", *MODE, "--op", "biased", "--shape", "4x64", "--table", str(path))
    assert_usage_error(refused, "tune measures the forms auto picks for")


def test_an_empty_row_picks_without_dividing_by_zero():
    table = AutoTable("X", [{"dtype": "bf16", "N": 4096, "variant": "fused"}], {}, "x.json")
    assert table.pick(0, "bf16", lambda name: True)[0] == "fused"


def test_user_table_comes_before_the_shipped_one(tmp_path, monkeypatch):
    monkeypatch.setenv("SOFTMAX_BENCH_AUTO_TABLES", str(tmp_path))
    table_for.cache_clear()
    try:
        assert table_for("Test GPU", "3.8") is None
        (tmp_path / "test-gpu-triton3.8.json").write_text(AutoTable("Test GPU", ENTRIES).to_json())
        table_for.cache_clear()
        assert table_for("Test GPU", "3.8").entries == ENTRIES
        assert table_for("Test GPU", "3.6") is None  # measured under another Triton: the rule, not this table
        shipped = table_for("NVIDIA H200", "3.6")
        assert shipped is not None and shipped.source.startswith(str(auto_table.PACKAGED))
    finally:
        table_for.cache_clear()


@pytest.mark.parametrize("device, triton", [("NVIDIA H200", "3.6"), ("NVIDIA H200", "3.8"),
                                            ("NVIDIA H100 80GB HBM3", "3.8")])
def test_shipped_tables_cover_the_default_grid_with_variants_that_support_each_row(device, triton):
    table = table_for(device, triton)
    assert table is not None and table.source.startswith(str(auto_table.PACKAGED))
    assert table.device == device
    assert table.meta["device_info"]["triton"].startswith(triton + ".")
    registry = softmax_bench.variants()
    measured = {(e["dtype"], e["N"]) for e in table.entries}
    for dtype in ("bf16", "fp32"):
        for N in (32, 512, 4096, 4000, 16384, 32768, 50257, 65536, 131072, 151936, 262144):
            assert (dtype, N) in measured, (dtype, N)
    for entry in table.entries:
        variant = registry[entry["variant"]]
        assert variant.triton and variant.max_n is None or entry["N"] <= variant.max_n
        assert entry["ms"][entry["variant"]] == min(entry["ms"].values())  # the fastest of those measured


def test_tune_writes_a_table_auto_can_read(tmp_path):
    path = tmp_path / "tables" / "cpu.json"
    result = invoke("tune", *MODE, "--shape", "4x64", "--shape", "3x3000", "--dtype", "fp32",
                    "--rep-ms", "5", "--warmup-ms", "1", "--table", str(path))
    assert result.exit_code == 0, result.output
    table = read_table(path)
    # on a GPU with a shipped table (the H200), that table's entries of the other forms join the new ones
    measured = [e for e in table.entries if e["form"] == "softmax"]
    assert [(e["dtype"], e["M"], e["N"]) for e in measured] == [("fp32", 4, 64), ("fp32", 3, 3000)]
    for entry in measured:
        assert set(entry["ms"]) == {"fused", "split", "two_pass", "online"}
        assert entry["variant"] == min(entry["ms"], key=entry["ms"].get)
    assert {"created", "commit", "command", "timing"} <= set(json.loads(path.read_text()))
    assert "auto table" in result.stdout


def test_tune_refuses_an_unwritable_table(tmp_path, monkeypatch):
    """One line, even where a table of other forms would have been kept (the H200's shipped one, on the H200)."""
    monkeypatch.setattr(auto_table, "table_for", lambda device, version: AutoTable(device, ENTRIES, source="shipped"))
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = invoke("tune", *MODE, "--op", "causal", "--shape", "2x32", "--dtype", "fp32", "--rep-ms", "1",
                    "--table", str(blocker / "t.json"))
    assert_usage_error(result, "--table")


def test_auto_passes_over_split_while_a_cuda_graph_is_captured(monkeypatch):
    """split tags each launch with a new epoch, which a graph replay would repeat: auto must not capture it."""
    from softmax_bench import dispatch

    monkeypatch.setattr(dispatch, "_table_of", lambda device: AutoTable("Test GPU", ENTRIES, source="test.json"))
    assert dispatch.auto_choice(262144, torch.bfloat16)[0] == "split"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    # no other entry fits: the rule, cluster where it runs (Triton ≥ 3.8, sm_90), else two_pass
    rule = "cluster" if softmax_bench.variants()["cluster"].supports(262144, torch.bfloat16) else "two_pass"
    assert dispatch.auto_choice(262144, torch.bfloat16)[0] == rule
    assert not softmax_bench.variants()["split"].graph_safe


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU to capture a CUDA graph")
def test_split_refuses_to_be_captured_in_a_cuda_graph():
    from softmax_bench.kernels import split

    x = torch.randn(8, 70000, device="cuda")
    split.launch(x)  # compiled and warmed up outside the capture
    with pytest.raises(ValueError, match="CUDA graph"):
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            split.launch(x)
