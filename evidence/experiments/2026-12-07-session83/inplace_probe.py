"""Compile-only probe (sm_90, no GPU): can cluster's rows read a shared byte mask in place, not from phase copies?
A vector of x (VEC elements, 16 bytes, in row_layout's [C, P]) finds its mask bytes at any byte offset of the
mask's row: two aligned 8-byte words, funnel-shifted (as masking.phase_copies_words_kernel shifts them), then
spread over the vector's lanes through a [C, P / VEC, VEC] view of the row (one word a vector; reshaping to it
moves nothing if the compiler sees the same registers). Two kernels, alike but for the mask's read: `copied`
(the mask's window on x's grid, one 8-byte load a vector: what phase copies give) and `in_place` (two 8-byte words
at any offset, shifted). What to read in the PTX: shared-memory traffic (a layout conversion through it),
the loads, registers, spills.

    PYTHONPATH=. python3 evidence/experiments/2026-12-07-session83/inplace_probe.py [CTAS WARPS P]
"""

import re
import sys

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource

from softmax_bench.kernels.cluster import row_layout, split_over_ctas
from tests.compile_sm90 import compiled_for_sm90, registers_of


@gluon.constexpr_function
def vectors_layout(num_ctas, num_warps, vec):
    """row_layout's [C, P] as [C, P / VEC, VEC]: each thread holds the same elements, one vector along the last."""
    return gl.BlockedLayout([1, 1, vec], [1, 32, 1], [1, num_warps, 1], [2, 1, 0],
                            cga_layout=split_over_ctas(num_ctas, 3, 0))


@gluon.jit
def probe(x_ptr, y_ptr, words_ptr, mask_start, P: gl.constexpr, VEC: gl.constexpr, IN_PLACE: gl.constexpr):
    C: gl.constexpr = gl.num_ctas()
    X: gl.constexpr = row_layout(C, gl.num_warps(), VEC)
    V3: gl.constexpr = vectors_layout(C, gl.num_warps(), VEC)
    V: gl.constexpr = gl.SliceLayout(2, V3)
    c = gl.arange(0, C, gl.SliceLayout(1, X))
    j = gl.arange(0, P, gl.SliceLayout(0, X))
    lanes = c[:, None] * P + j[None, :]
    x = gl.load(x_ptr + lanes)
    cv = gl.arange(0, C, gl.SliceLayout(1, V))
    v = gl.arange(0, P // VEC, gl.SliceLayout(0, V))
    first = (cv[:, None] * P + v[None, :] * VEC).to(gl.int64)  # each vector's first lane: its mask's byte
    if IN_PLACE:
        at = mask_start + first  # any byte offset
        q = at >> 3
        bits = ((at & 7) * 8).to(gl.uint64)
        lo = gl.load(words_ptr + q).to(gl.uint64, bitcast=True)
        hi = gl.load(words_ptr + q + 1).to(gl.uint64, bitcast=True)
        word = gl.where(bits == 0, lo, (lo >> bits) | (hi << (64 - bits)))
    else:
        word = gl.load(words_ptr + (gl.multiple_of(mask_start, 8) + first) // 8).to(gl.uint64, bitcast=True)
    shifts = (gl.arange(0, VEC, gl.SliceLayout(0, gl.SliceLayout(1, V3))) * 8).to(gl.uint64)
    keep3 = ((word[:, :, None] >> shifts[None, None, :]) & 0xFF) != 0
    keep = gl.convert_layout(gl.reshape(keep3, [C, P]), X)
    gl.store(y_ptr + lanes, gl.where(keep, x, -float("inf")))


def compile_probe(ctas: int, warps: int, P: int, in_place: bool) -> dict:
    constexprs = {"P": P, "VEC": 8, "IN_PLACE": in_place}
    signature = {"x_ptr": "*bf16", "y_ptr": "*bf16", "words_ptr": "*i64", "mask_start": "i64", **{
        k: "constexpr" for k in constexprs}}
    source = GluonASTSource(fn=probe, signature=signature, constexprs=constexprs,
                            attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]],
                                   (2,): [["tt.divisibility", 16]]})
    path = f"/tmp/inplace-probe-{'in-place' if in_place else 'copied'}.ptx"
    ptx, report, spills, shared = compiled_for_sm90(source, {"num_ctas": ctas, "num_warps": warps}, path)
    return {"in_place": in_place, "registers": registers_of(report, path), "spill_bytes": spills,
            "shared_bytes": shared, "st.shared": len(re.findall(r"st\.shared", ptx)),
            "ld.shared": len(re.findall(r"ld\.shared", ptx)),
            "loads": sorted(set(re.findall(r"ld\.global[.\w]*", ptx))),
            "ld.global": len(re.findall(r"ld\.global", ptx)), "shf/shl/shr": len(re.findall(r"\b(shf|shl|shr)\.", ptx))}


if __name__ == "__main__":
    ctas, warps, P = (int(a) for a in sys.argv[1:4]) if len(sys.argv) > 3 else (4, 4, 2048)
    for in_place in (False, True):
        print(compile_probe(ctas, warps, P, in_place))
