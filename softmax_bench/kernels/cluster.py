"""cluster: a wide row held on chip across the CTAs of a thread-block cluster; one read, one write.

Each row belongs to one cluster of C CTAs (C = 2 … 16). CTA c takes an even share of the row — the `step` lanes
from c·step, counted from the 16-byte boundary at or before the row's start — asks for all of it at once, 16
bytes a thread, and keeps it in registers (16-bit values packed two to a register). It reduces its share to a
local max and sum of exponentials (fp32 rows: the exponentials replace x in its registers; 16-bit rows keep x
packed, and take its exponential again at the end), then pushes (max, sum) into every peer's
shared memory with `st.async`, counted by an mbarrier; the cluster barrier before the push is split (arrive at
the start, wait just before the push), so it is already satisfied when reached. Each CTA combines the C pairs
into the row's max and sum and stores its share normalized, computed in fp32 and rounded once to y's dtype
(log_softmax: x less the row's max and log sum). No barrier before exit: a CTA stores and leaves, and the
next cluster's loads overlap its stores. This is Quack's exchange (../shared/anchors/wide-rows.md) in Gluon;
docs/why-one-pass.md §4 and docs/perf-notes.md say how it got to a copy's speed.

Tensors are powers of two, a share need not be: it is held in up to three power-of-two pieces in fp32 (151936
lanes over 16 CTAs: 8192 + 1024 + 512 a CTA) and in one padded piece in 16-bit; padding lanes are never loaded.
Lanes outside the row are -inf: an empty share gives max -inf and sum 0, never NaN. Where shared_row.SHARED_ROW_AT
lists a fused form's width (biased bf16 and causal fp32 262144), each CTA can hold its share in shared memory instead
(shared_row.py, switched by shared_row.SHARED_ROWS): more CTAs an SM than its registers allow.

Needs Triton ≥ 3.8 (3.6 cannot build multi-CTA kernels) and an sm_90 GPU; elsewhere the variant says so and
`auto` does not pick it. Gluon kernels do not run in Triton's interpreter: the CPU tests check the launch
arithmetic and the compiled code (for sm_90, without a GPU).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from functools import cache, lru_cache

import torch
import triton

from . import (PLAIN, Fusion, Launch, Traffic, Variant, cdiv, forward_evict_setting, interpreted, launch_kernel,
               one_pass_traffic, output_like, row_count, rows_bytes)
from .aligned import same_alignment, vector_elems, window_lanes
from .masking import fusion_args, mask_rows, phased, rows_differ

try:  # Gluon and its Hopper cluster ops (Triton ≥ 3.5; multi-CTA builds need 3.8)
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia import hopper
    from triton.experimental.gluon.language.nvidia.hopper import cluster, mbarrier
except ImportError:  # pragma: no cover - depends on the installed Triton
    gluon = None
try:  # the staged rows' copies (cluster_backward's STAGED): a Triton without them runs the rest
    from triton.experimental.gluon.language.nvidia.ampere import async_copy
except ImportError:  # pragma: no cover - depends on the installed Triton
    async_copy = None

MIN_TRITON = (3, 8)
MAX_CTAS = 16  # the largest cluster Hopper runs (non-portable above 8: Triton sets the flag)
# Power-of-two pieces a CTA holds its lanes in, by how it holds them. fp32: up to three, little padding. Packed
# 16-bit values: one, padded — on the H200 a second piece cost 3 to 18 points of a copy (more registers, another
# reduction) where the padding costs only instructions on lanes that are never loaded (docs/perf-notes.md).
MAX_PIECES = {"fp32": 3, "packed": 1}
LINE_BYTES = 128
LOG2E = gl.constexpr(1.4426950408889634) if gluon is not None else None


@dataclass(frozen=True)
class ClusterConfig:
    """How rows are laid over a cluster: `ctas` CTAs of `num_warps` warps; CTA c takes the `step` lanes from
    c · step and holds them in power-of-two pieces of `span` lanes in all (a thread holds span / (32 · num_warps)
    elements, some of them padding). max_registers caps a thread's registers (ptxas's maxnreg; None: the
    compiler's choice): fewer registers, more CTAs an SM."""

    ctas: int
    num_warps: int
    step: int
    pieces: tuple[int, ...]
    max_registers: int | None = None
    evict: str = ""  # the eviction policy of the loads (tl.load's): "" or "evict_last"

    @property
    def span(self) -> int:
        return sum(self.pieces)


# (largest N, CTAs, warps), by how a row is held: 16-bit values packed two to a register, or fp32 (fp32 input,
# or a scaled one). The configuration measured fastest on the H200 at each width of the wide and vocabulary
# shapes (scripts/cluster-configs.py; docs/perf-notes.md).
SHAPES: dict[str, tuple[tuple[int, int, int], ...]] = {
    "packed": ((16384, 2, 8), (24576, 4, 4), (32768, 4, 8), (98304, 8, 4), (131072, 16, 4), (163840, 8, 8),
               (262144, 16, 4), (2**62, 16, 8)),
    "fp32": ((24576, 8, 4), (65536, 8, 8), (262144, 16, 4), (2**62, 16, 8)),
}
# The backward's, measured at 16384 and 32768 (scripts/fused-configs.py backward): a thread holds two rows' lanes.
BACKWARD_SHAPES: dict[str, tuple[tuple[int, int, int], ...]] = {
    "packed": ((32768, 4, 8), (98304, 8, 4), (131072, 16, 4), (163840, 8, 8), (262144, 16, 4), (2**62, 16, 8)),
    "fp32": ((65536, 8, 8), (262144, 16, 4), (2**62, 16, 8)),
}
# A plain fp32 softmax CTA of 4 warps holding at most CAPPED_UP_TO elements a thread has its registers capped at
# CAPPED_REGISTERS: on the H200 that was 0.7–1.8 points of a copy faster at every such configuration measured
# (fp32 24576 and 151936); packed 16-bit ones gained at one width and lost 5.6 points at another (perf-notes);
# log_softmax, which keeps x, spills under the cap at 151936.
CAPPED_REGISTERS = 128
CAPPED_UP_TO = 80
# Causal rows read by vectors take the plain row's CTAs and warps but not its register cap: on the H200 fp32 4096 ×
# 128256 causal (x · 0.125, by vectors, POSITIVE_SCALES) took 0.985 ms uncapped (seventeenth session,
# ab-fp32-causal.py, five rounds; the plain row 0.991 there) and 1.051–1.061 ms capped at 128 in the sweeps
# causal-h200-f and causal-fp32-h200-g (91–92 % of its roofline); at 16384 (8 CTAs of 4 warps) 0.2494–0.2507 uncapped
# against 0.2500 capped. The other widths it reads by vectors run CTAs of 8 warps, which are not capped. Compiled for
# sm_90 (128256), the two take 126 and 128 registers (the same CTAs an SM), but capped, ptxas issues 3 of a thread's
# 16 vector loads, then sets the -inf of all 16 (some 50 MOVs) and packs predicates into a register before the
# fourth; uncapped, it issues the loads among those MOVs (1048 SASS instructions against 1088). Not yet timed in a
# sweep (eighteenth session: no device time left).
UNCAPPED_CAUSAL = True
# Causal rows read by vectors where other CTAs and warps than the plain row's measured faster: N: (CTAs, warps), by
# holding. On the H200 (nineteenth session, scripts/cluster-configs.py OUT.csv bf16|fp32 causal 16384 32768, every
# configuration the threads may hold, uncapped; % of a copy of the causal op's bytes): bf16 16384 92.9 against 82.4
# in the plain row's 2 CTAs of 8 warps, bf16 32768 99.5 against 84.6 (4 × 8); fp32 16384 95.1 against 87.4 (8 × 4;
# 4 × 4 and 4 × 8 took 95.0–95.1 too); bf16 131072 97.4 against 92.9 (16 × 4; the same session's second batch).
# Fewer warps a CTA hold more of a row a thread: the loads of a row that its diagonal cuts short are then fewer
# and wider.
CAUSAL_VECTORS_SHAPES: dict[str, dict[int, tuple[int, int]]] = {
    "packed": {16384: (2, 4), 32768: (4, 4), 131072: (8, 4)},
    "fp32": {16384: (2, 8)},
}
# Register caps for causal rows read by vectors and held packed, by dtype, N: where a cap gives an SM one more CTA
# without spilling, the softmax and its log alike. bf16 50257 in the plain row's 4 × 4: uncapped 112–114 registers, 4 CTAs
# an SM; at 96, 5 (compiled for sm_90, its 14 loads in one wave either way). On the H200 (bit for bit, % of a copy
# of the op's bytes; twenty-seventh session, evidence/experiments/2026-12-04-session26/ab-caps.py): 50257 89.6
# uncapped, 90.1 capped at 102, 96.1 at 96, its log 95.2, 96.5, 97.3; twenty-eighth session
# (evidence/experiments/2026-12-04-session27/ab-occupancy.py, 128 → 96 registers, 4 → 5 CTAs an SM): 512×262144
# 91.7 → 96.7, its log 94.6 → 98.6 (2 bytes spilled), 1024×131072 97.5 → 98.4. Not fp16, which converts otherwise:
# its causal rows of 262144 spill 24 bytes under 96, their log 16 (compiled for sm_90; unmeasured).
# bf16 151936 (8 × 8, two pieces) at 64: with DIAGONAL_STORE_AT only (without it, 64 bytes spilled; 80 uncapped).
CAUSAL_REGISTERS: dict[torch.dtype, dict[int, int]] = {torch.bfloat16: {50257: 96, 131072: 96, 151936: 64,
                                                                        262144: 96}}
# Causal rows by vectors whose pieces store every whole vector, the one the diagonal cuts too (zeros, -inf for the
# log: it was not loaded), the end vectors' store of it after a CTA barrier (the same CTA's: it lands last); by
# dtype, N. Without, each vector's store carries a second predicate beside its load's, live across the row:
# compiled for sm_90, bf16 151936 takes 80 registers (3 CTAs an SM) and spills 64 bytes at 64; with it, 64 and 12
# bytes (4 CTAs an SM). On the H200 (sixty-sixth session, evidence/experiments/2026-12-06-session66, % of the
# roofline): 2048×151936 90.2, 90.6 → 96.9, 97.0, its log 95.5 → 97.7; applied at every causal row by vectors, 16384,
# 32768 and 65536 took 80 registers, not 72, and lost 4 points (97.8–98.6 → 93.6–94.4), the rest within ±1.1.
DIAGONAL_STORE_AT: dict[torch.dtype, frozenset[int]] = {torch.bfloat16: frozenset({151936})}
# Register caps for the softmax of a form (form_of; not its log, which LOG_REGISTERS caps) where a cap gives an SM
# one more CTA without spilling, by form and dtype, N: cap. On the H200 (twenty-eighth session,
# evidence/experiments/2026-12-04-session27/ab-occupancy.py, five alternating rounds, bit for bit, % of a copy):
# bf16 512×262144 in 16 × 4, 128 → 96 registers (4 → 5 CTAs an SM), 93.2 → 95.6; 682×196608, 96 → 80 (5 → 6),
# 93.2 → 96.8; 2048×151936 in 8 × 8, 80 → 64 (3 → 4), 94.7 → 98.4; scaled bf16 262144, 127 → 96, 93.0 → 96.0.
# Compiled for sm_90, the bare log_softmax (form "other", not capped here) spills 16 bytes at 151936 under 64, and
# fp16 rows 16 at 196608 and 8 scaled at 262144: bf16's caps, of rows held packed.
REGISTERS: dict[tuple[str, torch.dtype], dict[int, int]] = {
    ("softmax", torch.bfloat16): {151936: 64, 196608: 80, 262144: 96}, ("scaled", torch.bfloat16): {262144: 96}}
# Where evict_last loads (kernels.FORWARD_EVICT) measured slower than plain ones, by form (form_of: a log_softmax
# takes its form's) and dtype: the widths that load plainly. On the H200 (thirty-first session, scripts/eviction.py,
# % of a copy of the op's bytes; registers compiled for sm_90, evidence/experiments/2026-12-04-session31/
# evict-scan.txt): bf16 262144, capped at 96 registers, spills 62 bytes with it (softmax 96.0 → 90.8, scaled 95.3
# → 91.4); bf16 causal 151936 takes 122 registers, not 80 (90.4 → 76.1); fp32 causal 262144 the same 125 but issues
# its 16 loads in two waves, [14, 2], not one (90.6 → 84.7; thirty-second session: since LEAN_CAUSAL_AT, one wave, and
# evict_last again); bf16 biased 151936 122, not 120 (92.4 → 91.4). Everywhere else it gained up to 3.8 points or was
# within 0.5.
PLAIN_LOADS: dict[tuple[str, torch.dtype], set[int]] = {
    ("softmax", torch.bfloat16): {262144}, ("scaled", torch.bfloat16): {262144},
    ("causal", torch.bfloat16): {151936}, ("biased", torch.bfloat16): {151936}}
# The widths where a form's log_softmax loads plainly too, beyond its form's PLAIN_LOADS. On the H200 its default
# grid with evict_last (thirty-second session, causal-log-h200-e; % of the cell's roofline, against the last run
# with plain loads, causal-log-h200-d, no other change to these kernels between):
# causal fp32 2048×151936 94.5 → 84.6 and causal bf16 4096×128256 97.7 → 93.2, while the log's other cluster cells
# gained 1.7–3.3. Registers do not say why (compiled for sm_90, evict-scan.txt: the same at fp32 151936, 72 → 79 at
# bf16 128256, its CTAs an SM unchanged), nor do its loads' waves (one either way). (Biased bf16 4096×128256's log
# fell too, 98.0 → 88.6: LOG_REGISTERS' spill.)
LOG_PLAIN_LOADS: dict[tuple[str, torch.dtype], set[int]] = {
    ("causal", torch.float32): {151936}, ("causal", torch.bfloat16): {128256}}
