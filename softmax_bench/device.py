"""What machine a measurement ran on: identity (so a stored copy baseline is reused only on the same GPU),
the numbers the roofline needs, and the clocks at a moment (recorded before and after a sweep)."""

from __future__ import annotations

import platform
import shutil
import subprocess

import torch

from .errors import BenchError


def require_gpu_or_interpret(interpret: bool) -> None:
    if not interpret and not torch.cuda.is_available():
        raise BenchError(
            "no CUDA GPU is visible on this machine; run on a GPU, or add --interpret to run everything on CPU "
            "through Triton's interpreter (slow, timings labelled as interpreted)"
        )


def _nvidia_smi(fields: list[str]) -> dict[str, str]:
    """One query of nvidia-smi for GPU 0 (empty when nvidia-smi is missing or fails)."""
    if shutil.which("nvidia-smi") is None:
        return {}
    index = torch.cuda.current_device() if torch.cuda.is_available() else 0
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--id={index}", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    values = [v.strip() for v in out.strip().split(",")]
    return dict(zip(fields, values)) if len(values) == len(fields) else {}


def clocks(interpret: bool) -> dict:
    """SM and memory clocks now, in MHz (None where unknown)."""
    if interpret:
        return {"sm_mhz": None, "mem_mhz": None}
    smi = _nvidia_smi(["clocks.sm", "clocks.mem"])
    as_int = lambda key: int(smi[key]) if smi.get(key, "").isdigit() else None  # noqa: E731
    return {"sm_mhz": as_int("clocks.sm"), "mem_mhz": as_int("clocks.mem")}


def device_info(interpret: bool) -> dict:
    """Identity and capabilities of the device the kernels run on."""
    if interpret:
        return {
            "name": f"CPU {platform.processor() or platform.machine()} (Triton interpreter)",
            "uuid": f"cpu-{platform.node()}",
            "interpreted": True,
            "torch": torch.__version__,
            "triton": _triton_version(),
        }
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    smi = _nvidia_smi(["driver_version", "clocks.max.sm", "clocks.max.mem"])
    return {
        "name": props.name,
        "uuid": str(getattr(props, "uuid", "")),
        "pci_bus_id": f"{getattr(props, 'pci_domain_id', 0):04x}:{getattr(props, 'pci_bus_id', 0):02x}:"
        f"{getattr(props, 'pci_device_id', 0):02x}",
        "interpreted": False,
        "compute_capability": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "total_memory_bytes": props.total_memory,
        "memory_clock_khz": getattr(props, "memory_clock_rate", None),
        "memory_bus_width_bits": getattr(props, "memory_bus_width", None),
        "max_sm_clock_mhz": int(smi["clocks.max.sm"]) if smi.get("clocks.max.sm", "").isdigit() else None,
        "driver": smi.get("driver_version"),
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "triton": _triton_version(),
    }


def device_label(interpret: bool) -> str:
    """The device as a run's rows name it: cuda:<index>, or cpu under the interpreter."""
    return "cpu" if interpret else f"cuda:{torch.cuda.current_device()}"


def same_device(a: dict, b: dict) -> bool:
    return a.get("uuid") == b.get("uuid") and a.get("name") == b.get("name") and a.get("driver") == b.get("driver")


def _triton_version() -> str:
    import triton

    return triton.__version__


PACKAGES = ("torch", "triton", "liger-kernel", "quack-kernels", "transformers", "nvidia-ml-py")


def environment(out_dir, interpret: bool) -> list[tuple[str, str]]:
    """What a bug report needs, as (what, value) lines: the machine, the packages (the peers among them), the
    SOFTMAX_BENCH_* settings (run_life.project_settings, as a run records them), whether the cluster variant runs
    here, how a replayed call runs, the auto table in use and the stored copy baseline of this device."""
    import platform as platform_
    from importlib import metadata

    from .baseline import stored_record
    from .dispatch import table_in_use
    from .kernels import cluster
    from .replay import replay_path

    lines = [("python", platform_.python_version()), ("platform", platform_.platform())]
    for package in PACKAGES:
        try:
            lines.append((package, metadata.version(package)))
        except metadata.PackageNotFoundError:
            lines.append((package, "not installed"))
    from .run_life import settings_text

    settings = settings_text()
    lines.append(("settings", settings or "no SOFTMAX_BENCH_* variable set: the defaults"))
    if not interpret and not torch.cuda.is_available():
        lines.append(("GPU", "none visible: the kernels run only through Triton's interpreter (--interpret)"))
        return lines
    device = device_info(interpret)
    for key in ("name", "compute_capability", "sm_count", "total_memory_bytes", "driver", "cuda"):
        if device.get(key) is not None:
            lines.append(("GPU " + key.replace("_", " ") if key != "name" else "device", str(device[key])))
    lines.append(("cluster variant", cluster.why_not_here() or "runs here"))
    lines.append(("replayed calls", replay_path()))
    table = None if interpret else table_in_use()
    lines.append(("auto table", f"{table['file']} (written {table['created']}, commit {table['commit']})" if table
                  else "none: the rule (cluster from N = 32768 where it runs, else fused while the row fits, "
                  "else two_pass)"))
    record = stored_record(out_dir, device)
    if record is None:
        lines.append(("copy baseline", f"none stored in {out_dir} for this device: `softmax-bench copy-baseline`"))
    else:
        gbps = ", ".join(f"{dtype} {value:,.0f} GB/s" for dtype, value in record.get("reference_gbps", {}).items())
        lines.append(("copy baseline", f"{gbps} (measured {record.get('measured_at', '?')}, {out_dir})"))
    return lines
