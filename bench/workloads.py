"""Workloads W1-W9 of the performance issue and G1-G4 (ONNX Gather), shared by compare.py and
ab.py, and the scatter workloads S1-S3 (compare.py only: ab.py times gathers).

Index values are uniform random over the valid range (non-negative), from a fixed seed, so every
script times the same inputs.
"""

import quiet_blas  # noqa: F401  (before numpy)
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


def kv_cache_update():
    """S1: one new position per head of a [1, 32, 4096, 128] float16 KV cache: 32 tuples
    [0, head, position] (a random position per head), each writing one 256-byte row. Its own
    seed, so that S1 and S1i get the same inputs whichever rows run."""
    rng = np.random.default_rng(1)
    data = rng.random((1, 32, 4096, 128), dtype=np.float32).astype(np.float16)
    positions = rng.integers(0, 4096, 32, dtype=np.int64)
    indices = np.stack([np.zeros(32, np.int64), np.arange(32, dtype=np.int64), positions], axis=-1).reshape(1, 32, 1, 3)
    updates = rng.random((1, 32, 1, 128), dtype=np.float32).astype(np.float16)
    return data, indices, updates


def scatter_workloads():
    """(id, description, op, make, attrs, in_place, tolerance); `make()` builds (data, indices,
    updates) lazily. Every model is opset 18. ORT always writes a separate output; `in_place` rows
    run gatherkit with out=data (repeating such a call gives the same output, as timing needs).
    `tolerance` None: the outputs must be bitwise equal; else the relative difference allowed."""
    yield ("S1", "ScatterND KV-cache f16 [1,32,4096,128] idx [1,32,1,3], gk copies (as ORT)", "ScatterND",
           kv_cache_update, {"reduction": "none"}, False, None)
    yield ("S1i", "ScatterND KV-cache as S1, gk in place (ORT copies)", "ScatterND",
           kv_cache_update, {"reduction": "none"}, True, None)
    # A histogram: 4M updates into 65536 bins, 64 per bin on average. ORT applies one line (here
    # the whole tensor) on one thread in index order, gatherkit in row-major order too, so float
    # sums may well be bitwise equal; the tolerance allows another order's rounding.
    yield ("S2", "ScatterElements add f32 [65536] idx [4M] (histogram)", "ScatterElements",
           lambda: (RNG.random(65536, dtype=np.float32), uniform(65536, 4 << 20, np.int64),
                    RNG.random(4 << 20, dtype=np.float32)), {"axis": 0, "reduction": "add"}, False, 1e-5)
    # Distinct rows: ORT's ScatterND splits tuples between threads without ordering duplicates, so
    # with duplicates its output (and the comparison) would depend on the run.
    yield ("S3", "ScatterND 64-byte rows f32 [4M,16] idx [1M,1] distinct", "ScatterND",
           lambda: (RNG.random((4 << 20, 16), dtype=np.float32),
                    RNG.permutation(4 << 20)[:1 << 20].astype(np.int64).reshape(-1, 1),
                    RNG.random((1 << 20, 16), dtype=np.float32)), {"reduction": "none"}, False, None)


def scatter_bytes_touched(op, data, indices, updates, in_place):
    """indices + updates + the targets' 64-byte lines (each written once), plus data read and the
    output written once unless in place. Targets are the update slices (one per index tuple for
    ScatterND, one element per update for ScatterElements), at most the whole data."""
    slices = int(np.prod(indices.shape[:-1])) if op == "ScatterND" else updates.size
    slice_bytes = updates.nbytes // max(slices, 1)
    targets = min(data.nbytes, slices * -(-slice_bytes // 64) * 64)
    return indices.nbytes + updates.nbytes + targets + (0 if in_place else 2 * data.nbytes)