# Where a configuration measured faster than the rule below on the H200 (scripts/cluster-configs.py,
# docs/perf-notes.md), by form (`form_of`) and holding: N: (CTAs, warps, the most pieces, registers' cap or None).
# - softmax (16-bit, x kept packed and its exponential taken again at the end; eighth session): 50257 at 97.6 %
#   of a copy against 95.9; 151936 in two pieces, not one padded to 32768 lanes (42 % padding), 94.4 against 92.7.
# - masked (a keep-mask; tenth session, % of the op's own bytes): bf16 50257 76 against 60, 128256 86 against 57,
#   151936 77 against 75, 262144 90 against 79 (capped at 80 registers: three 8-warp CTAs an SM, 2 bytes
#   spilled); fp32 128256 77 against 58, 151936 84 against 48 (CTAs of 16 warps).
# - causal (tenth session, under the element select: rows held packed now go by vectors, CAUSAL_VECTORS): bf16
#   128256 68 against 57, 151936 70 against 60, 262144 71 against 63; fp32 (by elements) 151936 capped at 128
#   registers 98.0 against 95.0 uncapped (nineteenth session, cluster-configs.py fp32 causal 151936).
# - scaled (a scale alone; 16-bit rows held packed as a plain row, the scale applied to x − max; twenty-seventh
#   session, cluster-configs.py bf16 scaled, % of a copy): 32768 in 2 × 8 97.0 against the rule's 4 × 8 90.7 (42
#   registers), 50257 in the softmax's 4 × 4 97.4 against the rule's 8 × 4 89.9, 151936 in 16 × 4, two pieces,
#   94.7 against one padded piece 92.9 (the softmax's 8 × 8 94.1).
MEASURED: dict[tuple[str, str], dict[int, tuple[int, int, int, int | None]]] = {
    ("softmax", "packed"): {50257: (4, 4, 1, None), 151936: (8, 8, 2, None)},
    ("masked", "packed"): {50257: (8, 8, 1, None), 128256: (16, 8, 1, None), 151936: (16, 8, 2, None),
                           262144: (16, 8, 1, 80)},
    ("masked", "fp32"): {128256: (16, 16, 3, None), 151936: (16, 16, 2, None)},
    ("causal", "packed"): {128256: (16, 4, 1, 128), 151936: (16, 4, 1, None), 262144: (16, 8, 1, 80)},
    ("causal", "fp32"): {151936: (16, 4, 3, 128)},
    ("scaled", "packed"): {32768: (2, 8, 1, None), 50257: (4, 4, 1, None), 151936: (16, 4, 2, None)},
}
# Biased rows (a bias and a scale, nothing else fused) are held in fp32 whatever x's dtype, so MEASURED's holding
# cannot tell 16-bit x from fp32 x: their entries, by x's bytes an element, N: (CTAs, warps, the most pieces,
# registers' cap or None). On the H200 (twenty-second session, scripts/cluster-configs.py OUT.csv bf16|fp32 biased,
# % of a copy of x, the bias and y; 16-bit with BIAS_BLEND, fp32 without): bf16 50257 99.3 against 92.4 in the
# rule's 8 × 8, 128256 98.3 against 85.4 (16 × 4), 131072 98.2 against 83.5 (16 × 4), 151936 92.7 against 72.6
# (16 × 4); fp32 128256 96.2 against 69.2 (16 × 4), 151936 99.1 against 59.2; fp32 50257 in 16 × 8 capped at 80
# registers 95.8 against 90.1 in the rule's 8 × 8 (whose loads wait halfway, [8, 2, 2, 2, 2]), uncapped 75.2 at
# 58 registers (twenty-seventh session; its log alike: 95.6, 89.2, 75.7, so LOG_REGISTERS keeps the cap). bf16
# 262144 in 16 × 16 capped at 64 registers (two CTAs an SM, 32 warps, the loads in one wave; the rule's 16 × 8 takes
# 111: 16 warps, two waves): on an H100 (forty-sixth session, evidence/experiments/2026-12-05-session46/
# configs-bf16-biased-*) 99.3 against the rule's 94.8, uncapped (74 registers, one CTA an SM) 73.0; its log (64
# registers uncapped) 99.7 against 94.7. On the H200 the rule's ran at 79.6 (thirty-first session's grid); 16 × 16
# is not yet measured there.
BIASED: dict[int, dict[int, tuple[int, int, int, int | None]]] = {
    2: {16384: (4, 4, 1, None), 50257: (8, 4, 1, None), 128256: (16, 8, 1, None), 131072: (16, 8, 1, None),
        151936: (8, 8, 2, None), 262144: (16, 16, 1, 64)},
    4: {50257: (16, 8, 1, 80), 128256: (16, 16, 1, None), 151936: (16, 16, 2, None)},
}
# A bias shared by rows of x (a [B, 1, 1, S] bias, rows/64) is read from L2 by every row of its group but the
# first, where BIASED's full bias is read from HBM: its entries, as BIASED's, where they differ. On an H100 under
# Triton 3.8 (session73/next.sh biased-scan, MASK_SHAPE=rows/64, % of a copy of the floor's bytes), then A/B'd in
# sweeps of auto:
# - seventy-fourth session: fp32 50257 in 16 × 8 capped at 48 registers 87.9 against 80.8 at 80; fp32 128256 in
#   16 × 8 capped at 64 83.8 against 16 × 16's 80.6. The log lost 4–5 points under such entries at 128256
#   (session74/next.sh gate): it takes SHARED_BIASED_LOG's.
# - seventy-fifth: bf16 128256 takes BIASED's 16 × 8 again: since row_of finds a shared row's window from its own
#   row's start it compiles to 64 registers, not 68, and ran at 87.5–87.7 against 83.0–83.1 in the 8 × 16 this
#   table held.
# - seventy-seventh (session77/next.sh entries, log-entries and fp32-262144, each A/B twice in one call): bf16 32768
#   in 8 × 4 (56 registers; the rule's 8 × 8 takes 40) 99.2 and 99.8 against 85.9 and 85.6, its log 99.6 and 99.0
#   against 86.1 and 86.3; fp32 262144 in 16 × 4 capped at 168 (three CTAs an SM, 32 bytes spilled: the one entry
#   that spills, test_cluster's GRID_SPILLS) 96.6 twice against 84.7 and 84.8 (session 75's scan: 97.2),
#   its log not (83.4 against 85.5).
# - seventy-eighth (session77/next.sh confirm, after session 77's scan): bf16 151936 in 8 × 16 capped at 64, two
#   pieces (16 bytes spilled, GRID_SPILLS) 86.4 against 79.2 (scan 86.2 against 78.5; one piece, 82.4: session 77);
#   fp32 131072 in 16 × 8 capped at 80 100.3 against 97.1 (scan 100.0 against 96.8). Their logs keep BIASED's (bf16
#   151936's in one piece lost, 77.7 → 56.4).
SHARED_BIASED: dict[int, dict[int, tuple[int, int, int, int | None]]] = {
    2: {32768: (8, 4, 1, None), 151936: (8, 16, 2, 64)},
    4: {50257: (16, 8, 1, 48), 128256: (16, 8, 1, 64), 131072: (16, 8, 1, 80), 262144: (16, 4, 1, 168)},
}
# The log_softmax of such a bias where SHARED_BIASED's entry measured faster for it too (elsewhere BIASED's, or the
# rule's). Eighty-second session (session80/next.sh log-entries, an H100, each A/B twice in one call): bf16 151936 in
# 8 × 16 capped at 64, two pieces (8 bytes spilled, GRID_SPILLS) 87.4 and 87.5 against 77.6 and 77.3 in BIASED's 8 × 8;
# fp32 50257 in 16 × 8 capped at 48 88.2 twice against 81.7 and 81.8 under LOG_REGISTERS' 80.
SHARED_BIASED_LOG: dict[int, dict[int, tuple[int, int, int, int | None]]] = {
    2: {32768: (8, 4, 1, None), 151936: (8, 16, 2, 64)},
    4: {50257: (16, 8, 1, 48)},
}
WARPS = (4, 8, 16)
# Elements of a row a thread may hold, by how they are held and warps a CTA: 64 K registers an SM leave a thread
# of a 16-warp CTA 128 registers, one of a smaller CTA 255. Compiled for sm_90: 64 fp32 elements take 115–119
# registers, 128 take 179–189; 64 packed 16-bit elements take 82, 128 take 150. Past these they would spill.
# A fused keep-mask or causal mask takes a quarter of them (fp32, 128 elements: 255 registers and 80 bytes
# spilled; 96: 190 registers).
MAX_PER_THREAD = {"packed": {4: 128, 8: 128, 16: 96}, "fp32": {4: 128, 8: 128, 16: 64}}
MASKED_SHARE = 0.75
# A keep-mask on x's grid over 16-bit rows held packed, selected four values at a time (a prmt and a lop3 a pair)
# instead of a byte unpacked, compared and selected an element. Compiled for sm_90, bf16 131072 scaled-masked:
# 1296 → 1144 instructions, 96 → 72 registers a thread. On the H200 (fifteenth session,
# evidence/experiments/2026-12-02-session14/ab-mask-packed.py, bit for bit the element select's output), % of a copy of
# the op's bytes, bf16: 128256 85.8 → 96.7, 151936 77.0 → 91.6, 262144 89.5 → 96.0, 32768 93.0 → 98.2; fp16 128256
# 76.2 → 96.6; no width slower.
MASK_PACKED = True
# A shared mask or bias row (key-padded's, rows/64's) read evict_last, as x is (FORWARD_EVICT), where it was read
# plainly: L2 evicts plain lines before evict_last ones, so x's stream would push the shared row out and each row
# read it from HBM again. Suspected from key-padded bf16 512×262144 (176 µs) running slower than the full mask's
# (164 µs), which reads a mask row from HBM for every row (seventy-first session). On an H100 it moved nothing
# (keep-probe.py, seventy-second session: within ±0.8 % of a copy at all 20 cells): off until an H200 says otherwise.
KEEP_SHARED_ROWS = False
# A causal row read a whole vector at a time with no per-element select: the vectors it keeps whole as a plain
# row's, the one vector its diagonal cuts beside the row's partial end vectors (element by element, few). Compiled
# for sm_90, bf16 128256 causal: the element select takes 1520 SASS instructions and 127 registers, 416 more
# instructions (ISETP, SEL, IMAD) than the plain row's 1104 in 71; by vectors, 1256. On the H200 (sixteenth
# session, evidence/experiments/2026-12-02-session15/ab-causal-vectors.py, five alternating rounds, % of the op's own
# bytes), in the plain softmax's configuration, which the element select's registers kept causal rows from:
# bf16 71 → 83 (16384), 59 → 90 (50257), 80 → 98 (65536), 68 → 92.5 (128256), 70 → 90 (151936), 70 → 91
# (262144), fp16 alike. fp32 rows gained at 128256 only (81 → 98.7) and lost at 16384 (87 → 65), 32768 (97 → 80)
# and 151936 (70 → 51). With POSITIVE_SCALES (seventeenth session, ab-fp32-causal.py, % of a copy of x read and y
# written, x · 0.125), fp32 by vectors against by elements: 101.6 / 100.3 (16384), 99.1 / 98.7 (32768), 101.0 /
# 73.7 (50257), 100.0 / 99.6 (128256), 85.0 / 95.2 (151936). "measured" takes vectors for rows held packed and
# fp32 rows of FP32_CAUSAL_VECTORS_AT whose scale is positive (a negative one needs the select after it).
# "all" and "none" force either way (the tests and the A/B).
CAUSAL_VECTORS = "measured"
FP32_CAUSAL_VECTORS_AT = frozenset({16384, 32768, 50257, 128256})
# fp32 causal rows by elements whose select is the causal mask alone, one 32-bit compare an element (LEAN_CAUSAL),
# not `kept`'s three (inside the row, and the last kept column, which takes the row's 64-bit index: a setp.s64 an
# element). Compiled for sm_90, fp32 262144 in 16 × 8: 1280 → 1112 SASS instructions, ISETP 198 → 102, 124
# registers, and its 16 loads one wave with evict_last too (the three compares split them [14, 2]: PLAIN_LOADS'
# thirty-first session). On an H100 (sixty-second session, evidence/experiments/2026-12-06-session62, two rounds, %
# of its roofline): 512×262144 98.7, 98.4 → 99.2, 99.1, with evict_last 100.6, 100.8; its log 99.0 → 99.2, 100.8.
# Not at 151936 (16 × 4 capped at 128): 16 bytes spilled, 100.8, 100.7 → 100.3, 100.3, its log's loads in two
# waves, 99.4 → 98.2.
LEAN_CAUSAL_AT = frozenset({262144})
# Causal rows keep from N − M to all of their N columns: clusters take the rows last to first, the longest first,
# where their shares differ by more than a quarter of N (fused.HEAVIEST_FIRST, masking.rows_differ). On the H200
# (twentieth session, ab-heaviest-first.py): bf16 8192×16384 93.4 → 95.6, fp32 95.8 → 96.8; where rows keep 84 %
# or more of N, within ±1.2 (bf16 4096×32768 98.9 → 98.3, 8192×50257 90.0 → 89.6, 2048×151936 90.1 → 89.8; fp32
# 50257 96.2 → 97.4): not reversed there.
HEAVIEST_FIRST = True
# fp32-held rows take the scale as they load; a masked lane's -inf times a negative scale is +inf, so each vector
# whose load is masked (rows off the 16-byte grid, causal rows by vectors) was selected to -inf again after it.
# Compiled for sm_90 (fp32 16384 causal by vectors), that select's predicates had ptxas load vectors 0 and 1 into
# the same registers: the second waits for the first to be scaled and selected, half a thread's loads in flight,
# where the plain row has all four (docs/perf-notes.md, sixteenth session). With a positive scale (POSITIVE_SCALES)
# the -inf stands and no select is made: four register sets again. On the H200 (seventeenth session,
# ab-fp32-causal.py, bit for bit without it), fp32 causal by elements 70.4 → 95.2 % of a copy at 151936 and 71.4 →
# 73.7 at 50257; by vectors 76.3 → 101.6 (16384), 81.3 → 99.1 (32768), 68.6 → 101.0 (50257), 42.9 → 85.0 (151936).
POSITIVE_SCALES = True
# A keep-mask on x's grid over fp32-held rows, selected as bits ((x & m) | (-inf & ~m), m = -keep) instead of a
# compare and a select an element. Compiled for sm_90, fp32 50257 scaled-masked: the selects' predicates had ptxas
# put the 7 loads of a thread into 4 register sets; blended, 7 in 7 (FSEL 63 → 7, 720 → 776 instructions). On the
# H200 (seventeenth session, ab-masked-configs.py, % of a copy of the op's bytes): 50257 76.4 → 98.6, 128256 and
# 151936 in the plain rows' configuration 58.6 → 95.2 and 58.3 → 94.2; slower at 131072 (98.9 → 98.0) and 262144
# in the plain rows' (95.7 → 93.1): not there (FP32_UNBLENDED_AT).
MASK_BLEND_F32 = True
FP32_UNBLENDED_AT = frozenset({131072, 262144})
# A bias at or below its dtype's minimum masks its position out: x + bias, then -inf there, selected as bits against
# a mask that a packed compare writes to a register (set.gtu.u32.bf16x2: two biases a compare), where gl.where took a
# predicate an element. Compiled for sm_90, bf16 65536 biased in 8 CTAs of 8 warps: with the predicates (and their
# P2R saves) ptxas issued 4 of a thread's 8 loads, then converted, added and selected those before the other four
# (tests.compile_sm90.load_waves: 4, 2, 2; blended, 8). On the H200 (twenty-second session, cluster-configs.py
# biased, the rule's configurations, % of a copy of x, the bias and y) bf16: 50257 55.1 → 92.4, 65536 70.2 → 101.4,
# 128256 57.4 → 85.4, 151936 48.0 → 72.6, 262144 38.4 → 79.1. fp32 x gained nowhere (151936 in 16 × 16: 99.1 →
# 87.6): 16-bit x only.
BIAS_BLEND = True
# Masked rows in the plain rows' configuration (form_config(N, dtype, PLAIN)) where it measured faster than
# MEASURED's and the rule's, which were chosen under the element select (seventeenth session, ab-masked-configs.py,
# scaled-masked, % of a copy of the op's bytes): bf16 50257 74.2 → 95.7, 128256 96.3 → 98.0, 151936 91.5 → 96.7
# (262144: 94.8 against 92.0, kept); fp32 (blended) 128256 77.7 → 95.2, 151936 83.5 → 94.2, 262144 (unblended)
# 92.6 → 95.7.
MASKED_AS_PLAIN_AT = {"packed": frozenset({50257, 128256, 151936}), "fp32": frozenset({128256, 151936, 262144})}
# The log_softmax likewise, but for fp32 262144: there the plain rows' 16 × 4 compile to 243 registers for the log
# (twenty-fourth session, cluster-configs.py fp32 scaled-masked log 262144, % of a copy of the op's bytes: 87.0;
# the rule's 16 × 8 at 128 registers 92.6).
MASKED_LOG_AS_PLAIN_AT = {"packed": MASKED_AS_PLAIN_AT["packed"], "fp32": frozenset({128256, 151936})}
# cross_entropy's rows where their own configuration measured ahead of the softmax's, by pass (forward: no gradient,
# the lse alone written; step: the gradient too) and holding, N: as MEASURED's. On the H200 (twenty-fifth session,
# cluster-configs.py OUT.csv bf16 loss|loss-grad N, % of a copy of the bytes the kernel moves): forward bf16 128256
# in 8 × 4 101.6 against the softmax's 16 × 4 90.1, 50257 in three pieces 104.6 against one 101.6; the step at 151936
# and 50257 in the softmax's (within 0.4 of the best). fp32 50257's step capped at 64 registers: reading its factor
# from the row's target and the loss's scale took it from 64 to 68 (compiled for sm_90), 4 CTAs of 8 warps an SM to
# 3, and the kernel from 98.1 to 91.1 % of a copy (H200, twenty-sixth session, ce-split.py); capped, no spills.
# bf16 50257's step capped at 96: holding the target and the scale through the row's loads took it to 108 (its
# loaded factor's 96), where the row's 14 loads stay in one wave at 96 (compiled for sm_90, no spills). bf16
# 151936's step in the softmax's 8 × 8 capped at 64 (80 registers uncapped: 3 CTAs an SM, 4 capped, no spill): its
# forward with the gradient 92.2 → 96.6 % of a copy (H200, twenty-eighth session, bit for bit,
# evidence/experiments/2026-12-04-session28/ab-ce-151936.py; 16 × 4: 92.7; the forward with none, at 64 already, 93.5).
CROSS_ENTROPY: dict[tuple[str, str], dict[int, tuple[int, int, int, int | None]]] = {
    ("forward", "packed"): {50257: (4, 4, 3, None), 128256: (8, 4, 1, None)},
    ("step", "packed"): {50257: (4, 4, 1, 96), 151936: (8, 8, 2, 64)},
    ("step", "fp32"): {50257: (8, 8, 3, 64)},
}
# Register caps for a form's log_softmax where its own configuration's registers cost warps: fp32 causal 128256's
# log in the rule's 16 × 4 compiles to 141 registers, 3 CTAs an SM (twenty-fourth session, ab-log-configs.py, % of a
# copy of the op's bytes, bit for bit: uncapped 77.9, capped at 128 92.1, at 112 98.3; its softmax at 136
# registers 99.1 uncapped, 92.1 capped at 128). Biased fp32 128256's log in BIASED's 16 × 16 at 53 registers issues
# its loads in two waves, [7, 1], where its softmax issues one (compiled for sm_90); capped at 56, one wave
# (twenty-fifth session, ab-log-configs.py biased, bit for bit: uncapped 73.3, capped at 48 97.2, at 56 98.0; its
# softmax 96.8 uncapped, 95.3 capped at 48). Fp32 biased 50257's log in BIASED's 16 × 8 capped at 80 (BIASED's
# comment). By form and holding, N: (CTAs, warps, cap): a cap holds in the configuration it was measured in. A 16-bit
# row with a bias is held in fp32 but in BIASED's 16-bit configurations (bf16 128256 in 16 × 8, 50257 in 8 × 4),
# where these caps spilled 96 bytes (128256; uncapped 64 registers, no spill, compiled for sm_90) or cost 16
# registers (50257): on the H200 bf16 biased 4096×128256's log fell from 98.0 % of its roofline uncapped
# (biased-log-h200-b) to 88.6 capped (biased-log-h200-d, thirty-second session).
LOG_REGISTERS: dict[tuple[str, str], dict[int, tuple[int, int, int]]] = {
    ("causal", "fp32"): {128256: (16, 4, 112)}, ("biased", "fp32"): {50257: (16, 8, 80), 128256: (16, 16, 56)}}
