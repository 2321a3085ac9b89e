"""Scale, keep-mask and causal mask fused into the softmax, against a float64 reference."""

import math

import numpy as np
import pytest
import torch

import softmax_bench
from softmax_bench.kernels import TOLERANCES, Fusion

from .conftest import DEVICE, SM90_CODE_OF_TRITON_38, exhaustive_unless, runnable_variants
from .test_kernels import fresh_randn

VARIANTS = runnable_variants()
ZERO_MASKED = runnable_variants(zero_masked_only=True)
DTYPES = [torch.float32, torch.bfloat16, torch.float16]


def causal_keep(M: int, N: int) -> torch.Tensor:
    """Bottom-right aligned: query i keeps key j when j ≤ i + (N − M)."""
    return torch.arange(N)[None, :] <= torch.arange(M)[:, None] + (N - M)


def reference(x, scale=None, keep=None):
    z = x.double().cpu() * (1.0 if scale is None else scale)
    if keep is not None:
        z = z.masked_fill(~keep.cpu().expand(z.shape), float("-inf"))
    ref = torch.softmax(z, dim=-1)
    return torch.where((z == float("-inf")).all(dim=-1, keepdim=True), torch.zeros_like(ref), ref)


def assert_matches(y, x, scale=None, keep=None, skip_nan_rows=False):
    assert y.dtype == x.dtype and y.shape == x.shape
    ref = reference(x, scale, keep)
    y64 = y.double().cpu()
    if skip_nan_rows:  # eager: fully masked rows are NaN, as torch gives them
        masked_rows = (ref == 0).all(dim=-1)
        assert bool(y64[masked_rows].isnan().all())
        y64, ref = y64[~masked_rows], ref[~masked_rows]
    atol, rtol = TOLERANCES[x.dtype]
    torch.testing.assert_close(y64, ref, atol=atol, rtol=rtol)


def fused_causal_under(monkeypatch, switch: str, settings, call, x, scale) -> list[torch.Tensor]:
    """call(x, causal=True, scale=scale, variant="fused") with fused.<switch> set to each of `settings` in turn,
    each launched afresh (a call like an earlier one replays its launch)."""
    from softmax_bench.kernels import fused

    outputs = []
    for setting in settings:
        monkeypatch.setattr(fused, switch, setting)
        softmax_bench.dispatch.clear_caches()
        outputs.append(call(x, causal=True, scale=scale, variant="fused"))
    return outputs


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("variant", VARIANTS)
def test_scale_and_random_mask(variant, dtype):
    x, _ = fresh_randn(6, 1500, dtype=dtype)
    keep = torch.rand(6, 1500, device=DEVICE) > 0.3
    y = softmax_bench.softmax(x, scale=0.125, mask=keep, variant=variant)
    assert_matches(y, x, 0.125, keep)
    assert bool((y[~keep] == 0).all())


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_non_power_of_two_scale(variant):
    x, _ = fresh_randn(4, 300)
    assert_matches(softmax_bench.softmax(x, scale=0.37, variant=variant), x, 0.37)
    assert_matches(softmax_bench.softmax(x, scale=-2.0, variant=variant), x, -2.0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_fully_masked_rows_and_one_kept_value(variant):
    x, _ = fresh_randn(4, 5000)
    keep = torch.zeros(4, 5000, dtype=torch.bool, device=DEVICE)
    keep[0] = True
    keep[2, 4321] = True  # one True in the row: all the mass there
    keep[3, ::7] = True
    y = softmax_bench.softmax(x, mask=keep, variant=variant)
    zero_rows = variant in ZERO_MASKED
    assert_matches(y, x, keep=keep, skip_nan_rows=not zero_rows)
    assert float(y[2, 4321]) == 1.0
    if zero_rows:
        assert bool((y[1] == 0).all()), "a fully masked row gives zeros, not NaN"


@pytest.mark.parametrize("variant", VARIANTS)
def test_broadcasting_masks(variant):
    x, _ = fresh_randn(2, 3, 40)
    for keep in (
        torch.rand(40, device=DEVICE) > 0.5,  # one key-padding row for every row
        torch.rand(2, 1, 40, device=DEVICE) > 0.5,  # per batch
        torch.rand(3, 1, device=DEVICE) > 0.5,  # whole rows masked or kept
    ):
        keep[..., 0] = True  # no fully masked row, so that eager is comparable too
        assert_matches(softmax_bench.softmax(x, mask=keep, variant=variant), x, keep=keep)


@pytest.mark.parametrize("variant", VARIANTS)
def test_mask_over_another_dim(variant):
    x, _ = fresh_randn(50, 6)
    keep = torch.rand(50, 6, device=DEVICE) > 0.2
    keep[0] = True
    y = softmax_bench.softmax(x, dim=0, mask=keep, variant=variant)
    assert_matches(y.t(), x.t(), keep=keep.t())


@pytest.mark.parametrize("shape", [(64, 64), (16, 80), (80, 16), (2, 33, 130)])  # the last: row r is query r mod M
@pytest.mark.parametrize("variant", VARIANTS)
def test_causal(variant, shape):
    x, _ = fresh_randn(*shape)
    M, N = shape[-2:]
    y = softmax_bench.softmax(x, causal=True, scale=0.125, variant=variant)
    keep = causal_keep(M, N).to(DEVICE)
    # M > N: the first M − N queries see no key at all
    assert_matches(y, x, 0.125, keep, skip_nan_rows=variant not in ZERO_MASKED and M > N)
    if M == N:
        assert float(y[..., 0, 0].min()) == 1.0  # the first query sees only the first key


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(600, 16), (3, 200, 16), (2, 3, 300, 40)])  # programs of 128 / 128 / 32 rows
def test_causal_programs_whose_rows_keep_nothing(shape, log, monkeypatch):
    """fused.SKIP_MASKED_PROGRAMS: a program whose queries all keep no key writes their zeros (-inf for
    log_softmax) and runs nothing else, also where a program's rows wrap past a head's last query (3-D and 4-D x,
    row r is query r mod S); bit for bit what the whole tile computes, and the float64 result."""
    from softmax_bench.kernels import fused

    x, _ = fresh_randn(*shape)
    M, N = shape[-2:]
    call = softmax_bench.log_softmax if log else softmax_bench.softmax
    monkeypatch.setattr(fused, "SKIP_MASKED_PROGRAMS", True)
    softmax_bench.dispatch.clear_caches()  # a call like an earlier one replays its launch
    y = call(x, causal=True, scale=0.125, variant="fused")
    monkeypatch.setattr(fused, "SKIP_MASKED_PROGRAMS", False)
    softmax_bench.dispatch.clear_caches()
    assert torch.equal(y, call(x, causal=True, scale=0.125, variant="fused"))
    keep = causal_keep(M, N)
    z = (x.double().cpu() * 0.125).masked_fill(~keep, float("-inf"))
    expected = (torch.log_softmax if log else torch.softmax)(z, -1)
    nothing = ~keep.any(-1)  # queries that keep no key
    expected[..., nothing, :] = float("-inf") if log else 0.0
    atol, rtol = TOLERANCES[x.dtype]
    torch.testing.assert_close(y.double().cpu(), expected, atol=atol, rtol=rtol)
    assert bool(nothing[: 128].all()) and bool(nothing.any()) and not bool(nothing.all())


