"""Every integer ``#define GK_*`` of include/gatherkit.h, under the header's own names.

A copy rather than a parse of the header at import time, so that the binding stays usable where
only the shared library is installed (no header beside it). The copy cannot drift unnoticed:
tests/test_abi_header.py fails, naming each name, whenever it differs from the header in either
direction. bench/ab.py reads this file too, so the Python side has this one table.

Plain assignments and no imports: bench/ab.py and that test execute this file on its own, without
the package's __init__ (which loads a libgatherkit, and fails if a name it uses is missing here).
"""

GK_VERSION_MAJOR = 0
GK_VERSION_MINOR = 2
GK_VERSION_PATCH = 0

GK_MAX_RANK = 64

GK_DTYPE_FLOAT = 1
GK_DTYPE_UINT8 = 2
GK_DTYPE_INT8 = 3
GK_DTYPE_UINT16 = 4
GK_DTYPE_INT16 = 5
GK_DTYPE_INT32 = 6
GK_DTYPE_INT64 = 7
GK_DTYPE_STRING = 8
GK_DTYPE_BOOL = 9
GK_DTYPE_FLOAT16 = 10
GK_DTYPE_DOUBLE = 11
GK_DTYPE_UINT32 = 12
GK_DTYPE_UINT64 = 13
GK_DTYPE_COMPLEX64 = 14
GK_DTYPE_COMPLEX128 = 15
GK_DTYPE_BFLOAT16 = 16

GK_STATUS_OK = 0
GK_STATUS_NULL_POINTER = 1
GK_STATUS_UNSUPPORTED_DTYPE = 2
GK_STATUS_INVALID_RANK = 3
GK_STATUS_INVALID_ATTRIBUTE = 4
GK_STATUS_SHAPE_MISMATCH = 5
GK_STATUS_INDEX_OUT_OF_BOUNDS = 6
GK_STATUS_OUTPUT_MISMATCH = 7
GK_STATUS_OVERLAP = 8
GK_STATUS_OVERFLOW = 9
GK_STATUS_UNSUPPORTED_VERSION = 10
GK_STATUS_INVALID_ARGUMENT = 11
GK_STATUS_PANIC = 12
GK_STATUS_OUT_OF_MEMORY = 13

GK_FLAVOR_ONNX = 0
GK_FLAVOR_OPENVINO = 1

GK_REDUCTION_NONE = 0
GK_REDUCTION_ADD = 1
GK_REDUCTION_MUL = 2
GK_REDUCTION_MAX = 3
GK_REDUCTION_MIN = 4