CAPACITY = MAX_CTAS * 32 * 16 * 64  # the widest window a cluster holds, however it holds it: 524288 lanes
MIN_N = 8193  # narrower rows fit one CTA's registers: fused takes them, with no exchange


def holding(dtype: torch.dtype, fusion: Fusion = PLAIN, N: int | None = None) -> str:
    """How a CTA holds its span: fp32 for fp32 input, fp32 output or a scale ≤ 0 (the scale is then applied as it
    loads), else the 16-bit values as loaded, masked-out ones as 16-bit -inf, and a positive scale applied to
    x − max in fp32 (max(x · scale) = scale · max(x) only when scale > 0). A keep-mask off x's 16-byte grid is read
    a byte at a time: there fp32 (on the H200, bf16 50257 ran at 28 % of a copy packed, in 8 × 4 CTAs of 139
    registers, and 45 % held in fp32 in 8 × 8 of 64, another day: docs/perf-notes.md, ninth session); one laid
    out in phase copies is on it. A bias is added to x · scale as it loads: fp32."""
    byte_mask = fusion.mask is not None and N is not None and not mask_on_grid(fusion, N, dtype)
    fp32 = (dtype == torch.float32 or fusion.scale <= 0 or fusion.out_dtype == torch.float32 or byte_mask
            or fusion.bias is not None)
    return "fp32" if fp32 else "packed"


# A shared mask or bias off x's 16-byte grid (rows/K of an N that is not a multiple of VEC) laid out in phase copies
# (masking.phased_rows) and read in vectors, not element by element (issue 26, sixty-seventh session's
# phased.patch: docs/perf-notes.md). A bias only under x of PHASED_BIAS_ITEMSIZES' bytes an element (16-bit): under
# fp32 x its copies' bytes cost more than reading it an element at a time did (biased rows/64 8192×50257 on an H100,
# seventy-third session, the copies made by torch: fp32 78.1 % of a copy phased against 81.2, bf16 74.7 against 71.4;
# key-padded's mask bf16 79.5 against 59.2, fp32 94.0 against 63.3). masking.phase_copies_kernel has made them
# cheaper since (seventy-ninth session: key-padded bf16 79.5 → 88.1); fp32's bias is to be measured again with it.
PHASED_SHARED_ROWS = True
PHASED_BIAS_ITEMSIZES = (2,)
# A forward lays shared rows out in phase copies only where PHASED_FROM_ROWS[kind] rows of x or more share each: the
# copies' bytes are 2 · VEC / K of the shared rows' for rows/K, and where few rows share a row they cost more than
# the vectors save. On an H100 (seventy-fourth session, session73/next.sh small-groups, bf16 8192×50257, % of the
# floor's copy, phased against in place): scaled-masked's mask rows/4 25.5 / 62.3, rows/16 54.5 / 60.1, rows/64
# 79.7 / 59.5; a bias rows/4 25.5 / 76.6, rows/16 51.7 / 73.7, rows/64 74.6 / 71.6. At rows/32 the mask gains and the
# bias loses (seventy-fifth session: bias 65.5 / 72.9; seventy-seventh, session75/next.sh mask-from-32, scaled-masked
# rows/32: bf16 8192×50257 69.0 / 59.7, 2048×50257 64.9 / 57.9, fp32 89.5 / 63.1 and 88.1 / 63.5). The log's
# backward is not gated: its other way writes the mask out for every row, VEC / K times the copies' bytes.
PHASED_FROM_ROWS = {"mask": 32, "bias": 64}


# A forward's shared keep-mask off the grid of 16-bit x laid out in phase copies of bits (masking.phased_bits), not
# of bytes (MASK_BITS): a vector's 8 keep bits are one byte of its row's copy, where the byte copies hold 8. The
# copies of key-padded bf16 8192×50257 are then 6.4 MB, not 51.5: on an H100 (eighty-third session) the byte copies
# took 33.4 µs of the call's 612 and the kernel reading them 580, where reading the mask in place, two aligned
# 8-byte words a vector funnel-shifted, took 648 (eighty-fourth session; that read, and the bias's alike, 699 µs
# against 673 with its copies, were removed in the eighty-sixth: `git show cab12a6:softmax_bench/kernels/cluster.py`,
# MASK_IN_PLACE, BIAS_IN_PLACE). Off until it has run on a GPU (eighty-sixth session: compiled for sm_90 only;
# session86/next.sh `bits` A/Bs it).
MASK_BITS = False
# The same for the log's backward, which reads the shared mask to zero dx where it masked (cluster_backward's
# MASK_EARLY, LEAN_KEEP and end vectors): off until MASK_BITS has run on a GPU (eighty-sixth session, compiled only).
BACKWARD_MASK_BITS = False


def phases_wanted(fusion: Fusion, N: int, dtype: torch.dtype, M: int | None = None) -> tuple[bool, bool]:
    """(mask, bias): whether a launch lays a shared mask's, a shared bias's rows out in phase copies: rows off the
    grid; a bias only under x of PHASED_BIAS_ITEMSIZES' bytes an element (16-bit); in a forward over M rows of x,
    only rows PHASED_FROM_ROWS[kind] of them or more share (M None: the log's backward, not gated)."""
    off = PHASED_SHARED_ROWS and N % vector_elems(dtype) != 0

    def pays(rows: torch.Tensor, kind: str) -> bool:
        return M is None or M >= PHASED_FROM_ROWS[kind] * row_count(rows)

    return (off and fusion.mask_shared and pays(fusion.mask, "mask"),
            off and fusion.bias_shared and dtype.itemsize in PHASED_BIAS_ITEMSIZES and pays(fusion.bias, "bias"))


def mask_in_bits(fusion: Fusion, N: int, dtype: torch.dtype, M: int | None = None) -> bool:
    """Whether a forward over M rows (MASK_BITS), or the log's backward (M None: BACKWARD_MASK_BITS), lays its shared
    keep-mask's phase copies out in bits: where it lays out copies of a mask of bytes under 16-bit x (a vector of 8
    lanes, a byte of bits)."""
    return ((MASK_BITS if M is not None else BACKWARD_MASK_BITS) and dtype.itemsize == 2 and fusion.mask is not None
            and fusion.mask.element_size() == 1 and phases_wanted(fusion, N, dtype, M)[0])


def laid_out(fusion: Fusion, N: int, dtype: torch.dtype, M: int | None = None) -> Fusion:
    """The fusion as a launch over M rows lays it out before it takes its configuration: shared rows in phase
    copies where phases_wanted says (their rows then read in vectors), the mask's in bits where mask_in_bits says."""
    mask, bias = phases_wanted(fusion, N, dtype, M)
    return (phased(fusion, vector_elems(dtype), mask, bias, mask_in_bits(fusion, N, dtype, M)) if mask or bias
            else fusion)


