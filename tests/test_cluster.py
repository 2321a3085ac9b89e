"""The cluster variant: its launch arithmetic and compiled code on CPU, its numbers on an sm_90 GPU under Triton ≥ 3.8.

Gluon kernels do not run in Triton's interpreter, so on CPU the kernel is compiled for sm_90 (no GPU needed) and its
PTX and ptxas report are read; the GPU tests run where the variant says it can run.
"""

import re
from dataclasses import replace

import pytest
import torch
import triton

import softmax_bench
from softmax_bench import replay
from softmax_bench.dispatch import auto_choice, clear_caches
from softmax_bench.kernels import DTYPES, PLAIN, Fusion, cluster
from softmax_bench.kernels.aligned import vector_elems, window_lanes

from .compile_sm90 import cases_here, compile_in_subprocess, load_waves, sass_instructions, sass_of
from .conftest import DEVICE
from .test_fusion import same_bits_switched
from .test_kernels import assert_matches, fresh_randn

RUNS_HERE = cluster.why_not_here() is None
on_gpu = pytest.mark.skipif(not RUNS_HERE, reason=f"cluster does not run here: {cluster.why_not_here()}")
DTYPE_LIST = list(DTYPES.values())
# The issue's validation widths: both sides of the power-of-two bounds, the vocabulary widths, odd and prime N.
GPU_WIDTHS = [16385, 32768, 32769, 50257, 65537, 100003, 128256, 151936, 262143, 262144]


# --- launch arithmetic (CPU) ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("span", "unit", "pieces"), [
    (9496, 1024, (8192, 2048)),  # 151936 lanes over 16 CTAs: 10240 lanes a CTA, not 16384
    (6283, 512, (4096, 2048, 512)),  # 50257 over 8
    (8192, 1024, (8192,)),
    (11 * 1024, 1024, (8192, 2048, 1024)),
    (15 * 512, 512, (8192,)),  # four pieces: rounded up to one
    (23 * 512, 512, (8192, 4096)),  # 16 + 4 + 2 + 1 units: rounded up to 16 + 8
])
def test_pieces_cover_the_span_in_at_most_three_powers_of_two(span, unit, pieces):
    assert cluster.pieces_of(span, unit) == pieces
    assert cluster.pieces_of(span, unit, max_pieces=1) == (1 << (sum(pieces) - 1).bit_length(),)


def test_causal_rows_by_vectors_take_the_plain_rows_configuration_without_its_register_cap():
    """fp32 causal rows read by vectors (a positive scale, FP32_CAUSAL_VECTORS_AT) run in the plain row's CTAs and
    warps with the compiler's registers (UNCAPPED_CAUSAL: 128256 measured 0.985 ms so, 1.05–1.06 capped), except
    at the widths of CAUSAL_VECTORS_SHAPES, measured faster in CTAs and warps of their own."""
    causal = Fusion(scale=0.125, causal_m=4096)
    for N in sorted(cluster.FP32_CAUSAL_VECTORS_AT):
        assert cluster.causal_vectors(N, "fp32", causal), N
        plain = cluster.config_for(N, torch.float32)
        config = cluster.config_for(N, torch.float32, causal)
        assert config.max_registers is None, N
        if N not in cluster.CAUSAL_VECTORS_SHAPES["fp32"]:
            assert config == replace(plain, max_registers=None), N
    assert cluster.config_for(128256, torch.float32).max_registers == cluster.CAPPED_REGISTERS  # the plain row's cap
    negative = Fusion(scale=-0.125, causal_m=4096)  # by elements: its own configuration, not the plain row's
    assert not cluster.causal_vectors(128256, "fp32", negative)


def test_the_diagonal_is_stored_twice_at_bf16_151936_alone_under_its_cap():
    """DIAGONAL_STORE_AT: bf16 causal rows of 151936 (by vectors), softmax and log_softmax, store the diagonal's
    vector from the pieces too, capped at 64 registers (H200: 90.6 → 96.9 % of the roofline); not the other widths
    (16384–65536 lost 4 points so), fp32 rows, rows by elements, nor rows without a causal mask."""
    def stores_twice(N, dtype, fusion):
        config = cluster.config_for(N, dtype, fusion)
        return config, cluster.kernel_constexprs(config, N, dtype, N % 8 == 0, fusion).get("DIAGONAL_STORE", False)

    for log in (False, True):
        causal = Fusion(scale=0.125, causal_m=2048, log=log)
        config, twice = stores_twice(151936, torch.bfloat16, causal)
        assert twice and config.max_registers == 64, (log, config)
        for N in (16384, 32768, 65536, 131072, 262144):
            assert not stores_twice(N, torch.bfloat16, causal)[1], N
        assert not stores_twice(151936, torch.float32, causal)[1]
        negative = replace(causal, scale=-0.125)  # held in fp32, by elements
        assert not stores_twice(151936, torch.bfloat16, negative)[1]
        assert not stores_twice(151936, torch.bfloat16, Fusion(scale=0.125, log=log))[1]


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
def test_the_diagonal_stored_twice_fits_four_ctas_an_sm_where_the_store_predicate_spills(tmp_path):
    """Compiled for sm_90, bf16 causal 151936 in config_for's 8 × 8 capped at 64 (4 CTAs an SM): with DIAGONAL_STORE
    12 bytes spilled and one CTA barrier more (the end vectors' store waits for the pieces'); without it, under the
    same cap, the stores' second predicate spills 64 (uncapped: 80 registers, 3 CTAs an SM)."""
    case = {"kernel": "forward", "dtype": "bf16", "N": 151936, "scale": 0.125, "causal": True}
    twice, once, uncapped = compile_in_subprocess(
        [case, {**case, "diagonal_store": False}, {**case, "diagonal_store": False, "max_registers": None}], tmp_path)
    assert twice["registers"] == once["registers"] == 64 and (twice["warps"], twice["ctas"]) == (8, 8), twice
    assert twice["spill_bytes"] == GRID_SPILLS[("causal", False, "bf16", 151936)] < once["spill_bytes"], (twice, once)
    assert twice["cta_barriers"] == once["cta_barriers"] + 1, (twice, once)
    assert uncapped["spill_bytes"] == 0 and uncapped["registers"] > 64, uncapped


@pytest.mark.parametrize("dtype, N, ctas, num_warps, step", [
    (torch.bfloat16, 16384, 2, 4, 8192),  # the plain row's 2 × 8: 82.4 % against 92.9
    (torch.bfloat16, 32768, 4, 4, 8192),  # 4 × 8: 84.6 against 99.5
    (torch.float32, 16384, 2, 8, 8192),  # 8 × 4: 87.4 against 95.1
    (torch.bfloat16, 131072, 8, 4, 16384),  # 16 × 4: 92.9 against 97.4
], ids=str)
def test_causal_rows_by_vectors_where_other_ctas_measured_faster_take_those(dtype, N, ctas, num_warps, step):
    causal = Fusion(scale=0.125, causal_m=4096)
    config = cluster.config_for(N, dtype, causal)
    cap = cluster.CAUSAL_REGISTERS.get(dtype, {}).get(N)  # bf16 131072: 96, a CTA more an SM
    assert (config.ctas, config.num_warps, config.step, config.max_registers) == (ctas, num_warps, step, cap)
    assert (config.ctas, config.num_warps) != (cluster.config_for(N, dtype).ctas, cluster.config_for(N, dtype).num_warps)
    negative = Fusion(scale=-0.125, causal_m=4096)  # held as fp32 and read by elements: not these rows
    assert not cluster.as_plain_row(N, cluster.holding(dtype, negative, N), negative)
    assert cluster.config_for(N, dtype, negative).ctas != ctas


