"""Toolchain discovery, assembling, linking, compressing and the parallel code-object build.

targets   the per-GPU table (wavefront size, LLVM versions)
toolchain finding clang/ld.lld, its fingerprint, per-target version checks
probe     verifying the table against the real assembler, cached on disk
assemble  one kernel text -> object (stdin), objects -> shared code object
worker    the per-kernel task run in worker processes; the KernelSource protocol
cache     the content-addressed kernel cache: checksummed objects by key, LRU eviction to a size limit
pipeline  the streaming build: kernels in, one `.co` per library out
finish    the one step between linking a `.co` and publishing it: as it is, or compressed (ROCm 7.x)
bundler   finding clang-offload-bundler, checking it compresses, compressing one code object
bundle    reading offload bundles (compressed "CCOB" or not) back to the code object inside
elf       reading code objects back (kernels, descriptors, metadata) and checking them
trivial   a tiny valid kernel for any target
progress  progress lines and the final summary
"""
