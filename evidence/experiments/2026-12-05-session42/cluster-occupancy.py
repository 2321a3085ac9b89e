"""How many of a cluster kernel's clusters the GPU holds at once (issue 26): the question behind the fp32 512×262144
backward, under 90 % of its roofline in every form (the plain softmax's 89.4, scaled 89.6, scaled-masked 88.1, the
logs 86.6–88.6) while the forward of the same rows is over 92.

The backward runs a row as a cluster of 16 CTAs of 8 warps, 119 registers a thread and 66.6 KB of shared memory a
CTA (compiled for sm_90 on a CPU, forty-second session): two CTAs an SM by registers, three by shared memory, so 264
CTAs (16.5 clusters) on 132 SMs if clusters packed freely. A cluster must sit in one GPC; GPCs of 16–18 SMs hold two
clusters of 16 at two CTAs an SM and leave the rest idle. If the GPU holds 14 clusters or fewer, a fifth of its
CTA slots are empty by placement alone, which would be where the backward's last 10 % go.

    python3 evidence/experiments/2026-12-05-session42/cluster-occupancy.py OUT.csv   # on the GPU

For each case (the op's forward or backward through variant=cluster on an M×N input) the kernels its call launches
are recorded (replay.recording); for each cluster launch, cuOccupancyMaxActiveClusters with the launch's own grid,
block, shared memory and cluster size gives the clusters resident at once. Printed and written: the kernel, CTAs a
cluster, warps, registers (the driver's), shared bytes, the clusters resident, those × CTAs, and the CTA slots the SMs
would hold by registers and shared memory alone (132 × min(by registers, by shared memory)).

Prediction: the fp32 262144 backward holds 14–16 clusters (224–256 CTAs of 264 slots); bf16's (80 registers, 33.8
KB: three CTAs an SM) 22–24 of 24.75; the forward (4 warps, 168 registers: three an SM) 22–24.
"""

import csv
import ctypes
import sys

import torch

import softmax_bench
from softmax_bench import dispatch, replay

CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81
UINT = ctypes.c_uint


class LaunchAttribute(ctypes.Structure):  # cuda.h's CUlaunchAttribute: an id, padding, a 64-byte union
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", UINT * 16)]


class LaunchConfig(ctypes.Structure):  # cuda.h's CUlaunchConfig
    _fields_ = [("grid", UINT * 3), ("block", UINT * 3), ("shared", UINT), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)), ("num_attrs", UINT)]


def checked(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what}: CUDA error {status}")


def device_facts(driver) -> dict:
    value, device = ctypes.c_int(), ctypes.c_int()
    checked(driver.cuCtxGetDevice(ctypes.byref(device)), "cuCtxGetDevice")
    facts = {}
    for name, attribute in (("sms", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
                            ("registers_per_sm", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR),
                            ("shared_per_sm", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)):
        checked(driver.cuDeviceGetAttribute(ctypes.byref(value), attribute, device), "cuDeviceGetAttribute")
        facts[name] = value.value
    return facts


def resident(driver, compiled, grid: tuple, facts: dict) -> dict:
    """The clusters of `compiled` on `grid` the device holds at once, and what registers and shared memory allow."""
    metadata, function = compiled.metadata, ctypes.c_void_p(compiled.function)
    ctas, warps, shared = getattr(metadata, "num_ctas", 1), metadata.num_warps, metadata.shared
    registers = ctypes.c_int()
    checked(driver.cuFuncGetAttribute(ctypes.byref(registers), CU_FUNC_ATTRIBUTE_NUM_REGS, function),
            "cuFuncGetAttribute")
    if ctas > 8:
        checked(driver.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                "cuFuncSetAttribute")
    attribute = LaunchAttribute(id=CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
    attribute.value[0], attribute.value[1], attribute.value[2] = ctas, 1, 1
    grid = tuple(grid) + (1,) * (3 - len(grid))
    config = LaunchConfig(grid=(UINT * 3)(grid[0] * ctas, grid[1], grid[2]), block=(UINT * 3)(32 * warps, 1, 1),
                          shared=shared, stream=None, attrs=ctypes.pointer(attribute), num_attrs=1)
    clusters = ctypes.c_int()
    checked(driver.cuOccupancyMaxActiveClusters(ctypes.byref(clusters), function, ctypes.byref(config)),
            "cuOccupancyMaxActiveClusters")
    threads = 32 * warps
    by_registers = facts["registers_per_sm"] // (threads * ((registers.value + 7) // 8 * 8))
    by_shared = facts["shared_per_sm"] // max(shared, 1)
    return {"ctas": ctas, "warps": warps, "registers": registers.value, "shared_bytes": shared,
            "clusters_resident": clusters.value, "ctas_resident": clusters.value * ctas,
            "cta_slots": facts["sms"] * min(by_registers, by_shared)}


def cases():
    """(name, M, N, dtype, op kwargs, pass)."""
    for dtype in (torch.float32, torch.bfloat16):
        for passed in ("forward", "backward"):
            yield f"softmax {passed}", 512, 262144, dtype, {}, passed
        yield "scaled-masked backward", 512, 262144, dtype, {"scale": 0.5, "mask": True}, "backward"
    yield "softmax backward", 1024, 131072, torch.float32, {}, "backward"


def main():
    driver = ctypes.CDLL("libcuda.so.1")
    rows = []
    for name, M, N, dtype, options, passed in cases():
        x = torch.randn(M, N, device="cuda", dtype=dtype)
        mask = torch.rand(M, N, device="cuda") > 0.3 if options.get("mask") else None
        scale = options.get("scale")
        with replay.recording() as launches:
            y = softmax_bench.softmax(x, scale=scale, mask=mask, variant="cluster")
            if passed == "backward":
                dispatch.softmax_backward(y, torch.randn_like(y), -1, scale, mask, False, "cluster")
        torch.cuda.synchronize()
        facts = device_facts(driver)
        for kernel, grid, _, _, compiled in launches:
            kernel_name = getattr(kernel, "__name__", None) or getattr(getattr(kernel, "fn", None), "__name__", "?")
            if passed == "backward" and "backward" not in kernel_name:
                continue
            row = {"case": name, "dtype": str(dtype).replace("torch.", ""), "M": M, "N": N, "kernel": kernel_name,
                   **resident(driver, compiled, grid, facts)}
            rows.append(row)
            print(row, flush=True)
    with open(sys.argv[1], "w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=list(rows[0]))
        out.writeheader()
        out.writerows(rows)


if __name__ == "__main__":
    main()
