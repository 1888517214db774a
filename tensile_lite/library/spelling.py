"""How a library spells data types: the one switch between the 2024 names and ROCm 7.x's fnuz names.

In 2024 codes 11-14 are `Float8`, `BFloat8`, ... (tokens `F8`, `B8`); 7.x renamed them `Float8_fnuz` ...
(tokens `F8N`, ...) and gave the old names to the OCP types 15-18. A 7.x runtime turns every type name of
a `.dat` (problem type fields, `TypesEqual`, bias and activation type lists, `F32XdlMathOp`) into its
DataType enum by that enum's own spelling, so a 7.x library must use the new names there or a gfx942
fp8 problem type is filed under OCP fp8 (rocm7_delta.md addendum item 2; the 7.x enum-to-string table,
e.g. rocisa's DataTypes header in ROCm/rocm-libraries). Placeholder library names carry the tokens and
follow the same rule, as 7.x's writer names them (SolutionLibrary.py @003add59, `str(dataType)`).
Kernel and solution names are ours and never matched by the runtime, so they do not change.
"""

from __future__ import annotations

import attrs

from tensile_lite.interfaces import Interface
from tensile_lite.model.datatypes import DataType


@attrs.frozen(slots=True)
class TypeSpelling:
    fnuz: bool  # 7.x's vocabulary (elements.py `name7` / `letter7`)

    def name(self, t: DataType) -> str:
        """The name a `.dat` carries for `t` (`Float8` / `Float8_fnuz` for code 11)."""
        return t.name7 if self.fnuz else t.cpp_name

    def token(self, t: DataType) -> str:
        """The token in library file names (`F8` / `F8N` for code 11)."""
        return t.letter7 if self.fnuz else t.letter


SPELLING_2024 = TypeSpelling(fnuz=False)


def spelling_of(interface: Interface) -> TypeSpelling:
    return TypeSpelling(fnuz=interface.fnuz_names)