@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("N", [cluster.MIN_N, *GPU_WIDTHS, 49152, 98304, 196608, cluster.CAPACITY - 7, cluster.CAPACITY])
def test_every_cta_gets_columns_and_no_thread_holds_too_many(N, dtype):
    keep = torch.empty(1, N, dtype=torch.uint8)
    for fusion in (PLAIN, Fusion(scale=0.5), Fusion(causal_m=7), Fusion(scale=0.125, mask=keep),
                   Fusion(scale=-0.5, mask=keep), Fusion(scale=0.125, bias=torch.empty(1, N, dtype=dtype))):
        config = cluster.config_for(N, dtype, fusion)
        lanes = window_lanes(N, dtype)
        threads = 32 * config.num_warps
        assert config.ctas in (2, 4, 8, 16) and config.num_warps in cluster.WARPS
        assert config.ctas * config.step >= lanes and config.span >= config.step, "the cluster covers the window"
        unit = 128 // dtype.itemsize if N * dtype.itemsize % 128 == 0 else vector_elems(dtype)
        assert config.step % unit == 0 and config.step - lanes / config.ctas < unit, \
            "the CTAs share the window evenly, in whole lines where rows are, else in whole vectors"
        assert (config.ctas - 1) * config.step < N, "the last CTA holds columns of the row"
        how = cluster.holding(dtype, fusion, N)
        # causal rows read by vectors hold what a plain row holds, in its configuration; so do masked rows where
        # that measured faster (MASKED_AS_PLAIN_AT)
        as_plain = cluster.as_plain_row(N, how, fusion)
        form = "softmax" if as_plain else cluster.form_of(fusion)
        budget = cluster.MAX_PER_THREAD[how][config.num_warps]
        if not as_plain and (fusion.causal_m is not None or fusion.mask is not None or fusion.bias is not None):
            budget = budget * cluster.MASKED_SHARE
        biased = {**cluster.BIASED[dtype.itemsize], **cluster.SHARED_BIASED[dtype.itemsize]}
        measured = N in (biased if form == "biased" else cluster.MEASURED.get((form, how), {}))
        if N <= 262144 and not measured:  # the widest masked rows may hold more: they spill rather than fail
            assert config.span // threads <= budget
        assert all(p % (threads * vector_elems(dtype)) == 0 for p in config.pieces), "16 bytes a thread"
        if cluster.holding(dtype, fusion, N) == "fp32":
            assert config.span - config.step < max(config.span // 4, threads * vector_elems(dtype)), "little padding"
        elif N in cluster.MEASURED.get((form, "packed"), {}):  # measured there in more pieces
            assert len(config.pieces) <= cluster.MEASURED[form, "packed"][N][2]
            assert config.span < 2 * config.step
        else:
            assert len(config.pieces) == 1 and config.span < 2 * config.step, "one piece, padded less than twice"


def test_a_scale_alone_takes_its_measured_configuration():
    """A scale alone over 16-bit rows is held packed, as a plain row is, and takes MEASURED's scaled entries where
    they measured ahead of the rule (bf16 50257: the softmax's 4 × 4, 97.4 % of a copy against the rule's 8 × 4 at
    89.9; 32768 in 2 × 8; 151936 in 16 × 4, two pieces); its log_softmax the same CTAs, warps and pieces."""
    bf16, scaled = torch.bfloat16, Fusion(scale=0.125)
    assert cluster.form_of(scaled) == cluster.form_of(replace(scaled, log=True)) == "scaled"
    assert cluster.form_of(Fusion()) == "softmax" and cluster.form_of(Fusion(log=True)) == "other"
    assert cluster.config_for(50257, bf16, scaled) == cluster.config_for(50257, bf16)
    shapes = {N: (c.ctas, c.num_warps, len(c.pieces)) for N in (32768, 151936)
              for c in [cluster.config_for(N, bf16, scaled)]}
    assert shapes == {32768: (2, 8, 1), 151936: (16, 4, 2)}, shapes
    assert cluster.config_for(32768, bf16, Fusion(scale=0.125, log=True)).num_warps == 8
    assert cluster.config_for(4000, bf16, scaled) == cluster.config_for(4000, bf16), "unmeasured: the rule's"


@pytest.mark.parametrize("N, form, cap", [(262144, "softmax", 96), (196608, "softmax", 80), (151936, "softmax", 64),
                                          (262144, "scaled", 96)])
def test_plain_and_scaled_rows_take_their_register_cap_and_nothing_else_does(N, form, cap):
    """cluster.REGISTERS: bf16 rows whose cap gives an SM one more CTA (measured on the H200: 262144 93.2 → 95.6 %
    of a copy, 196608 93.2 → 96.8, 151936 94.7 → 98.4, scaled 262144 93.0 → 96.0) are capped, their CTAs and warps
    unchanged; their log_softmax (151936's spills under 64), the masked rows and causal rows that take the plain
    row's configuration, the loss's rows and the fp32 rows are not capped by it."""
    bf16 = torch.bfloat16
    fusion = Fusion() if form == "softmax" else Fusion(scale=0.125)
    config = cluster.config_for(N, bf16, fusion)
    uncapped = cluster.form_config(N, bf16, fusion)
    assert replace(config, evict="") == replace(uncapped, max_registers=cap) and uncapped.max_registers is None
    assert cluster.config_for(N, bf16, replace(fusion, log=True)).max_registers is None
    masked = Fusion(scale=0.125, mask=torch.empty(1, N, dtype=torch.uint8))
    if cluster.as_plain_row(N, "packed", masked):  # 151936
        assert cluster.config_for(N, bf16, masked).max_registers is None
    causal = Fusion(scale=0.125, causal_m=7)
    assert cluster.config_for(N, bf16, causal).max_registers == cluster.CAUSAL_REGISTERS[bf16].get(N)
    for with_grad in (False, True):  # the loss's rows take CROSS_ENTROPY's caps only
        entry = cluster.CROSS_ENTROPY.get(("step" if with_grad else "forward", "packed"), {}).get(N)
        assert cluster.cross_entropy_config(N, bf16, with_grad).max_registers == (entry[3] if entry else None)
    assert cluster.config_for(N, torch.float32, fusion).max_registers != cap
    assert cluster.config_for(N, torch.float16, fusion).max_registers is None, "fp16 spills under some of them"


def test_causal_rows_by_vectors_take_their_register_cap():
    """cluster.CAUSAL_REGISTERS: causal bf16 rows of 50257 read by vectors in the plain row's CTAs and warps, capped
    at 96 registers (5 CTAs an SM, not 4: 89.6 → 96.1 % of a copy on the H200), their log_softmax too; the plain
    row and causal rows of other widths as before (uncapped: UNCAPPED_CAUSAL)."""
    bf16, causal = torch.bfloat16, Fusion(scale=0.125, causal_m=7)
    plain = cluster.config_for(50257, bf16)
    for fusion in (causal, replace(causal, log=True)):
        config = cluster.config_for(50257, bf16, fusion)
        assert (config.ctas, config.num_warps, config.max_registers) == (plain.ctas, plain.num_warps, 96), config
    assert plain.max_registers is None and cluster.config_for(65536, bf16, causal).max_registers is None


def test_declared_limits():
    variant = softmax_bench.variants()["cluster"]
    assert variant.traffic(4, 65536, torch.bfloat16, PLAIN).total_bytes == 2 * 4 * 65536 * 2
    if RUNS_HERE:
        assert variant.supports(cluster.CAPACITY, torch.float32)
        assert not variant.supports(cluster.MIN_N - 1, torch.float32) and variant.supports(cluster.MIN_N, torch.float32)
        assert not variant.supports(cluster.CAPACITY + 1, torch.float32)
        assert variant.supports(cluster.CAPACITY - 7, torch.bfloat16)
        assert "use split or two_pass" in variant.unsupported(cluster.CAPACITY - 1, torch.bfloat16)


def test_unsupported_without_triton_3_8_or_a_gpu(monkeypatch):
    """Under Triton 3.6 (no multi-CTA builds), on CPU or in the interpreter the variant says why, and auto passes
    it over."""
    monkeypatch.setattr(triton, "__version__", "3.6.0")
    cluster.why_not_here.cache_clear()
    try:
        reason = softmax_bench.variants()["cluster"].unsupported(65536, torch.bfloat16)
        assert reason is not None and "Triton ≥ 3.8" in reason and "3.6.0" in reason
        for N in (32768, 65536, 151936, 262144):
            assert auto_choice(N, torch.bfloat16)[0] != "cluster"
        with pytest.raises(ValueError, match="Triton ≥ 3.8"):
            softmax_bench.softmax(torch.ones(2, 70000), variant="cluster")
    finally:
        cluster.why_not_here.cache_clear()


@pytest.mark.skipif(RUNS_HERE, reason="checks the answer where it does not run")
def test_says_why_where_it_does_not_run():
    reason = cluster.why_not_here()
    assert ("Triton's interpreter does not run" in reason or "needs a CUDA GPU" in reason
            or "needs Triton ≥ 3.8" in reason or "compute capability ≥ 9.0" in reason), reason


# --- compiled code (CPU, for sm_90) --------------------------------------------------------------------------

def step_cap(dtype: str, N: int) -> dict:
    """A loss step's register cap at width N where cluster.CROSS_ENTROPY sets one, as a compile case's key."""
    config = cluster.CROSS_ENTROPY.get(("step", "fp32" if dtype == "fp32" else "packed"), {}).get(N)
    return {"max_registers": config[3]} if config and config[3] else {}


def element_uncapped(dtype: str, N: int) -> dict:
    """Causal rows by elements uncapped where cluster.CAUSAL_REGISTERS caps the same rows by vectors (bf16 50257
    at 96: by elements, 628 bytes spilled), as a compile case's key: the cap is fitted to the vectors' code."""
    return {"max_registers": None} if N in cluster.CAUSAL_REGISTERS.get(DTYPES[dtype], {}) else {}


# A compile case's fields for each of cluster.form_of's forms (tests.compile_sm90.compile_case).
FORM_FIELDS = {"softmax": {}, "scaled": {"scale": 0.125}, "masked": {"scale": 0.125, "mask": True},
               "causal": {"scale": 0.125, "causal": True}, "biased": {"scale": 0.125, "bias": True}}


def loads_plainly(case: dict) -> bool:
    """Whether a case of a row with no mask or bias loads plainly (cluster.PLAIN_LOADS), not evict_last."""
    form = "causal" if case.get("causal") else "scaled" if case.get("scale", 1.0) != 1.0 else "softmax"
    return case["N"] in cluster.PLAIN_LOADS.get((form, DTYPES[case["dtype"]]), set())


FORWARD_CASES = {
    "plain": [
        {"kernel": "forward", "dtype": "bf16", "N": 50257}, {"kernel": "forward", "dtype": "bf16", "N": 262144},
        {"kernel": "forward", "dtype": "fp32", "N": 151936, "max_registers": None},
        {"kernel": "forward", "dtype": "fp16", "N": 100003, "scale": -0.5, "causal": True},
        {"kernel": "forward", "dtype": "fp32", "N": 262144, "causal": True},
        {"kernel": "forward", "dtype": "fp32", "N": 151936},
        {"kernel": "forward", "dtype": "fp32", "N": 24576}, {"kernel": "forward", "dtype": "bf16", "N": 16384},
        {"kernel": "forward", "dtype": "bf16", "N": 24576, "ctas": 4, "warps": 8},
        {"kernel": "forward", "dtype": "fp32", "N": 131072},
    ],
    "log_softmax": [
        {"kernel": "forward", "dtype": dtype, "N": N, "log": True, **fusion}
        for dtype in ("fp32", "bf16", "fp16") for N in (32768, 50257, 131072, 151936, 262144)
        for fusion in ({}, {"scale": 0.5, "causal": True})],
    "fused forms": [
        {"kernel": "forward", "dtype": "bf16", "N": 151936, "scale": 0.125, "mask": True},
        {"kernel": "forward", "dtype": "bf16", "N": 151936, "scale": 0.125, "causal": True, "ctas": 16, "warps": 8},
        {"kernel": "forward", "dtype": "bf16", "N": 32768, "scale": 0.125, "mask": True, "log": True},
        {"kernel": "forward", "dtype": "fp16", "N": 131072, "scale": 0.125, "mask": True},
        {"kernel": "forward", "dtype": "fp32", "N": 151936, "scale": 0.125, "mask": True},
        {"kernel": "forward", "dtype": "bf16", "N": 50257, "scale": 0.125, "mask": True},
    ],
    "biased": [
        {"kernel": "forward", "dtype": "bf16", "N": 151936, "scale": 0.125, "bias": True},
        {"kernel": "forward", "dtype": "fp32", "N": 131072, "scale": 0.125, "bias": "off"},
    ],
    "biased configurations": [  # every entry of cluster.BIASED, in its configuration
        {"kernel": "forward", "dtype": {2: "bf16", 4: "fp32"}[size], "N": N, "scale": 0.125, "bias": True}
        for size, entries in cluster.BIASED.items() for N in entries],
    "shared biased configurations": [  # every entry of cluster.SHARED_BIASED, a bias 64 rows of x share
        {"kernel": "forward", "dtype": {2: "bf16", 4: "fp32"}[size], "N": N, "scale": 0.125, "bias": True,
         "shared": True}
        for size, entries in cluster.SHARED_BIASED.items() for N in entries],
    "shared biased log configurations": [  # every entry of cluster.SHARED_BIASED_LOG
        {"kernel": "forward", "dtype": {2: "bf16", 4: "fp32"}[size], "N": N, "scale": 0.125, "bias": True,
         "shared": True, "log": True}
        for size, entries in cluster.SHARED_BIASED_LOG.items() for N in entries],
    "cross entropy": [  # plain, then cross_entropy's rows with their gradient (capped as a step launches them:
        # cluster.CROSS_ENTROPY), then without (the lse alone)
        {"kernel": "forward", "dtype": dtype, "N": N, **form}
        for dtype, N in (("bf16", 128256), ("fp32", 151936), ("bf16", 50257))
        for form in ({}, {"cross_entropy": "grad", **step_cap(dtype, N)}, {"cross_entropy": "loss"},
                     {"cross_entropy": "grad+z", **step_cap(dtype, N)})],
    "causal vectors": [  # cluster.CAUSAL_VECTORS: the plain row, then causal with the element select, then by vectors
        {"kernel": "forward", "dtype": dtype, "N": N, **form}
        for dtype, N, extra in (("bf16", 128256, {}), ("bf16", 50257, {}),
                                ("fp16", 100003, {"scale": -0.5, "log": True}), ("fp32", 262144, {}),
                                ("bf16", 151936, {"scale": 0.125, "mask": True}))
        for form in ({**extra, "causal": False}, {**extra, "causal": True, "causal_vectors": False,
                                                  **element_uncapped(dtype, N)},
                     {**extra, "causal": True, "causal_vectors": True})],
    "log capped": [  # cluster.LOG_REGISTERS, config_for's choice
        {"kernel": "forward", "dtype": "fp32", "N": 128256, "scale": 0.125, "causal": True, "log": True},
        {"kernel": "forward", "dtype": "fp32", "N": 128256, "scale": 0.125, "bias": True, "log": True}],
    "packed select": [  # cluster.MASK_PACKED off, then on
        {"kernel": "forward", "dtype": dtype, "N": 131072, "scale": 0.125, "mask": True, **packed}
        for dtype in ("bf16", "fp16") for packed in ({"mask_packed": False}, {"mask_packed": True})],
}


# The rows each group keeps on CPU without --exhaustive (conftest.EXHAUSTIVE), by (dtype, N): the narrowest and the
# widest holding of each form, and whole pairs and triples where a test compares them. Groups not named keep all.
KEPT_ON_CPU = {
    "log_softmax": {("fp32", 262144), ("bf16", 151936), ("fp16", 50257)},
    "cross entropy": {("bf16", 128256)},
    "biased configurations": {("bf16", 151936), ("fp32", 128256)},
    "causal vectors": {("bf16", 128256), ("fp16", 100003)},
    "packed select": {("bf16", 131072)},
}


@pytest.fixture(scope="module")
def compiled_forwards(tmp_path_factory, exhaustive) -> dict[str, list[dict]]:
    """FORWARD_CASES (on CPU, those KEPT_ON_CPU) compiled for sm_90, in one process (the tests that read them share
    an xdist group)."""
    groups = cases_here(FORWARD_CASES, KEPT_ON_CPU, exhaustive)
    cases = [case for group in groups.values() for case in group]
    compiled = iter(compile_in_subprocess(cases, tmp_path_factory.mktemp("cluster-sm90")))
    return {name: [next(compiled) for _ in group] for name, group in groups.items()}


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
def test_the_plain_loads_cells_are_where_evict_last_costs_registers(tmp_path):
    """cluster.PLAIN_LOADS' bf16 cells, compiled for sm_90 in config_for's configuration: with evict_last loads, the
    softmax and the scaled rows of 262144 spill under their cap of 96, causal rows of 151936 under their cap of 64
    (DIAGONAL_STORE_AT's) more than its 12 bytes, and biased rows of 151936 take more registers (122 against 120);
    with the plain loads config_for gives them, none spills but GRID_SPILLS' cells (fp32 causal
    262144 loads evict_last again: test_fp32_causal_262144_selects_by_one_32_bit_compare_and_loads_evict_last). If
    a Triton drops that cost, PLAIN_LOADS wants measuring again (evidence/experiments/2026-12-04-session31/next.sh)."""
    cells = [(form, N) for (form, dtype), widths in cluster.PLAIN_LOADS.items() if dtype == torch.bfloat16
             for N in sorted(widths)]
    assert {form for form, _ in cells} == set(FORM_FIELDS) - {"masked"}, cells
    cases = [{"kernel": "forward", "dtype": "bf16", "N": N, **FORM_FIELDS[form], **evict}
             for form, N in cells for evict in ({}, {"evict": "evict_last"})]
    compiled = compile_in_subprocess(cases, tmp_path)
    for (form, N), plain, evicting in zip(cells, compiled[::2], compiled[1::2]):
        spilled = GRID_SPILLS.get((form, False, "bf16", N), 0)  # causal 151936 under DIAGONAL_STORE_AT's cap: 12
        assert plain["evict_last_loads"] == 0 and plain["spill_bytes"] == spilled, plain
        assert evicting["evict_last_loads"] > 0, evicting
        if plain["N"] == 262144 or spilled:
            assert evicting["spill_bytes"] > plain["spill_bytes"], evicting
        else:
            assert evicting["registers"] > plain["registers"], (plain, evicting)


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
def test_fp32_causal_262144_selects_by_one_32_bit_compare_and_loads_evict_last(tmp_path):
    """cluster.LEAN_CAUSAL_AT, compiled for sm_90 (ptxas, then cuobjdump): fp32 causal 262144 by elements, as
    config_for launches it (evict_last), compares each column once, in 32 bits, and issues its 16 loads at once.
    With kept()'s three compares, one of them against the row's 64-bit index (a setp.s64 an element), evict_last
    split its loads [14, 2] (on the H200 84.7 % of a copy against 90.6 with plain loads, thirty-first session)."""
    config = cluster.config_for(262144, torch.float32, Fusion(scale=0.125, causal_m=512))
    assert 262144 in cluster.LEAN_CAUSAL_AT and config.evict == "evict_last", config
    cases = [{"kernel": "forward", "dtype": "fp32", "N": 262144, "scale": 0.125, "causal": True, **lean}
             for lean in ({}, {"lean_causal": False, "evict": "evict_last"})]
    lean, three = compile_in_subprocess(cases, tmp_path)
    assert lean["evict_last_loads"] == lean["loads_v4"] == three["evict_last_loads"] == 16, (lean, three)
    assert lean["wide_compares"] == 0 < 64 <= three["wide_compares"], (lean, three)
    assert lean["spill_bytes"] == 0 and lean["registers"] <= three["registers"], (lean, three)
    lean_waves, three_waves = (load_waves(sass_of(case, tmp_path)) for case in cases)
    assert len(lean_waves) == 1 and len(three_waves) > 1, (lean_waves, three_waves)


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
@pytest.mark.xdist_group("cluster-sm90")  # one worker compiles them, once
def test_compiled_for_sm90_one_exchange_16_byte_vectors_no_spills(compiled_forwards):
    """Compiled for the H200 without a GPU: every CTA loads and stores its span in 16-byte vectors (the unaligned
    widths too), pushes its pair with two st.async, meets the cluster barrier once (split: arrive, then wait) and
    does not spill — a fused causal mask at 262144 fp32 included, and fp32 151936 and 24576 with their registers
    capped as config_for caps them; bf16 16384 in a pair of CTAs. fp32 151936, held in three pieces, meets as many
    of the CTA's barriers as fp32 131072 in one. Its loads are evict_last, but at PLAIN_LOADS' widths."""
    cases = compiled_forwards["plain"]
    assert len(cases) == 10
    for case in cases:
        assert_one_exchange_no_spills(case, pushes=2)
        if loads_plainly(case):
            assert case["evict_last_loads"] == 0, case
        else:  # every load evict_last (kernels.FORWARD_EVICT), the vectors and the row's unaligned end
            assert case["evict_last_loads"] >= case["loads_v4"] > 0, case
    assert cases[2]["pieces"] > 1, "fp32 151936 is held in more than one power-of-two piece"
    assert cases[9]["pieces"] == 1 and cases[2]["cta_barriers"] == cases[9]["cta_barriers"], \
        "the pieces' maxes and sums are taken within each thread first: one reduction across the CTA each"
    # capped at 128 registers (4 CTAs an SM, against 3 at the compiler's choice), it still does not spill
    assert cases[5]["registers"] <= cluster.CAPPED_REGISTERS < cases[2]["registers"], cases
    assert cases[6]["registers"] <= cluster.CAPPED_REGISTERS and cases[7]["ctas"] == 2, cases
    # 40 since the 16-bit softmax takes x's exponential again at the end (it held its exponentials: 32; with the
    # sum's zero test before the values go back to one a CTA, 36, and 5 points of a copy slower)
    assert cases[8]["registers"] <= 40, cases[8]


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
@pytest.mark.xdist_group("cluster-sm90")  # one worker compiles them, once
def test_log_softmax_compiled_for_sm90_no_spills(compiled_forwards):
    """log_softmax keeps x, not its exponentials: held as softmax holds it (fp32, or 16-bit packed), at the widths
    of the wide and vocabulary shapes, plain and with a scale and a causal mask, it does not spill; but for the
    bf16 causal rows of 262144 and 151936 under CAUSAL_REGISTERS' caps, which spill (GRID_SPILLS' bytes) and
    measured faster so (H200: 262144 98.6 % of a copy against 94.6 uncapped; 151936: DIAGONAL_STORE_AT's)."""
    cases = compiled_forwards["log_softmax"]
    assert cases
    for case in cases:
        capped_causal = GRID_SPILLS.get(("causal", True, case["dtype"], case["N"]), 0) if case.get("causal") else 0
        assert_one_exchange_no_spills(case, pushes=2, spill_bytes=capped_causal)
        assert case["lg2_approx"] >= 1, "log s as lg2.approx · ln 2, not gl.log's 30 instructions"


def fused_form(name: str, N: int, dtype: torch.dtype) -> Fusion:
    """A row of MEASURED's or BIASED's form `name` (masked, causal, biased, scaled), scaled."""
    if name == "scaled":
        return Fusion(scale=0.125)
    if name == "masked":
        return Fusion(scale=0.125, mask=torch.empty(1, N, dtype=torch.uint8))
    if name == "causal":
        return Fusion(scale=0.125, causal_m=7)
    return Fusion(scale=0.125, bias=torch.empty(1, N, dtype=dtype))


def test_fused_forms_log_softmax_takes_the_forms_configuration():
    """The log_softmax of a masked, causal or biased row loads and holds what its softmax does, so it takes the
    form's measured CTAs, warps and pieces (cluster.LOG_AS_FORM; when it took the rule's, biased fp32 151936 ran at
    59 % of its roofline against the softmax's 99), uncapped where it is held in fp32 (fp32 causal 151936's log
    spilled 64 bytes under the softmax's cap, compiled for sm_90) but where LOG_REGISTERS caps it; masked fp32
    262144's log in the rule's configuration, not the plain rows' (MASKED_LOG_AS_PLAIN_AT)."""
    forms = [(name, torch.bfloat16 if how == "packed" else torch.float32, N)
             for (name, how), entries in cluster.MEASURED.items() if name != "softmax" for N in entries]
    forms += [("biased", {2: torch.bfloat16, 4: torch.float32}[size], N)
              for size, entries in cluster.BIASED.items() for N in entries]
    forms += [("causal", torch.bfloat16, N) for N in cluster.CAUSAL_VECTORS_SHAPES["packed"]]
    forms += [("causal", torch.float32, N) for N in cluster.CAUSAL_VECTORS_SHAPES["fp32"]]
    for name, dtype, N in forms:
        fusion = fused_form(name, N, dtype)
        assert cluster.form_of(replace(fusion, log=True)) == cluster.form_of(fusion) == name
        softmax, log = cluster.config_for(N, dtype, fusion), cluster.config_for(N, dtype, replace(fusion, log=True))
        assert (log.ctas, log.num_warps, log.step, log.pieces) == (softmax.ctas, softmax.num_warps, softmax.step,
                                                                   softmax.pieces), (name, dtype, N)
        how = cluster.holding(dtype, fusion, N)
        uncapped = how == "fp32" and not cluster.as_plain_row(N, how, fusion)  # a plain row's cap is its own
        ctas, warps, cap = cluster.LOG_REGISTERS.get((name, how), {}).get(N, (0, 0, None))
        cap = cap if (log.ctas, log.num_warps) == (ctas, warps) else None  # where the cap was measured
        assert log.max_registers == (cap or (None if uncapped else softmax.max_registers)), (name, dtype, N)
    causal_log = replace(fused_form("causal", 128256, torch.float32), log=True)
    assert cluster.config_for(128256, torch.float32, causal_log).max_registers == 112
    masked = fused_form("masked", 262144, torch.float32)
    softmax, log = (cluster.config_for(262144, torch.float32, f) for f in (masked, replace(masked, log=True)))
    assert softmax == cluster.config_for(262144, torch.float32, Fusion()) and (log.ctas, log.num_warps) == (16, 8)
    assert cluster.form_of(Fusion(log=True)) == "other", "a bare log_softmax is the rule's, as log-softmax-auto measured"


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
@pytest.mark.xdist_group("cluster-sm90")  # one worker compiles them, once
def test_a_log_softmax_capped_where_measured_does_not_spill(compiled_forwards):
    """cluster.LOG_REGISTERS: fp32 causal 128256's log_softmax in 16 × 4 CTAs, 141 registers uncapped (3 CTAs an SM:
    77.9 % of a copy of its bytes on the H200), capped at 112 (98.3 %), and fp32 biased 128256's in 16 × 16, capped
    at 56 (73.3 → 98.0 %), compile within their caps without spilling."""
    causal, biased = compiled_forwards["log capped"]
    for case, shape, cap in ((causal, (16, 4), 112), (biased, (16, 16), 56)):
        assert_one_exchange_no_spills(case, pushes=2)
        assert (case["ctas"], case["warps"]) == shape and case["registers"] <= cap, case


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
@pytest.mark.xdist_group("cluster-sm90")  # one worker compiles them, once
def test_fused_forms_hold_16_bit_rows_packed_and_read_the_mask_in_vectors(compiled_forwards):
    """A positive scale, a keep-mask and a causal mask leave 16-bit rows packed (the scale applied to x − max at the
    end), as a plain row is held: bf16 151936 with a scale and a mask in 89–90 registers, not 238 as when it held
    fp32 (docs/perf-notes.md, 2026-12-01 ninth session; causal in 16 × 8 CTAs, as the rule gives it, not the 16 × 4
    measured at 151936). A mask on x's grid is read a thread's bytes of a vector in one load (8 bytes for bf16, 4
    for fp32), not one byte at a time."""
    cases = compiled_forwards["fused forms"]
    for case in cases[:4]:
        assert_one_exchange_no_spills(case, pushes=2)
        assert case["byte_loads"] == 0, case
    assert all(case["registers"] <= 96 for case in cases[:4]), cases
    # fp32 151936 masked, in the plain rows' 16 × 4 CTAs capped at 128 registers (MASKED_AS_PLAIN_AT): 56 bytes
    # spilled, and on the H200 94.2 % of a copy against 83.5 in the rule's 16 × 16 with none (seventeenth session)
    fp32 = cases[4]
    assert fp32["byte_loads"] == 0 and fp32["registers"] <= 128 and fp32["spill_bytes"] <= 64, fp32
    assert fp32["st_async"] == 2 and fp32["cluster_arrive"] == fp32["cluster_wait"] == 1, fp32
    # off the grid, the mask on x's: in vectors but for the row's partial end vectors (2 · 8 bytes at most); in the
    # plain rows' 4 × 4 CTAs (MASKED_AS_PLAIN_AT), 112 registers (95.7 % of a copy on the H200, 74.2 in the 8 × 8
    # of MEASURED's 96)
    assert_one_exchange_no_spills(cases[5], pushes=2)
    assert cases[5]["byte_loads"] <= 2 and cases[5]["registers"] <= 128, cases[5]


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
@pytest.mark.xdist_group("cluster-sm90")  # one worker compiles them, once
def test_cross_entropy_rows_compile_as_the_softmax_rows(compiled_forwards):
    """cross_entropy's rows (kernels/cross_entropy.on_cluster), compiled for sm_90: with the gradient, the softmax's
    code and a factor a row (and the z-loss's), in at most 4 registers more and no spills (bf16 128256: 72 against
    71 under Triton 3.8); without it, the row read in vectors and nothing written but its lse."""
    cases = compiled_forwards["cross entropy"]
    assert len(cases) % 4 == 0 and cases
    for plain, grad, loss, with_z in zip(*[iter(cases)] * 4):  # each width's four forms
        for case in (grad, with_z):  # with the z-loss: the factor plus 2z · lse, a row
            assert_one_exchange_no_spills(case, pushes=2)
            assert case["stores_v4"] == plain["stores_v4"] and case["registers"] <= plain["registers"] + 4, \
                (case, plain)
        assert loss["loads_v4"] == plain["loads_v4"] and loss["stores_v4"] == 0 and loss["spill_bytes"] == 0, loss


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
def test_cross_entropy_rows_load_their_factor_with_the_row(tmp_path):
    """Compiled for sm_90 (ptxas, then cuobjdump): a loss row's target and the loss's scale are read before the
    CTA's first barrier, beside the row's loads, so that their latency is the row's; with class weights the
    target's weight is read after it (its address needs the target's data). Loaded after the exchange, a row's
    factor held its stores back: on the H200 the kernel with the gradient ran 13 % slower than the softmax of the
    same rows (bf16 4096×128256, twenty-fifth session). The z-loss's factor is the same scale's 2z times: no load
    of its own (a factor loaded before the barrier as well took bf16 50257 to 110 registers, not 96). And the
    row's own loads all go before any wait (bf16 50257 with the factor computed before them: 8, a wait, 8)."""
    cases = [{"kernel": "forward", "dtype": "bf16", "N": 128256, "cross_entropy": form, "class_weight": weighted}
             for form, weighted in (("grad", False), ("grad", True), ("grad+z", False))]
    compile_in_subprocess(cases, tmp_path)
    for case, (before, after) in zip(cases, ((2, 0), (2, 1), (2, 0))):
        sass = sass_of(case, tmp_path).splitlines()
        scalar_loads = [i for i, line in enumerate(sass) if re.search(r"\bLDG\.E(\.64)? ", line)]
        first_barrier = next(i for i, line in enumerate(sass) if "BAR.SYNC" in line)
        assert sum(i < first_barrier for i in scalar_loads) == before, (case, scalar_loads, first_barrier)
        assert sum(i > first_barrier for i in scalar_loads) == after, (case, scalar_loads, first_barrier)
    cap = cluster.CROSS_ENTROPY[("step", "packed")][50257][3]  # bf16 50257's step as launched, beside its softmax
    plain, loss = {"kernel": "forward", "dtype": "bf16", "N": 50257}, {"cross_entropy": "grad", "max_registers": cap}
    compiled = compile_in_subprocess([plain, {**plain, **loss}], tmp_path)
    (row_loads,), waves = load_waves(sass_of(plain, tmp_path)), load_waves(sass_of({**plain, **loss}, tmp_path))
    assert waves[0] >= row_loads and compiled[1]["spill_bytes"] == 0, (waves, row_loads)


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
@pytest.mark.xdist_group("cluster-sm90")  # one worker compiles them, once
def test_causal_rows_by_vectors_select_no_element(compiled_forwards):
    """cluster.CAUSAL_VECTORS, compiled for sm_90 (aligned and not, packed and fp32, with a keep-mask): a causal row
    reads and writes in 16-byte vectors as the element select does, with selects for a few end elements only
    (within 8 of the plain row's), where the element select takes one an element held; no spills, and registers
    fewer or within 2 (bf16 128256: 127 → 115 under the rule's cap; 50257: 96 → 63; 1520 → 1256 SASS instructions
    at 128256, the plain row's 1104)."""
    cases = compiled_forwards["causal vectors"]
    assert len(cases) % 3 == 0 and cases
    for plain, element, vectors in zip(*[iter(cases)] * 3):  # each width's three forms
        for case in (element, vectors):
            assert_one_exchange_no_spills(case, pushes=2)
        assert (vectors["loads_v4"], vectors["stores_v4"]) == (element["loads_v4"], element["stores_v4"]), vectors
        assert vectors["selects"] <= plain["selects"] + 8 < element["selects"], (plain, element, vectors)
        assert vectors["registers"] <= element["registers"] + 2, (element, vectors)
        # CAUSAL_REGISTERS: bf16 50257 at 96, 5 CTAs of 4 warps an SM (uncapped, 112 registers: 4); a causal row
        # with a keep-mask is the masked form (form_of), in MEASURED's configuration, not capped so (bf16 151936:
        # 79 registers in 8 × 8, no spill; an H100's GPU suite, the seventy-third session)
        capped = cluster.CAUSAL_REGISTERS.get(DTYPES[vectors["dtype"]], {})
        cap = None if vectors.get("mask") else capped.get(vectors["N"])
        assert cap is None or vectors["registers"] <= cap, (vectors, cap)


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
@pytest.mark.xdist_group("cluster-sm90")  # one worker compiles them, once
def test_the_packed_mask_select_takes_fewer_registers_and_no_compares(compiled_forwards):
    """cluster.MASK_PACKED, compiled for sm_90 at 131072 with a scale and a keep-mask: the mask still read in
    vectors, no spills, and fewer registers than the element select (bf16: 72 against 96 under Triton 3.8)."""
    cases = compiled_forwards["packed select"]
    assert len(cases) % 2 == 0 and cases
    for element, packed in zip(*[iter(cases)] * 2):
        for case in (element, packed):
            assert_one_exchange_no_spills(case, pushes=2)
            assert case["byte_loads"] == 0, case
        assert packed["registers"] < element["registers"], (packed, element)


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
@pytest.mark.xdist_group("cluster-sm90")  # one worker compiles them, once
def test_a_bias_on_x_grid_is_read_in_vectors_beside_x(compiled_forwards):
    """A bias of x's layout is read in 16-byte vectors as x is (as many vector loads as x's, which are as many as
    the stores), the row held in fp32, with no spills: bf16 151936 in 8 CTAs of 8 warps (cluster.BIASED), 120
    registers (docs/perf-notes.md, twenty-second session); a bias off the grid element by element, x still in
    vectors."""
    on_grid, off_grid = compiled_forwards["biased"]
    for case in (on_grid, off_grid):
        assert_one_exchange_no_spills(case, pushes=2)
    assert on_grid["loads_v4"] == 2 * on_grid["stores_v4"] and on_grid["registers"] <= 160, on_grid
    assert off_grid["loads_v4"] == off_grid["stores_v4"], off_grid


# Registers a thread of each BIASED configuration took on the H200 (n_regs in
# evidence/experiments/2026-12-03-session22/biased-configs/ and biased-*/; fp32 without BIAS_BLEND; fp32 50257 in
# evidence/experiments/2026-12-04-session27/biased-configs/; bf16 262144 on an H100:
# evidence/experiments/2026-12-05-session46/configs-bf16-biased-262144.csv)
BIASED_REGISTERS = {("bf16", 16384): 54, ("bf16", 50257): 94, ("bf16", 128256): 64, ("bf16", 131072): 64,
                    ("bf16", 151936): 120, ("bf16", 262144): 64, ("fp32", 50257): 64, ("fp32", 128256): 60,
                    ("fp32", 151936): 60}


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
@pytest.mark.xdist_group("cluster-sm90")
def test_biased_configurations_compile_as_measured(compiled_forwards):
    """Each of cluster.BIASED's configurations compiles for sm_90 as it was measured: its CTAs and warps, one
    exchange, no spills, and no more registers than the H200's compile of it took."""
    assert_compiled_as_measured(compiled_forwards["biased configurations"], cluster.BIASED, BIASED_REGISTERS)


def assert_compiled_as_measured(cases: list[dict], entries: dict, registers: dict, spills: dict | None = None
                                ) -> None:
    """Each compiled case of a table of entries by x's bytes an element and N (BIASED's, SHARED_BIASED's) in its
    entry's CTAs and warps, one exchange, no spills (but the bytes `spills` takes for a case as measured), no more
    registers than `registers` says; every entry has its count there."""
    assert cases
    for case in cases:
        assert_one_exchange_no_spills(case, pushes=2, spill_bytes=(spills or {}).get((case["dtype"], case["N"]), 0))
        ctas, warps, most_pieces, _ = entries[{"bf16": 2, "fp32": 4}[case["dtype"]]][case["N"]]
        assert (case["ctas"], case["warps"]) == (ctas, warps) and case["pieces"] <= most_pieces, case
        assert case["registers"] <= registers[case["dtype"], case["N"]], case
    assert set(registers) == {({2: "bf16", 4: "fp32"}[size], N) for size in entries for N in entries[size]}


# Registers a thread of each SHARED_BIASED configuration took on an H100 (n_regs in
# evidence/experiments/2026-12-07-session74/out-h100-scan/biased-rows64-fp32.csv, session77/out-h100-scan-* and
# session78/out-h100-first/runs/confirm-scan-h100-s77)
SHARED_BIASED_REGISTERS = {("bf16", 32768): 56, ("bf16", 151936): 64, ("fp32", 50257): 48, ("fp32", 128256): 64,
                           ("fp32", 131072): 78, ("fp32", 262144): 168}
SHARED_BIASED_LOG_REGISTERS = {("bf16", 32768): 56, ("bf16", 151936): 64, ("fp32", 50257): 48}


def test_a_shared_bias_log_entry_keeps_its_own_cap(monkeypatch):
    """A SHARED_BIASED_LOG entry was measured for the log itself: its registers' cap stays, where a log drops the cap
    of an entry fitted to the softmax (rows held in fp32, as every biased row is) and LOG_REGISTERS caps BIASED's."""
    def config(N, dtype, log, group=64):
        bias = torch.empty(2, N, dtype=dtype, device="meta")
        return cluster.config_for(N, dtype, Fusion(scale=0.125, bias=bias, bias_group=group, log=log))

    monkeypatch.setitem(cluster.SHARED_BIASED_LOG[4], 128256, (16, 16, 1, 64))  # LOG_REGISTERS' 16 × 16 caps at 56
    bf16, fp32 = torch.bfloat16, torch.float32
    assert (config(151936, bf16, True).num_warps, config(151936, bf16, True).max_registers) == (16, 64)
    assert config(128256, fp32, True).max_registers == 64
    assert config(128256, fp32, True, group=1).max_registers == cluster.LOG_REGISTERS["biased", "fp32"][128256][2]
    assert config(151936, bf16, True, group=1).max_registers is None  # BIASED's, uncapped


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
@pytest.mark.xdist_group("cluster-sm90")
def test_a_shared_bias_takes_its_own_configurations_as_measured(compiled_forwards):
    """A bias shared by 64 rows of x takes cluster.SHARED_BIASED's configuration where it has one, its log_softmax
    SHARED_BIASED_LOG's (and elsewhere what a full bias takes): compiled for sm_90, its CTAs and warps, one exchange,
    no spills but GRID_SPILLS', and the registers of the H100's compile of it."""
    def configs(N: int, size: int, log: bool) -> tuple:  # (shared's, full's)
        dtype = {2: torch.bfloat16, 4: torch.float32}[size]
        full = Fusion(scale=0.125, bias=torch.empty(2, N, dtype=dtype), log=log)
        return cluster.config_for(N, dtype, replace(full, bias_group=64)), cluster.config_for(N, dtype, full)

    for log, table in ((False, cluster.SHARED_BIASED), (True, cluster.SHARED_BIASED_LOG)):
        for size, entries in table.items():
            for N, (ctas, warps, _, cap) in entries.items():
                shared, full = configs(N, size, log)
                assert (shared.ctas, shared.num_warps, shared.max_registers) == (ctas, warps, cap), (N, log)
                assert (full.ctas, full.num_warps, full.max_registers) != (ctas, warps, cap), (N, log)
    for size, entries in cluster.SHARED_BIASED.items():  # the log where only the softmax has an entry: a full bias's
        for N in set(entries) - set(cluster.SHARED_BIASED_LOG[size]):
            shared, full = configs(N, size, log=True)
            assert (shared.ctas, shared.num_warps) == (full.ctas, full.num_warps), N
    def spills(of_log: bool) -> dict:
        return {(dtype, N): spilled for (form, log, dtype, N), spilled in GRID_SPILLS.items()
                if form == "biased rows/64" and log == of_log}

    assert_compiled_as_measured(compiled_forwards["shared biased configurations"], cluster.SHARED_BIASED,
                                SHARED_BIASED_REGISTERS, spills(False))
    assert_compiled_as_measured(compiled_forwards["shared biased log configurations"], cluster.SHARED_BIASED_LOG,
                                SHARED_BIASED_LOG_REGISTERS, spills(True))


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
def test_a_shared_bias_row_is_found_from_its_own_start_in_the_registers_of_a_full_one(tmp_path):
    """row_of finds a shared row's window from that row's own start, as a full bias's is found: compiled for sm_90,
    biased rows/64 bf16 128256 in BIASED's 16 × 8 takes the full bias's 64 registers (68 when its window was taken
    from mask_rows' pointer, the seventy-fourth session), with no spill and the same vector loads."""
    cases = [{"kernel": "forward", "dtype": "bf16", "N": 128256, "scale": 0.125, "bias": True, "ctas": 16, "warps": 8,
              "max_registers": None, **shared} for shared in ({}, {"shared": True})]
    full, shared = compile_in_subprocess(cases, tmp_path)
    assert shared["registers"] <= full["registers"] <= 64 and shared["spill_bytes"] == 0, (full, shared)
    assert shared["loads_v4"] == full["loads_v4"], (full, shared)


def test_how_fused_forms_hold_16_bit_rows():
    """Packed under a positive scale, a causal mask, and a keep-mask whose bytes of a vector are one load: rows on
    the 16-byte grid, or a mask on x's grid (a contiguous mask of x's shape); fp32 under a negative scale, fp32
    output, or a keep-mask read a byte at a time (N = 50257 off the grid, the mask's rows not on x's)."""
    keep = Fusion(scale=0.125, mask=torch.empty(1, 8, dtype=torch.uint8))
    assert cluster.holding(torch.bfloat16, keep, 151936) == "packed"
    assert cluster.holding(torch.bfloat16, keep, 50257) == "fp32"
    keep_of_x = Fusion(scale=0.125, mask=torch.empty(3, 50257, dtype=torch.uint8))
    assert cluster.holding(torch.bfloat16, keep_of_x, 50257) == "packed"
    assert cluster.holding(torch.bfloat16, replace(keep_of_x, mask=keep_of_x.mask[:, 8:]), 50249) == "packed"
    assert cluster.holding(torch.bfloat16, replace(keep_of_x, mask=keep_of_x.mask[:, 1:]), 50256) == "fp32"
    assert cluster.holding(torch.bfloat16, replace(keep_of_x, mask=keep_of_x.mask[:, :50254]), 50254) == "fp32"
    assert cluster.holding(torch.bfloat16, Fusion(scale=0.125, causal_m=7), 50257) == "packed"
    assert cluster.holding(torch.float16, Fusion(scale=-0.5), 151936) == "fp32"
    assert cluster.holding(torch.bfloat16, Fusion(out_dtype=torch.float32), 151936) == "fp32"
    assert cluster.holding(torch.bfloat16, Fusion(bias=torch.empty(1, 8, dtype=torch.bfloat16)), 151936) == "fp32"


def assert_one_exchange_no_spills(case: dict, pushes: int, spill_bytes: int = 0) -> None:
    assert case["loads_v4"] > 0 and case["stores_v4"] > 0, case
    assert case["st_async"] == pushes and case["cluster_arrive"] == 1 and case["cluster_wait"] == 1, case
    assert case["spill_bytes"] <= spill_bytes and case["registers"] <= min(255, 65536 // (32 * case["warps"])), case


# --- numbers (GPU) -------------------------------------------------------------------------------------------


def run(x, **kwargs):
    return softmax_bench.softmax(x, variant="cluster", **kwargs)


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("N", [*GPU_WIDTHS, cluster.CAPACITY - 7])
def test_rows_match_float64(N, dtype):
    for M in (1, 37):
        x, seed = fresh_randn(M, N, dtype=dtype)
        assert_matches(run(x), x, msg=lambda m: f"seed {seed}: {m}")


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
def test_many_rows_and_the_widest(dtype):
    """More clusters than the GPU holds at once (a race between clusters would show), and the widest row."""
    x, seed = fresh_randn(600, 151936, dtype=dtype)
    y = run(x)
    assert_matches(y[::7], x[::7], msg=lambda m: f"seed {seed}: {m}")
    assert bool(torch.isfinite(y).all())
    x, seed = fresh_randn(3, cluster.CAPACITY, dtype=dtype)
    assert_matches(run(x), x, msg=lambda m: f"seed {seed}: {m}")


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("N", [50257, 131072])
def test_strided_inf_nan_rows(N, dtype):
    wide, _ = fresh_randn(6, N + 13, dtype=dtype)
    x = wide[:, 5:N + 5]  # rows 13 elements apart and off a 16-byte boundary
    x[1] = float("-inf")  # all -inf: zeros
    x[2, ::3] = float("-inf")
    x[3, N // 2] = float("nan")  # NaN stays in its row
    x[4, -1] = 1000.0
    y = run(x)
    assert_matches(y, x)
    assert bool((y[1] == 0).all()) and bool(y[3].isnan().all()) and not bool(y[[0, 2, 4, 5]].isnan().any())
    assert float(y[4, -1]) == pytest.approx(1.0)
    assert_matches(run(x[::2]), x[::2])


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("N", [32768, 32769, 100003, 151936, 262144])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_scale_mask_causal(N, dtype, log):
    """Against two_pass: a positive scale (16-bit rows held packed, scaled at the end), a negative one (held in
    fp32), a keep-mask (of x's shape, and one a byte off x's grid: read a byte at a time), a causal mask (M = 5
    queries: the rows are cut near their end), aligned rows and not."""
    x, _ = fresh_randn(5, N, dtype=dtype)
    x[3] -= 300  # with half of it masked, the CTAs of that half hold only -inf: 2^(0 − max) would overflow there
    wider = torch.rand(5, N + 1, device=x.device) > 0.3
    wider[2] = False
    wider[3, : N // 2 + 1] = False
    keep, keep_off_grid = wider[:, :N].contiguous(), wider[:, 1:]
    call = softmax_bench.log_softmax if log else softmax_bench.softmax
    for scale in (0.125, -0.5):
        for kwargs in ({"scale": scale}, {"scale": scale, "mask": keep}, {"scale": scale, "causal": True},
                       {"mask": keep}, {"mask": keep_off_grid}, {"scale": scale, "mask": keep, "causal": True},
                       {"causal": True}):
            y = call(x, variant="cluster", **kwargs)
            expected = call(x, variant="two_pass", **kwargs)
            torch.testing.assert_close(y.double(), expected.double(), atol=TOL[dtype][0], rtol=TOL[dtype][1],
                                       msg=lambda m: f"{kwargs}: {m}")


@on_gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("N", [32768, 131072, 151936])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_the_packed_mask_select_is_the_element_select_bit_for_bit(N, dtype, log, monkeypatch):
    """cluster.MASK_PACKED (four 16-bit values selected by their mask bytes at once) against the element select it
    would replace: the same bits, with and without a scale and a causal mask, rows masked everywhere included."""
    x, _ = fresh_randn(5, N, dtype=dtype)
    keep = torch.rand(5, N, device=x.device) > 0.3
    keep[2] = False
    keep[3, : N // 2 + 3] = False
    call = softmax_bench.log_softmax if log else softmax_bench.softmax
    for kwargs in ({"mask": keep}, {"scale": 0.125, "mask": keep}, {"scale": 0.125, "mask": keep, "causal": True}):
        monkeypatch.setattr(cluster, "MASK_PACKED", False)
        clear_caches()  # a call like an earlier one replays its launch
        expected = call(x, variant="cluster", **kwargs)
        monkeypatch.setattr(cluster, "MASK_PACKED", True)
        clear_caches()
        assert torch.equal(call(x, variant="cluster", **kwargs).view(torch.int16), expected.view(torch.int16)), kwargs
    clear_caches()


@on_gpu
@pytest.mark.parametrize("phased", [True, False], ids=["phased", "unphased"])
@pytest.mark.parametrize("N", [32768, 32769])
@pytest.mark.parametrize("mask_shape", [(2, 1, 1), (1, 1, 4), (1, 3, 1)], ids=str)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_a_shared_mask_is_read_where_it_is(N, mask_shape, log, phased, monkeypatch):
    """A mask broadcast over x's leading dims (a key-padding [B, 1, 1, S], one [S, S] over the batch, a row a head)
    is read by each row where it lies, not written out to x's rows first: on rows on the 16-byte grid (its bytes
    of a vector in one load), and off it in phase copies (cluster.PHASED_SHARED_ROWS: each row's copy on its own
    grid), the result is the expanded mask's, bit for bit. Off the grid without them it is read a byte at a time,
    and held in fp32 where the expanded mask's rows are held packed (a softmax's exponentials then differ in their
    last bit, and so at times does a log's sum: an H100 found one such log_softmax, the seventy-third session; the
    result is checked against float64)."""
    monkeypatch.setattr(cluster, "PHASED_SHARED_ROWS", phased)
    monkeypatch.setattr(cluster, "PHASED_FROM_ROWS", {"mask": 1, "bias": 1})  # 6 to 12 rows of x a shared row here
    clear_caches()  # a call like an earlier one replays its launch
    x, _ = fresh_randn(2, 3, 4, N, dtype=torch.bfloat16)
    keep = torch.rand(*mask_shape, N, device=x.device) > 0.3
    keep[..., 0] = True
    call = softmax_bench.log_softmax if log else softmax_bench.softmax
    y = call(x, scale=0.125, mask=keep, variant="cluster")
    expanded = call(x, scale=0.125, mask=keep.expand(x.shape).contiguous(), variant="cluster")
    if N % vector_elems(x.dtype) == 0 or phased:
        assert torch.equal(y, expanded)
    z = (x.double() * 0.125).masked_fill(~keep, float("-inf"))
    reference = (torch.log_softmax if log else torch.softmax)(z, dim=-1)
    torch.testing.assert_close(y.double(), reference, atol=TOL[x.dtype][0], rtol=TOL[x.dtype][1])
    clear_caches()


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("phased_fp32", [False, True], ids=["as-launched", "fp32-phased"])
def test_a_shared_bias_off_the_grid_gives_the_expanded_bias_result(dtype, log, phased_fp32, monkeypatch):
    """A [B, 1, 1, S] bias over rows of N = 32769 (off x's 16-byte grid), 64 rows of x a row of it: laid out in
    phase copies under 16-bit x (cluster.phases_wanted), read a row where it lies under fp32 x, or in phase copies
    there too (cluster.PHASED_BIAS_ITEMSIZES with 4). The result is the expanded bias's, bit for bit (the same
    configuration, the same vectors of it), and within the dtype's tolerance of float64."""
    if phased_fp32:
        monkeypatch.setattr(cluster, "PHASED_BIAS_ITEMSIZES", (2, 4))
    N = 32769
    x, _ = fresh_randn(2, 4, 16, N, dtype=dtype)
    bias = torch.randn(2, 1, 1, N, device=x.device).to(dtype)
    call = softmax_bench.log_softmax if log else softmax_bench.softmax
    y = call(x, scale=0.125, bias=bias, variant="cluster")
    assert torch.equal(y, call(x, scale=0.125, bias=bias.expand(x.shape).contiguous(), variant="cluster"))
    z = x.double() * 0.125 + bias.double()
    reference = (torch.log_softmax if log else torch.softmax)(z, dim=-1)
    torch.testing.assert_close(y.double(), reference, atol=TOL[dtype][0], rtol=TOL[dtype][1])
    clear_caches()


@on_gpu
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shared", ["mask", "mask-bits", "bias"])
def test_a_call_with_phase_copies_is_replayed_with_copies_of_its_own(shared, log, monkeypatch):
    """A launch that lays a shared mask or bias out in phase copies (bf16 rows of N = 32769, 64 a shared row; the
    mask's in bits under cluster.MASK_BITS) is kept as a plan at its second call (softmax_bench.replay: the copies a
    buffer each replayed call allocates, their kernel one of its launches), and a call with new values of the mask
    or bias replays it: the result is the long way's, bit for bit."""
    monkeypatch.setattr(cluster, "MASK_BITS", shared == "mask-bits")
    clear_caches()
    N = 32769
    x, _ = fresh_randn(2, 64, N, dtype=torch.bfloat16)

    def fused():
        if shared == "bias":
            return {"bias": torch.randn(2, 1, N, device=x.device).to(torch.bfloat16)}
        keep = torch.rand(2, 1, N, device=x.device) > 0.3
        keep[..., 0] = True
        return {"mask": keep}

    call = softmax_bench.log_softmax if log else softmax_bench.softmax
    first = fused()
    for _ in range(2):  # called once, then recorded
        call(x, scale=0.125, variant="cluster", **first)
    (plan,) = replay.PLANS.values()
    assert getattr(plan, "scratch", ()), "the copies are not the plan's scratch"
    other = fused()
    replayed = call(x, scale=0.125, variant="cluster", **other)
    assert len(replay.PLANS) == 1
    clear_caches()
    assert torch.equal(replayed, call(x, scale=0.125, variant="cluster", **other))
    clear_caches()


@on_gpu
@pytest.mark.parametrize("log, size, N", [(log, size, N) for log, table in ((False, cluster.SHARED_BIASED),
                                                                          (True, cluster.SHARED_BIASED_LOG))
                                          for size, entries in table.items() for N in entries], ids=str)
def test_a_shared_bias_in_its_own_configuration_gives_the_float64_result(log, size, N):
    """Each of cluster.SHARED_BIASED's entries (and SHARED_BIASED_LOG's, the log's), launched as a [B, 1, S] bias
    64 rows of x share: within the dtype's tolerance of float64; the softmax's rows sum to 1."""
    from .test_bias import reference

    dtype = {2: torch.bfloat16, 4: torch.float32}[size]
    x, _ = fresh_randn(2, 64, N, dtype=dtype)
    bias = torch.randn(2, 1, N, device=x.device).to(dtype)
    y = (softmax_bench.log_softmax if log else softmax_bench.softmax)(x, scale=0.125, bias=bias, variant="cluster")
    torch.testing.assert_close(y.double().cpu(), reference(x, bias, 0.125, log=log), atol=TOL[dtype][0],
                               rtol=TOL[dtype][1])
    if not log:  # each element within rtol · y of the truth, whose row sums to 1: so does the row, within rtol
        sums = y.double().sum(-1)
        torch.testing.assert_close(sums, torch.ones_like(sums), atol=TOL[dtype][1], rtol=0)
    clear_caches()


@on_gpu
@pytest.mark.parametrize("heads, expected_copies", [(1, 0), (16, 1)], ids=["12-rows-a-row", "192-rows-a-row"])
def test_a_launch_makes_phase_copies_only_where_32_rows_of_x_share_a_mask_row(heads, expected_copies, monkeypatch):
    """cluster.PHASED_FROM_ROWS at the launch: a [B, 1, 1, S] keep-mask off x's grid (N = 32769) over 12 rows of x
    a row of it is read where it lies, over 192 laid out in phase copies (masking.phased, called once a call), as the
    traffic model counts; either way the result is within the tolerance of float64."""
    calls = []
    real = cluster.phased
    monkeypatch.setattr(cluster, "phased", lambda *args: calls.append(args) or real(*args))
    clear_caches()  # a call like an earlier one replays its launch
    N = 32769
    x, _ = fresh_randn(2, 12, heads, N, dtype=torch.bfloat16)
    keep = torch.rand(2, 1, 1, N, device=x.device) > 0.3
    keep[..., 0] = True
    y = softmax_bench.softmax(x, scale=0.125, mask=keep, variant="cluster")
    assert len(calls) == expected_copies
    reference = torch.softmax((x.double() * 0.125).masked_fill(~keep, float("-inf")), dim=-1)
    torch.testing.assert_close(y.double(), reference, atol=TOL[x.dtype][0], rtol=TOL[x.dtype][1])
    clear_caches()


def test_a_shared_mask_in_bits_lays_out_an_eighth_of_the_byte_copies(monkeypatch):
    """cluster.MASK_BITS (off until a GPU has run it): a forward's shared byte mask off the grid of 16-bit x is laid
    out in phase copies of bits (masking.phased_bits), counted in the traffic at an eighth of the byte copies' bytes,
    held packed in the byte copies' configuration, read in vectors as MASK_BITS; the launch records it. The log's
    backward and fp32 x keep the byte copies. (128 rows: the copies are made in the interpreter.)"""
    M, N, dtype = 128, 50257, torch.bfloat16
    fusion = Fusion(scale=0.125, mask=torch.ones(M // 64, N, dtype=torch.uint8), mask_group=64)
    copied = cluster.laid_out(fusion, N, dtype, M)
    assert copied.mask_phased and not copied.mask_bits and not cluster.mask_in_bits(fusion, N, dtype, M)
    monkeypatch.setattr(cluster, "MASK_BITS", True)
    in_bits = cluster.laid_out(fusion, N, dtype, M)
    assert in_bits.mask_phased and in_bits.mask_bits
    assert in_bits.mask.dtype == torch.uint8 and in_bits.mask.shape == (M // 64 * 8, (N + 8 + 127) // 128 * 16)
    assert cluster.phase_settings(in_bits) == {"phased": "mask-bits"}
    assert cluster.phase_settings(copied) == {"phased": "mask"}
    floor = cluster.one_pass_traffic(M, N, dtype, fusion).total_bytes
    assert cluster.traffic(M, N, dtype, fusion).total_bytes == floor + 2 * (M // 64) * N  # 8 copies of N bits
    assert cluster.holding(dtype, in_bits, N) == cluster.holding(dtype, copied, N) == "packed"
    config = cluster.config_for(N, dtype, in_bits)
    assert config == cluster.config_for(N, dtype, copied)
    constexprs = cluster.kernel_constexprs(config, N, dtype, False, in_bits)
    assert constexprs["MASK_BITS"] and constexprs["MASK_PHASED"] and constexprs["MASK_VECTORS"]
    assert "MASK_BITS" not in cluster.kernel_constexprs(config, N, dtype, False, copied)
    assert not cluster.mask_in_bits(fusion, N, dtype)  # the log's backward (M None): its byte copies
    assert not cluster.mask_in_bits(fusion, N, torch.float32, M)  # fp32 x: 4 lanes a vector, its byte copies
    assert not cluster.mask_in_bits(fusion, 50256, dtype, M)  # on the grid: no copies at all


@pytest.mark.parametrize("by_kernel", [True, False], ids=["kernel", "torch"])
def test_phase_copies_in_bits_are_the_byte_copies_packed(by_kernel, monkeypatch):
    """masking.phased_bits: bit i of byte v of copy k · 8 + j is byte 8v + i of phased_rows' copy (the shared row k
    shifted j columns into zeros), and the bytes past the byte copies' columns are 0: from phase_bits_kernel (in the
    interpreter on CPU), and from torch where no kernel runs (a CPU tensor outside the interpreter); at N = 50257,
    rows shorter than a vector, and all ones."""
    from softmax_bench.kernels import masking

    device = DEVICE if by_kernel else "cpu"
    if not by_kernel:
        monkeypatch.setattr(masking, "interpreted", lambda: False)
    for G, N, ones in ((3, 50257, False), (2, 5, False), (2, 121, True), (1, 1, True)):
        rows = (torch.ones(G, N, dtype=torch.uint8, device=device) if ones
                else (torch.rand(G, N, device=device) > 0.4).to(torch.uint8))
        bits = masking.phased_bits(rows)
        copies = masking.phased_rows(rows, 8)
        assert bits.shape[1] % 16 == 0 and bits.shape[0] == copies.shape[0] == 8 * G
        unpacked = ((bits[:, :, None] >> torch.arange(8, device=device)) & 1).reshape(8 * G, -1)
        assert torch.equal(unpacked[:, :copies.shape[1]], copies), (G, N)
        assert not unpacked[:, copies.shape[1]:].any(), (G, N)
    with pytest.raises(ValueError, match="vectors of 8"):
        masking.phased_bits(rows, 4)


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
def test_a_shared_mask_in_bits_compiles_in_the_registers_of_its_byte_copies(tmp_path):
    """cluster.MASK_BITS, compiled for sm_90: key-padded bf16 50257's forward and log read one byte of bits a vector
    (17 byte loads: 16 vectors and the end vectors' one, where the byte copies read 8 bytes a vector) in the byte
    copies' CTAs and warps, the same shared memory, no spill, at most 4 registers more (Triton 3.8: 109 → 112, its
    log 106 → 105), and at most 6 SASS instructions a vector more (1928 → 2008, its log 1704 → 1784: a vector's
    two selects from its bits an and and a multiply more than SELECT_PACKED's from bytes)."""
    base = {"kernel": "forward", "dtype": "bf16", "N": 50257, "mask": True, "shared": True, "scale": 0.125}
    cases = [{**base, **log, **bits} for log in ({}, {"log": True}) for bits in ({}, {"mask_bits": True})]
    compiled = compile_in_subprocess(cases, tmp_path)
    for (copied, in_bits), case in zip((compiled[:2], compiled[2:]), cases[::2]):
        assert in_bits["spill_bytes"] == copied["spill_bytes"] == 0, (copied, in_bits)
        assert in_bits["shared_bytes"] == copied["shared_bytes"], (copied, in_bits)
        assert (in_bits["ctas"], in_bits["warps"]) == (copied["ctas"], copied["warps"]), (copied, in_bits)
        assert in_bits["registers"] <= copied["registers"] + 4, (copied, in_bits)
        assert in_bits["byte_loads"] == 17 and copied["byte_loads"] == 1, (copied, in_bits)
        sass = [len(sass_instructions(sass_of(c, tmp_path))) for c in (case, {**case, "mask_bits": True})]
        assert sass[0] < sass[1] <= sass[0] + 6 * 16, sass


@on_gpu
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("N", [50257, 32771])
def test_a_shared_mask_in_bits_gives_the_bits_of_its_byte_copies(N, dtype, log, monkeypatch):
    """cluster.MASK_BITS: a [B, 1, 1, S] keep-mask off x's grid, 64 rows of x a row of it, a row of it masking out
    everything: the same bits from its phase copies in bits as from its byte copies, within the tolerance of float64,
    the rows masked out whole zeros (-inf for the log); held packed (a scale > 0) and in fp32 (a scale < 0); the
    launch records its copies in bits."""
    x, _ = fresh_randn(2, 4, 16, N, dtype=dtype)
    keep = torch.rand(2, 1, 1, N, device=x.device) > 0.3
    keep[1] = False
    for scale in (0.125, -0.5):
        call = lambda: (softmax_bench.log_softmax if log else softmax_bench.softmax)(  # noqa: E731
            x, scale=scale, mask=keep, variant="cluster")
        same_bits_switched(monkeypatch, cluster, ["MASK_BITS"], call)
        monkeypatch.setattr(cluster, "MASK_BITS", True)
        clear_caches()
        reference = (torch.log_softmax if log else torch.softmax)(
            (x.double() * scale).masked_fill(~keep, float("-inf")), dim=-1)
        y = call()
        torch.testing.assert_close(y[0].double(), reference[0], atol=TOL[x.dtype][0], rtol=TOL[x.dtype][1])
        assert bool((y[1] == (float("-inf") if log else 0.0)).all())  # rows masked out whole: zeros (-inf), not NaN
    rows = x.reshape(-1, N)
    fusion = Fusion(scale=0.125, mask=keep.reshape(2, N).to(torch.uint8), mask_group=64)
    assert cluster.launch(rows, fusion)[1].config["phased"] == "mask-bits"
    clear_caches()


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
def test_shared_rows_kept_in_l2_are_read_evict_last_and_hold_no_more_registers(tmp_path):
    """cluster.KEEP_SHARED_ROWS, compiled for sm_90: a key-padding mask's (bf16 262144) and a shared bias's (bf16
    32768) loads are evict_last, as x's are, in the same registers and spills; off, only x's are."""
    cases = [{"kernel": "forward", "dtype": "bf16", "N": N, "scale": 0.125, **form, "shared": True, "keep_shared": on}
             for N, form in ((262144, {"mask": True}), (32768, {"bias": True})) for on in (False, True)]
    mask_off, mask_on, bias_off, bias_on = compile_in_subprocess(cases, tmp_path)
    for off, on in ((mask_off, mask_on), (bias_off, bias_on)):
        assert off["evict_last_loads"] > 0 and on["evict_last_loads"] == 2 * off["evict_last_loads"], (off, on)
        assert (on["registers"], on["spill_bytes"]) == (off["registers"], off["spill_bytes"]), (off, on)


@on_gpu
@pytest.mark.parametrize("N", [32768, 32769])
def test_shared_rows_read_evict_last_change_no_bit(N, monkeypatch):
    """cluster.KEEP_SHARED_ROWS changes where a shared mask or bias row stays cached, not the result: on rows on the
    16-byte grid and off it, a key-padding mask and a [B, 1, 1, S] bias give the same bits either way."""
    x, _ = fresh_randn(2, 3, 4, N, dtype=torch.bfloat16)
    keep = torch.rand(2, 1, 1, N, device=x.device) > 0.3
    keep[..., 0] = True
    bias = torch.randn(2, 1, 1, N, device=x.device).to(x.dtype)
    for kwargs in ({"mask": keep}, {"bias": bias}):
        same_bits_switched(monkeypatch, cluster, ["KEEP_SHARED_ROWS"],
                           lambda: softmax_bench.softmax(x, scale=0.125, variant="cluster", **kwargs))
    clear_caches()


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("N", [32768, 50257, 151936])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_a_bias_against_float64(N, dtype, log):
    """A bias of x's shape on x's grid (read in vectors) and one element off it (element by element), a row of it
    for every row, one shared by a head's queries ([B, 1, 1, S]); beside a mask and causal; transformers' additive
    mask (the dtype's minimum) masking as -inf does; a row biased to -inf everywhere zeros (-inf)."""
    from .test_bias import reference

    x, _ = fresh_randn(2, 3, 4, N, dtype=dtype)
    wide = torch.randn(2, 3, 4, N + 1, device=x.device).to(dtype)
    full, off_grid = wide[..., :N].contiguous(), wide[..., 1:]
    full[0, 1, 2] = float("-inf")
    keep = torch.rand(2, 3, 4, N, device=x.device) > 0.3
    additive = torch.zeros_like(full).masked_fill(~keep, torch.finfo(dtype).min)
    call = softmax_bench.log_softmax if log else softmax_bench.softmax
    causal = torch.arange(N, device=x.device) <= torch.arange(4, device=x.device)[:, None] + N - 4
    cases = [({"bias": full}, None), ({"bias": off_grid}, None),
             ({"bias": full[:, :, :1, :1].expand(2, 3, 1, N)}, None), ({"bias": full[:, :1, :1]}, None), ({"bias": full, "mask": keep}, keep), ({"bias": additive}, None),
             ({"bias": full, "causal": True}, causal)]
    for number, (kwargs, kept) in enumerate(cases):
        y = call(x, scale=0.125, variant="cluster", **kwargs)
        expected = reference(x, kwargs["bias"], 0.125, kept, log)
        torch.testing.assert_close(y.double().cpu(), expected, atol=TOL[dtype][0], rtol=TOL[dtype][1],
                                   msg=lambda m: f"case {number}: {m}")


def under_switches(monkeypatch, settings: list[dict], call, x, **kwargs) -> list[torch.Tensor]:
    """call(x, variant="cluster", **kwargs) once under each of `settings` (cluster's switches: name → value), the
    caches cleared before each (a call like an earlier one replays its launch)."""
    results = []
    for setting in settings:
        for name, value in setting.items():
            monkeypatch.setattr(cluster, name, value)
        clear_caches()
        results.append(call(x, variant="cluster", **kwargs))
    clear_caches()
    return results


@on_gpu
@pytest.mark.parametrize("N", [16400, 50257, 151936])
@pytest.mark.parametrize("vectors", ["all", "none"])
def test_a_positive_scale_needs_no_select_after_it(N, vectors, monkeypatch):
    """cluster.POSITIVE_SCALES: fp32-held rows whose masked loads gave -inf (off the 16-byte grid, causal) skip the
    select after a positive scale: bit for bit what the select gives, causal (by vectors and by elements), masked,
    scaled, softmax and log_softmax; a negative scale keeps its select (and its result)."""
    x, _ = fresh_randn(96, N, dtype=torch.float32)
    keep = torch.rand(96, N, device="cuda") > 0.2
    monkeypatch.setattr(cluster, "CAUSAL_VECTORS", vectors)
    for call in (softmax_bench.softmax, softmax_bench.log_softmax):
        for kwargs in ({"causal": True, "scale": 0.125}, {"mask": keep, "scale": 0.125}, {"scale": 0.5},
                       {"causal": True, "scale": -0.5}):
            settings = [{"POSITIVE_SCALES": False}, {"POSITIVE_SCALES": True}]
            assert torch.equal(*under_switches(monkeypatch, settings, call, x, **kwargs)), kwargs


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
def test_a_threads_loads_stay_apart_without_the_selects_predicates(tmp_path):
    """Compiled for sm_90 (ptxas, then cuobjdump): each 16-byte load of a thread gets registers of its own, so all
    are in flight at once. The cases are fp32 causal rows of 151936, whose loads are masked, with a positive scale
    and no select after it (POSITIVE_SCALE); with the select, ptxas put 19 loads into 4 register sets. And fp32
    scaled-masked rows of 50257 with the keep-mask blended as bits (MASK_BLEND); with its compares and selects, 7
    loads went into 4 register sets."""
    cases = [{"kernel": "forward", "dtype": "fp32", "N": 151936, "scale": 0.125, "causal": True,
              "positive_scale": True},
             {"kernel": "forward", "dtype": "fp32", "N": 50257, "scale": 0.125, "mask": True, "mask_blend": True}]
    for case, compiled in zip(cases, compile_in_subprocess(cases, tmp_path)):
        sass = sass_of(case, tmp_path)
        destinations = re.findall(r"LDG\.E(?:\.EL)?\.128 (R\d+)", sass)  # .EL: evict_last
        assert len(destinations) == compiled["loads_v4"] > 4, case
        assert len(set(destinations)) == len(destinations), (case, destinations)


def test_a_log_softmax_cap_holds_only_in_the_configuration_it_was_measured_in():
    """cluster.LOG_REGISTERS' caps were measured on fp32 rows. A bf16 row with a bias is held in fp32 too, but in
    BIASED's 16-bit configurations: there config_for leaves its log uncapped (bf16 128256 under fp32's cap of 56
    spilled 96 bytes: test_no_cluster_forward_of_the_grid_spills_but_where_known). A bf16 causal row held in fp32 (a
    negative scale) runs in fp32's configuration and takes its cap."""
    for dtype, N in ((torch.bfloat16, 50257), (torch.bfloat16, 128256)):
        fusion = replace(fused_form("biased", N, dtype), log=True)
        assert cluster.holding(dtype, fusion, N) == "fp32"
        assert cluster.config_for(N, dtype, fusion).max_registers is None, N
    assert cluster.config_for(128256, torch.bfloat16, Fusion(scale=-0.5, causal_m=7, log=True)).max_registers == 112


# The cluster forwards of the default grid's widths that spill under config_for, with the bytes they spill (compiled
# for sm_90; on the H200 the first two cells are ≥ 92 % of their roofline: scaled-masked-h200-h, causal-log-h200-e;
# bf16 causal 151936 under DIAGONAL_STORE_AT's cap 96.9, diag-new-h200-2). The key-padding mask's bf16 262144 spills
# under the full mask's cap of 80 (REGISTERS): not yet timed on a GPU in this launch (docs/perf-notes.md, sixty-sixth
# session).
GRID_SPILLS = {("masked", False, "fp32", 151936): 8, ("causal", True, "bf16", 262144): 8,
               ("causal", False, "bf16", 151936): 12, ("causal", True, "bf16", 151936): 12,
               ("key-padded", False, "bf16", 262144): 16,
               # cluster.SHARED_BIASED's 16 × 4 capped at 168: three CTAs an SM, 96.6 against 84.8 where it did not
               ("biased rows/64", False, "fp32", 262144): 32,
               # its 8 × 16 capped at 64, two pieces: 86.4 against 79.2 in 8 × 8 (120 registers)
               ("biased rows/64", False, "bf16", 151936): 16,
               # its log in SHARED_BIASED_LOG's same entry: 87.4 against 77.6 in BIASED's 8 × 8
               ("biased rows/64", True, "bf16", 151936): 8}
# FORM_FIELDS and the broadcast forms the bar covers too: a mask row (--op key-padded) or a bias row (--op biased
# --mask-shape rows/64) shared by 64 rows
GRID_FORMS = {**FORM_FIELDS, "key-padded": {"scale": 0.125, "mask": True, "shared": True},
              "biased rows/64": {"scale": 0.125, "bias": True, "shared": True}}


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
@pytest.mark.parametrize("form", GRID_FORMS)
def test_no_cluster_forward_of_the_grid_spills_but_where_known(form, tmp_path):
    """Every form's cluster forward, softmax and log_softmax, bf16 and fp32, at the default grid's cluster widths, in
    config_for's configuration (its caps and loads) compiled for sm_90: none spills but GRID_SPILLS' cells, by their
    bytes. A cap measured in one configuration and applied in another spilled unseen (bf16 biased 128256's log: 96
    bytes under fp32's cap, 98.0 → 88.6 % of its roofline on the H200; docs/perf-notes.md, thirty-second session)."""
    fields = GRID_FORMS[form]
    cells = [(form, log, dtype, N) for log in (False, True) for dtype in ("bf16", "fp32")
             for N in (16384, 32768, 50257, 65536, 128256, 131072, 151936, 262144)]
    cases = [{"kernel": "forward", "dtype": dtype, "N": N, **fields, **({"log": True} if log else {})}
             for _, log, dtype, N in cells]
    spills = {cell: case["spill_bytes"] for cell, case in zip(cells, compile_in_subprocess(cases, tmp_path))
              if case["spill_bytes"]}
    assert spills == {cell: spilled for cell, spilled in GRID_SPILLS.items() if cell[0] == form}


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
def test_a_biased_rows_loads_are_in_flight_at_once(tmp_path):
    """Compiled for sm_90 (ptxas, then cuobjdump): bf16 rows with a bf16 bias, x · 0.125 + bias held in fp32, in 8
    CTAs of 8 warps, issue all their loads before reading any (BIAS_BLEND); with gl.where's predicates a wave of two
    or four, then a wait (65536: 4, 2, 2; 50257: 2, 2, 2, 2, 2). So does fp32 biased 128256's log_softmax under its
    LOG_REGISTERS cap (config_for's), where uncapped it waits after seven of its eight, and fp32 biased 50257 in
    BIASED's 16 × 8 under its cap of 80 (64 registers), where uncapped (58) it waits after six of its ten — the
    uncapped rows with plain loads, as the caps were measured (with evict_last, 128256's are all in flight at
    once uncapped too)."""
    cases = [{"kernel": "forward", "dtype": "bf16", "N": N, "scale": 0.125, "bias": True, "bias_blend": blend,
              "ctas": 8, "warps": 8} for N in (50257, 65536) for blend in (False, True)]
    cases += [{"kernel": "forward", "dtype": "fp32", "N": N, "scale": 0.125, "bias": True, "log": log, **uncapped}
              for N, log in ((128256, True), (50257, False)) for uncapped in ({"max_registers": None, "evict": ""}, {})]
    for case, compiled in zip(cases, compile_in_subprocess(cases, tmp_path)):
        waves = load_waves(sass_of(case, tmp_path))
        assert sum(waves) >= compiled["loads_v4"] > 4, (case, waves)
        assert (len(waves) == 1) == case.get("bias_blend", "max_registers" not in case), (case, waves)


@on_gpu
@pytest.mark.parametrize("N", [16400, 50257, 151936])
def test_a_keep_mask_blended_as_bits_selects_as_the_compare_does(N, monkeypatch):
    """cluster.MASK_BLEND_F32: an fp32-held row's keep-mask (on x's grid) applied as bits, bit for bit the compare
    and select's result: fp32 x and 16-bit x held in fp32 (a negative scale), softmax and log_softmax, with a
    causal mask, under POSITIVE_SCALES on and off. Only the blend changes between the two calls compared:
    POSITIVE_SCALES also decides whether fp32 causal rows of 50257 are read by vectors, whose diagonal's elements
    are summed after the CTA's reduction, in another order."""
    keep = torch.rand(96, N, device="cuda") > 0.2
    for dtype, scale in ((torch.float32, 0.125), (torch.bfloat16, -0.5)):
        x, seed = fresh_randn(96, N, dtype=dtype)
        for call in (softmax_bench.softmax, softmax_bench.log_softmax):
            for kwargs in ({"mask": keep, "scale": scale}, {"mask": keep, "scale": scale, "causal": True}):
                for positive in (False, True):
                    settings = [{"MASK_BLEND_F32": blend, "POSITIVE_SCALES": positive} for blend in (False, True)]
                    assert torch.equal(*under_switches(monkeypatch, settings, call, x, **kwargs)), \
                        (dtype, kwargs.keys(), positive, call.__name__, f"x's seed {seed}")


@on_gpu
@pytest.mark.parametrize("N", [50257, 65536, 151936])
def test_a_bias_floor_blended_as_bits_selects_as_the_compare_does(N, monkeypatch):
    """cluster.BIAS_BLEND: positions whose bias is at or below its dtype's minimum set to -inf as bits, bit for bit
    what gl.where gives (NaN for NaN): biases of each float dtype beside 16-bit and fp32 x, with entries at the
    minimum, just above it, -inf and NaN, a row at the minimum everywhere; softmax and log_softmax, causal too."""
    for dtype, bias_dtype in ((torch.bfloat16, torch.bfloat16), (torch.bfloat16, torch.float32),
                              (torch.float16, torch.float16), (torch.float32, torch.float32),
                              (torch.float32, torch.bfloat16)):
        x, seed = fresh_randn(64, N, dtype=dtype)
        bias = torch.randn(64, N, device="cuda").to(bias_dtype)
        low = torch.finfo(bias_dtype).min
        bias[::3, ::5] = low
        bits = torch.int32 if bias_dtype == torch.float32 else torch.int16
        bias[1::3, ::7] = torch.tensor([low], dtype=bias_dtype).view(bits).sub(1).view(bias_dtype).item()  # above it
        bias[2::3, 3::11] = float("-inf")
        bias[9] = low
        bias[5, 100] = float("nan")
        for call in (softmax_bench.softmax, softmax_bench.log_softmax):
            for kwargs in ({"bias": bias, "scale": 0.125}, {"bias": bias, "scale": 0.125, "causal": True}):
                settings = [{"BIAS_BLEND": blend} for blend in (False, True)]
                where, blended = under_switches(monkeypatch, settings, call, x, **kwargs)
                torch.testing.assert_close(blended, where, rtol=0, atol=0, equal_nan=True,
                                           msg=lambda m: f"{dtype} x, {bias_dtype} bias, {call.__name__}, "
                                                         f"{kwargs.keys()}, x's seed {seed}: {m}")
                assert bool(where[5].isnan().all()) and not bool(where[[4, 6]].isnan().any())
                masked_out = float("-inf") if call is softmax_bench.log_softmax else 0.0
                assert bool((where[9] == masked_out).all())


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
def test_causal_rows_cut_early(dtype):
    """9000 queries over 9004 keys: row r keeps r + 5 columns, so the CTAs past an early row's cut read nothing
    (all -inf: zeros), and the cut falls inside a CTA's span and inside a 16-byte vector."""
    x, _ = fresh_randn(9000, 9004, dtype=dtype)
    for call in (softmax_bench.softmax, softmax_bench.log_softmax):
        y = call(x, variant="cluster", causal=True, scale=0.125)
        expected = call(x, variant="two_pass", causal=True, scale=0.125)
        torch.testing.assert_close(y[::7].double(), expected[::7].double(), atol=TOL[dtype][0], rtol=TOL[dtype][1])


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("shape", [(16393, 16400), (64, 32769), (64, 65536), (64, 100003), (64, 131072),
                                   (64, 151936), (64, 262144)], ids=str)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_causal_rows_by_vectors_match_float64(shape, dtype, log, monkeypatch):
    """cluster.CAUSAL_VECTORS: causal rows cut everywhere (16393 queries over 16400 keys: row r keeps r + 8
    columns, across CTAs' spans and at every offset in a vector) and near the end of wide rows (64 queries), aligned
    and not; plain, with a scale of 0 or a negative one (held in fp32), a keep-mask and a bias. Against float64:
    within the tolerance, 99.9 % of the elements the float64 result rounded once (16-bit), and exactly 0 (-inf)
    past the diagonal; the element select's result alike but for the rounding. 65536 and 131072 are split evenly
    over their CTAs (EVEN), whose plain loads are unmasked. The element select of rows of 262144 held in fp32 is
    cluster.LEAN_CAUSAL_AT's, the causal mask alone: the lanes it does not load hold -inf, or, times a scale of 0
    or a negative one, NaN or +inf, which it must catch too. With DIAGONAL_STORE (the pieces store the vector the
    diagonal cuts, then the end vectors do, after a barrier) at every width, bit for bit what it gives without."""
    Q, N = shape
    generator = torch.Generator(device="cuda").manual_seed(Q * N)
    x = torch.randn(Q, N, device="cuda", generator=generator).to(dtype)
    keep = torch.rand(Q, N, device="cuda", generator=generator) > 0.2
    bias = torch.randn(Q, N, device="cuda", generator=generator).to(dtype)
    rows = torch.arange(0, Q, 13 if Q > 1000 else 1, device="cuda")
    kept = torch.arange(N, device="cuda")[None, :] <= rows[:, None] + (N - Q)
    call = softmax_bench.log_softmax if log else softmax_bench.softmax
    for kwargs, where in (({}, kept), ({"scale": 0.0}, kept), ({"scale": -0.5}, kept),
                          ({"scale": 0.125, "mask": keep}, kept & keep[rows]), ({"scale": 0.125, "bias": bias}, kept)):
        y, element, stored = (out[rows] for out in under_switches(
            monkeypatch, [{"CAUSAL_VECTORS": "all", "DIAGONAL_STORE_AT": {}}, {"CAUSAL_VECTORS": "none"},
                          {"CAUSAL_VECTORS": "all", "DIAGONAL_STORE_AT": {dtype: frozenset({N})}}],
            call, x, causal=True, **kwargs))
        assert torch.equal(stored, y), f"{kwargs}: the diagonal's vector stored twice writes what it wrote once"
        z = x[rows].double() * kwargs.get("scale", 1.0) + (bias[rows].double() if "bias" in kwargs else 0.0)
        z = z.masked_fill(~where, float("-inf"))
        expected = torch.log_softmax(z, -1) if log else torch.softmax(z, -1)
        for got in (y, element):
            torch.testing.assert_close(got.double(), expected, atol=TOL[dtype][0], rtol=TOL[dtype][1],
                                       msg=lambda m: f"{kwargs}: {m}")
            assert bool((got[~where] == (float("-inf") if log else 0.0)).all()), kwargs
        if dtype != torch.float32 and not log:
            share = (y == expected.to(dtype)).double().mean().item()
            assert share >= 0.999, f"{kwargs}: {share:.3%} of the elements equal the result rounded once"


TOL = {torch.float32: (1e-6, 1e-5), torch.bfloat16: (8e-3, 1.6e-2), torch.float16: (1e-3, 2e-3)}


@pytest.mark.parametrize("N, queries, reversed_", [(16384, 8192, True), (16384, 4096, False), (32768, 4096, False),
                                                   (151936, 2048, False), (4000, 4096, True)])
def test_causal_rows_run_last_to_first_where_their_kept_shares_differ_by_more_than_a_quarter(N, queries, reversed_):
    """cluster.HEAVIEST_FIRST: measured faster where rows keep N − queries … N columns with queries > N / 4 (bf16
    8192×16384 93.4 → 95.6 % of a copy), within ±1.2 % where they keep 84 % of N or more: reversed only there."""
    from softmax_bench.kernels.masking import rows_differ

    causal = Fusion(scale=0.125, causal_m=queries)
    assert rows_differ(queries, N) == reversed_
    if N >= cluster.MIN_N:
        config = cluster.config_for(N, torch.bfloat16, causal)
        assert cluster.kernel_constexprs(config, N, torch.bfloat16, True, causal).get("REVERSED", False) == reversed_
    assert "REVERSED" not in cluster.kernel_constexprs(cluster.config_for(16384, torch.bfloat16), 16384,
                                                        torch.bfloat16, True)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_phase_copies_put_each_rows_shared_row_on_its_grid(dtype):
    """masking.phased_rows, as cluster lays out a shared mask and bias off x's grid (N = 50257): the copy a row of x
    takes (cluster's row_of, PHASED: copy (r · N) mod VEC of its shared row) holds that row, element c as far past a
    16-byte boundary, in the copy's elements, as x's element c is in x's: a vector of x has its mask or bias in
    one vector; the columns around it hold zeros."""
    from softmax_bench.kernels.masking import phased_rows

    M, N, group, vec = 256, 50257, 64, vector_elems(dtype)
    x = torch.empty(M, N, dtype=dtype)
    for rows in (torch.rand(M // group, N) > 0.5, torch.randn(M // group, N).to(dtype),
                 torch.randn(M // group, 2 * N).to(dtype)[:, ::2]):  # (a row's elements 2 apart)
        copies = phased_rows(rows.view(torch.uint8) if rows.dtype == torch.bool else rows, vec)
        assert copies.stride(0) % vec == 0 and copies.stride(0) * copies.element_size() % 16 == 0
        for r in range(0, M, 7):
            copy = copies[(r // group) * vec + (r * N) % vec, (r * N) % vec:][:N]
            assert torch.equal(copy, rows[r // group].view(copy.dtype))
            x_phase = (x[r].data_ptr() - x.data_ptr()) // x.element_size() % vec
            copy_phase = (copy.data_ptr() - copies.data_ptr()) // copies.element_size() % vec
            assert copy_phase == x_phase, r
        for k in range(copies.shape[0]):  # copy k holds its shared row from column k mod vec, zeros around it
            shift = k % vec
            assert not copies[k, :shift].any() and not copies[k, shift + N:].any(), k


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32], ids=str)
def test_phase_copies_read_as_words_are_the_copies_read_an_element_at_a_time(dtype, monkeypatch):
    """masking.phase_copies_words_kernel (rows contiguous, 8-byte aligned, a whole number of 8 bytes: a funnel shift
    of two aligned words a word of copy) makes the copies phase_copies_kernel makes an element at a time, and both
    are the shared row shifted into zeros: at every byte offset of a row (N · size mod 8), the first row's copies
    starting before it, rows shorter than a word. Rows not a whole number of words are copied an element at a time."""
    from softmax_bench.kernels import masking

    monkeypatch.setattr(masking, "COPIES_BY_WORDS", True)
    for G, N in ((8, 50257), (8, 1001), (16, 3), (8, 40)):
        rows = (torch.randint(0, 256, (G, N), dtype=torch.uint8, device=DEVICE) if dtype == torch.uint8
                else torch.randn(G, N, device=DEVICE).to(dtype))
        assert masking.copies_by_words(rows)
        for vec in (4, 8):
            by_words = masking.phased_rows(rows, vec)
            with monkeypatch.context() as elementwise:
                elementwise.setattr(masking, "COPIES_BY_WORDS", False)
                by_elements = masking.phased_rows(rows, vec)
            L = by_words.shape[1]
            expected = torch.zeros(G, vec, L, dtype=dtype, device=DEVICE)
            for j in range(vec):
                expected[:, j, j:j + N] = rows
            assert torch.equal(by_words, expected.view(G * vec, L)), (G, N, vec)
            assert torch.equal(by_elements, by_words), (G, N, vec)
    odd = torch.ones(5, 51, dtype=torch.uint8, device=DEVICE)  # 255 bytes
    assert not masking.copies_by_words(odd) and not masking.copies_by_words(torch.ones(8, 80, device=DEVICE)[:, ::2])
    assert torch.equal(masking.phased_rows(odd, 8)[3, 3:54], odd[0])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_a_launch_lays_out_shared_rows_off_the_grid_in_phase_copies_a_bias_only_under_16_bit_x(dtype, monkeypatch):
    """cluster.phases_wanted: a shared mask off x's grid (N = 50257) in phase copies under any x, a shared bias only
    under 16-bit x (under fp32 its copies' bytes cost more than its elements' loads save: an H100, docs/perf-notes.md;
    under fp32 too where cluster.PHASED_BIAS_ITEMSIZES holds 4); neither on the grid, nor rows of x's own; in a
    forward, only a mask's rows that 32 rows of x share, a bias's that 64 share (fewer: the copies cost more than
    they save, cluster.PHASED_FROM_ROWS)."""
    shared, own = {"mask_group": 64, "bias_group": 64}, {}
    for N, form, wanted in ((50257, shared, (True, dtype != torch.float32)), (50256, shared, (False, False)),
                            (50257, own, (False, False))):
        fusion = Fusion(mask=torch.ones(2, N, dtype=torch.bool), bias=torch.zeros(2, N, dtype=dtype), **form)
        assert cluster.phases_wanted(fusion, N, dtype) == wanted, (N, form)
        assert cluster.phases_wanted(fusion, N, dtype, M=128) == wanted, (N, form)  # 64 rows of x a shared row
        # a forward over fewer rows a shared row reads them in place (cluster.PHASED_FROM_ROWS)
        assert cluster.phases_wanted(fusion, N, dtype, M=127) == (wanted[0], False), (N, form)
        assert cluster.phases_wanted(fusion, N, dtype, M=64) == (wanted[0], False), (N, form)  # 32 a shared row
        assert cluster.phases_wanted(fusion, N, dtype, M=63) == (False, False), (N, form)
    monkeypatch.setattr(cluster, "PHASED_BIAS_ITEMSIZES", (2, 4))
    fusion = Fusion(bias=torch.zeros(2, 50257, dtype=dtype), bias_group=64)
    assert cluster.phases_wanted(fusion, 50257, dtype, M=128) == (False, True)


@on_gpu
def test_a_launch_records_the_shared_rows_it_laid_out_in_phase_copies(monkeypatch):
    """A run's config column tells a phased launch from one in place where the configuration does not (fp32 biased
    rows/64 50257 takes 16 × 8 capped at 48 either way; bar-status.py compares it): `phased=bias` for a bias 64 of
    128 rows of bf16 x share off the grid, `phased=none` under fp32 x (and with the copies switched on for fp32,
    `phased=bias`), and no such setting where no rows are shared (a full bias, or none)."""
    def recorded(dtype: torch.dtype, bias_rows: int | None = 2) -> dict:  # None: no bias
        x = torch.randn(128, 50257, device="cuda", dtype=dtype)
        bias = None if bias_rows is None else torch.randn(bias_rows, 50257, device="cuda", dtype=dtype)
        fusion = Fusion(scale=0.125, bias=bias, bias_group=128 // (bias_rows or 128))
        return cluster.launch(x, fusion)[1].config

    assert recorded(torch.bfloat16)["phased"] == "bias"
    assert recorded(torch.float32)["phased"] == "none"
    assert "phased" not in recorded(torch.float32, bias_rows=128) and "phased" not in recorded(torch.float32, None)
    monkeypatch.setattr(cluster, "PHASED_BIAS_ITEMSIZES", (2, 4))
    assert recorded(torch.float32)["phased"] == "bias"


def test_cluster_counts_the_bytes_of_its_phase_copies():
    """cluster's traffic model: the floor (one_pass_traffic), and where a launch lays shared rows out in phase copies
    (key-padded's mask; a rows/64 bias under 16-bit x; N = 50257, off the grid) VEC copies of them written and read
    again; on the grid, a bias under fp32 x, or rows/16 (too few rows a shared row), the floor alone."""
    from softmax_bench.kernels import one_pass_traffic
    from softmax_bench.ops import OPS

    for op, mask_shape, dtype, N, copied in (("key-padded", "full", torch.bfloat16, 50257, 8 * 128 * 50257),
                                             ("key-padded", "full", torch.float32, 50257, 4 * 128 * 50257),
                                             ("biased", "rows/64", torch.bfloat16, 50257, 8 * 128 * 50257 * 2),
                                             ("biased", "rows/64", torch.float32, 50257, 0),
                                             ("key-padded", "full", torch.bfloat16, 50256, 0),
                                             ("scaled-masked", "rows/16", torch.bfloat16, 50257, 0),
                                             ("biased", "rows/16", torch.bfloat16, 50257, 0)):
        fusion = OPS[op].shapes_fusion(8192, N, dtype, mask_shape)
        floor = one_pass_traffic(8192, N, dtype, fusion).total_bytes
        assert softmax_bench.variants()["cluster"].traffic(8192, N, dtype, fusion).total_bytes == floor + 2 * copied, (
            op, dtype, N)


@pytest.mark.skipif(not hasattr(cluster, "cluster_kernel"), reason="this Triton has no Gluon")
def test_a_shared_row_off_the_grid_is_read_in_vectors_in_phase_copies(tmp_path):
    """Compiled for sm_90: key-padded's mask and a rows/64 bias at N = 50257 (off x's grid), laid out in phase copies
    (phased_rows; a launch lays out a bias so only under 16-bit x): the mask read in vectors (one byte load, the full
    mask's; 33 in bf16 and 29 in fp32 without the copies) in the full mask's configuration, and the bias in as many
    vectors as x; none spills as a launch lays it out (an fp32 bias read in place, in SHARED_BIASED's 16 × 8 capped at
    48: forced into copies under that cap it spills)."""
    cases = [{"kernel": "forward", "dtype": dtype, "N": 50257, "scale": 0.125, "shared": True, "phased": True, **form}
             for dtype in ("bf16", "fp32") for form in ({"mask": True}, {"bias": True})]
    full = [{"kernel": "forward", "dtype": dtype, "N": 50257, "scale": 0.125, "mask": True}
            for dtype in ("bf16", "fp32")]
    unphased = [{**case, "phased": False} for case in cases]
    compiled = compile_in_subprocess(cases + full + unphased, tmp_path)
    phased_mask = {c["dtype"]: c for c in compiled[:4] if c.get("mask")}
    phased_bias = {c["dtype"]: c for c in compiled[:4] if c.get("bias")}
    full_mask = {c["dtype"]: c for c in compiled[4:6]}
    row_by_row = {(c["dtype"], "mask" if c.get("mask") else "bias"): c for c in compiled[6:]}
    for dtype in ("bf16", "fp32"):
        assert phased_mask[dtype]["byte_loads"] == full_mask[dtype]["byte_loads"] == 1
        assert row_by_row[dtype, "mask"]["byte_loads"] > 20
        assert (phased_mask[dtype]["ctas"], phased_mask[dtype]["warps"]) == (full_mask[dtype]["ctas"],
                                                                            full_mask[dtype]["warps"])
        assert phased_bias[dtype]["loads_v4"] > row_by_row[dtype, "bias"]["loads_v4"]
        launched_bias = phased_bias[dtype] if dtype == "bf16" else row_by_row[dtype, "bias"]  # as a launch lays it out
        assert phased_mask[dtype]["spill_bytes"] == launched_bias["spill_bytes"] == 0
