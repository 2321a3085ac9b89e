"""Compile the cluster kernels (and fused's: compile_fused_case) for sm_90 without a GPU and read their PTX and ptxas
report: run as `python -m tests.compile_sm90 OUT_DIR CASES_JSON` in a process without TRITON_INTERPRET (Gluon kernels
do not run in the interpreter). A case is {"kernel": "forward" | "backward", "dtype", "N", "scale", "causal", "mask",
"log", "bias" (True: a bias of x's dtype on x's grid; "off": one element off it), "shared" (64 rows of x share a
row of the mask and of the bias), "phased" (those shared rows laid out in phase copies, masking.phased_rows;
absent: as cluster.phases_wanted has a launch lay them out), "mask_packed" (cluster.MASK_PACKED;
absent: as the launch sets it), "causal_vectors" (cluster.CAUSAL_VECTORS, likewise), "positive_scale"
(cluster.POSITIVE_SCALES, likewise), "mask_blend" (cluster.MASK_BLEND_F32, likewise), "bias_blend"
(cluster.BIAS_BLEND, likewise), "mask_bits" and "backward_mask_bits" (cluster.MASK_BITS, BACKWARD_MASK_BITS,
likewise), "lean_causal" (the switch cluster.LEAN_CAUSAL_AT sets, likewise), "diagonal_store"
(cluster.DIAGONAL_STORE_AT's, likewise), "keep_shared" (cluster.KEEP_SHARED_ROWS, likewise), "lean_keep", "late_y",
"mask_early", "staged" (the backward's LEAN_KEEP, LATE_Y, MASK_EARLY and STAGED; absent: as
cluster_backward.switches sets them), "cross_entropy" ("grad": the loss's rows with their gradient, "grad+z": with
the z-loss too, "loss": without), "max_registers" (None: uncapped; absent: as config_for chooses), "ctas" and
"warps" (absent: config_for's), "pieces" (lanes each; absent: config_for's)}; one JSON line a case comes back:
the configuration, the instructions counted, registers, spills and shared memory."""

import dataclasses
import inspect
import json
import os
import re
import select
import subprocess
import sys

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource

from softmax_bench.kernels import DTYPES, Fusion, cluster, cluster_backward
from softmax_bench.kernels.aligned import vector_elems, window_lanes
from softmax_bench.kernels.masking import phased

try:  # the ptxas Triton compiles with (its PTX's .version is that ptxas's): on the device an environment may name
    # another than the one bundled, which then rejected the PTX ("Unsupported .version 9.0; current version is 8.8")
    from triton import knobs

    PTXAS = knobs.nvidia.ptxas.path
except (ImportError, AttributeError):
    PTXAS = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
CUOBJDUMP = os.path.join(os.path.dirname(PTXAS), "cuobjdump")
PTX_COUNTS = {"loads_v4": r"ld\.global[.\w:]*\.v4\.", "stores_v4": r"st\.global[.\w:]*\.v4\.", "st_async": r"st\.async",
              "cluster_arrive": r"barrier\.cluster\.arrive", "cluster_wait": r"barrier\.cluster\.wait",
              "lg2_approx": r"lg2\.approx", "evict_last_loads": r"ld\.global\.L1::evict_last",
              "cta_barriers": r"bar\.sync", "byte_loads": r"ld\.global[.\w:]*\.b8", "selects": r"selp\.",
              "wide_remainders": r"rem\.[su]64", "wide_compares": r"setp\.\w+\.s64", "branches": r"\bbra\b",
              "async_copies": r"cp\.async\.c[ag]\.shared"}


# A case's keys that set the kernel's switch of the same name in capitals (absent: as the launch sets it).
SWITCH_KEYS = ("mask_packed", "causal_vectors", "lean_keep", "late_y", "staged", "mask_early",
               "positive_scale", "mask_blend", "bias_blend", "lean_causal", "diagonal_store", "keep_shared")


def signature_of(kernel, constexprs: dict, types: dict) -> dict:
    """A kernel's signature for triton.compile: its constexprs, the types `types` names, the other arguments i32.
    The constexpr parameters `constexprs` leaves out are added to it at their defaults, as a launch takes them
    (MASK_SHARED = False: a mask of x's rows)."""
    for param in kernel.params:
        if param.is_constexpr and param.name not in constexprs and param.default is not inspect.Parameter.empty:
            constexprs[param.name] = param.default
    return {a: "constexpr" if a in constexprs else types.get(a, "i32") for a in kernel.arg_names}


