"""Workloads W1-W9 of the performance issue and G1-G4 (ONNX Gather), shared by compare.py and
ab.py.

Index values are uniform random over the valid range (non-negative), from a fixed seed, so every
script times the same inputs.
"""

import numpy as np

RNG = np.random.default_rng(0)


def uniform(high, shape, dtype):
    return RNG.integers(0, high, size=shape, dtype=np.int64).astype(dtype)


def workloads():
    """(id, description, op, make, attribute); `make()` builds (data, indices) lazily to bound memory.
    The attribute is GatherElements' and Gather's axis, GatherND's batch_dims."""
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
    # G1 and W6 are the same lookup, spelled as Gather and as GatherND.
    yield ("G1", "Gather embedding [50000,768] idx [32,512] axis=0", "Gather",
           lambda: (RNG.random((50000, 768), dtype=np.float32), uniform(50000, (32, 512), np.int64)), 0)
    yield ("G2", "Gather [64,4096,64] idx [1024] axis=1", "Gather",
           lambda: (RNG.random((64, 4096, 64), dtype=np.float32), uniform(4096, (1024,), np.int64)), 1)
    # One 3 KiB row: the time is the per-call cost, not bandwidth.
    yield ("G3", "Gather one row [50000,768] scalar idx axis=0", "Gather",
           lambda: (RNG.random((50000, 768), dtype=np.float32), np.asarray(uniform(50000, (), np.int64))), 0)
    yield ("G4", "Gather f16 [50000,768] idx [32,512] i32 axis=0", "Gather",
           lambda: (RNG.random((50000, 768), dtype=np.float32).astype(np.float16),
                    uniform(50000, (32, 512), np.int32)), 0)


def output_shape(op, data, indices, attribute):
    """The ONNX output shape (GatherND with batch_dims = attribute, Gather with axis = attribute)."""
    if op == "GatherElements":
        return indices.shape
    if op == "Gather":
        axis = attribute % data.ndim
        return data.shape[:axis] + indices.shape + data.shape[axis + 1:]
    k = indices.shape[-1]
    return indices.shape[:-1] + data.shape[attribute + k:]


def bytes_touched(op, data, indices, out_shape, attribute):
    """indices + output + data bytes touched. GatherND and Gather read whole cache lines of each
    slice, so their data bytes are (slices x 64-byte lines per slice), at most the whole data.
    Gather reads one slice per (outer position, index value): a rank-0 index counts as one."""
    out_bytes = int(np.prod(out_shape)) * data.itemsize
    if op == "GatherElements":
        touched = data.nbytes
    else:
        if op == "Gather":
            slices = int(np.prod(data.shape[:attribute % data.ndim])) * indices.size
        else:
            slices = indices.size // indices.shape[-1]
        slice_bytes = out_bytes // max(slices, 1)
        touched = min(data.nbytes, slices * -(-slice_bytes // 64) * 64)
    return indices.nbytes + out_bytes + touched
