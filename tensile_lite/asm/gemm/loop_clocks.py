"""The issue-slot count of one unrolled main-loop iteration, the figure ROCm 7.x's runtime reads as
`sizeMapping.MathClocksUnrolledLoop` (its analytical ranking model takes it as the loop's math time).

Upstream counts its loop body with a fixed rule (rocisa's cycle pass, ROCm/hipBLASLt `rocisa/rocisa/src/
pass/cycle.cpp` @3117d1c7, the 7.0-era version): every instruction takes one slot, except that a matrix
instruction issued fewer than 3 slots after the previous one waits until 4 slots after it; the count ends
with the branch back to the loop's start. We apply that rule to our own kernel's text, following the
steady-state path (the fast body: conditional branches not taken, unconditional ones followed), so the
figure describes the loop the library really holds.
"""

from __future__ import annotations

from tensile_lite.asm.gemm.mainloop import LOOP_BEGIN
from tensile_lite.asm.writer import LABEL_PREFIX

# the fact's name among a kernel's text facts (codeobj/worker.KernelSource.text_facts)
MATH_CLOCKS = "math_clocks"
# the main loop's label as the kernel writer names it (the first label of that name gets the bare prefix)
LOOP_LABEL = f"{LABEL_PREFIX}{LOOP_BEGIN}"
_MATRIX = ("v_mfma", "v_smfmac", "v_wmma", "v_swmmac")
_BRANCH = ("s_branch", "s_cbranch_")
_SPACING = 3   # slots after a matrix instruction before the next issues without waiting
_WAIT_TO = 4   # where a matrix instruction issued too soon lands, counted from the previous one
_LIMIT = 100_000  # instructions walked at most (a loop that never branches back is malformed text)


def unrolled_loop_clocks(text: str, loop_label: str = LOOP_LABEL) -> int:
    """Slots of one steady-state iteration of the loop starting at `loop_label`; 0 if the text has no such
    loop (the runtime's 'not known')."""
    lines = [ln.strip() for ln in text.splitlines()]
    labels = {ln[:-1]: i for i, ln in enumerate(lines) if ln.endswith(":") and not ln.startswith(".")}
    at = labels.get(loop_label)
    if at is None:
        return 0
    cycles, last_matrix = 0, None
    for _ in range(_LIMIT):
        at += 1
        if at >= len(lines):
            return 0
        line = lines[at]
        if not line or line.endswith(":") or line.startswith("."):
            continue
        op, _, operands = line.partition(" ")
        if op.startswith(_MATRIX):
            if last_matrix is not None and cycles - last_matrix < _SPACING:
                cycles = last_matrix + _WAIT_TO
            else:
                cycles += 1
            last_matrix = cycles
            continue
        cycles += 1
        if op.startswith(_BRANCH):
            target = operands.strip()
            if target == loop_label:
                return cycles
            if op == "s_branch":
                if target not in labels:
                    return 0
                at = labels[target]
    return 0
