"""Reading and normalising hipBLASLt logic files into the model."""

from tensile_lite.logic.discover import find_logic_files
from tensile_lite.logic.reader import read_logic_file
from tensile_lite.logic.sniff import sniff_arch

__all__ = ["find_logic_files", "read_logic_file", "sniff_arch"]
