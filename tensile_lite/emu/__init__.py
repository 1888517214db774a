"""CPU emulator of the AMDGPU instructions our kernels use, run on the real assembled bytes.

`Emulator(code_object_path).launch(kernel, grid=..., block=..., kernargs=..., memory=...)` executes
a kernel workgroup by workgroup, each wave as a numpy lane array, against a `DeviceMemory`.
"""

from tensile_lite.emu.emulator import Emulator, LaunchStats
from tensile_lite.emu.errors import (
    CodeObjectError,
    EmulatorError,
    HazardError,
    LaunchError,
    MemoryFault,
    UnsupportedInstruction,
)
from tensile_lite.emu.memory import DeviceMemory

__all__ = [
    "CodeObjectError",
    "DeviceMemory",
    "Emulator",
    "EmulatorError",
    "HazardError",
    "LaunchError",
    "LaunchStats",
    "MemoryFault",
    "UnsupportedInstruction",
]