def phase_copy_passes(N: int, dtype: torch.dtype, fusion: Fusion, bias: bool = True, M: int | None = None
                      ) -> tuple[tuple[str, int, int], ...]:
    """The passes of the phase copies a launch over M rows lays out (phases_wanted; `bias`: the bias's too, where
    wanted): the shared rows read once, as the floor's pass over them counts, VEC copies of them written, then read
    by the kernel in their place (each copy from memory once, as the rows were); a mask's copies in bits
    (mask_in_bits) an eighth of that."""
    vec = vector_elems(dtype)
    bits = mask_in_bits(fusion, N, dtype, M)
    return tuple((f"write the shared {what} rows' {vec} phase copies{' in bits' if in_bits else ''}, read them in "
                  "the rows' place", copied, copied)
                 for what, rows, wanted, in_bits in zip(("mask", "bias"), (fusion.mask, fusion.bias),
                                                        phases_wanted(fusion, N, dtype, M), (bits, False))
                 if wanted and (bias or what == "mask")
                 and (copied := vec * rows_bytes(rows) // (8 if in_bits else 1)))


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> Traffic:
    """one_pass_traffic, and the phase copies of shared rows off the grid (phase_copy_passes)."""
    floor = one_pass_traffic(M, N, dtype, fusion)
    return replace(floor, passes=floor.passes + phase_copy_passes(N, dtype, fusion, M=M))


def mask_on_grid(fusion: Fusion, N: int, dtype: torch.dtype) -> bool:
    """Whether the keep-mask's bytes of each of x's 16-byte vectors (VEC of them) start on a VEC-byte boundary, so
    that a thread reads them in one load: the mask starts on one and its row stride is x's modulo VEC (x's, after
    same_alignment, is N's), as a contiguous mask of x's shape is; a shared mask's rows, on rows of N on the grid."""
    return on_grid(fusion.mask, fusion.mask_shared, N, dtype, fusion.mask_phased)


def on_grid(rows: torch.Tensor, shared: bool, N: int, dtype: torch.dtype, phased: bool = False) -> bool:
    """mask_on_grid for a mask's or a bias's rows (`shared`: rows of x share them): each of x's vectors of VEC
    elements has its VEC elements of `rows` at a multiple of VEC from the tensor's start, which is on such a
    boundary. Shared rows laid out in phase copies (`phased`) are, by construction."""
    vec = vector_elems(dtype)
    if shared and phased:
        return True
    if shared and N % vec:  # a row's mask row is not the row's own: it starts elsewhere on the grid
        return False
    start, misaligned = divmod(rows.data_ptr(), rows.element_size())
    return not misaligned and start % vec == 0 and rows.stride(0) % vec == N % vec


def pieces_of(span: int, unit: int, max_pieces: int = 3) -> tuple[int, ...]:
    """`span` lanes rounded up to at most `max_pieces` power-of-two pieces, each a multiple of `unit` (one 16-byte
    vector a thread), largest first."""
    units = cdiv(span, unit)
    while bin(units).count("1") > max_pieces:  # round the smallest bits up
        units += units & -units
    return tuple(unit << bit for bit in range(units.bit_length() - 1, -1, -1) if units >> bit & 1)


def share_unit(lanes: int, dtype: torch.dtype) -> int:
    """What a CTA's share of a row's window is a whole number of: 128-byte lines where rows are (every row then
    starts on one, and each warp's 512-byte access covers four lines, not five: fp32 151936's backward, 9496 lanes
    a CTA, ran 0.4–0.5 % faster in 9504: scripts/line-steps.py), else 16-byte vectors."""
    line = LINE_BYTES // dtype.itemsize
    return line if lanes % line == 0 else vector_elems(dtype)


def layout(lanes: int, ctas: int, num_warps: int, dtype: torch.dtype, how: str) -> ClusterConfig:
    """`lanes` shared evenly by `ctas` CTAs of `num_warps` warps, in whole share_units; each CTA's share held
    (`how`) in pieces of one 16-byte vector a thread or more."""
    unit = share_unit(lanes, dtype)
    step = cdiv(cdiv(lanes, ctas), unit) * unit
    return ClusterConfig(ctas, num_warps, step, pieces_of(step, 32 * num_warps * vector_elems(dtype), MAX_PIECES[how]))


def config_for(N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> ClusterConfig:
    """The cluster for rows of N elements (form_config's), its registers capped where REGISTERS (a log_softmax's:
    LOG_REGISTERS) names its form and width."""
    config = form_config(N, dtype, fusion)
    form, how = form_of(fusion), holding(dtype, fusion, N)
    if fusion.log:  # (a cap form_config kept for a log is its entry's own, fitted to the log: kept)
        ctas, warps, cap = LOG_REGISTERS.get((form, how), {}).get(N, (0, 0, None))
        cap = cap if (config.ctas, config.num_warps) == (ctas, warps) and config.max_registers is None else None
    else:
        cap = REGISTERS.get((form, dtype), {}).get(N) if how == "packed" else None
    if cap:
        config = replace(config, max_registers=cap)
    evict = forward_evict_setting()
    if N in PLAIN_LOADS.get((form, dtype), ()) or fusion.log and N in LOG_PLAIN_LOADS.get((form, dtype), ()):
        evict = ""
    return replace(config, evict=evict) if evict else config


def form_config(N: int, dtype: torch.dtype, fusion: Fusion) -> ClusterConfig:
    """The cluster for rows of N elements of fusion's form: SHAPES' CTAs and warps, else the nearest shape whose
    threads hold at most MAX_PER_THREAD elements (a share of them with a mask fused in) and whose last CTA gets
    columns of the row (else one where it does not; with no shape that fits, the one holding fewest elements a
    thread: it spills)."""
    masked = fusion.mask is not None or fusion.causal_m is not None or fusion.bias is not None
    how = holding(dtype, fusion, N)
    if as_plain_row(N, how, fusion):  # the plain row's CTAs and warps, not its REGISTERS (fitted to it alone)
        plain = form_config(N, dtype, PLAIN)
        if form_of(fusion) != "causal":
            return plain
        shape = CAUSAL_VECTORS_SHAPES[how].get(N)
        config = layout(window_lanes(N, dtype), *shape, dtype, how) if shape else plain
        cap = CAUSAL_REGISTERS.get(dtype, {}).get(N) if how == "packed" else None
        return replace(config, max_registers=cap) if UNCAPPED_CAUSAL or cap else config
    form = form_of(fusion)
    fitted_to_log = None  # an entry measured for the log itself (SHARED_BIASED_LOG's), whose cap it keeps
    if form == "biased":
        fitted_to_log = fusion.bias_shared and fusion.log and SHARED_BIASED_LOG[dtype.itemsize].get(N)
        shared = fusion.bias_shared and not fusion.log and SHARED_BIASED[dtype.itemsize].get(N)
        measured = fitted_to_log or shared or BIASED[dtype.itemsize].get(N)
    else:
        measured = MEASURED.get((form, how), {}).get(N)
    if measured is not None:
        config = measured_config(N, dtype, how, measured)
        # the cap was fitted to the softmax: fp32 causal 151936's log spills under it
        if fusion.log and how == "fp32" and not fitted_to_log:
            config = replace(config, max_registers=None)
        return config
    config = fitting_config(N, dtype, how, masked)
    if dtype == torch.float32 and fusion.plain and config.num_warps == 4 and config.span // (32 * 4) <= CAPPED_UP_TO:
        return replace(config, max_registers=CAPPED_REGISTERS)
    return config


def measured_config(N: int, dtype: torch.dtype, how: str, measured: tuple[int, int, int, int | None]
                    ) -> ClusterConfig:
    """The cluster of a measured entry (MEASURED's, BIASED's, CROSS_ENTROPY's): (CTAs, warps, the most pieces,
    registers' cap or None)."""
    ctas, num_warps, most_pieces, max_registers = measured
    config = layout(window_lanes(N, dtype), ctas, num_warps, dtype, how)
    return replace(config, pieces=pieces_of(config.step, 32 * num_warps * vector_elems(dtype), most_pieces),
                   max_registers=max_registers)


def cross_entropy_config(N: int, dtype: torch.dtype, with_grad: bool) -> ClusterConfig:
    """The cluster for cross_entropy's rows of N logits: CROSS_ENTROPY's entry, else the softmax's CTAs and warps
    (not its REGISTERS: the loss holds more)."""
    how = holding(dtype)
    measured = CROSS_ENTROPY.get(("step" if with_grad else "forward", how), {}).get(N)
    return form_config(N, dtype, PLAIN) if measured is None else measured_config(N, dtype, how, measured)


def as_plain_row(N: int, how: str, fusion: Fusion) -> bool:
    """Whether fused rows of N elements held `how` take the plain rows' configuration, their registers being a plain
    row's (measured): causal rows read by vectors, masked rows at MASKED_AS_PLAIN_AT (their log_softmax at
    MASKED_LOG_AS_PLAIN_AT)."""
    form = form_of(fusion)
    masked_as_plain = (MASKED_LOG_AS_PLAIN_AT if fusion.log else MASKED_AS_PLAIN_AT)[how]
    return (form == "causal" and causal_vectors(N, how, fusion)) or (form == "masked" and N in masked_as_plain)


def causal_vectors(N: int, how: str, fusion: Fusion = PLAIN) -> bool:
    """Whether causal rows of N elements held `how` are read by vectors (CAUSAL_VECTORS)."""
    if CAUSAL_VECTORS in ("all", "none"):
        return CAUSAL_VECTORS == "all"
    return how == "packed" or (N in FP32_CAUSAL_VECTORS_AT and fusion.scale > 0 and POSITIVE_SCALES)


def form_of(fusion: Fusion) -> str:
    """Which of MEASURED's forms a softmax is: masked (a keep-mask, with or without the rest), causal (a causal
    mask, no keep-mask), scaled (a scale alone), softmax (nothing fused), biased (BIASED's: a bias, with or
    without a scale); other for a bias beside a mask and a bare log_softmax. The log_softmax of a masked, causal,
    biased or scaled row is its form's: it loads and holds what the softmax does and differs only in what it
    writes (measured on the H200, twenty-third session: biased fp32 151936 at 59 % of its roofline in the rule's
    configuration), with LOG_AS_FORM; without it, other."""
    if fusion.log and not LOG_AS_FORM:
        return "other"
    if fusion.bias is not None:
        return "biased" if fusion.mask is None and fusion.causal_m is None else "other"
    if fusion.mask is not None:
        return "masked"
    if fusion.causal_m is not None:
        return "causal"
    if fusion.scale != 1.0:
        return "scaled"
    return "softmax" if fusion.plain else "other"


# The log_softmax of a masked, causal or biased row takes its form's measured configuration (form_of). Measured on
# the H200 (twenty-fourth session, the default grids and the cluster cells of causal, biased and scaled-masked
# --log against the twenty-third session's, where they took the rule's; % of each cell's roofline): biased bf16
# 16384 91.0 → 103.7, 50257 90.9 → 100.6, 128256 84.6 → 98.0, fp32 151936 58.7 → 99.3; causal bf16 16384 87.9 →
# 95.2, 32768 88.0 → 96.9, 151936 74.4 → 95.5, 262144 83.2 → 92.4, fp32 16384 88.8 → 97.3; scaled-masked bf16
# 151936 91.2 → 98.9, fp32 151936 88.6 → 98.1; lower only at scaled-masked fp32 262144 (93.1 → 87.4:
# MASKED_LOG_AS_PLAIN_AT) and within 1.3 elsewhere. Not fixed by it: biased fp32 128256 (69.4 → 73.8; its softmax
# 97.5 in the same 16 × 16; no configuration of cluster-configs.py's above 86.1).
LOG_AS_FORM = True


@cache  # ~0.1 ms of Python a call: more than some kernels take
def fitting_config(N: int, dtype: torch.dtype, how: str, masked: bool, rows: int = 1) -> ClusterConfig:
    """config_for's choice for rows held `how`, with a fused mask or not, a thread holding lanes of `rows` rows
    (the backward holds y's and dy's: each gets that share of MAX_PER_THREAD, and its own SHAPES)."""
    _, ctas, num_warps = next(shape for shape in (SHAPES if rows == 1 else BACKWARD_SHAPES)[how] if N <= shape[0])
    lanes = window_lanes(N, dtype)
    nearest = sorted(itertools.product((16, 8, 4, 2), WARPS),
                     key=lambda cw: abs(math.log2(cw[0] / ctas)) + abs(math.log2(cw[1] / num_warps)))
    configs = [layout(lanes, c, w, dtype, how) for c, w in nearest]
    share = (MASKED_SHARE if masked else 1.0) / rows
    fits = [c for c in configs if c.span <= 32 * c.num_warps * MAX_PER_THREAD[how][c.num_warps] * share]
    if not fits:
        return min(configs, key=lambda c: c.span / c.num_warps)
    return next((c for c in fits if (c.ctas - 1) * c.step < N), fits[0])


@cache
def why_not_here() -> str | None:
    """Why the cluster kernel cannot run in this process (Triton version, device), or None when it can."""
    version = tuple(int(p) for p in triton.__version__.split(".")[:2])
    if gluon is None or version < MIN_TRITON:
        return f"cluster needs Triton ≥ {'.'.join(map(str, MIN_TRITON))} (this is {triton.__version__})"
    if interpreted():
        return "cluster is a Gluon kernel, which Triton's interpreter does not run"
    if not torch.cuda.is_available():
        return "cluster needs a CUDA GPU"
    major, _ = torch.cuda.get_device_capability()
    if major < 9:
        return f"cluster needs thread-block clusters (compute capability ≥ 9.0; this GPU is {major}.x)"
    return None


def packed_ptx(dtype: str, packed: int, step: str) -> str:
    """PTX for gl.inline_asm_elementwise(pack=2) over 16-bit values held two to a register: the first `packed`
    inputs ($1, …) are widened to fp32 registers a0/a1 (the first), b0/b1 (the second); `step` runs once a half h
    (0: the low element, 1: the high one), the fp32 inputs that follow (two registers each) named {s0}, {s1}, …;
    a0/a1 are rounded back to `dtype` (PTX's "bf16" or "f16"), two to a register, into $0.

    The widening is done by instructions the compiler does not recognise as a plain conversion, so that it cannot
    share it with a conversion before the cluster's exchange and keep an fp32 copy of the row alive across it:
    bf16 by bit moves, fp16 multiplied by 1.0 (exact) two to a register before its cvt (with the cvt alone, ptxas
    shared it: fp16 151936 took 128 registers, not 80, and 262144 167, not 128)."""
    widen = {"bf16": "prmt.b32 {lo}, {src}, 0, 0x1044; and.b32 {hi}, {src}, -65536; ",
             "f16": "mov.b32 w, 0x3C003C00; mul.rn.f16x2 w, {src}, w; mov.b32 {{t0, t1}}, w; "
                    "cvt.f32.f16 {lo}, t0; cvt.f32.f16 {hi}, t1; "}[dtype]
    names = "ab"[:packed]
    ptx = "{ .reg .f32 a0, a1, b0, b1; .reg .b16 t0, t1; .reg .b32 w; .reg .pred p; "
    ptx += "".join(widen.format(src=f"${i + 1}", lo=f"{n}0", hi=f"{n}1") for i, n in enumerate(names))
    for h in (0, 1):
        ptx += step.format(h=h, **{f"s{k}": f"${packed + 1 + 2 * k + h}" for k in range(4)})
    return ptx + f"cvt.rn.{dtype}x2.f32 $0, a1, a0; }}"


if gluon is not None:
    # y = x − shift − log s on 16-bit x held packed (log_softmax's last step)
    LOG_BF16 = gl.constexpr(packed_ptx("bf16", 1, "sub.f32 a{h}, a{h}, {s0}; sub.f32 a{h}, a{h}, {s1}; "))
    LOG_FP16 = gl.constexpr(packed_ptx("f16", 1, "sub.f32 a{h}, a{h}, {s0}; sub.f32 a{h}, a{h}, {s1}; "))
    # y = e^(x − shift) / s on 16-bit x held packed, as 2^((x − shift)·log2 e) · (1/s) (softmax's last step)
    EXP_STEP = ("sub.f32 a{h}, a{h}, {s0}; mul.f32 a{h}, a{h}, 0f3FB8AA3B; ex2.approx.ftz.f32 a{h}, a{h}; "
                "mul.f32 a{h}, a{h}, {s1}; ")
    EXP_BF16 = gl.constexpr(packed_ptx("bf16", 1, EXP_STEP))
    EXP_FP16 = gl.constexpr(packed_ptx("f16", 1, EXP_STEP))
    # the same of x held unscaled (a positive scale fused): x − shift, then times scale · log2 e ({s2}), or times
    # scale (log_softmax); shift is the row's max of x unscaled
    SCALED_EXP_STEP = "sub.f32 a{h}, a{h}, {s0}; mul.f32 a{h}, a{h}, {s2}; ex2.approx.ftz.f32 a{h}, a{h}; " \
                      "mul.f32 a{h}, a{h}, {s1}; "
    SCALED_LOG_STEP = "sub.f32 a{h}, a{h}, {s0}; mul.f32 a{h}, a{h}, {s2}; sub.f32 a{h}, a{h}, {s1}; "
    SCALED_EXP_BF16 = gl.constexpr(packed_ptx("bf16", 1, SCALED_EXP_STEP))
    SCALED_EXP_FP16 = gl.constexpr(packed_ptx("f16", 1, SCALED_EXP_STEP))
    SCALED_LOG_BF16 = gl.constexpr(packed_ptx("bf16", 1, SCALED_LOG_STEP))
    SCALED_LOG_FP16 = gl.constexpr(packed_ptx("f16", 1, SCALED_LOG_STEP))

    # x where a bool mask's byte (0 or 1) is 1, else -inf, for four 16-bit values at a time (MASK_PACKED): the four
    # bytes times 255 (no carries from 0 and 1), each byte's sign spread over its value's 16 bits (a prmt a pair),
    # one lop3 a pair
    SELECT_PACKED = "{ .reg .b32 m, lo, hi, n; mul.lo.u32 m, $4, 255; prmt.b32 lo, m, 0, 0x9988; " \
                    "prmt.b32 hi, m, 0, 0xBBAA; mov.b32 n, NEG_INF; lop3.b32 $0, $2, lo, n, 0xE2; " \
                    "lop3.b32 $1, $3, hi, n, 0xE2; }"
    SELECT_BF16 = gl.constexpr(SELECT_PACKED.replace("NEG_INF", "0xFF80FF80"))
    SELECT_FP16 = gl.constexpr(SELECT_PACKED.replace("NEG_INF", "0xFC00FC00"))
    # SELECT_PACKED from a vector's keep bits (MASK_BITS): $4 the vector's byte of bits, $8 the first of the four
    # values' places in the vector (0 or 4; $5–$7, $9–$11 the other three's, unused); its four bits times
    # 2^7 + 2^14 + 2^21 + 2^28 put bit k at the top of byte k (no two shifted copies overlap), whose sign the prmts
    # spread as SELECT_PACKED's
    SELECT_BITS = "{ .reg .b32 m, lo, hi, n; shr.b32 m, $4, $8; and.b32 m, m, 15; mul.lo.u32 m, m, 0x10204080; " \
                  "prmt.b32 lo, m, 0, 0x9988; prmt.b32 hi, m, 0, 0xBBAA; mov.b32 n, NEG_INF; " \
                  "lop3.b32 $0, $2, lo, n, 0xE2; lop3.b32 $1, $3, hi, n, 0xE2; }"
    SELECT_BITS_BF16 = gl.constexpr(SELECT_BITS.replace("NEG_INF", "0xFF80FF80"))
    SELECT_BITS_FP16 = gl.constexpr(SELECT_BITS.replace("NEG_INF", "0xFC00FC00"))

    # x + bias ($3, $4: fp32), or -inf where the bias ($2: two 16-bit values) is at or below its dtype's minimum
    # (BIAS_BLEND): the compare's mask of each half spread over a 32-bit value (prmt), one lop3 an element; NaN
    # compares unordered, so a NaN bias is added
    BIAS_FLOOR_PACKED = "{ .reg .b32 m, lo, hi, n; mov.b32 n, MIN2; set.gtu.u32.TYPE m, $2, n; " \
                        "prmt.b32 lo, m, 0, 0x1010; prmt.b32 hi, m, 0, 0x3232; " \
                        "lop3.b32 $0, $3, lo, 0xFF800000, 0xE2; lop3.b32 $1, $4, hi, 0xFF800000, 0xE2; }"
    BIAS_FLOOR_BF16 = gl.constexpr(BIAS_FLOOR_PACKED.replace("MIN2", "0xFF7FFF7F").replace("TYPE", "bf16x2"))
    BIAS_FLOOR_FP16 = gl.constexpr(BIAS_FLOOR_PACKED.replace("MIN2", "0xFBFFFBFF").replace("TYPE", "f16x2"))
    BIAS_FLOOR_F32 = gl.constexpr("{ .reg .b32 m; set.gtu.u32.f32 m, $2, 0fFF7FFFFF; "
                                  "lop3.b32 $0, $1, m, 0xFF800000, 0xE2; }")

    @gluon.constexpr_function
    def split_over_ctas(num_ctas, rank, dim):
        """cga_layout bases: dimension `dim` of a rank-`rank` tensor split over the cluster's CTAs."""
        num_ctas = getattr(num_ctas, "value", num_ctas)
        return [[(1 << i) if d == dim else 0 for d in range(rank)] for i in range(num_ctas.bit_length() - 1)]

    @gluon.constexpr_function
    def row_layout(num_ctas, num_warps, vec):
        """A row's pieces: [C, P], CTA c holding row c, 16 bytes a thread."""
        return gl.BlockedLayout([1, vec], [1, 32], [1, num_warps], [1, 0],
                                cga_layout=split_over_ctas(num_ctas, 2, 0))

    @gluon.constexpr_function
    def ends_layout(num_ctas, num_warps, vec, groups=2):
        """The row's partial end vectors (and, for CAUSAL_VECTORS, the vector its diagonal cuts, in 4 groups): [C,
        groups·VEC], each element held by one thread of each CTA."""
        groups = getattr(groups, "value", groups)
        return gl.BlockedLayout([1, 1], [32 // (groups * vec), groups * vec], [num_warps, 1], [1, 0],
                                cga_layout=split_over_ctas(num_ctas, 2, 0))

    @gluon.constexpr_function
    def one_each_layout(num_ctas, num_warps):
        """The values a CTA pushes: [C (source), T], one element a thread of the source CTA (one owner each, so no
        CTA over-credits the mbarrier), landing in the CTA that owns that column slice of the receive buffer."""
        return gl.BlockedLayout([1, 1], [1, 32], [1, num_warps], [1, 0], cga_layout=split_over_ctas(num_ctas, 2, 0))

    @gluon.constexpr_function
    def received_layout(num_ctas, num_warps):
        """A receive buffer's [C, T] as loaded: CTA c holds columns [c·T/C, (c + 1)·T/C)."""
        return gl.BlockedLayout([1, 1], [1, 32], [1, num_warps], [1, 0], cga_layout=split_over_ctas(num_ctas, 2, 1))

    @gluon.constexpr_function
    def folded_layout(num_ctas, num_warps, vec):
        """row_layout's [C, P] as [C, P / U, U] (U = 32 · num_warps · vec lanes, one vector a thread): each thread
        holds the same elements, so reshaping to it moves nothing."""
        return gl.BlockedLayout([1, 1, vec], [1, 1, 32], [1, 1, num_warps], [2, 1, 0],
                                cga_layout=split_over_ctas(num_ctas, 3, 0))

    @gluon.constexpr_function
    def vectors_layout(num_ctas, num_warps, vec):
        """row_layout's [C, P] as [C, P / VEC, VEC]: each thread holds the same elements, a vector along the last
        dimension, so reshaping to it moves nothing (compiled for sm_90: no shared memory)."""
        return gl.BlockedLayout([1, 1, vec], [1, 32, 1], [1, num_warps, 1], [2, 1, 0],
                                cga_layout=split_over_ctas(num_ctas, 3, 0))

    @gluon.jit
    def folded(x, VEC: gl.constexpr):
        """x ([C, P], row_layout) as [C, P / U, U] (folded_layout)."""
        C: gl.constexpr = gl.num_ctas()
        U: gl.constexpr = 32 * gl.num_warps() * VEC
        return gl.convert_layout(gl.reshape(x, [C, x.shape[1] // U, U]), folded_layout(C, gl.num_warps(), VEC))

    @gluon.jit
    def thread_sums(x, VEC: gl.constexpr):
        """x ([C, P], row_layout) summed within each thread: [C, U], one vector a thread, whatever P. The pieces'
        sums added so take one reduction across the CTA's threads, not one a piece (each is a barrier and a round
        trip through shared memory)."""
        return gl.sum(folded(x, VEC), axis=1)

    @gluon.jit
    def thread_maxes(x, VEC: gl.constexpr):
        """thread_sums' max: in fp32 for fp32 x, else in x's 16-bit dtype."""
        if x.dtype == gl.float32:
            return gl.max(folded(x, VEC), axis=1)
        else:
            return gl.reduce(folded(x, VEC), 1, _max16)

    @gluon.jit
    def receive_buffer():
        """[C, T] fp32 in shared memory: slot (src, j) gets what thread j of CTA src pushes."""
        C: gl.constexpr = gl.num_ctas()
        layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0], cga_layout=split_over_ctas(C, 2, 1))
        return gl.allocate_shared_memory(gl.float32, [C, 32 * gl.num_warps()], layout)

    @gluon.jit
    def exchange_barrier():
        """The mbarrier that counts the pushes a CTA receives. Allocate it and the receive buffers before anything
        else: allocated after the reductions, their bytes could be the reductions' scratch, and a fast peer's push
        would land in it (../shared/anchors/probes/README.md). The cluster barrier is split: arrived at here (every
        peer's mbarrier is initialised before anyone pushes), waited on just before the push."""
        bar = mbarrier.allocate_mbarrier()
        mbarrier.init(bar, count=1)
        mbarrier.fence_init_release_cluster()
        cluster.arrive(relaxed=True)
        return bar

    @gluon.jit
    def push(value, buffer, bar):
        """A CTA's value ([C], CTA c holding entry c) into slot column c of every CTA's `buffer`: thread j of CTA src
        writes slot (src, j), which lives in CTA j // (T / C). Each CTA then holds all C values, T / C times over."""
        layout: gl.constexpr = one_each_layout(gl.num_ctas(), gl.num_warps())
        zeros = gl.zeros([gl.num_ctas(), 32 * gl.num_warps()], gl.float32, layout)
        hopper.async_store(buffer, gl.convert_layout(value, gl.SliceLayout(1, layout))[:, None] + zeros, bar)

    @gluon.jit
    def received(buffer):
        return buffer.load(received_layout(gl.num_ctas(), gl.num_warps()))

    @gluon.jit
    def exchange(m, s, max_in, sum_in, bar, phase=0):
        """The row's one exchange: each CTA's max and sum ([C], CTA c holding entry c) pushed to every CTA once all
        are ready to receive (exchange_barrier's arrive), and every CTA's received: (maxes, sums), [C, T] as
        `received` loads them. A kernel that exchanges again (a row after row) arrives at the cluster barrier once
        it has read what it received, and passes the exchange's count modulo 2 as `phase`."""
        cluster.wait()
        mbarrier.expect(bar, max_in.nbytes_per_cta + sum_in.nbytes_per_cta)
        push(m, max_in, bar)
        push(s, sum_in, bar)
        mbarrier.wait(bar, phase, deps=[max_in, sum_in])
        return received(max_in), received(sum_in)

    @gluon.jit
    def one_a_cta(value):
        """A [T] reduction of the received values (split over the CTAs, every entry the same) as one value a CTA:
        [C], CTA c holding entry c."""
        C: gl.constexpr = gl.num_ctas()
        T: gl.constexpr = 32 * gl.num_warps()
        layout: gl.constexpr = one_each_layout(C, gl.num_warps())
        return gl.max(gl.convert_layout(gl.reshape(value, [C, T // C]), layout), axis=1)

    @gluon.jit
    def window_bounds(row, stride, N, VEC: gl.constexpr):
        """Where row `row` (of `stride`, N elements) lies in its window, which starts at the 16-byte boundary at or
        before the row's start: (off, the elements before the row; first_whole, end_whole, the lanes of the whole
        vectors inside the row). The other tensors' rows start as far past a boundary (the launch sees to it)."""
        off = ((row * stride) % VEC).to(gl.int32)
        return off, gl.cdiv(off, VEC) * VEC, (off + N) // VEC * VEC

    @gluon.jit
    def row_window(ptr, row, stride, off, VEC: gl.constexpr):
        """Row `row` of a tensor from the 16-byte boundary at or before its start, `off` elements before it."""
        return ptr + gl.multiple_of(row * stride - off, VEC)

    @gluon.jit
    def row_of(ptr, stride, row, group, period, off, SHARED: gl.constexpr, PHASED: gl.constexpr,
               VECTORS: gl.constexpr, VEC: gl.constexpr):
        """A mask's or bias's row for x's row `row`: (its window from the 16-byte boundary at or before its start,
        `off` elements before it, as row_window gives x's, where it is read in VECTORS; the pointer and row stride
        its elements are read by, as mask_rows gives them). PHASED (shared rows laid out by masking.phased_rows,
        `stride` a multiple of VEC): the copy of the shared row that starts `off` elements past a 16-byte boundary,
        as x's row does, its window so, and the shared row itself, element 0 at column 0, row stride 0."""
        own = row  # the row of it that x's row reads
        if SHARED:
            own = ((row.to(gl.int32) // group) % period).to(gl.int64)
        if PHASED:
            window = ptr + gl.multiple_of((own * VEC + off) * stride, VEC)
            ptr = window + off
            stride = 0
        else:
            window = ptr
            if VECTORS:  # from its own row's start, as x's, where mask_rows would give the shared row's pointer with
                # row stride 0: compiled for sm_90, biased rows/64 bf16 128256 in 16 × 8 then takes 64 registers, not 68
                window = row_window(ptr, own, stride, off, VEC)  # off is 0 on ALIGNED rows
            ptr, stride = mask_rows(ptr, stride, row, group, period, SHARED)
        return window, ptr, stride

    @gluon.jit
    def piece(start: gl.constexpr, PIECE: gl.constexpr, STEP: gl.constexpr, first_whole, end_whole,
              layout: gl.constexpr):
        """A piece's lanes — CTA c holds [c·STEP + start, c·STEP + start + PIECE) of the row's window — and which of
        them it moves: the whole 16-byte vectors of the row among its own STEP lanes. first_whole, end_whole and
        STEP are multiples of VEC, so the mask is constant over each vector (and known when compiling for j)."""
        c = gl.arange(0, gl.num_ctas(), gl.SliceLayout(1, layout))
        j = gl.arange(0, PIECE, gl.SliceLayout(0, layout))
        lanes = c[:, None] * STEP + start + j[None, :]
        return lanes, (lanes >= first_whole) & (lanes < end_whole) & (start + j < STEP)[None, :]

    @gluon.jit
    def end_vectors(off, first_whole, end_whole, N, STEP: gl.constexpr, VEC: gl.constexpr, layout: gl.constexpr,
                    diagonal=-1, DIAGONAL: gl.constexpr = False):
        """The row's partial end vectors, element by element, each in the CTA whose span holds it: the head (when
        the row starts past a boundary) and the tail (when it ends before one and is not the head), as (lanes,
        cols, which of them are such elements); with DIAGONAL, a third group: the whole vector at lane `diagonal`
        (a causal row's diagonal cuts it; none when it is -1), and a fourth, empty (group counts are powers of 2)."""
        GROUPS: gl.constexpr = 4 if DIAGONAL else 2
        c = gl.arange(0, gl.num_ctas(), gl.SliceLayout(1, layout))[:, None]
        ends = gl.arange(0, GROUPS * VEC, gl.SliceLayout(0, layout))[None, :]
        end_lanes = gl.where(ends < VEC, ends, end_whole + ends - VEC) + c * 0
        end_cols = end_lanes - off
        is_partial = gl.where(ends < VEC, off > 0, end_whole >= first_whole)
        if DIAGONAL:
            in_diagonal = (ends >= 2 * VEC) & (ends < 3 * VEC)
            end_lanes = gl.where(in_diagonal, diagonal + ends - 2 * VEC, end_lanes)
            end_cols = end_lanes - off
            is_partial = gl.where(ends < 2 * VEC, is_partial, in_diagonal & (diagonal >= 0))
        at_end = is_partial & (end_lanes >= c * STEP) & (end_lanes < c * STEP + STEP) & (end_cols >= 0) \
            & (end_cols < N)
        return end_lanes, end_cols, at_end

    @gluon.jit
    def last_kept_column(row, causal_m, N, IN_32_BITS: gl.constexpr = True):
        """The last column a causal row keeps (bottom-right aligned: query i = row mod M keeps keys j ≤ i + (N − M));
        negative where it keeps none. In 32 bits, or (IN_32_BITS False) in the row index's 64, which the columns
        compared with it then are too: where 32 bits measured slower (cluster.LEAN_CAUSAL_AT's comment)."""
        if IN_32_BITS:
            last = (row % causal_m).to(gl.int32) + (N - causal_m)
        else:
            last = (row % causal_m) + (N - causal_m)
        return last

    @gluon.jit
    def kept(cols, row, N, mask_ptr, mask_stride, causal_m, HAS_MASK: gl.constexpr, CAUSAL: gl.constexpr):
        """True where the keep-mask and the causal mask keep a column."""
        keep = (cols >= 0) & (cols < N)
        if HAS_MASK:
            keep = keep & (gl.load(mask_ptr + row * mask_stride + cols, mask=keep, other=0) != 0)
        if CAUSAL:
            keep = keep & (cols <= last_kept_column(row, causal_m, N, False))
        return keep

    @gluon.jit
    def load_lanes(row_ptr, lanes, move, other, EVEN: gl.constexpr, EVICT: gl.constexpr):
        if EVEN:
            return gl.load(row_ptr + lanes, eviction_policy=EVICT)
        else:
            return gl.load(row_ptr + lanes, mask=move, other=other, eviction_policy=EVICT)

    @gluon.jit
    def store_lanes(row_ptr, lanes, move, values, EVEN: gl.constexpr):
        if EVEN:
            gl.store(row_ptr + lanes, values)
        else:
            gl.store(row_ptr + lanes, values, mask=move)

    @gluon.jit
    def _keep(x, cols, row, N, mask_ptr, mask_stride, causal_m, HAS_MASK: gl.constexpr, CAUSAL: gl.constexpr,
              LEAN_CAUSAL: gl.constexpr = False):
        """x, -inf where the keep-mask or the causal mask drop a column. LEAN_CAUSAL: the causal mask alone as one
        32-bit compare an element (x is -inf outside the row already: its lanes there were not loaded)."""
        if HAS_MASK or (CAUSAL and not LEAN_CAUSAL):
            x = gl.where(kept(cols, row, N, mask_ptr, mask_stride, causal_m, HAS_MASK, CAUSAL), x, -float("inf"))
        elif CAUSAL:
            x = gl.where(cols <= last_kept_column(row, causal_m, N), x, -float("inf"))
        return x

    @gluon.jit
    def _keep_bits(bits_row, lanes, move, VEC: gl.constexpr, EVICT: gl.constexpr):
        """The keep bits of a piece's lanes ([C, P], row_layout) from a copy of masking.phased_bits (bits_row: its
        window, a byte for each vector of VEC = 8 lanes), as (bits, place): each lane's vector's byte and the lane's
        place in the vector, int32, lane kept where bit `place` of `bits` is set. One byte read a vector, in a
        [C, P / VEC, VEC] view of the piece (vectors_layout, which moves nothing); vectors not moved read nothing."""
        C: gl.constexpr = lanes.shape[0]
        P: gl.constexpr = lanes.shape[1]
        V3: gl.constexpr = vectors_layout(gl.num_ctas(), gl.num_warps(), VEC)
        # each vector's first lane and whether it moves, [C, P / VEC] (the view's slice), reduced within each thread
        first = gl.min(gl.convert_layout(gl.reshape(lanes, [C, P // VEC, VEC]), V3), axis=2)
        moved = gl.max(gl.convert_layout(gl.reshape(move.to(gl.int32), [C, P // VEC, VEC]), V3), axis=2) != 0
        byte = gl.load(bits_row + first // VEC, mask=moved, other=0, eviction_policy=EVICT).to(gl.int32)
        i = gl.arange(0, VEC, gl.SliceLayout(0, gl.SliceLayout(1, V3)))
        bits, place = gl.broadcast(byte[:, :, None], i[None, None, :])
        return (gl.convert_layout(gl.reshape(bits, [C, P]), lanes.type.layout),
                gl.convert_layout(gl.reshape(place, [C, P]), lanes.type.layout))

    @gluon.jit
    def _end_bits_kept(bits_row, end_lanes, at_end, VEC: gl.constexpr):
        """Whether the keep-mask keeps each of the end vectors' lanes, from a copy of masking.phased_bits (bits_row:
        its window, a byte for each vector of VEC lanes), a byte read an element (MASK_BITS)."""
        end_bits = gl.load(bits_row + end_lanes // VEC, mask=at_end, other=0)
        return ((end_bits >> (end_lanes % VEC).to(gl.uint8)) & 1) != 0

    @gluon.jit
    def _load(x_row, lanes, move, row, off, N, scale, mask_ptr, mask_stride, mask_row, causal_m,
              EVEN: gl.constexpr, ALIGNED: gl.constexpr, VEC: gl.constexpr, HOLD_F32: gl.constexpr,
              HAS_SCALE: gl.constexpr, HAS_MASK: gl.constexpr, CAUSAL: gl.constexpr, EVICT: gl.constexpr,
              MASK_VECTORS: gl.constexpr, bias_ptr, bias_stride, bias_row, BIAS_MIN: gl.constexpr,
              HAS_BIAS: gl.constexpr, BIAS_VECTORS: gl.constexpr, MASK_PACKED: gl.constexpr = False,
              last=0, CAUSAL_VECTORS: gl.constexpr = False, POSITIVE_SCALE: gl.constexpr = False,
              MASK_BLEND: gl.constexpr = False, BIAS_BLEND: gl.constexpr = False,
              LEAN_CAUSAL: gl.constexpr = False, MASK_EVICT: gl.constexpr = "", BIAS_EVICT: gl.constexpr = "",
              MASK_BITS: gl.constexpr = False):
        """A piece's vectors to move, -inf elsewhere and where the masks drop a column: in fp32 times the scale
        (HOLD_F32), else as loaded (unscaled), two 16-bit values to a register. No per-element work on a plain row.
        A causal row's vectors past its last kept column are not read. The keep-mask's bytes of a vector are one
        load where the mask lies on x's grid (MASK_VECTORS: mask_row is its row's window, as x_row is x's), else
        a byte at a time (lanes not moved are -inf already, and read no mask). A bias (held in fp32) is added after
        the scale, read as the mask is (BIAS_VECTORS: bias_row its row's window), else element by element.
        CAUSAL_VECTORS: a causal row reads only the vectors it keeps whole (through `last`, the lane of its last
        kept column), with no per-element select; the vector its diagonal cuts is the end vectors' (DIAGONAL).
        MASK_BITS: the mask's phase copies in bits, a byte a vector (_keep_bits)."""
        if ALIGNED:
            cols = lanes
        else:
            cols = lanes - off
        if CAUSAL_VECTORS:
            move = move & ((lanes // VEC) * VEC + (VEC - 1) <= last)
            x = load_lanes(x_row, lanes, move, -float("inf"), False, EVICT)
        elif CAUSAL:
            # whole vectors: a vector is read if its first column is kept (the others are masked below)
            move = move & ((lanes // VEC) * VEC - off <= last_kept_column(row, causal_m, N, LEAN_CAUSAL))
            x = load_lanes(x_row, lanes, move, -float("inf"), False, EVICT)
        else:
            x = load_lanes(x_row, lanes, move, -float("inf"), EVEN, EVICT)
        if HOLD_F32:
            x = x.to(gl.float32)
            if HAS_SCALE:
                x = x * scale
                if (not EVEN or CAUSAL_VECTORS) and not POSITIVE_SCALE:  # (a causal row's loads are masked)
                    # -inf times a negative scale is +inf. Times a positive one it stays -inf: then no select,
                    # whose predicates kept ptxas from having a thread's loads in flight at once (POSITIVE_SCALE)
                    x = gl.where(move, x, -float("inf"))
            if HAS_BIAS:
                if BIAS_VECTORS:
                    bias = load_lanes(bias_row, lanes, move, 0.0, EVEN and not CAUSAL, BIAS_EVICT)
                else:
                    bias = gl.load(bias_ptr + row * bias_stride + cols, mask=move, other=0.0,
                                   eviction_policy=BIAS_EVICT)
                x = _biased(x, bias, BIAS_MIN, BIAS_BLEND)
        if MASK_VECTORS:
            if MASK_BITS:  # (held packed: _select_bits reads the bits; else the where below, from keep's bytes)
                bits, place = _keep_bits(mask_row, lanes, move, VEC, MASK_EVICT)
                keep = ((bits >> place) & 1).to(gl.uint8)
            elif CAUSAL:
                keep = load_lanes(mask_row, lanes, move, 0, False, MASK_EVICT)
            else:
                keep = load_lanes(mask_row, lanes, move, 0, EVEN, MASK_EVICT)
            if MASK_BITS and MASK_PACKED and not HOLD_F32:
                x = _select_bits(x, bits, place)
            elif MASK_PACKED and not HOLD_F32:
                x = _select_packed(x, keep)
            elif MASK_BLEND and HOLD_F32:
                x = _select_blend(x, keep)
            else:
                x = gl.where(keep != 0, x, -float("inf"))
            return _keep(x, cols, row, N, mask_ptr, mask_stride, causal_m, False, CAUSAL and not CAUSAL_VECTORS,
                         LEAN_CAUSAL)
        return _keep(x, cols, row, N, mask_ptr, mask_stride, causal_m, HAS_MASK, CAUSAL and not CAUSAL_VECTORS,
                     LEAN_CAUSAL)

    @gluon.jit
    def _row_factor(target, loss_scale, ignore_index, N, class_weight_ptr, z_loss, HAS_CLASS_WEIGHT: gl.constexpr):
        """cross_entropy's factors of a row's gradient from its target and the loss's scale (loaded with the row):
        the target's class weight (1 without weights) times the scale, and the z-loss's 2z · scale; both 0 for a
        row whose target is ignore_index. A target out of [0, N) is read clamped: the targets' check raises it on
        the device."""
        kept = target != ignore_index
        scale = gl.where(kept, loss_scale, 0.0)
        factor = scale
        if HAS_CLASS_WEIGHT:
            clamped = gl.minimum(gl.maximum(target.to(gl.int64), 0), N - 1)
            factor = factor * gl.load(class_weight_ptr + clamped).to(gl.float32)
        return factor, scale * (2.0 * z_loss)

    @gluon.jit
    def _uncut(lanes, move, diagonal, VEC: gl.constexpr, DIAGONAL: gl.constexpr):
        """move, less the vector at lane `diagonal` (DIAGONAL: the end vectors hold it; False under DIAGONAL_STORE)."""
        if DIAGONAL:
            move = move & ((lanes // VEC) * VEC != diagonal)
        return move

    @gluon.jit
    def _select_packed(x, keep):
        """gl.where(keep != 0, x, -inf) on 16-bit x held packed, a pair a prmt and a lop3 (keep: a bool mask's
        bytes, 0 or 1), where the where takes a byte unpacked, a compare and a select an element."""
        if x.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(SELECT_BF16, "=r,=r,r,r,r", [x, keep], dtype=x.dtype, is_pure=True,
                                             pack=4)
        else:
            return gl.inline_asm_elementwise(SELECT_FP16, "=r,=r,r,r,r", [x, keep], dtype=x.dtype, is_pure=True,
                                             pack=4)

    @gluon.jit
    def _select_bits(x, bits, place):
        """_select_packed's select from keep bits (MASK_BITS): bits, each lane's vector's byte of them, and place,
        the lane's place in its vector (int32 both, so that four lanes' are four registers, the same one)."""
        if x.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(SELECT_BITS_BF16, "=r,=r" + ",r" * 10, [x, bits, place], dtype=x.dtype,
                                             is_pure=True, pack=4)
        else:
            return gl.inline_asm_elementwise(SELECT_BITS_FP16, "=r,=r" + ",r" * 10, [x, bits, place], dtype=x.dtype,
                                             is_pure=True, pack=4)

    @gluon.jit
    def _select_blend(x, keep):
        """gl.where(keep != 0, x, -inf) on fp32 x as bits, (x & m) | (-inf & ~m) with m = -keep (keep: a bool mask's
        bytes, 0 or 1): no compare, no predicate."""
        m = 0 - keep.to(gl.int32)
        bits = x.to(gl.int32, bitcast=True)
        return ((bits & m) | (-8388608 & ~m)).to(gl.float32, bitcast=True)  # -8388608: -inf's bits, 0xff800000

    @gluon.jit
    def _biased(x, bias, BIAS_MIN: gl.constexpr, BLEND: gl.constexpr = False):
        """x + bias in fp32, -inf where the bias is at or below its dtype's minimum (a NaN bias is added); BLEND: -inf
        selected as bits (BIAS_BLEND; a thread's elements in pairs)."""
        wide = bias.to(gl.float32)
        z = x + wide
        if not BLEND:
            return gl.where(wide <= BIAS_MIN, -float("inf"), z)
        elif bias.dtype == gl.float32:
            return gl.inline_asm_elementwise(BIAS_FLOOR_F32, "=r,r,r", [z, bias], dtype=gl.float32, is_pure=True,
                                             pack=1)
        elif bias.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(BIAS_FLOOR_BF16, "=r,=r,r,r,r", [bias, z], dtype=gl.float32,
                                             is_pure=True, pack=2)
        else:
            return gl.inline_asm_elementwise(BIAS_FLOOR_FP16, "=r,=r,r,r,r", [bias, z], dtype=gl.float32,
                                             is_pure=True, pack=2)

    @gluon.jit
    def staging_buffer(dtype: gl.constexpr, PIECE: gl.constexpr):
        """[C, PIECE] of `dtype` in shared memory, CTA c holding row c, as a thread of the row's layout copies a piece
        of it: 16 bytes a thread, one after another (cluster_backward's STAGED)."""
        C: gl.constexpr = gl.num_ctas()
        layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0], cga_layout=split_over_ctas(C, 2, 0))
        return gl.allocate_shared_memory(dtype, [C, PIECE], layout)

    @gluon.jit
    def staging_buffers(dtype: gl.constexpr, P0: gl.constexpr, P1: gl.constexpr, P2: gl.constexpr):
        """staging_buffer of each piece (a piece of no lanes: the first's again, unused)."""
        b0 = staging_buffer(dtype, P0)
        b1 = b0
        b2 = b0
        if P1 > 0:
            b1 = staging_buffer(dtype, P1)
        if P2 > 0:
            b2 = staging_buffer(dtype, P2)
        return b0, b1, b2

    @gluon.jit
    def stage(buffer, row_ptr, lanes, move, EVEN: gl.constexpr, EVICT: gl.constexpr = ""):
        """A piece's lanes of a row into `buffer` by asynchronous copies (lanes not moved read as 0)."""
        if EVEN:
            async_copy.async_load(buffer, row_ptr + lanes, eviction_policy=EVICT)
        else:
            async_copy.async_load(buffer, row_ptr + lanes, mask=move, eviction_policy=EVICT)

    @gluon.jit
    def _max16(a, b):
        """max of two bf16 or fp16 values in their own dtype: exact, and no fp32 copy of the row to keep alive
        until the sum (tl.max widens 16-bit values first). NaN loses here, and then fills the sum."""
        if a.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise("max.bf16 $0, $1, $2;", "=h,h,h", [a, b], dtype=a.dtype, is_pure=True,
                                             pack=1)
        else:
            return gl.inline_asm_elementwise("max.f16 $0, $1, $2;", "=h,h,h", [a, b], dtype=a.dtype, is_pure=True,
                                             pack=1)

    @gluon.jit
    def _maximum(a, b):
        """The elementwise max, in a and b's dtype (16-bit: exact, as _max16)."""
        if a.dtype == gl.float32:
            return gl.maximum(a, b)
        else:
            return _max16(a, b)

    @gluon.jit
    def _max(x):
        """The max of each CTA's lanes, in fp32."""
        if x.dtype == gl.float32:
            return gl.max(x, axis=1)
        else:
            return gl.reduce(x, 1, _max16).to(gl.float32)

    @gluon.jit
    def _exp(x, shift, k):
        """e^((x − shift)·k / log2 e) in fp32, as 2^((x − shift)·k), k = log2 e (times the scale when x is held
        unscaled): x − shift first, exact for 16-bit x, so that e^0 is 1 whatever the magnitude of x
        (x·k − shift·k would be off by |x|·2^-24)."""
        return gl.exp2((x.to(gl.float32) - shift[:, None]) * k)

    @gluon.jit
    def _fast_log(s):
        """log s as lg2.approx(s) · ln 2, as masking.log_of_sum: gl.log is some 30 instructions."""
        return gl.inline_asm_elementwise("lg2.approx.f32 $0, $1;", "=r,r", [s], dtype=gl.float32, is_pure=True,
                                         pack=1) * 0.6931471805599453

    @gluon.jit
    def _exponentials(x, shift, k, LOG: gl.constexpr, VEC: gl.constexpr):
        """(what the CTA holds of a piece from here, each thread's sum of its e^(x − shift): thread_sums). An fp32
        softmax row replaces x by its exponentials (one exp an element); log_softmax, and a softmax of 16-bit x,
        keep x (16-bit values stay packed) and compute the output from it at the end. The exponentials held in
        16 bits would be rounded once there and once more when scaled: y would be within two roundings of its fp32
        value, not one (28 % of bf16 elements off by an ulp); a second exp an element costs less than that."""
        if LOG or x.dtype != gl.float32:
            return x, thread_sums(_exp(x, shift, k), VEC)
        else:
            e = _exp(x, shift, k)
            return e, thread_sums(e, VEC)

    @gluon.jit
    def _normalized(x, f, shift, g, k, scale, SCALED: gl.constexpr, LOG: gl.constexpr):
        """y from x as held, computed in fp32 and rounded once to x's dtype: for fp32 x, the exponentials times the
        CTA's factor f (softmax) or x − shift − g (log_softmax, g = log s); for 16-bit x, 2^((x − shift)·log2 e)
        · g (softmax, g = 1/s) or x − shift − g, each in one piece of inline PTX, so that the compiler cannot keep
        an fp32 copy of the row alive across the exchange (it would share a plain widening with the sum's).
        SCALED: x is held unscaled, shift is its max, and x − shift is multiplied by k = scale · log2 e (softmax)
        or by the scale (log_softmax) before the rest."""
        if SCALED:
            return _normalized_scaled(x, f, shift, g, k, scale, LOG)
        if x.dtype == gl.float32:
            if LOG:
                return x - shift - g
            else:
                return x * f
        elif LOG and x.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(LOG_BF16, "=r,r,r,r,r,r", [x, shift, g], dtype=x.dtype, is_pure=True,
                                             pack=2)
        elif LOG:
            return gl.inline_asm_elementwise(LOG_FP16, "=r,r,r,r,r,r", [x, shift, g], dtype=x.dtype, is_pure=True,
                                             pack=2)
        elif x.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(EXP_BF16, "=r,r,r,r,r,r", [x, shift, g], dtype=x.dtype, is_pure=True,
                                             pack=2)
        else:
            return gl.inline_asm_elementwise(EXP_FP16, "=r,r,r,r,r,r", [x, shift, g], dtype=x.dtype, is_pure=True,
                                             pack=2)

    @gluon.jit
    def _normalized_scaled(x, f, shift, g, k, scale, LOG: gl.constexpr):
        """_normalized of x held unscaled (a positive scale fused); fp32 x is an end vector's (softmax: its
        exponentials, times the CTA's factor f)."""
        if x.dtype == gl.float32:
            if LOG:
                return (x - shift) * scale - g
            else:
                return x * f
        elif LOG and x.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(SCALED_LOG_BF16, "=r,r,r,r,r,r,r,r", [x, shift, g, scale],
                                             dtype=x.dtype, is_pure=True, pack=2)
        elif LOG:
            return gl.inline_asm_elementwise(SCALED_LOG_FP16, "=r,r,r,r,r,r,r,r", [x, shift, g, scale],
                                             dtype=x.dtype, is_pure=True, pack=2)
        elif x.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(SCALED_EXP_BF16, "=r,r,r,r,r,r,r,r", [x, shift, g, k],
                                             dtype=x.dtype, is_pure=True, pack=2)
        else:
            return gl.inline_asm_elementwise(SCALED_EXP_FP16, "=r,r,r,r,r,r,r,r", [x, shift, g, k],
                                             dtype=x.dtype, is_pure=True, pack=2)

    @gluon.jit
    def cluster_kernel(x_ptr, y_ptr, N, stride_x, stride_y, scale, mask_ptr, mask_stride, causal_m,
                       STEP: gl.constexpr, P0: gl.constexpr, P1: gl.constexpr, P2: gl.constexpr,
                       VEC: gl.constexpr,
                       EVEN: gl.constexpr, ALIGNED: gl.constexpr, HOLD_F32: gl.constexpr, EVICT: gl.constexpr,
                       HAS_SCALE: gl.constexpr, HAS_MASK: gl.constexpr, CAUSAL: gl.constexpr, LOG: gl.constexpr,
                       MASK_VECTORS: gl.constexpr, mask_group=1, mask_period=0, MASK_SHARED: gl.constexpr = False,
                       bias_ptr=None, bias_stride=0, HAS_BIAS: gl.constexpr = False, BIAS_MIN: gl.constexpr = 0.0,
                       bias_group=1, bias_period=0, BIAS_SHARED: gl.constexpr = False,
                       BIAS_VECTORS: gl.constexpr = False, MASK_PACKED: gl.constexpr = False,
                       target_ptr=None, lse_ptr=None, HAS_FACTOR: gl.constexpr = False,
                       WRITE_LSE: gl.constexpr = False, STORE_Y: gl.constexpr = True, class_weight_ptr=None,
                       loss_scale_ptr=None, ignore_index=-100, z_loss=0.0, HAS_CLASS_WEIGHT: gl.constexpr = False,
                       HAS_Z_LOSS: gl.constexpr = False, CAUSAL_VECTORS: gl.constexpr = False,
                       POSITIVE_SCALE: gl.constexpr = False, MASK_BLEND: gl.constexpr = False,
                       REVERSED: gl.constexpr = False, BIAS_BLEND: gl.constexpr = False,
                       LEAN_CAUSAL: gl.constexpr = False, DIAGONAL_STORE: gl.constexpr = False,
                       KEEP_SHARED: gl.constexpr = False, MASK_PHASED: gl.constexpr = False,
                       BIAS_PHASED: gl.constexpr = False, MASK_BITS: gl.constexpr = False):
        DIAGONAL: gl.constexpr = CAUSAL and CAUSAL_VECTORS
        # (KEEP_SHARED) a shared mask or bias row read evict_last as x is: read plainly, x's evict_last lines would
        # push it out of L2 first, and every row read it from HBM again (KEEP_SHARED_ROWS)
        MASK_EVICT: gl.constexpr = "evict_last" if KEEP_SHARED and MASK_SHARED else ""
        BIAS_EVICT: gl.constexpr = "evict_last" if KEEP_SHARED and BIAS_SHARED else ""
        UNCUT: gl.constexpr = DIAGONAL and not DIAGONAL_STORE  # the pieces' stores skip the diagonal's vector
        HAS_ENDS: gl.constexpr = (not ALIGNED) or DIAGONAL
        X: gl.constexpr = row_layout(gl.num_ctas(), gl.num_warps(), VEC)
        ENDS: gl.constexpr = ends_layout(gl.num_ctas(), gl.num_warps(), VEC, 4 if DIAGONAL else 2)
        max_in = receive_buffer()
        sum_in = receive_buffer()
        bar = exchange_barrier()

        row = gl.program_id(0).to(gl.int64)  # one row a cluster; 64-bit: row · stride passes 2^31
        if REVERSED:  # (CAUSAL, HEAVIEST_FIRST) the last rows first
            row = gl.num_programs(0).to(gl.int64) - 1 - row
        # 2^((x − shift)·k) = e^(x − shift), or e^((x − shift)·scale) for 16-bit x held unscaled (SCALED)
        SCALED: gl.constexpr = HAS_SCALE and not HOLD_F32
        k = LOG2E
        if SCALED:
            k = scale * LOG2E
        off, first_whole, end_whole = window_bounds(row, stride_x, N, VEC)
        x_row = row_window(x_ptr, row, stride_x, off, VEC)
        y_row = row_window(y_ptr, row, stride_y, off, VEC)
        mask_row, mask_ptr, mask_stride = row_of(mask_ptr, mask_stride, row, mask_group, mask_period, off,
                                                 MASK_SHARED, MASK_PHASED, MASK_VECTORS, VEC)
        bias_row = bias_ptr
        if HAS_BIAS:  # only then, as fused's
            bias_row, bias_ptr, bias_stride = row_of(bias_ptr, bias_stride, row, bias_group, bias_period, off,
                                                     BIAS_SHARED, BIAS_PHASED, BIAS_VECTORS, VEC)
        last = 0  # CAUSAL_VECTORS: the lane of the row's last kept column, and the whole vector it cuts (or -1)
        diagonal = -1
        if DIAGONAL:
            last = last_kept_column(row, causal_m, N) + off
            cut = (gl.maximum(last, 0) // VEC) * VEC
            cuts = (last >= 0) & ((last + 1) % VEC != 0) & (cut >= first_whole) & (cut + VEC <= end_whole)
            diagonal = gl.where(cuts, cut, -1)

        if HAS_FACTOR:  # cross_entropy's factors' inputs, read with the row: loaded after the exchange, a factor held
            # every store of the row back by a load's latency (bf16 4096×128256: 13 % slower than the softmax; H200,
            # twenty-fifth session). Used after the exchange: compared here, the target's data was waited for among
            # the row's loads (bf16 50257: the row's 14 vector loads issued 8, a wait, then the rest). The z-loss's
            # factor is 2z times the same scale (a factor of its own loaded here took bf16 50257 to 110 registers).
            target = gl.load(target_ptr + row)
            loss_scale = gl.load(loss_scale_ptr)
        # Every load is issued before the first reduction: a reduction's barrier would hold back the loads after it.
        lanes0, move0 = piece(0, P0, STEP, first_whole, end_whole, X)
        x0 = _load(x_row, lanes0, move0, row, off, N, scale, mask_ptr, mask_stride, mask_row, causal_m,
                   EVEN, ALIGNED, VEC, HOLD_F32, HAS_SCALE, HAS_MASK, CAUSAL, EVICT, MASK_VECTORS,
                   bias_ptr, bias_stride, bias_row, BIAS_MIN, HAS_BIAS, BIAS_VECTORS, MASK_PACKED, last,
                   DIAGONAL, POSITIVE_SCALE, MASK_BLEND, BIAS_BLEND, LEAN_CAUSAL, MASK_EVICT, BIAS_EVICT, MASK_BITS)
        if P1 > 0:
            lanes1, move1 = piece(P0, P1, STEP, first_whole, end_whole, X)
            x1 = _load(x_row, lanes1, move1, row, off, N, scale, mask_ptr, mask_stride, mask_row, causal_m,
                       EVEN, ALIGNED, VEC, HOLD_F32, HAS_SCALE, HAS_MASK, CAUSAL, EVICT, MASK_VECTORS,
                       bias_ptr, bias_stride, bias_row, BIAS_MIN, HAS_BIAS, BIAS_VECTORS, MASK_PACKED, last,
                       DIAGONAL, POSITIVE_SCALE, MASK_BLEND, BIAS_BLEND, LEAN_CAUSAL, MASK_EVICT, BIAS_EVICT, MASK_BITS)
        if P2 > 0:
            lanes2, move2 = piece(P0 + P1, P2, STEP, first_whole, end_whole, X)
            x2 = _load(x_row, lanes2, move2, row, off, N, scale, mask_ptr, mask_stride, mask_row, causal_m,
                       EVEN, ALIGNED, VEC, HOLD_F32, HAS_SCALE, HAS_MASK, CAUSAL, EVICT, MASK_VECTORS,
                       bias_ptr, bias_stride, bias_row, BIAS_MIN, HAS_BIAS, BIAS_VECTORS, MASK_PACKED, last,
                       DIAGONAL, POSITIVE_SCALE, MASK_BLEND, BIAS_BLEND, LEAN_CAUSAL, MASK_EVICT, BIAS_EVICT, MASK_BITS)
        if HAS_ENDS:
            end_lanes, end_cols, at_end = end_vectors(off, first_whole, end_whole, N, STEP, VEC, ENDS, diagonal,
                                                      DIAGONAL)
            end_x = gl.load(x_row + end_lanes, mask=at_end, other=-float("inf"), eviction_policy=EVICT).to(gl.float32)
            if HAS_SCALE and HOLD_F32:
                end_x = gl.where(at_end, end_x * scale, -float("inf"))
            if HAS_BIAS:
                end_bias = gl.load(bias_ptr + row * bias_stride + end_cols, mask=at_end, other=0.0)
                end_x = _biased(end_x, end_bias, BIAS_MIN)
            if HAS_MASK and MASK_BITS:  # (mask_row: the copy's window, a byte a vector)
                end_x = gl.where(_end_bits_kept(mask_row, end_lanes, at_end, VEC), end_x, -float("inf"))
            end_x = _keep(end_x, end_cols, row, N, mask_ptr, mask_stride, causal_m, HAS_MASK and not MASK_BITS,
                          CAUSAL, LEAN_CAUSAL)

        # The pieces' maxes and sums taken within each thread first: one reduction across the CTA's threads each.
        m = thread_maxes(x0, VEC)
        if P1 > 0:
            m = _maximum(m, thread_maxes(x1, VEC))
        if P2 > 0:
            m = _maximum(m, thread_maxes(x2, VEC))
        m = gl.convert_layout(_max(m), gl.SliceLayout(1, X))
        if HAS_ENDS:
            m = gl.maximum(m, gl.convert_layout(gl.max(end_x, axis=1), gl.SliceLayout(1, X)))
        shift = gl.where(m == -float("inf"), 0.0, m)  # an empty or all -inf span shifts by 0: sum 0, not NaN
        x0, t = _exponentials(x0, shift, k, LOG, VEC)
        if P1 > 0:
            x1, t1 = _exponentials(x1, shift, k, LOG, VEC)
            t += t1
        if P2 > 0:
            x2, t2 = _exponentials(x2, shift, k, LOG, VEC)
            t += t2
        s = gl.convert_layout(gl.sum(t, axis=1), gl.SliceLayout(1, X))
        if HAS_ENDS:
            end_e = _exp(end_x, gl.convert_layout(shift, gl.SliceLayout(1, ENDS)), k)
            s += gl.convert_layout(gl.sum(end_e, axis=1), gl.SliceLayout(1, X))
            if not LOG:
                end_x = end_e

        maxes, sums = exchange(m, s, max_in, sum_in, bar)
        row_max = gl.max(maxes, axis=0)  # [T], split over the CTAs: every entry holds the row's max
        row_shift = gl.where(row_max == -float("inf"), 0.0, row_max)  # an all -inf row: zeros (-inf), not NaN
        row_sum = gl.sum(sums * gl.exp2((maxes - row_shift[None, :]) * k), axis=0)
        # back to one value a CTA ([C], CTA c holding entry c); an all -inf row has sum 0: it is taken as 1
        shift_c = one_a_cta(row_shift)
        if LOG:
            # y = x − row_shift − log row_sum: two subtractions, as the other variants (x − shift is exact)
            g = one_a_cta(_fast_log(gl.where(row_sum == 0.0, 1.0, row_sum)))
            f = gl.zeros_like(g)  # unused
        else:
            # The sum's zero test after one_a_cta, not before: before, bf16 24576 in 4 CTAs of 8 warps took 36
            # registers, not 32, and ran 5 points of a copy slower (docs/perf-notes.md).
            row_sum = one_a_cta(row_sum)
            g = 1.0 / gl.where(row_sum == 0.0, 1.0, row_sum)
            if WRITE_LSE:  # the row's log-sum-exp, once a row (CTA 0): cross_entropy's
                lse = shift_c + _fast_log(row_sum)
                first = gl.arange(0, gl.num_ctas(), shift_c.type.layout) == 0
                gl.store(lse_ptr + row + first.to(gl.int64) * 0, lse, mask=first)
            if HAS_FACTOR:  # y = softmax · the row's factor, rounded once: cross_entropy's gradient, but at t
                factor, z_factor = _row_factor(target, loss_scale, ignore_index, N, class_weight_ptr, z_loss,
                                               HAS_CLASS_WEIGHT)
                if HAS_Z_LOSS:  # the z-loss's share, 2z · scale · lse · p_j in the gradient (0 for an ignored row)
                    g = g * (factor + z_factor * lse)
                else:
                    g = g * factor
            # the factor of exponentials held against this CTA's shift (fp32 rows, the end vectors): m, not shift,
            # as a CTA with nothing but -inf holds zeros, and 2^(0 − row_shift) may overflow
            f = gl.exp2((gl.convert_layout(m, shift_c.type.layout) - shift_c) * k) * g
        out_ty = y_ptr.dtype.element_ty
        f_x = gl.convert_layout(f, gl.SliceLayout(1, X))[:, None]
        shift_x = gl.convert_layout(shift_c, gl.SliceLayout(1, X))[:, None]
        g_x = gl.convert_layout(g, gl.SliceLayout(1, X))[:, None]
        if SCALED:  # the multiplier in the inline PTX, one register a thread
            k_x = gl.zeros_like(g_x) + (scale if LOG else k)
        else:
            k_x = g_x  # unused
        if STORE_Y:  # cross_entropy's forward with no gradient writes the lse alone
            # every whole vector is written (zeros, or -inf, past a causal row's diagonal), but the one the diagonal
            # cuts, which the end vectors write (DIAGONAL; under DIAGONAL_STORE that one too, then theirs)
            y0 = _normalized(x0, f_x, shift_x, g_x, k_x, scale, SCALED, LOG)
            store_lanes(y_row, lanes0, _uncut(lanes0, move0, diagonal, VEC, UNCUT), y0.to(out_ty),
                        EVEN and not DIAGONAL)
            if P1 > 0:
                y1 = _normalized(x1, f_x, shift_x, g_x, k_x, scale, SCALED, LOG)
                store_lanes(y_row, lanes1, _uncut(lanes1, move1, diagonal, VEC, UNCUT), y1.to(out_ty),
                            EVEN and not DIAGONAL)
            if P2 > 0:
                y2 = _normalized(x2, f_x, shift_x, g_x, k_x, scale, SCALED, LOG)
                store_lanes(y_row, lanes2, _uncut(lanes2, move2, diagonal, VEC, UNCUT), y2.to(out_ty),
                            EVEN and not DIAGONAL)
            if HAS_ENDS:
                f_ends = gl.convert_layout(f, gl.SliceLayout(1, ENDS))[:, None]
                shift_ends = gl.convert_layout(shift_c, gl.SliceLayout(1, ENDS))[:, None]
                g_ends = gl.convert_layout(g, gl.SliceLayout(1, ENDS))[:, None]
                end_y = _normalized(end_x, f_ends, shift_ends, g_ends, k, scale, SCALED, LOG)
                if DIAGONAL_STORE:  # after the pieces' store of the diagonal's vector
                    gl.barrier()
                gl.store(y_row + end_lanes, end_y.to(out_ty), mask=at_end)


def bias_blends(fusion: Fusion, dtype: torch.dtype) -> bool:
    """Whether a kernel selects a 16-bit row's bias floor as bits (BIAS_BLEND): cluster_kernel's and
    shared_row_kernel's rule."""
    return BIAS_BLEND and fusion.bias is not None and dtype != torch.float32


def kernel_constexprs(config: ClusterConfig, N: int, dtype: torch.dtype, aligned: bool,
                      fusion: Fusion = PLAIN) -> dict:
    """The kernel's compile-time arguments for rows of N elements whose windows all start on a 16-byte boundary
    (aligned) or may start anywhere; shared between calls: read them, do not change them."""
    mask_vectors = fusion.mask is not None and mask_on_grid(fusion, N, dtype)
    bias_vectors = fusion.bias is not None and on_grid(fusion.bias, fusion.bias_shared, N, dtype, fusion.bias_phased)
    how = holding(dtype, fusion, N)
    by_vectors = fusion.causal_m is not None and causal_vectors(N, how, fusion)  # causal rows read by vectors
    switches = {"MASK_PACKED": MASK_PACKED and mask_vectors and how == "packed",
                "CAUSAL_VECTORS": by_vectors,
                "POSITIVE_SCALE": POSITIVE_SCALES and how == "fp32" and fusion.scale > 0 and fusion.scale != 1.0,
                "MASK_BLEND": MASK_BLEND_F32 and how == "fp32" and mask_vectors and N not in FP32_UNBLENDED_AT,
                "BIAS_VECTORS": bias_vectors,
                "BIAS_BLEND": bias_blends(fusion, dtype),
                "REVERSED": HEAVIEST_FIRST and rows_differ(fusion.causal_m, N),
                "LEAN_CAUSAL": fusion.causal_m is not None and how == "fp32" and N in LEAN_CAUSAL_AT
                and not by_vectors,
                "DIAGONAL_STORE": by_vectors and N in DIAGONAL_STORE_AT.get(dtype, ()),
                "KEEP_SHARED": KEEP_SHARED_ROWS and (fusion.mask_shared or fusion.bias_shared),
                "MASK_PHASED": fusion.mask_phased, "BIAS_PHASED": fusion.bias_phased,
                "MASK_BITS": fusion.mask_bits}
    return _kernel_constexprs(config, N, dtype, aligned, how, mask_vectors,
                              tuple(name for name, on in switches.items() if on))


@lru_cache(maxsize=1024)
def _kernel_constexprs(config: ClusterConfig, N: int, dtype: torch.dtype, aligned: bool, how: str,
                       mask_vectors: bool, switches: tuple[str, ...] = ()) -> dict:
    """kernel_constexprs' dict, the constexprs named in `switches` True (absent ones take the kernel's default,
    False: a launch without them compiles as before they existed)."""
    return {**window_constexprs(config, N, dtype, aligned), "HOLD_F32": how == "fp32", "MASK_VECTORS": mask_vectors,
            **dict.fromkeys(switches, True)}


@lru_cache(maxsize=1024)
def window_constexprs(config: ClusterConfig, N: int, dtype: torch.dtype, aligned: bool) -> dict:
    """How a row's window is laid over the cluster, as compile-time arguments (kernel_constexprs'); shared between
    calls: read them, do not change them."""
    p0, p1, p2 = config.pieces + (0,) * (3 - len(config.pieces))
    even = aligned and config.ctas * config.step == N and config.span == config.step
    return dict(STEP=config.step, P0=p0, P1=p1, P2=p2, VEC=vector_elems(dtype), EVEN=even, ALIGNED=aligned,
                EVICT=config.evict)


@lru_cache(maxsize=1024)
def settings_of(config: ClusterConfig) -> dict:
    """What a launch reports it chose."""
    settings = {"ctas": config.ctas, "num_warps": config.num_warps, "step": config.step,
                "pieces": "+".join(map(str, config.pieces))}
    if config.max_registers is not None:
        settings["max_registers"] = config.max_registers
    if config.evict:
        settings["evict"] = config.evict
    return settings


def phase_settings(fusion: Fusion) -> dict:
    """What a launch of a fusion with shared rows (a shared mask or bias) reports of them: the rows it laid out in
    phase copies, `phased=mask`, `bias`, `mask+bias` or `none`. A configuration does not tell this: fp32 biased
    rows/64 50257 launches in 16 × 8 capped at 48 phased or not (86.5 against 70.3 on an H100, eighty-second
    session), so a run records it (bar-status.py compares it with the launch the code makes now)."""
    if not (fusion.mask_shared or fusion.bias_shared):
        return {}
    phased_rows = [kind for kind, phased in (("mask-bits" if fusion.mask_bits else "mask", fusion.mask_phased),
                                             ("bias", fusion.bias_phased)) if phased]
    return {"phased": "+".join(phased_rows) or "none"}


@lru_cache(maxsize=1024)
def launch_options(config: ClusterConfig) -> dict:
    """The launch's options: the cluster's CTAs, the warps of each, the registers' cap if any."""
    options = {"num_ctas": config.ctas, "num_warps": config.num_warps}
    return options if config.max_registers is None else {**options, "maxnreg": config.max_registers}


def launch(x: torch.Tensor, fusion: Fusion = PLAIN, config: ClusterConfig | None = None) -> tuple[torch.Tensor, Launch]:
    reason = why_not_here()
    if reason is not None:
        raise ValueError(f"{reason}; use variant='auto'")
    if config is None and not fusion.plain:  # a fused form's rows may be held in shared memory (shared_row.py)
        entry = shared_row.shared_row_entry(x, fusion)  # (only rows on the 16-byte grid: same_alignment's x is x)
        if entry is not None:
            y = output_like(x, fusion)
            return y, shared_row.launch(x, y, fusion, entry)
    M, N = x.shape
    x = same_alignment(x)
    y = output_like(x, fusion)
    fusion = laid_out(fusion, N, x.dtype, M)
    config = config or config_for(N, x.dtype, fusion)
    aligned = N % vector_elems(x.dtype) == 0  # then every row of x (after same_alignment) and of y starts on one
    constexprs = kernel_constexprs(config, N, x.dtype, aligned, fusion)
    compiled = launch_kernel(cluster_kernel, (M,), x, y, N, x.stride(0), y.stride(0), **fusion_args(fusion, x),
                             **constexprs, **launch_options(config))
    return y, Launch({**settings_of(config), **phase_settings(fusion)}, [compiled])


def launch_cross_entropy(x: torch.Tensor, dx: torch.Tensor | None, lse: torch.Tensor,
                         target: torch.Tensor | None = None, weight: torch.Tensor | None = None,
                         scale: torch.Tensor | None = None, ignore_index: int = -100, z_loss: float = 0.0,
                         config: ClusterConfig | None = None) -> Launch:
    """cross_entropy's rows (kernels/cross_entropy.py), each held across a cluster as a softmax row is: the row's
    log-sum-exp into lse (M floats), and, given dx (a contiguous M×V tensor, or x itself for in place), softmax(x)
    · (f + 2z · scale · lse) into it, in x's dtype, rounded once: the gradient everywhere but at the target, which
    the caller writes after. f is the row's factor, its target's class weight (weight: V floats, or 1) times scale
    (one fp32 float), and f and the z-loss's term are 0 where the target (M integers) is ignore_index. x's rows
    start as a contiguous tensor's do (same_alignment)."""
    reason = why_not_here()
    if reason is not None:
        raise ValueError(f"{reason}; cross_entropy reads these rows in chunks instead")
    if dx is not None and (target is None or scale is None):
        raise ValueError("cross_entropy's gradient needs the rows' targets and the loss's scale")
    M, N = x.shape
    config = config or cross_entropy_config(N, x.dtype, dx is not None)
    constexprs = kernel_constexprs(config, N, x.dtype, N % vector_elems(x.dtype) == 0)
    y = dx if dx is not None else x
    compiled = launch_kernel(cluster_kernel, (M,), x, y, N, x.stride(0), y.stride(0), **fusion_args(PLAIN, x),
                             **constexprs, target_ptr=target if target is not None else lse, lse_ptr=lse,
                             HAS_FACTOR=dx is not None, WRITE_LSE=True, STORE_Y=dx is not None,
                             class_weight_ptr=weight if weight is not None else lse,
                             loss_scale_ptr=scale if scale is not None else lse, ignore_index=ignore_index,
                             z_loss=float(z_loss), HAS_CLASS_WEIGHT=weight is not None,
                             HAS_Z_LOSS=dx is not None and z_loss != 0, **launch_options(config))
    return Launch(settings_of(config), [compiled])


def unsupported_width(N: int, dtype: torch.dtype, capacity: int = CAPACITY, wider: str = "split or two_pass",
                      ) -> str | None:
    """Why a cluster kernel that holds windows of up to `capacity` lanes cannot take rows of N elements (the
    variants to use for wider rows: `wider`), or None; what this process runs is why_not_here's."""
    reason = None
    if N < MIN_N:
        reason = f"cluster takes rows of {MIN_N} elements or more (got N = {N}); fused holds narrower ones"
    if reason is None and window_lanes(N, dtype) > capacity:
        reason = (f"cluster holds rows of up to {capacity} elements on chip ({capacity - vector_elems(dtype) + 1} "
                  f"when N is not a multiple of {vector_elems(dtype)}; got N = {N}); use {wider}")
    return reason


VARIANT = Variant(
    name="cluster",
    summary="each row on chip across a thread-block cluster, partial max/sum pushed to every CTA: one read, one write",
    launch=launch,
    traffic=traffic,
    triton=True,
    limits=unsupported_width,
    here=lambda: why_not_here(),  # looked up at each call, as the launch looks it up
)

# The rows cluster holds in shared memory: imported last, and as a module (its names read at each call), since
# shared_row's kernel is built of this module's pieces and either module may be imported first.
from . import shared_row  # noqa: E402