@pytest.mark.parametrize("variant, shape", [
    ("fused", (600, 16)), ("fused", (3, 200, 40)), ("fused", (2, 300, 300)),  # M > N (wrapping), M < N
    ("cluster", (2, 4200, 16384)), ("cluster", (16400, 16384)),
], ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else v)
def test_causal_rows_run_last_to_first_bit_for_bit(variant, shape, monkeypatch):
    """fused.HEAVIEST_FIRST and cluster.HEAVIEST_FIRST: causal rows in programs (clusters) from the last row to the
    first (where their kept shares differ by more than N / 4: every shape here) write, bit for bit, what programs in
    row order write, and every row is the float64 result's."""
    from softmax_bench.kernels import cluster, fused

    module = {"fused": fused, "cluster": cluster}[variant]
    if variant == "cluster" and cluster.why_not_here() is not None:
        pytest.skip(f"cluster does not run here: {cluster.why_not_here()}")
    x, _ = fresh_randn(*shape, dtype=torch.bfloat16 if variant == "cluster" else torch.float32)
    outputs = []
    for heaviest_first in (True, False):
        monkeypatch.setattr(module, "HEAVIEST_FIRST", heaviest_first)
        softmax_bench.dispatch.clear_caches()  # a call like an earlier one replays its launch
        outputs.append(softmax_bench.softmax(x, causal=True, scale=0.125, variant=variant))
    assert torch.equal(*outputs)
    M, N = shape[-2:]
    assert_matches(outputs[0], x, 0.125, causal_keep(M, N).to(DEVICE))


@pytest.mark.parametrize("scale", [0.125, -0.5])
@pytest.mark.parametrize("shape", [(600, 16), (3, 200, 40), (2, 300, 300), (4, 1000)], ids=str)
def test_causal_rows_masked_as_bits_match_the_select_bit_for_bit(shape, scale, monkeypatch):
    """fused.CAUSAL_BITS: -inf past each row's diagonal set as bits, bit for bit what the compare and select give:
    M > N (queries that keep nothing, programs of several rows), M < N, rows off a power of two (padding lanes past
    the diagonal too), a negative scale (padding loaded as -inf turns +inf), softmax and log_softmax, NaN in a row."""
    from softmax_bench.kernels import fused

    x, seed = fresh_randn(*shape)
    x[..., -1, 0] = float("nan")  # the last query keeps every key
    # bits alone: folded, the exponent rounds otherwise
    monkeypatch.setattr(fused, "FOLD_SCALES", {False: False, True: False})
    for call in (softmax_bench.softmax, softmax_bench.log_softmax):
        outputs = fused_causal_under(monkeypatch, "CAUSAL_BITS", (False, True), call, x, scale)
        torch.testing.assert_close(outputs[1], outputs[0], rtol=0, atol=0, equal_nan=True,
                                   msg=lambda m: f"{call.__name__}, x's seed {seed}: {m}")
        assert bool(outputs[1][..., -1, :].isnan().all()) and not bool(outputs[1][..., -2, :].isnan().any())