def compiled_for_sm90(source, options: dict, path: str) -> tuple[str, str, int, int]:
    """(PTX, ptxas's -v report, bytes spilled, bytes of shared memory a CTA takes) of a kernel's source compiled for
    sm_90; the PTX written at `path`."""
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options=options)
    ptx = compiled.asm["ptx"]
    with open(path, "w") as f:
        f.write(ptx)
    report = subprocess.run([PTXAS, "-v", "--gpu-name", "sm_90a", path, "-o", path + ".cubin"],
                            capture_output=True, text=True).stderr
    return ptx, report, sum(int(b) for b in re.findall(r"(\d+) bytes spill", report)), compiled.metadata.shared


def registers_of(report: str, path: str) -> int:
    """The registers ptxas's -v report gives a kernel; what ptxas said where it gives none."""
    used = re.search(r"Used (\d+) registers", report)
    if used is None:
        raise RuntimeError(f"ptxas reported no registers for {path}: {report.strip()[-2000:] or 'nothing'}")
    return int(used.group(1))


def ptx_path(case: dict, out_dir) -> str:
    """Where a case's PTX is written (its cubin beside it, the same name and ".cubin")."""
    return os.path.join(out_dir, "-".join(f"{k}={v}" for k, v in case.items()) + ".ptx")


def sass_of(case: dict, out_dir) -> str:
    """The SASS of a case compiled into out_dir (cuobjdump of its cubin)."""
    return subprocess.run([CUOBJDUMP, "-sass", ptx_path(case, out_dir) + ".cubin"], capture_output=True,
                          text=True).stdout


