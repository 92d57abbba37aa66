"""Imported by every benchmark script before numpy: each large array gets a mapping of its own, as
in a fresh process, whatever ran before it.

glibc serves an allocation above its mmap threshold (128 KiB at start) with a fresh mmap, which
numpy asks to back with transparent huge pages. But freeing such a block raises the threshold to
its size (up to 32 MiB), so after a configuration with large arrays the next ones' arrays come
from the heap, in 4 KiB pages. A configuration's times then depend on what ran before it: sweep
seed 253's configuration 11 (GatherElements of 199K f64 values from 6 MB) took gatherkit 385 us
and ONNX Runtime 477 us after configurations 1-10, 218 us and 342 us alone or with the threshold
fixed, and other random-access configurations moved alike, gatherkit's more (its time has less
else in it to hide the extra TLB misses). Fixing the threshold (at 1 MiB) makes every
configuration's arrays the same kind of memory for both libraries, and a configuration measured
with --only the same as within a full run. Arrays under 1 MiB come from the heap, as they did
after any large block was freed. Outside glibc nothing changes (FIXED is False); under a
preloaded allocator (jemalloc, tcmalloc) the call may succeed and change nothing."""

import ctypes
import ctypes.util

# mallopt's parameter number for the mmap threshold in glibc's malloc.h.
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 1 << 20


def _fix_threshold():
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1


FIXED = _fix_threshold()