@pytest.mark.parametrize("shape, dtype", [((600, 520), torch.float32), ((300, 1100), torch.bfloat16)], ids=str)
def test_causal_rows_computed_in_the_narrowest_tile_holding_what_they_keep_bit_for_bit(shape, dtype, monkeypatch):
    """fused.TILE_HALVINGS: a causal row (one a program) whose last kept column lies in its tile's first half (or
    quarter: fp32 600×520's rows 80 … 335; its first 80 keep none), computed in a tile of that width and the rest
    written as zeros (-inf), is bit for bit the whole tile's, softmax and log_softmax, NaN in a row; the launch
    halves exactly where rows differ."""
    from softmax_bench.kernels import fused

    x, seed = fresh_randn(*shape, dtype=dtype)
    x[..., -1, 0] = float("nan")  # the last query keeps every key
    launched = []

    def spied(*args, **kwargs):
        launched.append(kwargs.get("HALVINGS", 0))
        return launch_kernel(*args, **kwargs)

    launch_kernel = fused.launch_kernel
    monkeypatch.setattr(fused, "launch_kernel", spied)
    for call in (softmax_bench.log_softmax, softmax_bench.softmax):
        outputs = []
        for halvings in (0, 1, 2):
            monkeypatch.setattr(fused, "TILE_HALVINGS", {x.element_size(): halvings})
            softmax_bench.dispatch.clear_caches()  # a call like an earlier one replays its launch
            outputs.append(call(x, causal=True, scale=0.125, variant="fused"))
        for narrowed in outputs[1:]:
            torch.testing.assert_close(narrowed, outputs[0], rtol=0, atol=0, equal_nan=True,
                                       msg=lambda m: f"{call.__name__}, x's seed {seed}: {m}")
    assert launched == [0, 1, 2] * 2
    M, N = shape[-2:]
    assert_matches(outputs[2][..., :-1, :], x[..., :-1, :], 0.125, causal_keep(M, N)[:-1])  # the NaN row aside
    softmax_bench.dispatch.clear_caches()
    softmax_bench.softmax(x[..., : N // 4 - 1, :], causal=True, variant="fused")  # rows that differ by < N / 4
    assert launched[-1] == 0
    monkeypatch.undo()
    softmax_bench.dispatch.clear_caches()
    monkeypatch.setattr(fused, "launch_kernel", spied)
    softmax_bench.softmax(x, causal=True, scale=0.125, variant="fused")  # as measured: 16-bit rows halve once
    assert launched[-1] == (1 if dtype == torch.bfloat16 else 0)


@pytest.mark.parametrize("shape, dtype", [((260, 200), torch.float32), ((120, 600), torch.bfloat16),
                                          ((2, 70, 300), torch.float32)], ids=str)
def test_causal_rows_fold_a_positive_scale_into_their_exponent(shape, dtype, monkeypatch):
    """fused.FOLD_SCALES: a causal row's positive scale taken in its exponent (the max of x unscaled, then one
    multiply-add an element) gives softmax and log_softmax within rounding of the unfolded form and of float64,
    zeros (-inf) past each diagonal and NaN only in a NaN row; a negative scale (whose max would be x's min) and the
    forms without EXP_FTZ are launched unfolded; as measured, log_softmax's rows fold and softmax's do not."""
    from softmax_bench.kernels import fused

    assert fused.FOLD_SCALES == {False: False, True: True}
    x, seed = fresh_randn(*shape, dtype=dtype)
    x[..., -1, 0] = float("nan")  # the last query keeps every key
    M, N = shape[-2:]
    keep = causal_keep(M, N).to(DEVICE)
    folded = []

    def spied(*args, **kwargs):
        folded.append(kwargs.get("FOLD_SCALE", False))
        return launch_kernel(*args, **kwargs)

    launch_kernel = fused.launch_kernel
    monkeypatch.setattr(fused, "launch_kernel", spied)
    scale = 0.37  # not a power of two: x · scale rounds
    for call in (softmax_bench.softmax, softmax_bench.log_softmax):
        folds = [{False: fold, True: fold} for fold in (False, True)]
        unfolded, y = fused_causal_under(monkeypatch, "FOLD_SCALES", folds, call, x, scale)
        assert bool(y[..., -1, :].isnan().all()) and not bool(y[..., :-1, :].isnan().any())
        assert bool((y[..., :-1, :][~keep[:-1].expand(y[..., :-1, :].shape)] ==
                     (float("-inf") if call is softmax_bench.log_softmax else 0.0)).all())
        y, unfolded, x_kept = y[..., :-1, :], unfolded[..., :-1, :], x[..., :-1, :]  # the NaN row aside
        if call is softmax_bench.softmax:
            assert_matches(y, x_kept, scale, keep[:-1])
        else:
            assert_matches(y.float().exp().to(dtype), x_kept, scale, keep[:-1])
            y, unfolded = y.masked_fill(~keep[:-1], 0.0), unfolded.masked_fill(~keep[:-1], 0.0)
        atol, rtol = TOLERANCES[dtype]  # an eighth of float64's, or one rounding of a 16-bit output
        torch.testing.assert_close(y, unfolded, atol=atol / 8, rtol=max(rtol / 8, torch.finfo(dtype).eps),
                                   msg=lambda m: f"{call.__name__}, scale {scale}, x's seed {seed}: {m}")
    assert folded == [False, True] * 2
    monkeypatch.setattr(fused, "FOLD_SCALES", {False: True, True: True})
    softmax_bench.dispatch.clear_caches()
    softmax_bench.softmax(x, causal=True, scale=-0.5, variant="fused")
    monkeypatch.setattr(fused, "EXP_FTZ", False)
    softmax_bench.softmax(x, causal=True, scale=0.125, variant="fused")
    assert folded[-2:] == [False, False]
    monkeypatch.undo()
    monkeypatch.setattr(fused, "launch_kernel", spied)
    softmax_bench.dispatch.clear_caches()
    softmax_bench.softmax(x, causal=True, scale=0.125, variant="fused")
    softmax_bench.log_softmax(x, causal=True, scale=0.125, variant="fused")
    assert folded[-2:] == [False, True]


@pytest.mark.parametrize("shape, dtype", [((260, 200), torch.float32), ((120, 600), torch.bfloat16),
                                          ((2, 70, 300), torch.float32)], ids=str)
def test_causal_rows_unshifted_match_the_shifted_form_and_fall_back_outside_their_range(shape, dtype, monkeypatch):
    """fused.SHIFTLESS: a causal row's exponentials of x unshifted give softmax and log_softmax within rounding of
    the shifted form and of float64; a row whose sum leaves the range — every x far below 0, an x past 88, a NaN —
    and a row that keeps nothing are computed shifted, bit for bit the shifted form's."""
    x, seed = fresh_randn(*shape, dtype=dtype)
    M, N = shape[-2:]
    rows = {"far below 0": M - 1, "past 88": M - 2, "nan": M - 3}
    x[..., rows["far below 0"], :] -= 300  # its sum ~e^-300: under 2^-40
    x[..., rows["past 88"], 0] = 200 / 0.37  # 200 once scaled: exp overflows
    x[..., rows["nan"], 1] = float("nan")
    keep = causal_keep(M, N).to(DEVICE)
    scale = 0.37
    for call in (softmax_bench.softmax, softmax_bench.log_softmax):
        shifted, y = fused_causal_under(monkeypatch, "SHIFTLESS", (False, True), call, x, scale)
        fell_back = list(rows.values())
        torch.testing.assert_close(y[..., fell_back, :], shifted[..., fell_back, :], rtol=0, atol=0, equal_nan=True,
                                   msg=lambda m: f"{call.__name__}, x's seed {seed}: {m}")  # bit for bit
        assert bool(y[..., rows["nan"], :].isnan().all())
        kept = [row for row in range(M) if row not in fell_back]
        y, shifted, x_kept, keep_kept = y[..., kept, :], shifted[..., kept, :], x[..., kept, :], keep[kept]
        if call is softmax_bench.softmax:
            assert_matches(y, x_kept, scale, keep_kept)
        else:
            assert bool((y[..., ~keep_kept] == float("-inf")).all())
            assert_matches(y.float().exp().to(dtype), x_kept, scale, keep_kept)
            y, shifted = y.masked_fill(~keep_kept, 0.0), shifted.masked_fill(~keep_kept, 0.0)
        # within a tolerance of the shifted form too (log_softmax's x · scale − log s rounds at x's magnitude: a
        # row keeping one column gives ±2^-22, not 0)
        atol, rtol = TOLERANCES[dtype]
        torch.testing.assert_close(y, shifted, atol=atol / 2, rtol=max(rtol / 2, torch.finfo(dtype).eps),
                                   msg=lambda m: f"{call.__name__}, x's seed {seed}: {m}")


def test_causal_rows_unshifted_where_measured_faster(monkeypatch):
    """fused.SHIFTLESS_TILES: as measured, 16-bit causal rows of 4096-wide tiles (softmax and log) and 16384-wide
    ones (softmax) take their exponentials unshifted; fp32 rows, 8192-wide ones and a row with a keep-mask do not."""
    from softmax_bench.kernels import fused

    taken = []
    launch_kernel = fused.launch_kernel

    def spied(*args, **kwargs):
        taken.append(kwargs.get("SHIFTLESS", False))
        return launch_kernel(*args, **kwargs)

    monkeypatch.setattr(fused, "launch_kernel", spied)
    mask = torch.rand(2, 4000, device=DEVICE) > 0.5
    for dtype, N, call, kwargs in ((torch.bfloat16, 4000, softmax_bench.softmax, {}),
                                   (torch.bfloat16, 4000, softmax_bench.log_softmax, {}),
                                   (torch.float16, 10000, softmax_bench.softmax, {}),
                                   (torch.bfloat16, 10000, softmax_bench.log_softmax, {}),
                                   (torch.float32, 4000, softmax_bench.softmax, {}),
                                   (torch.bfloat16, 8000, softmax_bench.softmax, {}),
                                   (torch.bfloat16, 4000, softmax_bench.softmax, {"mask": mask})):
        softmax_bench.dispatch.clear_caches()
        call(torch.randn(2, N, device=DEVICE, dtype=dtype), causal=True, variant="fused", **kwargs)
    assert taken == [True, True, True, False, False, False, False]


@SM90_CODE_OF_TRITON_38
def test_causal_rows_masked_as_bits_have_their_loads_in_flight_at_once(tmp_path):
    """fused.CAUSAL_BITS, compiled for sm_90 (ptxas, then cuobjdump): a causal tile's loads all issued before any is
    read, where the compare and select's predicates had ptxas issue half, then wait (bf16 8192: 2, 2; fp32 8192: 4,
    1, 1, 1, 1)."""
    from .compile_sm90 import compile_in_subprocess, load_waves, sass_of

    cases = [{"kernel": "fused", "dtype": dtype, "N": 8192, "causal": True, "skip": True, "causal_bits": bits}
             for dtype in ("bf16", "fp32") for bits in (False, True)]
    for case, compiled in zip(cases, compile_in_subprocess(cases, tmp_path)):
        waves = load_waves(sass_of(case, tmp_path))
        assert sum(waves) == compiled["loads_v4"] > 1 and compiled["spill_bytes"] == 0, (case, waves)
        assert (len(waves) == 1) == case["causal_bits"], (case, waves)


def test_causal_tiles_whose_registers_cost_a_program_an_sm_are_capped(tmp_path):
    """fused.CAUSAL_REGISTERS: causal bf16 rows of 8192 (softmax and log) and 4000 (softmax: its log measured
    slower capped) launch capped at 48 registers, the same output; other rows, a keep-mask beside the causal one,
    and a configuration given by the caller are not capped. Compiled for sm_90, the capped tiles spill nothing,
    whole or halved (TILE_HALVINGS, as 16-bit rows launch)."""
    from softmax_bench.kernels import fused

    from .compile_sm90 import compile_in_subprocess

    def cap_of(x, fusion, config=None):
        y, launched = fused.launch(x, fusion, config)
        return launched.config.get("maxnreg")

    for N, log, cap in ((8192, False, 48), (8192, True, 48), (4000, False, 48), (4000, True, None)):
        x = torch.randn(2, N, dtype=torch.bfloat16, device=DEVICE)
        causal = Fusion(causal_m=2, log=log)
        assert cap_of(x, causal) == cap, (N, log)
        capped, uncapped = (fused.launch(x, causal, config)[0] for config in (None, fused.launch_config(2, N, x.dtype)))
        assert torch.equal(capped, uncapped), (N, log)
        assert cap_of(x, Fusion(log=log)) is None and cap_of(x.float(), causal) is None
        assert cap_of(x, Fusion(causal_m=2, mask=torch.ones(2, N, dtype=torch.bool, device=DEVICE))) is None
        assert cap_of(x, causal, fused.launch_config(2, N, x.dtype)) is None
    cases = [{"kernel": "fused", "dtype": "bf16", "N": N, "causal": True, "skip": True, "causal_bits": True,
              "max_registers": 48, "halvings": halvings} for N in (8192, 4000) for halvings in (0, 1)]
    for compiled in compile_in_subprocess(cases, tmp_path):
        assert compiled["registers"] <= 48 and compiled["spill_bytes"] == 0, compiled


@pytest.mark.parametrize("scale", [0.125, 3.0, 1e-30, float("inf")], ids=str)
@pytest.mark.parametrize("shape", [(600, 16), (3, 200, 40), (4, 1000)], ids=str)
def test_a_positive_scale_alone_without_the_select_matches_it(shape, scale, monkeypatch):
    """fused.POSITIVE_SCALES: a scale > 0 with nothing else fused leaves the padding's -inf as it loaded, with no
    select; the select's output: rows off a power of two (padding lanes), programs of several rows, softmax and
    log_softmax, NaN and -inf in a row, a row of -inf, an infinite scale. Bit for bit where x · scale is exact (a
    power of two, or the interpreter, which computes as written); on a GPU, with no select between them, x · scale −
    max compiles to one fused multiply-add (fp32 1024 for sm_90: 16 fma.rn.f32 where the select's has a mul and a
    sub), rounded once instead of twice (on the H200 at 3.0: up to 6e-6 of the select's output): there within
    that rounding."""
    from softmax_bench.kernels import fused

    x, seed = fresh_randn(*shape)
    x[..., 0, 1], x[..., 1, 2], x[..., 2, :] = float("nan"), -float("inf"), -float("inf")
    for call in (softmax_bench.softmax, softmax_bench.log_softmax):
        outputs = []
        for positive in (False, True):
            monkeypatch.setattr(fused, "POSITIVE_SCALES", positive)
            softmax_bench.dispatch.clear_caches()  # a call like an earlier one replays its launch
            outputs.append(call(x, scale=scale, variant="fused"))
        exact = DEVICE != "cuda" or math.frexp(scale)[0] == 0.5
        torch.testing.assert_close(outputs[1], outputs[0], rtol=0 if exact else 2e-5, atol=0 if exact else 1e-6,
                                   equal_nan=True, msg=lambda m: f"{call.__name__}, x's seed {seed}: {m}")
        if scale != float("inf"):
            assert not bool(outputs[1][..., 3:, :].isnan().any()), "padding stays out of the sum"
    assert not fused.scaled_alone(Fusion(scale=0.5, causal_m=3)) and fused.scaled_alone(Fusion(scale=0.5, log=True))


@SM90_CODE_OF_TRITON_38
def test_a_positive_scale_alone_has_its_loads_in_flight_at_once(tmp_path):
    """fused.POSITIVE_SCALES, compiled for sm_90: an fp32 tile scaled by a positive scale issues all its loads before
    it reads one, as a plain row's does, where the select's predicates split them (fp32 8192: 2, 3, 3; 16384: 2, 1,
    5; scaled-h200 measured those cells at 95.6 and 89.7 % of their roofline)."""
    from .compile_sm90 import compile_in_subprocess, load_waves, sass_of

    cases = [{"kernel": "fused", "dtype": "fp32", "N": N, "positive_scale": positive}
             for N in (8192, 16384) for positive in (False, True)]
    for case, compiled in zip(cases, compile_in_subprocess(cases, tmp_path)):
        waves = load_waves(sass_of(case, tmp_path))
        assert sum(waves) == compiled["loads_v4"] > 1 and compiled["spill_bytes"] == 0, (case, waves)
        assert (len(waves) == 1) == case["positive_scale"], (case, waves)


@pytest.mark.parametrize("op", ["plain", "causal", "scaled-masked"])
def test_exponentials_without_the_denormal_fix_up_match_tl_exp(op, monkeypatch):
    """fused.EXP_FTZ (masking.exp2_ftz): softmax and log_softmax as with tl.exp, rows off a power of two, NaN and
    -inf in a row, a row of -inf, and a row spread so wide that its smallest probabilities are under 2^-126, which
    it gives as 0 (tl.exp: subnormal, ≤ 1.2e-38). Bit for bit on a GPU elsewhere: the same ex2.approx without its
    fix-up; through the interpreter within an ulp (tl.exp2 of x · log2 e against tl.exp of x). By default (EXP_FTZ
    None) causal rows take it, and only they."""
    from softmax_bench.kernels import fused

    assert fused.EXP_FTZ is None and fused.exp_ftz(Fusion(causal_m=6)) and fused.exp_ftz(Fusion(scale=2.0, causal_m=1))
    assert not fused.exp_ftz(Fusion()) and not fused.exp_ftz(Fusion(scale=0.125, bias=torch.zeros(4)))

    x, seed = fresh_randn(6, 1000)
    x[0, 1], x[1, 2], x[2, :] = float("nan"), -float("inf"), -float("inf")
    x[3, :500] = -100.0  # e^-100 / row sum: under 2^-126
    kwargs = {"plain": {}, "causal": {"scale": 0.5, "causal": True},
              "scaled-masked": {"scale": 0.125, "mask": torch.rand(1000, device=DEVICE) > 0.2}}[op]
    monkeypatch.setattr(fused, "FOLD_SCALES", {False: False, True: False})  # (it folds only with EXP_FTZ)
    for call in (softmax_bench.softmax, softmax_bench.log_softmax):
        outputs = []
        for ftz in (False, True):
            monkeypatch.setattr(fused, "EXP_FTZ", ftz)
            softmax_bench.dispatch.clear_caches()  # a call like an earlier one replays its launch
            outputs.append(call(x, variant="fused", **kwargs))
        exact = DEVICE == "cuda"
        tiny = outputs[0].abs() < 2**-126 if call is softmax_bench.softmax else torch.zeros_like(x, dtype=torch.bool)
        torch.testing.assert_close(outputs[1][~tiny], outputs[0][~tiny], rtol=0 if exact else 2e-6,
                                   atol=0 if exact else 1e-7, equal_nan=True,
                                   msg=lambda m: f"{call.__name__}, x's seed {seed}: {m}")
        if call is softmax_bench.softmax and op == "plain":
            assert bool(tiny[3].any()) and not bool(tiny[4].any())
            if exact:  # the interpreter computes in numpy, which keeps subnormals
                assert bool((outputs[1][tiny] == 0).all()), "a probability under 2^-126 is 0"


def test_exponentials_without_the_denormal_fix_up_take_fewer_instructions(tmp_path):
    """fused.EXP_FTZ, compiled for sm_90 (ptxas, then cuobjdump): no compare and select an element around the
    exponential, ex2.approx.ftz in the PTX; bf16 causal 4000 (4 warps, capped at 48) 696 → 592 SASS instructions a
    thread, the plain bf16 4096 tile 544 → 448; the same loads, in one wave, and no spill."""
    from .compile_sm90 import compile_in_subprocess, load_waves, sass_instructions, sass_of

    cases = [{"kernel": "fused", "dtype": "bf16", "N": N, "exp_ftz": ftz, **fields}
             for N, fields in ((4000, {"causal": True, "skip": True, "causal_bits": True, "max_registers": 48}),
                               (4096, {})) for ftz in (False, True)]
    compiled = compile_in_subprocess(cases, tmp_path)
    sass = [sass_of(case, tmp_path) for case in cases]
    counts = [len(sass_instructions(text)) for text in sass]
    for i in (0, 2):
        plain, ftz = compiled[i], compiled[i + 1]
        assert counts[i] - counts[i + 1] >= 3 * 32, counts  # 32 elements a thread: a compare, a select, a multiply
        assert sass[i + 1].count("FSETP") < sass[i].count("FSETP") - 24, (plain, ftz)
        assert load_waves(sass[i]) == load_waves(sass[i + 1]) == [4] and ftz["spill_bytes"] == 0, (plain, ftz)


def test_causal_rows_folding_their_scale_take_fewer_instructions(tmp_path):
    """fused.FOLD_SCALES, compiled for sm_90 (ptxas, then cuobjdump): the scale's multiply, the shift's subtract and
    log2 e's multiply an element become one FFMA (bf16 causal 4000, 32 elements a thread: 592 → 536 SASS instructions
    a thread, its log 624 → 552), and the log of bf16 8192 as launched (one halving, capped at 48 registers) spills
    nothing folded (40 bytes unfolded)."""
    from .compile_sm90 import compile_in_subprocess, sass_instructions, sass_of

    causal = {"causal": True, "skip": True, "causal_bits": True, "exp_ftz": True, "max_registers": 48}
    cases = [{"kernel": "fused", "dtype": "bf16", "N": N, "log": log, "fold_scale": fold, **causal, **fields}
             for N, log, fields in ((4000, False, {}), (4000, True, {}), (8192, True, {"halvings": 1}))
             for fold in (False, True)]
    compiled = compile_in_subprocess(cases, tmp_path)
    counts = [len(sass_instructions(sass_of(case, tmp_path))) for case in cases]
    for i in (0, 2, 4):
        assert counts[i] - counts[i + 1] >= 48, (cases[i], counts)  # 32 elements a thread, 2 of 3 instructions
        assert compiled[i + 1]["spill_bytes"] == 0 and compiled[i + 1]["loads_v4"] == compiled[i]["loads_v4"], \
            compiled[i + 1]


@SM90_CODE_OF_TRITON_38
def test_causal_tiles_taken_unshifted_spill_nothing(tmp_path):
    """fused.SHIFTLESS_TILES, compiled for sm_90 (ptxas) as launched (one halving; bf16 4000's softmax capped at 48
    registers): no tile taken unshifted spills, though its fallback's code is there beside the unshifted pass (bf16
    8192 spilled 16 bytes, and is not taken)."""
    from softmax_bench.kernels import fused

    from .compile_sm90 import compile_in_subprocess

    causal = {"causal": True, "skip": True, "causal_bits": True, "exp_ftz": True, "halvings": 1, "shiftless": True}
    cases = [{"kernel": "fused", "dtype": "bf16", "N": N, "log": log, **causal,
              **({"max_registers": 48} if (2, N, log) in fused.CAUSAL_REGISTERS else {}),
              **({"fold_scale": True} if fused.FOLD_SCALES[log] else {})}
             for N, log in ((4000, False), (4000, True), (16384, False))]
    assert [(2, fused.next_power_of_2(case["N"]), case["log"]) in fused.SHIFTLESS_TILES for case in cases] == [True] * 3
    for compiled in compile_in_subprocess(cases, tmp_path):
        assert compiled["spill_bytes"] == 0, compiled


def test_causal_tiles_compare_in_32_bits_and_skip_by_a_branch(tmp_path):
    """fused's causal tile, compiled for sm_90 without a GPU (bf16 N = 32, fp32 N = 1024): each row's query and each
    element's compare with its diagonal in 32 bits, not 64 (the narrow causal cells are bound by issuing the tile's
    instructions: the int64 remainder and compares were 144 of bf16's 528 SASS instructions a thread); with
    SKIP_MASKED, a branch around the tile and the same loads and stores."""
    from .compile_sm90 import compile_in_subprocess

    cases = [{"kernel": "fused", "dtype": dtype, "N": N, "causal": True, "skip": skip}
             for dtype, N in (("bf16", 32), ("fp32", 1024)) for skip in (False, True)]
    whole, skipping, whole_fp32, skipping_fp32 = compile_in_subprocess(cases, tmp_path)
    for compiled in (whole, skipping, whole_fp32, skipping_fp32):
        assert compiled["wide_remainders"] == 0 and compiled["wide_compares"] == 0, compiled
        assert compiled["spill_bytes"] == 0 and compiled["loads_v4"] > 0
    for tile, skipped in ((whole, skipping), (whole_fp32, skipping_fp32)):
        assert skipped["branches"] > tile["branches"]
        assert (skipped["loads_v4"], skipped["stores_v4"]) == (tile["loads_v4"], tile["stores_v4"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_causal_with_a_mask_and_a_scale(variant):
    x, _ = fresh_randn(32, 4100)
    keep = torch.rand(4100, device=DEVICE) > 0.1
    keep[:100] = True
    y = softmax_bench.softmax(x, scale=0.5, mask=keep, causal=True, variant=variant)
    assert_matches(y, x, 0.5, keep & causal_keep(32, 4100).to(DEVICE))


def test_bad_masks_say_what_to_do():
    x = torch.ones(4, 8, device=DEVICE)
    with pytest.raises(TypeError, match="bool tensor"):
        softmax_bench.softmax(x, mask=torch.ones(4, 8, device=DEVICE))
    with pytest.raises(ValueError, match="does not broadcast"):
        softmax_bench.softmax(x, mask=torch.ones(3, 8, dtype=torch.bool, device=DEVICE))
    with pytest.raises(ValueError, match="use dim=-1"):
        softmax_bench.softmax(x, dim=0, causal=True)
    with pytest.raises(TypeError, match="scale"):
        softmax_bench.softmax(x, scale="0.5")


def test_traffic_counts_eagers_extra_passes_and_the_mask():
    from softmax_bench.kernels import Fusion

    M, N = 1024, 4096
    keep = torch.empty(M, N, dtype=torch.uint8, device="meta")
    fusion = Fusion(scale=0.125, mask=keep)
    variants = softmax_bench.variants()
    x_bytes = M * N * 2
    fused = variants["fused"].traffic(M, N, torch.bfloat16, fusion)
    assert (fused.read_bytes, fused.write_bytes) == (x_bytes + M * N, x_bytes)  # x and the mask in, y out
    eager = variants["eager"].traffic(M, N, torch.bfloat16, fusion)
    # scale (r x, w x) + invert mask (r m, w m) + masked_fill (r x + m, w x) + softmax (r x, w x)
    assert eager.read_bytes == 3 * x_bytes + 2 * M * N and eager.write_bytes == 3 * x_bytes + M * N
    causal = variants["fused"].traffic(M, N, torch.bfloat16, Fusion(causal_m=M))
    # computed from indices: no mask bytes; query i reads its i + 3073 kept columns, and y is written whole
    assert (causal.read_bytes, causal.write_bytes) == (2 * sum(i + N - M + 1 for i in range(M)), x_bytes)


@pytest.mark.parametrize(("M", "N", "causal_m"), [(64, 64, 64), (16, 80, 16), (80, 16, 80), (66, 130, 33), (5, 3, 4)])
def test_causal_traffic_reads_the_kept_columns_only_where_the_kernel_skips_the_rest(M, N, causal_m):
    """fused and cluster (and the peers' floor) read what the mask keeps; split reads every column."""
    from softmax_bench.kernels import Fusion, one_pass_traffic

    kept = int(sum(causal_keep(causal_m, N)[r % causal_m].sum() for r in range(M)))
    fusion = Fusion(scale=0.125, causal_m=causal_m)
    variants = softmax_bench.variants()
    for traffic in (variants["fused"].traffic, variants["cluster"].traffic, one_pass_traffic):
        assert (traffic(M, N, torch.float32, fusion).read_bytes, traffic(M, N, torch.float32, fusion).write_bytes) \
            == (4 * kept, 4 * M * N)
    assert variants["split"].traffic(M, N, torch.float32, fusion).passes[0][1] == 4 * M * N


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("variant", VARIANTS)
def test_causal_16_bit_rows_cut_inside_a_vector(variant, log):
    """A causal row is read in whole 16-byte vectors (8 bf16 values): the columns past the diagonal inside the
    last vector read are masked all the same; 16 queries of 100 keys, and a batch of 4 × 3 queries of 21 keys."""
    for shape in ((16, 100), (4, 3, 21)):
        x, _ = fresh_randn(*shape, dtype=torch.bfloat16)
        call = softmax_bench.log_softmax if log else softmax_bench.softmax
        y = call(x, causal=True, scale=0.125, variant=variant).reshape(-1, shape[-1]).cpu()
        keep = causal_keep(*shape[-2:]).repeat(x.numel() // (shape[-2] * shape[-1]), 1)
        ref = reference(x.reshape(-1, shape[-1]), 0.125, keep)
        if log:
            ref = torch.where(keep, ref.log(), float("-inf"))
        else:
            assert bool((y[~keep] == 0).all())
        atol, rtol = TOLERANCES[x.dtype]
        torch.testing.assert_close(y.double(), ref, atol=atol, rtol=rtol)


@pytest.mark.parametrize("variant", VARIANTS)
def test_one_true_per_row_puts_all_the_mass_there(variant):
    x, _ = fresh_randn(16, 777, dtype=torch.bfloat16)
    kept = torch.randint(0, 777, (16,), device=DEVICE)
    keep = torch.zeros(16, 777, dtype=torch.bool, device=DEVICE)
    keep[torch.arange(16, device=DEVICE), kept] = True
    y = softmax_bench.softmax(x, mask=keep, variant=variant)
    assert torch.equal(y, keep.to(torch.bfloat16))


@pytest.mark.skipif(DEVICE == "cuda", reason="reads the loads of Triton's CPU interpreter")
@pytest.mark.parametrize(("variant", "shape"), [("fused", (40, 100)), ("fused", (100, 48)), ("split", (40, 100))])
def test_causal_rows_read_only_what_the_traffic_model_counts(variant, shape, monkeypatch):  # (100, 48): 52 rows keep none
    """Every address x's loads touch, from the interpreter: fused reads each row's kept columns and, past them, only
    the rest of the 16-byte vector that holds the last one (8 bf16 values), as one_pass_traffic counts; split reads
    every column, as its model says."""
    from triton.runtime import interpreter

    addresses = []
    masked_load, load = interpreter.InterpreterBuilder.create_masked_load, interpreter.InterpreterBuilder.create_load

    def recording_masked_load(self, ptrs, mask, *args):
        addresses.append(ptrs.data[mask.data.astype(bool)].ravel())
        return masked_load(self, ptrs, mask, *args)

    def recording_load(self, ptr, *args):
        addresses.append(ptr.data.ravel())
        return load(self, ptr, *args)

    monkeypatch.setattr(interpreter.InterpreterBuilder, "create_masked_load", recording_masked_load)
    monkeypatch.setattr(interpreter.InterpreterBuilder, "create_load", recording_load)
    M, N = shape
    x, _ = fresh_randn(M, N, dtype=torch.bfloat16)
    softmax_bench.softmax(x, causal=True, scale=0.125, variant=variant)
    touched = np.concatenate(addresses).astype(np.int64) - x.data_ptr()
    elements = np.unique(touched[(touched >= 0) & (touched < x.numel() * 2)] // 2)
    read = np.zeros(M * N, dtype=bool)
    read[elements] = True
    read = torch.from_numpy(read.reshape(M, N))
    keep = causal_keep(M, N)
    assert bool(read[keep].all()), "a kept column was not read"
    if variant == "split":
        assert bool(read.all())
        return
    last = torch.arange(M) + (N - M)  # the last column each row keeps (< 0: none)
    same_vector = (torch.arange(N)[None, :] // 8) == (last[:, None] // 8)
    assert not bool((read & ~keep & ~same_vector).any()), "a column past a row's last kept vector was read"
    assert not bool(read[last < 0].any()), "a row that keeps nothing was read"


# A mask broadcast over leading dims of x, as attention passes them: each shape and how its rows are shared
SHARED_MASKS = {
    (2, 1, 1, 20): ("a key-padding mask over [B, H, S, S]", 15, 0),  # mask row b = r // (H·S)
    (1, 1, 5, 20): ("one [S, S] mask over the batch and heads", 1, 5),  # row i = r mod S
    (1, 3, 1, 20): ("a row a head", 5, 3),  # row h = (r // S) mod H
    (5, 20): ("a 2-D [S, S] mask over a 4-D x", 1, 5),
}


# every variant softmax at each shape; log_softmax (the same load of the mask) at the key-padding one. Every
# variant finds its rows' mask row by one formula, (row // group) % period: on CPU, fused takes every shape and
# the others the shape whose group and period are both past 1, and the key-padding log_softmax.
BROADCAST_CASES = exhaustive_unless(
    lambda mask_shape, log, variant: variant == "fused" or log or mask_shape == (1, 3, 1, 20),
    [(shape, log, variant) for shape, log in [*((shape, False) for shape in SHARED_MASKS), ((2, 1, 1, 20), True)]
     for variant in VARIANTS])


@pytest.mark.parametrize(("mask_shape", "log", "variant"), BROADCAST_CASES)
def test_a_broadcast_mask_is_read_where_it_is_not_expanded(mask_shape, log, variant):
    """Rows of x share the mask's rows (Fusion.mask_group, mask_period) instead of a copy of the mask expanded to
    x's shape: the mask the kernels get has the broadcast mask's own rows, and the result is the expanded mask's,
    bit for bit."""
    from softmax_bench.dispatch import fusion_for

    x, _ = fresh_randn(2, 3, 5, 20, dtype=torch.bfloat16)
    keep = torch.rand(mask_shape, device=DEVICE) > 0.4
    keep[..., 0] = True
    fusion = fusion_for(x, -1, 0.5, keep, False, log)
    _, group, period = SHARED_MASKS[mask_shape]
    assert (fusion.mask.numel(), fusion.mask_group, fusion.mask_period) == (keep.numel(), group, period)
    call = softmax_bench.log_softmax if log else softmax_bench.softmax
    y = call(x, scale=0.5, mask=keep, variant=variant)
    # the same arithmetic as with the mask expanded (a path of its own, checked against float64 above): equal
    assert torch.equal(y, call(x, scale=0.5, mask=keep.expand(x.shape).clone(), variant=variant))


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_a_broadcast_masks_gradient_is_the_expanded_masks(log):
    """Through autograd (fused's backward), and two_pass's backward called on rows of several chunks: dx with the
    shared mask is dx with the mask expanded, zero where it masks out (log_softmax's backward reads the mask)."""
    from softmax_bench.dispatch import fusion_for
    from softmax_bench.kernels import two_pass_backward

    call = softmax_bench.log_softmax if log else softmax_bench.softmax
    for N in (20, 2 * two_pass_backward.launch_config(4096, torch.float32)["BLOCK"] + 37):
        x, _ = fresh_randn(2, 2, 3, N)
        keep = torch.rand(2, 1, 1, N, device=DEVICE) > 0.4
        keep[..., 0] = True
        dy, _ = fresh_randn(2, 2, 3, N)
        grads = []
        for mask in (keep, keep.expand(x.shape).clone()):
            if N == 20:
                xg = x.clone().requires_grad_()
                (dx,) = torch.autograd.grad(call(xg, scale=0.5, mask=mask), xg, dy)
            else:
                y = call(x, scale=0.5, mask=mask, variant="two_pass")
                fusion = fusion_for(x, -1, 0.5, mask, False, log)
                dx, _ = softmax_bench.backwards()["two_pass"].launch(y.reshape(-1, N), dy.reshape(-1, N), fusion)
                dx = dx.reshape(x.shape)
            grads.append(dx)
        torch.testing.assert_close(grads[0], grads[1], atol=1e-6, rtol=1e-5)
        assert bool((grads[0][~keep.expand(x.shape)] == 0).all())


def same_bits_switched(monkeypatch, module, switches: list[str], call, ulps: int = 0) -> None:
    """call()'s output with the module's `switches` on is bit for bit its output with them off (NaN equal to NaN),
    each call launched afresh, not replayed from the other; or (ulps) at most that many units in the last place
    apart, for outputs of one sign (softmax's, log_softmax's)."""
    from softmax_bench import dispatch

    outputs = []
    for on in (True, False):
        for name in switches:
            monkeypatch.setattr(module, name, on)
        dispatch.clear_caches()  # a call like an earlier one replays its launch
        outputs.append(call())
    bits = {2: torch.int16, 4: torch.int32, 8: torch.int64}[outputs[0].element_size()]
    if ulps == 0:
        assert torch.equal(outputs[0].view(bits), outputs[1].view(bits))
    else:
        assert int((outputs[0].view(bits).long() - outputs[1].view(bits).long()).abs().max()) <= ulps


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_a_programs_rows_read_their_shared_mask_row_once_with_the_row_by_row_result(dtype, log, monkeypatch):
    """fused.MASK_ONCE_ROWS: a program whose rows share a key-padding mask's row ([B, 1, 1, S] over [B, H, S', S]
    scores) reads it once and broadcasts it, the result of reading it a row at a time, alone and beside a shared
    bias (read once too), a row masked out whole among them; only where the program's rows lie in one group
    (mask_once). Bit for bit in bf16; in fp32 within log2(N) + 2 units in the last place: the row broadcast lays the
    tile out otherwise (fp32 N=64 for sm_90: 24 shuffles against 6), which sums a row in another order (two
    orders' sums of N terms differ by up to log2(N) ulps, and the quotient by one more; H100s found 1 and 3 ulps
    apart, the seventy-second and seventy-third sessions). A program reading another group's row is off by far
    more: the rows keep other columns."""
    from softmax_bench.dispatch import fusion_for
    from softmax_bench.kernels import fused

    x, _ = fresh_randn(2, 2, 64, 64, dtype=dtype)
    keep = torch.rand(2, 1, 1, 64, device=DEVICE) > 0.4  # each batch its own row: group 0's for all would differ
    keep[1, ..., :] = False  # a batch whose rows keep nothing: zeros (softmax) and -inf (log_softmax)
    bias = torch.randn(2, 1, 1, 64, device=DEVICE).to(dtype)
    op = softmax_bench.log_softmax if log else softmax_bench.softmax
    fusion = fusion_for(x, -1, 0.5, keep, False, log)
    rows = fused.launch_config(256, 64, dtype, fusion)["ROWS"]
    monkeypatch.setattr(fused, "MASK_ONCE_ROWS", True)
    assert fused.mask_once(fusion, rows) and 1 < rows <= fusion.mask_group
    assert not fused.mask_once(fusion, 2 * fusion.mask_group) and not fused.mask_once(fusion, 1)
    assert not fused.mask_once(Fusion(mask=torch.empty(4, 8, device="meta"), mask_group=8, causal_m=3), 4)
    for with_bias in (None, bias):
        same_bits_switched(monkeypatch, fused, ["MASK_ONCE_ROWS", "BIAS_ONCE_ROWS"],
                           lambda: op(x, scale=0.5, mask=keep, bias=with_bias, variant="fused"),
                           ulps=int(math.log2(x.shape[-1])) + 2 if dtype == torch.float32 else 0)


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_a_shared_row_found_by_a_shift_where_its_groups_are_powers_of_two(log, monkeypatch):
    """fused.GROUP_SHIFTS: where a shared mask's and bias's groups of rows are powers of two and do not repeat, fused
    finds each row's by a shift (masking.group_shift), bit for bit the division and modulo's result; groups of
    another size, or rows that repeat, keep the division."""
    from softmax_bench.dispatch import fusion_for
    from softmax_bench.kernels import fused
    from softmax_bench.kernels.masking import group_shift

    assert (group_shift(64, 0), group_shift(1, 0), group_shift(48, 0), group_shift(64, 3)) == (6, 0, -1, -1)
    x, _ = fresh_randn(4, 2, 32, 40)  # [B, H, S', S]: 64 rows a group
    keep = torch.rand(4, 1, 1, 40, device=DEVICE) > 0.4
    keep[2] = False  # a batch that keeps nothing
    bias = torch.randn(4, 1, 1, 40, device=DEVICE)
    fusion = fusion_for(x, -1, 0.5, keep, False, log, bias=bias)
    assert group_shift(fusion.mask_group, fusion.mask_period) == 6 == group_shift(fusion.bias_group, fusion.bias_period)
    op = softmax_bench.log_softmax if log else softmax_bench.softmax
    for mask, with_bias in ((keep, None), (None, bias), (keep, bias)):
        same_bits_switched(monkeypatch, fused, ["GROUP_SHIFTS"],
                           lambda: op(x, scale=0.5, mask=mask, bias=with_bias, variant="fused"))


def test_a_shared_row_found_by_a_shift_compiles_without_a_division(tmp_path):
    """fused.GROUP_SHIFTS, compiled for sm_90 (ptxas, then cuobjdump): key-padded's bf16 2048 program (a mask shared
    by groups of 64 rows) and biased rows/64's find their shared row with no integer division left (its I2F, F2I and
    IABS gone) and at least 40 SASS instructions fewer a thread (434 → 389 and 421 → 381 counted in the seventieth
    session), where those cells are bound by issuing instructions on the H200. Shifted, each adds at most 62 to the
    plain scaled program's: their compares imply the tile's `inside`, with no AND of it an element (SASS
    instructions counted as here in the seventy-first session: 56 over 328 each, and the key-padded 72 with the AND)."""
    from .compile_sm90 import compile_in_subprocess, opcode, sass_instructions, sass_of

    plain = {"kernel": "fused", "dtype": "bf16", "N": 2048, "evict": "evict_last"}
    cases = [{**plain, **shared, shift: value}
             for shared, shift in (({"mask": True, "shared": True}, "mask_shift"), ({"bias": True}, "bias_shift"))
             for value in (-1, 6)]
    compile_in_subprocess([plain, *cases], tmp_path)
    plain_count = len(sass_instructions(sass_of(plain, tmp_path)))
    code = [sass_instructions(sass_of(case, tmp_path)) for case in cases]
    division = {"I2F", "F2I", "IABS"}
    for divided, shifted in ((code[0], code[1]), (code[2], code[3])):
        assert division <= {opcode(i).split(".")[0] for i in divided}
        assert not division & {opcode(i).split(".")[0] for i in shifted}
        assert len(divided) - len(shifted) >= 40, (len(divided), len(shifted))
        assert len(shifted) - plain_count <= 62, (len(shifted), plain_count)


def test_a_shifted_bias_tile_that_would_lose_a_program_an_sm_is_capped():
    """fused.SHIFTED_BIAS_REGISTERS: log_softmax's fp32 rows of 16384 with a shared bias found by a shift launch
    capped at 64 registers, the same output as uncapped; their softmax, bf16 rows, a bias on x's grid, a group that is
    not a power of two and a configuration given by the caller are not capped."""
    from softmax_bench.dispatch import fusion_for
    from softmax_bench.kernels import fused

    def launched(x, bias, log, config=None):  # x [B, H, S', S], its rows sharing bias [B, 1, 1, S]'s in groups
        return fused.launch(x.view(-1, x.shape[-1]), fusion_for(x, -1, None, None, False, log, bias=bias), config)

    x = torch.randn(2, 1, 4, 16384, device=DEVICE)
    bias = torch.randn(2, 1, 1, 16384, device=DEVICE)
    assert fusion_for(x, -1, None, None, False, True, bias=bias).bias_group == 4
    y, capped = launched(x, bias, True)
    assert capped.config.get("maxnreg") == 64
    uncapped = fused.launch_config(8, 16384, x.dtype, fusion_for(x, -1, None, None, False, True, bias=bias))
    y_uncapped, launch_uncapped = launched(x, bias, True, uncapped)
    assert torch.equal(y, y_uncapped) and launch_uncapped.config.get("maxnreg") is None
    assert launched(x, bias, False)[1].config.get("maxnreg") is None
    assert launched(x.bfloat16(), bias.bfloat16(), True)[1].config.get("maxnreg") is None
    assert launched(x, bias.expand(x.shape).contiguous(), True)[1].config.get("maxnreg") is None
    x3 = torch.randn(2, 1, 3, 16384, device=DEVICE)
    assert launched(x3, bias, True)[1].config.get("maxnreg") is None


@SM90_CODE_OF_TRITON_38
def test_the_capped_shifted_bias_tile_spills_nothing(tmp_path):
    """fused.SHIFTED_BIAS_REGISTERS' tile compiled for sm_90: uncapped, more than 64 registers (one 16-warp program an
    SM; Triton 3.6's compile takes 64 either way); capped at 64, no spill."""
    from .compile_sm90 import compile_in_subprocess

    case = {"kernel": "fused", "dtype": "fp32", "N": 16384, "log": True, "evict": "evict_last", "bias": True,
            "bias_shift": 2}
    uncapped_code, capped_code = compile_in_subprocess([case, {**case, "max_registers": 64}], tmp_path)
    assert uncapped_code["registers"] > 64 and capped_code["spill_bytes"] == 0, (uncapped_code, capped_code)


def test_a_shared_masks_bytes_are_its_own_rows_for_fused_and_cluster():
    from softmax_bench.kernels import Fusion, one_pass_traffic

    M, N = 4096, 32768  # [2, 16, 128, N] scores, a key-padding mask [2, 1, 1, N]
    fusion = Fusion(scale=0.125, mask=torch.empty(2, N, dtype=torch.uint8, device="meta"), mask_group=2048)
    shared = one_pass_traffic(M, N, torch.bfloat16, fusion)
    assert shared.read_bytes == 2 * M * N + 2 * N  # x and the mask's two rows, once each
    for variant in ("fused", "cluster"):  # each row reads its mask row where it is
        assert softmax_bench.variants()[variant].traffic(M, N, torch.bfloat16, fusion) == shared
