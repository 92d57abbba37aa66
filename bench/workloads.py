"""Workloads W1-W9 of the performance issue, shared by compare.py and ab.py.

Index values are uniform random over the valid range (non-negative), from a fixed seed, so every
script times the same inputs.
"""

import numpy as np

RNG = np.random.default_rng(0)


def uniform(high, shape, dtype):
    return RNG.integers(0, high, size=shape, dtype=np.int64).astype(dtype)


def workloads():
    """(id, description, op, make, attribute); `make()` builds (data, indices) lazily to bound memory."""
    yield ("W1", "GatherElements [64,512,512] axis=2", "GatherElements",
           lambda: (RNG.random((64, 512, 512), dtype=np.float32), uniform(512, (64, 512, 512), np.int64)), 2)
    yield ("W2", "GatherElements [64,512,512] axis=1", "GatherElements",
           lambda: (RNG.random((64, 512, 512), dtype=np.float32), uniform(512, (64, 512, 512), np.int64)), 1)
    yield ("W3", "GatherElements [64,512,512] axis=0", "GatherElements",
           lambda: (RNG.random((64, 512, 512), dtype=np.float32), uniform(64, (64, 512, 512), np.int64)), 0)
    yield ("W4", "GatherElements f16 [4096,4096] axis=1 i32", "GatherElements",
           lambda: (RNG.random((4096, 4096), dtype=np.float32).astype(np.float16),
                    uniform(4096, (4096, 4096), np.int32)), 1)
    yield ("W5", "GatherElements [2097152,4] axis=1", "GatherElements",
           lambda: (RNG.random((2097152, 4), dtype=np.float32), uniform(4, (2097152, 4), np.int64)), 1)
    yield ("W6", "GatherND embedding [50000,768] idx [32,512,1]", "GatherND",
           lambda: (RNG.random((50000, 768), dtype=np.float32), uniform(50000, (32, 512, 1), np.int64)), 0)
    yield ("W7", "GatherND points [256,256,256] idx [1048576,3]", "GatherND",
           lambda: (RNG.random((256, 256, 256), dtype=np.float32), uniform(256, (1048576, 3), np.int64)), 0)
    yield ("W8", "GatherND b=1 [8,4096,256] idx [8,10000,1]", "GatherND",
           lambda: (RNG.random((8, 4096, 256), dtype=np.float32), uniform(4096, (8, 10000, 1), np.int64)), 1)
    yield ("W9", "GatherND 16-byte rows [1048576,4] idx [2097152,1]", "GatherND",
           lambda: (RNG.random((1048576, 4), dtype=np.float32), uniform(1048576, (2097152, 1), np.int64)), 0)


def output_shape(op, data, indices, attribute):
    """The ONNX output shape (GatherND with batch_dims = attribute)."""
    if op == "GatherElements":
        return indices.shape
    k = indices.shape[-1]
    return indices.shape[:-1] + data.shape[attribute + k:]


def bytes_touched(op, data, indices, out_shape):
    """indices + output + data bytes touched. GatherND reads whole cache lines of each slice, so its
    data bytes are (slices x 64-byte lines per slice), at most the whole data."""
    out_bytes = int(np.prod(out_shape)) * data.itemsize
    if op == "GatherElements":
        touched = data.nbytes
    else:
        slices = indices.size // indices.shape[-1]
        slice_bytes = out_bytes // max(slices, 1)
        touched = min(data.nbytes, slices * -(-slice_bytes // 64) * 64)
    return indices.nbytes + out_bytes + touched
