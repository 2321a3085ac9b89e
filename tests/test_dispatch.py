"""The dispatch cache: a variant is decided once per key, and decided again when it must be (a new table from
`tune`, another device). The GPU is simulated: torch.cuda's name lookup answers "Test GPU", whose table the
test writes; no kernel runs on it."""

import pytest
import torch

import softmax_bench
from softmax_bench import dispatch
from softmax_bench.auto_table import AutoTable
from softmax_bench.kernels import Variant

from .conftest import DEVICE, MODE, invoke

WIDE = 1_000_000  # split in the table; with none, the rule's two_pass (too wide for fused and cluster)
ENTRIES = [{"dtype": "bf16", "M": 64, "N": WIDE, "variant": "split", "ms": {"split": 1.0, "two_pass": 1.5}}]


class Counts:
    """How often the dispatch asked for a device's name, scanned a table and asked a variant what it supports."""

    def __init__(self, monkeypatch):
        self.names = self.scans = self.supports = 0
        pick, unsupported = AutoTable.pick, Variant.unsupported

        def name(device=None):
            self.names += 1
            return "Test GPU"

        def counted_pick(table, *args):
            self.scans += 1
            return pick(table, *args)

        def counted_unsupported(variant, *args):
            self.supports += 1
            return unsupported(variant, *args)

        monkeypatch.setattr(torch.cuda, "get_device_name", name)
        monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
        monkeypatch.setattr(AutoTable, "pick", counted_pick)
        monkeypatch.setattr(Variant, "unsupported", counted_unsupported)

    def now(self) -> tuple[int, int, int]:
        return self.names, self.scans, self.supports


@pytest.fixture
def counts(monkeypatch, tmp_path):
    """A simulated "Test GPU" whose auto tables live in tmp_path (none yet), and fresh caches before and after."""
    monkeypatch.setenv("SOFTMAX_BENCH_AUTO_TABLES", str(tmp_path))
    dispatch.clear_caches()
    yield Counts(monkeypatch)
    dispatch.clear_caches()


def write_table(tmp_path) -> None:
    from softmax_bench.auto_table import table_name, triton_version

    (tmp_path / table_name("Test GPU", triton_version())).write_text(AutoTable("Test GPU", ENTRIES).to_json())


def auto_on(device: str) -> str:
    return dispatch.resolve_variant("auto", WIDE, torch.bfloat16, torch.device(device)).name


def test_a_second_call_with_the_same_key_decides_nothing(counts, tmp_path):
    write_table(tmp_path)
    assert auto_on("cuda:0") == "split"
    first = counts.now()
    assert first[0] >= 1 and first[1] >= 1 and first[2] >= 1  # it read the name, scanned, asked
    assert auto_on("cuda:0") == "split"
    assert counts.now() == first
    assert dispatch.resolve_variant("fused", 4096, torch.bfloat16, torch.device("cuda:0")).name == "fused"
    asked = counts.now()
    dispatch.resolve_variant("fused", 4096, torch.bfloat16, torch.device("cuda:0"))
    assert counts.now() == asked


def test_softmax_decides_once_per_key(counts):
    x = torch.randn(3, 40, device=DEVICE)
    softmax_bench.softmax(x)
    seen = counts.now()
    assert seen[2] >= 1
    softmax_bench.softmax(x, scale=0.5)  # the same key: a scale is no input of the decision
    assert counts.now() == seen
    y = softmax_bench.softmax(x, scale=0.5, mask=x > 0)  # a masked call: its form's entries (auto_table.table_form)
    masked = counts.now()
    assert masked[2] > seen[2]
    softmax_bench.softmax(x, scale=0.25, mask=x < 0)  # the same form: decided already
    assert counts.now() == masked
    softmax_bench.softmax(x[:, :20])  # another N: decided anew
    assert counts.now()[2] > masked[2]
    assert torch.equal(y, softmax_bench.softmax(x, scale=0.5, mask=x > 0))


def test_a_causal_or_masked_call_is_decided_from_its_forms_entries(counts, tmp_path):
    """A table whose causal entry says two_pass at WIDE, beside the plain softmax's split: each form its own."""
    from softmax_bench.auto_table import table_name, triton_version

    causal = {**ENTRIES[0], "variant": "two_pass", "ms": {"split": 1.6, "two_pass": 1.5}, "form": "causal"}
    table = AutoTable("Test GPU", [*ENTRIES, causal])
    (tmp_path / table_name("Test GPU", triton_version())).write_text(table.to_json())
    on = torch.device("cuda:0")
    assert dispatch.resolve_variant("auto", WIDE, torch.bfloat16, on).name == "split"
    assert dispatch.resolve_variant("auto", WIDE, torch.bfloat16, on, form="causal").name == "two_pass"
    assert dispatch.resolve_variant("auto", WIDE, torch.bfloat16, on, form="masked").name == "split"
    assert dispatch.auto_choice(WIDE, torch.float16, on, form="causal")[0] == "two_pass"  # bf16's, same bytes


def test_another_device_or_a_capture_is_decided_anew(counts, tmp_path, monkeypatch):
    write_table(tmp_path)
    assert auto_on("cuda:0") == "split"
    names = counts.names
    assert auto_on("cuda:1") == "split"
    assert counts.names == names + 1  # the other GPU's name was read: it could have another table
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    assert auto_on("cuda:0") == "two_pass"  # split cannot be captured in a CUDA graph


def test_tune_writing_a_table_clears_the_decisions(counts, tmp_path, monkeypatch):
    assert auto_on("cuda:0") == "two_pass"  # no table for Test GPU yet: the rule
    assert auto_on("cuda:0") == "two_pass"
    monkeypatch.setattr("softmax_bench.tune.tune", lambda *args, **kwargs: AutoTable("Test GPU", ENTRIES))
    result = invoke("tune", *MODE, "--shape", "2x32", "--dtype", "bf16")
    assert result.exit_code == 0, result.output
    assert auto_on("cuda:0") == "split"  # the table tune wrote, not the decision cached before it


def test_softmaxs_docstring_names_every_variant():
    import softmax_bench

    assert all(f"'{name}'" in softmax_bench.softmax.__doc__ for name in [*softmax_bench.variants(), "auto"])
