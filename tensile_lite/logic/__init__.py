"""Reading and normalising hipBLASLt logic files into the model."""

from tensile_lite.logic.discover import find_logic_files
from tensile_lite.logic.reader import read_logic_file
from tensile_lite.logic.scan import OtherArch, Read, Unreadable, scan_logic
from tensile_lite.logic.sniff import sniff_arch

__all__ = ["OtherArch", "Read", "Unreadable", "find_logic_files", "read_logic_file", "scan_logic", "sniff_arch"]
