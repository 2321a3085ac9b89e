"""The GPU's clocks, power and temperature while a cell is timed, read through NVML (nvidia-ml-py), as nvbench
watches for throttling.

After each batch of timed calls the SM clock, the memory clock, the power draw and the temperature are read. A
batch after which the SM clock was below THROTTLE_FRACTION of its maximum is discarded and taken again, up to
MAX_RETAKES times a measurement; a measurement that still ends with such a batch is marked throttled (its rows say
`throttled`, the tables mark it, and `check` does not gate it). Where NVML cannot be read (no nvidia-ml-py, no
driver, Triton's interpreter), nothing is read and the columns stay empty: a sweep never fails for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

THROTTLE_FRACTION = 0.75  # nvbench's default threshold
MAX_RETAKES = 3


@dataclass(frozen=True)
class Reading:
    sm_mhz: int
    mem_mhz: int
    power_w: float
    temp_c: int


class Clocks:
    """NVML's readings of one GPU (`nvml`: the pynvml module, or a stand-in with its functions)."""

    def __init__(self, nvml, handle):
        self.nvml, self.handle = nvml, handle
        self.max_sm_mhz = nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM)

    def read(self) -> Reading:
        nvml, handle = self.nvml, self.handle
        return Reading(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM),
                       nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM),
                       nvml.nvmlDeviceGetPowerUsage(handle) / 1000,
                       nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))

    def throttled(self, reading: Reading) -> bool:
        return reading.sm_mhz < THROTTLE_FRACTION * self.max_sm_mhz


@cache
def clocks_of(device: int) -> Clocks | None:
    """The readings of CUDA device `device` (as torch numbers it, under CUDA_VISIBLE_DEVICES), or None where NVML
    cannot be read."""
    try:
        import pynvml
        import torch

        pynvml.nvmlInit()
        return Clocks(pynvml, pynvml.nvmlDeviceGetHandleByIndex(torch.cuda._get_nvml_device_index(device)))
    except Exception:  # noqa: BLE001 - no nvidia-ml-py, no driver, a device NVML does not list: no readings
        return None


COLUMNS = ["sm_mhz_min", "sm_mhz_max", "mem_mhz_min", "power_w_max", "temp_c_max", "throttled"]


class Watch:
    """One measurement's readings, a batch of timed calls at a time, and the batches it took again."""

    def __init__(self, clocks: Clocks | None):
        self.clocks = clocks
        self.readings: list[Reading] = []
        self.retakes = 0
        self.throttled = False

    def watched(self, take):
        """take(n) (n timed calls, their times), read after each batch; a throttled batch taken again (MAX_RETAKES
        a measurement)."""
        def watched_take(n: int) -> list[float]:
            while True:
                times = take(n)
                reading = self._read()
                if reading is None:
                    return times
                self.readings.append(reading)
                self.throttled = self.clocks.throttled(reading)
                if not self.throttled or self.retakes >= MAX_RETAKES:
                    return times
                self.retakes += 1
        return watched_take

    def _read(self) -> Reading | None:
        if self.clocks is None:
            return None
        try:
            return self.clocks.read()
        except Exception:  # noqa: BLE001 - NVML gone mid-run: no more readings, the timing goes on
            self.clocks = None
            return None

    def fields(self) -> dict:
        """The readings as the rows keep them (COLUMNS): the SM clock's range, the lowest memory clock, the highest
        power (W) and temperature (°C), and throttled (1: the last batch was still below the threshold after
        MAX_RETAKES); empty without readings."""
        if not self.readings:
            return {}
        r = self.readings
        return {"sm_mhz_min": min(x.sm_mhz for x in r), "sm_mhz_max": max(x.sm_mhz for x in r),
                "mem_mhz_min": min(x.mem_mhz for x in r), "power_w_max": max(x.power_w for x in r),
                "temp_c_max": max(x.temp_c for x in r), "throttled": int(self.throttled)}