def compile_fused_case(case: dict, out_dir: str) -> dict:
    """A case of fused's kernel ({"kernel": "fused", "dtype", "N", "causal", "skip" (SKIP_MASKED), "causal_bits",
    "positive_scale", "exp_ftz", "halvings", "fold_scale", "shiftless" (CAUSAL_BITS, POSITIVE_SCALE, EXP_FTZ,
    HALVINGS, FOLD_SCALE, SHIFTLESS), "log", "max_registers" (ptxas's maxnreg; absent: none), "rows", "warps"
    (absent: launch_config's), "evict" (the loads' EVICT; absent: plain), "mask" (a keep-mask), "shared" (its rows
    shared: MASK_SHARED), "mask_once" (MASK_ONCE), "mask_shift" (MASK_SHIFT; absent: -1), "bias" (True: a bias of
    x's dtype, its rows shared: BIAS_SHARED), "bias_shift" (BIAS_SHIFT; absent: -1)}): launch_config's tile for 2^27
    / N rows unless given, a scale, the pointers and N's multiples of 16 specialized as a launch does."""
    from triton.compiler import ASTSource

    from softmax_bench.kernels import fused

    dtype, N = DTYPES[case["dtype"]], case["N"]
    config = {**fused.launch_config(2**27 // N, N, dtype), **({"ROWS": case["rows"]} if "rows" in case else {}),
              **({"num_warps": case["warps"]} if "warps" in case else {})}
    kernel = fused.fused_rows_kernel
    constexprs = {"BLOCK_N": config["BLOCK_N"], "ROWS": config["ROWS"], "HAS_SCALE": True,
                  "CAUSAL": bool(case.get("causal")), "LOG": bool(case.get("log")), "bias_ptr": None,
                  "SKIP_MASKED": bool(case.get("skip")), "CAUSAL_BITS": bool(case.get("causal_bits")),
                  "POSITIVE_SCALE": bool(case.get("positive_scale")), "EVICT": case.get("evict", ""),
                  "EXP_FTZ": bool(case.get("exp_ftz")), "HALVINGS": case.get("halvings", 0),
                  "FOLD_SCALE": bool(case.get("fold_scale")), "HAS_MASK": bool(case.get("mask")),
                  "MASK_SHARED": bool(case.get("shared")), "MASK_ONCE": bool(case.get("mask_once")),
                  "MASK_SHIFT": case.get("mask_shift", -1),
                  **({"SHIFTLESS": True} if case.get("shiftless") else {})}
    types = {"x_ptr": "*" + case["dtype"], "y_ptr": "*" + case["dtype"], "mask_ptr": "*u8", "scale": "fp32"}
    if case.get("bias"):
        del constexprs["bias_ptr"]
        constexprs |= {"HAS_BIAS": True, "BIAS_SHARED": True, "BIAS_SHIFT": case.get("bias_shift", -1),
                       "BIAS_MIN": float(torch.finfo(dtype).min)}
        types["bias_ptr"] = "*" + case["dtype"]
    divisible = ("x_ptr", "y_ptr", "mask_ptr", "M", "N", "stride_x", "stride_y", "causal_m", "mask_stride",
                 "bias_ptr", "bias_stride") if N % 16 == 0 else ()
    source = ASTSource(fn=kernel, signature=signature_of(kernel, constexprs, types), constexprs=constexprs,
                       attrs={(kernel.arg_names.index(a),): [["tt.divisibility", 16]] for a in divisible})
    path = ptx_path(case, out_dir)
    options = {"num_warps": config["num_warps"], **({"maxnreg": case["max_registers"]} if case.get("max_registers")
                                                     else {})}
    ptx, report, spill_bytes, _ = compiled_for_sm90(source, options, path)
    return {**case, **{name: len(re.findall(pattern, ptx)) for name, pattern in PTX_COUNTS.items()},
            "registers": registers_of(report, path), "spill_bytes": spill_bytes}


def fused_backward_source(N: int, dtype: str, form: dict, masked_log: bool = False):
    """(source, num_warps) of fused's backward kernel for rows of N in `dtype` ("bf16", "fp32") as launch_config
    configures them for 2^20 rows (`masked_log`: a masked or causal log's), `form` its HAS_SCALE, HAS_MASK,
    CAUSAL and LOG (absent: False), the pointers aligned and N's multiples of 16 specialized as a launch does."""
    from triton.compiler import ASTSource

    from softmax_bench.kernels import fused_backward

    config = dict(fused_backward.launch_config(1 << 20, N, DTYPES[dtype], masked_log=masked_log))
    warps = config.pop("num_warps")
    kernel = fused_backward.fused_backward_kernel
    constexprs = {**config, "HAS_SCALE": False, "HAS_MASK": False, "CAUSAL": False, "LOG": False, **form}
    types = {"y_ptr": "*" + dtype, "dy_ptr": "*" + dtype, "dx_ptr": "*" + dtype, "mask_ptr": "*u8", "scale": "fp32"}
    aligned = ("y_ptr", "dy_ptr", "dx_ptr") + (("N", "stride_y", "stride_dy", "stride_dx") if N % 16 == 0 else ())
    return ASTSource(fn=kernel, signature=signature_of(kernel, constexprs, types), constexprs=constexprs,
                     attrs={(kernel.arg_names.index(a),): [["tt.divisibility", 16]] for a in aligned}), warps


def compile_shared_row_case(case: dict, out_dir: str) -> dict:
    """A case of the rows cluster holds in shared memory ({"kernel": "shared_row", "dtype", "N", "scale", "causal",
    "bias", "shared" (rows of x share the bias's rows), "log", "ctas", "warps", "online" (absent: the entry for the
    form, SHARED_BIAS_ROW_AT's for shared rows where it has one, else SHARED_ROW_AT's)}), the pointers, N and the
    strides specialized as a launch does."""
    from softmax_bench.kernels import shared_row

    dtype, N = DTYPES[case["dtype"]], case["N"]
    form = "biased" if case.get("bias") else "causal" if case.get("causal") else "other"
    listed = shared_row.listed_entry(N, dtype, form, bool(case.get("shared")))
    ctas, warps, online = listed or (16, 8, False)
    ctas, warps, online = case.get("ctas", ctas), case.get("warps", warps), case.get("online", online)
    chunk = 32 * warps * vector_elems(dtype)
    kernel = shared_row.shared_row_kernel
    constexprs = {"NCHUNK": N // (ctas * chunk), "CHUNK": chunk, "VEC": vector_elems(dtype),
                  "HAS_SCALE": case.get("scale", 1.0) != 1.0, "HAS_MASK": False, "CAUSAL": bool(case.get("causal")),
                  "LOG": bool(case.get("log")), "HAS_BIAS": bool(case.get("bias")), "ONLINE": online,
                  **({"BIAS_MIN": float(torch.finfo(dtype).min), "BIAS_SHARED": bool(case.get("shared")),
                      "BIAS_HELD": shared_row.bias_held(dtype),
                      "BIAS_BLEND": cluster.bias_blends(Fusion(bias=torch.empty(0, dtype=dtype)), dtype)}
                     if case.get("bias") else {})}
    types = {"x_ptr": "*" + case["dtype"], "y_ptr": "*" + case["dtype"], "mask_ptr": "*" + case["dtype"],
             "bias_ptr": "*" + case["dtype"], "scale": "fp32"}
    divisible = ("x_ptr", "y_ptr", "bias_ptr", "N", "stride_x", "stride_y", "bias_stride")
    source = GluonASTSource(fn=kernel, signature=signature_of(kernel, constexprs, types), constexprs=constexprs,
                            attrs={(kernel.arg_names.index(a),): [["tt.divisibility", 16]] for a in divisible})
    path = ptx_path(case, out_dir)
    ptx, report, spill_bytes, shared_bytes = compiled_for_sm90(source, {"num_ctas": ctas, "num_warps": warps}, path)
    return {**case, "ctas": ctas, "warps": warps, "online": online,
            **{name: len(re.findall(pattern, ptx)) for name, pattern in PTX_COUNTS.items()},
            "registers": registers_of(report, path), "spill_bytes": spill_bytes, "shared_bytes": shared_bytes}


# A case's keys that set cluster's module switch of the same name in capitals, which the host's plan reads (laid_out,
# holding, kernel_constexprs), not only the kernel: set while the case compiles (absent: as the module has it).
PLAN_SWITCH_KEYS = ("mask_bits", "backward_mask_bits")


def compile_case(case: dict, out_dir: str) -> dict:
    for key in PLAN_SWITCH_KEYS:
        name = key.upper()
        if case.get(key, getattr(cluster, name)) != getattr(cluster, name):  # the case's, as a launch takes it
            saved = getattr(cluster, name)
            setattr(cluster, name, case[key])
            try:
                return compile_case(case, out_dir)  # (its key kept: its PTX is written apart from the copies' case)
            finally:
                setattr(cluster, name, saved)
    if case["kernel"] == "fused":
        return compile_fused_case(case, out_dir)
    if case["kernel"] == "shared_row":
        return compile_shared_row_case(case, out_dir)
    dtype, N = DTYPES[case["dtype"]], case["N"]
    fusion = Fusion(scale=case.get("scale", 1.0), causal_m=7 if case.get("causal") else None,
                    mask=torch.empty(1, N, dtype=torch.uint8) if case.get("mask") else None, log=case.get("log", False),
                    mask_group=64 if case.get("shared") else 1)  # shared: 64 rows of x a row of mask (of bias)
    if case.get("bias"):
        bias = torch.empty(2, N + 1, dtype=dtype)[:, 1:] if case["bias"] == "off" else torch.empty(2, N, dtype=dtype)
        fusion = dataclasses.replace(fusion, bias=bias, bias_group=64 if case.get("shared") else 1)
    aligned = N % vector_elems(dtype) == 0
    forced = case.get("phased")  # the shared rows in phase copies (absent: as a launch lays them out)
    M = 1 << 16 if case["kernel"] == "forward" else None  # a forward's many rows (phases_wanted's gate, in place)
    fusion = cluster.laid_out(fusion, N, dtype, M) if forced is None else phased(fusion, vector_elems(dtype), forced,
                                                                                 forced)
    if case["kernel"] == "forward":
        kernel, pointers = cluster.cluster_kernel, ("x_ptr", "y_ptr")
        config = cluster.config_for(N, dtype, fusion)
    else:
        kernel, pointers = cluster_backward.cluster_backward_kernel, ("y_ptr", "dy_ptr", "dx_ptr")
        late_y = cluster_backward.LATE_Y
        cluster_backward.LATE_Y = case.get("late_y", late_y)  # the configuration a launch with the case's LATE_Y takes
        try:
            config = cluster_backward.config_for(N, dtype, fusion)
        finally:
            cluster_backward.LATE_Y = late_y
    if "ctas" in case:  # CTAs and warps of the case's own, else config_for's
        how = cluster.holding(dtype, fusion, N)
        config = dataclasses.replace(cluster.layout(window_lanes(N, dtype), case["ctas"], case["warps"], dtype, how),
                                     evict=config.evict)
    if "pieces" in case:  # a CTA's span held in these pieces (lanes each), else config_for's
        config = dataclasses.replace(config, pieces=tuple(case["pieces"]))
    if "max_registers" in case:  # else config_for's own choice
        config = dataclasses.replace(config, max_registers=case["max_registers"])
    if "evict" in case:  # the loads' eviction policy, else config_for's
        config = dataclasses.replace(config, evict=case["evict"])
    if case["kernel"] == "forward":
        constexprs = cluster.kernel_constexprs(config, N, dtype, aligned, fusion)
    else:
        constexprs = {**cluster.window_constexprs(config, N, dtype, aligned),
                      **cluster_backward.switches(N, dtype, fusion)}  # the backward's switches as they run
    constexprs = {**constexprs, "HAS_SCALE": fusion.scale != 1.0, "HAS_MASK": fusion.mask is not None,
                  "CAUSAL": fusion.causal_m is not None, "LOG": fusion.log,
                  **({"MASK_SHARED": True} if fusion.mask_shared else {}),
                  **({"BIAS_SHARED": True} if fusion.bias_shared else {}),
                  **{key.upper(): case[key] for key in SWITCH_KEYS if key in case},
                  **({"HAS_FACTOR": case["cross_entropy"] != "loss", "WRITE_LSE": True,
                      "STORE_Y": case["cross_entropy"] != "loss", "HAS_Z_LOSS": case["cross_entropy"] == "grad+z",
                      "HAS_CLASS_WEIGHT": bool(case.get("class_weight"))}
                     if case.get("cross_entropy") else {}),
                  **({"HAS_BIAS": True, "BIAS_MIN": float(torch.finfo(dtype).min)} if case.get("bias") else {})}
    types = {**{p: "*" + case["dtype"] for p in pointers}, "mask_ptr": "*u8", "scale": "fp32",
             "bias_ptr": "*" + case["dtype"], "target_ptr": "*i64", "lse_ptr": "*fp32", "class_weight_ptr": "*fp32",
             "loss_scale_ptr": "*fp32", "z_loss": "fp32"}
    # the pointers, and N and the row strides where N is a multiple of 16: as a launch specializes them
    on_grid = case.get("bias") is True  # a bias off the grid starts off a 16-byte boundary: not specialized so
    divisible = (*pointers, "mask_ptr", *(("bias_ptr",) if on_grid else ())) + tuple(
        a for a in kernel.arg_names if (N % 16 == 0 and (
            a == "N" or a.startswith("stride") or a == "mask_stride" or (a == "bias_stride" and on_grid)))
        # phase copies' rows: multiples of 16 bytes
        or (fusion.mask_phased and a == "mask_stride") or (fusion.bias_phased and a == "bias_stride"))
    aligned_pointers = {(kernel.arg_names.index(a),): [["tt.divisibility", 16]] for a in divisible}
    source = GluonASTSource(fn=kernel, signature=signature_of(kernel, constexprs, types), constexprs=constexprs,
                            attrs=aligned_pointers)
    path = ptx_path(case, out_dir)
    ptx, report, spill_bytes, shared_bytes = compiled_for_sm90(source, cluster.launch_options(config), path)
    return {**case, "ctas": config.ctas, "warps": config.num_warps, "pieces": len(config.pieces),
            **{name: len(re.findall(pattern, ptx)) for name, pattern in PTX_COUNTS.items()},
            "registers": registers_of(report, path), "spill_bytes": spill_bytes, "shared_bytes": shared_bytes}


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVE = "--serve"


def serve() -> None:
    """Run `python3 ARGS` requests, a JSON list of ARGS a line on stdin ("-c" CODE or "-m" MODULE, then argv), each
    in a child forked from this process, which has imported torch, Triton and the kernels once (seconds a process);
    a request's exit status, stdout and stderr come back as a JSON line. A child leaves nothing behind it."""
    import runpy
    import tempfile
    import traceback

    import softmax_bench.kernels  # noqa: F401  what every request imports: each child starts with it

    for line in sys.stdin:
        args = json.loads(line)
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            pid = os.fork()
            if pid == 0:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                status = 0
                try:
                    sys.argv = [args[0] if args[0] == "-c" else args[1], *args[2:]]
                    if args[0] == "-c":
                        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
                    else:
                        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
                except SystemExit as stop:
                    status = stop.code if isinstance(stop.code, int) else 1
                except BaseException:
                    traceback.print_exc()
                    status = 1
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
            _, waited = os.waitpid(pid, 0)
            out.seek(0)
            err.seek(0)
            print(json.dumps({"returncode": os.waitstatus_to_exitcode(waited), "stdout": out.read(),
                              "stderr": err.read()}), flush=True)


_server: subprocess.Popen | None = None


def printed_without_interpreter(*args: str, timeout: int = 900) -> list[str]:
    """The lines `python3 *args` prints, run from the project's root in a process without TRITON_INTERPRET (the
    kernels then compile, for sm_90 without a GPU); it must succeed. Run by this test process's server (`serve`),
    started at its first request, where the platform forks; else in a process of its own."""
    global _server
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if not hasattr(os, "fork"):
        result = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=timeout,
                                cwd=REPO)
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout.splitlines()
    if _server is None or _server.poll() is not None:
        _server = subprocess.Popen([sys.executable, "-m", "tests.compile_sm90", SERVE], env=env, cwd=REPO,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    _server.stdin.write(json.dumps(args) + "\n")
    _server.stdin.flush()
    ready, _, _ = select.select([_server.stdout], [], [], timeout)
    if not ready:
        _server.kill()
        raise AssertionError(f"python3 {' '.join(args)[:200]} did not finish in {timeout} s")
    reply = _server.stdout.readline()
    assert reply, "the compile server ended"
    result = json.loads(reply)
    assert result["returncode"] == 0, result["stderr"][-3000:]
    return result["stdout"].splitlines()


def cases_here(groups: dict[str, list[dict]], kept: dict[str, set], exhaustive: bool) -> dict[str, list[dict]]:
    """Each group's cases, or on CPU without --exhaustive (conftest.EXHAUSTIVE) those whose (dtype, N) its entry in
    `kept` names; a group with no entry keeps all."""
    return {name: [case for case in group
                   if exhaustive or name not in kept or (case["dtype"], case["N"]) in kept[name]]
            for name, group in groups.items()}


def sass_instructions(sass: str) -> list[str]:
    """The instructions of cuobjdump's SASS, in order, each without its address and its `;`."""
    return re.findall(r"/\*[0-9a-f]{4}\*/\s+([^;]*);", sass)


def opcode(instruction: str) -> str:
    """An instruction's opcode (of sass_instructions'), past its predicate (@P0, @!P1) if it has one."""
    words = instruction.split()
    return words[1] if words[0].startswith("@") else words[0]


def load_waves(sass: str) -> list[int]:
    """A thread's global loads up to the first CTA barrier (its first reduction), in waves: the loads issued before
    the first instruction that reads a register one of them wrote, then the next such run. [8]: all eight in flight
    at once; [4, 2, 2]: four, then a wait for their data, then two more."""
    waves, pending = [0], set()
    for line in sass_instructions(sass):
        if "BAR.SYNC" in line:
            break
        op, *operands = line.split(None, 1)
        if op.startswith("@"):
            op, *operands = operands[0].split(None, 1)
        registers = [int(r) for r in re.findall(r"\bR(\d+)\b", operands[0] if operands else "")]
        if any(r in pending for r in registers[1:]):  # a read of a loaded register: the next wave starts after it
            waves.append(0)
            pending = set()
        if (op == "LDG" or op.startswith("LDG.")) and registers:  # (not LDGSTS, LDGDEPBAR: cp.async's, no register)
            waves[-1] += 1
            pending |= set(range(registers[0], registers[0] + (4 if ".128" in op else 2 if ".64" in op else 1)))
        elif registers:
            pending.discard(registers[0])  # overwritten: no longer the load's
    return [wave for wave in waves if wave]


def compile_in_subprocess(cases: list[dict], out_dir) -> list[dict]:
    """compile_case of each case, in a process of its own without TRITON_INTERPRET."""
    return [json.loads(line) for line in printed_without_interpreter("-m", "tests.compile_sm90", str(out_dir),
                                                                      json.dumps(cases))]


if __name__ == "__main__" and sys.argv[1:] == [SERVE]:
    serve()
elif __name__ == "__main__":
    for case in json.loads(sys.argv[2]):
        print(json.dumps(compile_case(case, sys.argv[1])), flush=True)
