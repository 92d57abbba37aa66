#!/usr/bin/env python3
"""Randomized sweep of gatherkit against ONNX Runtime's CPU kernels: --count configurations drawn
from the whole parameter space of each op, timed at each thread count on identical inputs, outputs
checked bitwise equal (aborts on the first mismatch). Prints one line per configuration and a
summary per thread count.

    pip install numpy onnx onnxruntime
    PYTHONPATH=bindings/python python3 bench/sweep.py --seed 1
    PYTHONPATH=bindings/python python3 bench/sweep.py --seed 1 --count 8 --max-bytes 8M --repeat 3
    PYTHONPATH=bindings/python python3 bench/sweep.py --seed 1 --only 17 --repeat 21   # one config again

(GATHERKIT_LIBRARY=path/to/libgatherkit.so picks a build.) Same seed and options -> same
configurations and inputs; configuration N depends only on (seed, N, --ops, --max-bytes), so
--count 100 extends --count 10 and --only N reruns one. Each configuration draws its op uniformly
from --ops (by default the three gathers, a third each; the scatters are drawn only when named,
e.g. --ops ScatterElements,ScatterND, so the default keeps every earlier seed's configurations).
Runs from before Gather was added (the README's seeds) drew from GatherElements and GatherND
only: --ops GatherElements,GatherND draws exactly those configurations again.

Parameter space. GatherElements: data rank 1-6, any axis (sometimes written negative), off-axis
index dims shrunk at random, the axis index dim random (can exceed the data's). GatherND:
batch_dims 0-2, tuple length k 1-4 (k + batch_dims <= rank <= 6), slices from one element (1 byte)
to ~8 KiB (many not powers of two: 292 bytes, 1000 bytes...), tuples per batch varied. Gather:
data rank 1-6, any axis (sometimes written negative); the dims after the axis are the slice, from
one element (axis last: 1-8 bytes; about a third of them) to ~8 KiB, drawn as GatherND's
(the slice rank drawn first, the axis following from it); the dims before the axis hold
log-uniform 1 .. half the remaining positions and the axis the rest (so the axis is 2 or longer
unless clamped); indices of rank 0 (a scalar), 1, 2 or 3 (15/35/30/20%) holding log-uniform
1 .. 2 x axis length + 16 values. Element widths 1, 2, 4, 8 bytes (no complex: ORT has none for
these ops); int32 and int64 indices (GatherElements and Gather; ONNX's GatherND takes int64 only,
ORT rejects int32); negative indices mixed into about a third of the configurations. Data size
log-uniform from 64 KiB to --max-bytes; one configuration (data + indices + two outputs) stays
under ~1 GiB by shrinking the indices.

Scatters (opset 18; gatherkit writes a separate output, as ORT does, never in place): reduction
none/add/mul/max/min (30/20/15/17.5/17.5%), then a width 1, 2, 4 or 8 bytes and a dtype of it
that ORT runs with that reduction (float16 add/mul nowhere, float16 max/min in ScatterElements
only, bool max/min nowhere); values drawn so that the outputs compare bitwise (float add: small
integers, exact in any order; float mul: power-of-two factors; max/min: no zeros, no NaNs (kept for reproducible seeds); see
scatter_values). ScatterElements: data rank 1-5, any axis (a quarter written negative), the
indices' shape the data's with the axis dim doubled, dims picked at random then shrunk down to
log-uniform 1 .. 2 x data's elements updates (an axis dim past the data's: duplicates); int32 or
int64 indices. ScatterND: data rank 1-5,
tuple length k 1 .. rank (0 in 3%: whole-tensor tuples), the slice drawn as GatherND's (one
element when k = rank, else 1 byte .. ~8 KiB), 0-2 index dims (10% a single tuple) holding either
distinct tuples (1 .. positions of them) or, in half ("dup" in the attribute column),
independent ones (sqrt(positions) .. 2 x positions + 16, so repeats are likely); int64 indices
(ORT's only type). Above one thread ORT's ScatterND output with repeated tuples differs run to
run (unordered threads; reductions race and lose updates), so there gatherkit is checked against
ORT's 1-thread output (while both are still timed at that thread count). Negative indices in a
third of the configurations; updates from one to millions (budget permitting).

Timing: per configuration and thread count, both warm up once, then run alternating, each at
least --repeat times, in a cycle where each call follows every other exactly once
(ortbench.balanced_sequence); medians. ORT runs through io binding with a preallocated output
(gatherkit gets ``out=``). ORT's times are adjusted by the difference of the two per-call overheads
(a tiny call of each, timed in the same alternating rounds as the configuration; see ortbench.py), so the ratio ORT/gk compares
kernels even for small configurations. Ratio > 1: gatherkit is faster. The last column compares
gatherkit with itself: its 2-thread time over its 1-thread time, the two timed alternating with each
other (not interleaved with ORT, whose multi-threaded runs moved small calls by up to 70%), each
timed call after an untimed one at the same count and with the pool idle (see
ortbench.settled_medians). ORT's pool does not spin
(allow_spinning=0, so a live session leaves the second core alone; checked in the header), which
costs ORT a pool wake-up per multi-threaded run: see ortbench.session_options.

Ceiling: the correction leaves the fixed cost of a call that both sides share (gatherkit's tiny
call, 1.5-1.7 us, most of it ctypes) in both times, so a configuration in which ORT does little
more than in its tiny call ties whatever gatherkit's kernel does. Each configuration's ceiling is
its ratio had gatherkit's call taken only as long as its tiny call (adjusted ORT time over
gatherkit's tiny call, or over its own call where that was timed shorter); the summary gives the
ceilings' geo-mean, which bounds the ratios', and counts the configurations with a ceiling under
TIE_CEILING as ties by construction; the CSV has each configuration's, per thread count.
"""

import argparse
import csv
import math
import statistics
import sys

import fresh_mappings  # noqa: F401  (before numpy allocates)
import quiet_blas  # noqa: F401  (before numpy)
import numpy as np

import ortbench
from ortbench import Case, parse_bytes, parse_threads

MIN_DATA_BYTES = 64 << 10
CASE_BUDGET = 1 << 30  # data + indices + both outputs

# A configuration whose ceiling (ORT's adjusted time over gatherkit's tiny call: the ratio if every
# gatherkit call took only as long as its tiny one) is under this is counted as a tie by
# construction: ORT's own work beyond its tiny call is under a tenth of gatherkit's tiny call, so no
# kernel of gatherkit's can make its ratio much more than 1.
TIE_CEILING = 1.1

# Element types by width. complex64/complex128 (8/16 bytes, which gatherkit supports) are left out:
# onnxruntime 1.32 rejects complex tensors for these ops at session creation ("MLDataType for:
# tensor(complex128) is not currently registered or supported"), so there is nothing to compare.
DTYPES_BY_WIDTH = {
    1: [np.uint8, np.int8, np.bool_],
    2: [np.float16, np.int16, np.uint16],
    4: [np.float32, np.int32, np.uint32],
    8: [np.float64, np.int64, np.uint64],
}


# --- random helpers -------------------------------------------------------------------------------

def log_uniform_int(rng, lo, hi):
    """An integer in [lo, hi], log-uniform."""
    lo, hi = max(1, int(lo)), max(1, int(hi))
    if hi <= lo:
        return lo
    return min(hi, max(lo, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1))))))


def split_dims(rng, n, parts, alpha=0.8):
    """`parts` dims (each >= 1) with product close to n, in random proportions (some come out 1)."""
    if parts == 0:
        return []
    n = max(1, int(n))
    weights = rng.dirichlet([alpha] * parts)
    dims = [max(1, int(round(n ** w))) for w in weights]
    j = int(np.argmax(dims))  # absorb the rounding error in the largest dim
    rest = math.prod(dims[:j] + dims[j + 1:])
    dims[j] = max(1, int(round(n / rest)))
    return dims


def pick_dtype(rng):
    width = [1, 2, 4, 8][rng.integers(4)]
    choices = DTYPES_BY_WIDTH[width]
    return np.dtype(choices[rng.integers(len(choices))])


def random_data(rng, shape, dtype):
    n = math.prod(shape)
    if dtype == np.bool_:
        return (np.frombuffer(rng.bytes(n), np.uint8) & 1).astype(np.bool_).reshape(shape)
    if dtype.kind == "f":
        if dtype == np.float16:
            return rng.standard_normal(n, dtype=np.float32).astype(np.float16).reshape(shape)
        return rng.standard_normal(n, dtype=dtype.type).reshape(shape)
    return np.frombuffer(rng.bytes(n * dtype.itemsize), dtype).reshape(shape).copy()


def random_indices(rng, shape, high, dtype, negatives):
    """Uniform over [0, high) (high broadcasts against shape); with `negatives`, about half of them are
    written as the equivalent negative index (i - high)."""
    idx = rng.integers(0, high, size=shape, dtype=np.int64)
    if negatives:
        idx -= np.where(rng.random(shape) < 0.5, np.asarray(high, dtype=np.int64), 0)
    return idx.astype(dtype)


def shrink_to_budget(dims, fixed_bytes, bytes_per_unit, budget, keep=()):
    """Halve the largest of dims (index positions not in `keep`) until fixed + prod(dims) * per_unit
    fits the budget."""
    dims = list(dims)
    while fixed_bytes + math.prod(dims) * bytes_per_unit > budget:
        free = [j for j in range(len(dims)) if j not in keep and dims[j] > 1]
        if not free:
            break
        j = max(free, key=lambda j: dims[j])
        dims[j] = max(1, dims[j] // 2)
    return dims


def clamp_data(dims, itemsize, max_bytes):
    dims = list(dims)
    while math.prod(dims) * itemsize > max_bytes and max(dims) > 1:
        j = int(np.argmax(dims))
        dims[j] = max(1, dims[j] * 9 // 10)
    return dims


# --- configuration generators ---------------------------------------------------------------------
# One function per op: (rng, max_bytes) -> ortbench.Case, inputs included. A later op is added
# with a generator here and an entry (ORT node builder and gatherkit call) in ortbench.OPS; left
# out of DEFAULT_OPS, it changes no earlier seed's configurations.

def gen_gather_elements(rng, max_bytes):
    dtype = pick_dtype(rng)
    data_bytes = log_uniform_int(rng, MIN_DATA_BYTES, max_bytes)
    rank = int(rng.integers(1, 7))
    dshape = clamp_data(split_dims(rng, data_bytes // dtype.itemsize, rank), dtype.itemsize, max_bytes)
    axis = int(rng.integers(rank))
    ishape = []
    for j, d in enumerate(dshape):
        if j == axis:  # as long as the data's half the time, else anything up to 4x it
            ishape.append(d if rng.random() < 0.5 else log_uniform_int(rng, 1, 4 * d))
        else:  # kept half the time, else shrunk
            ishape.append(d if rng.random() < 0.5 else int(rng.integers(1, d + 1)))
    index_dtype = np.dtype(np.int32 if rng.random() < 0.5 else np.int64)
    data_nbytes = math.prod(dshape) * dtype.itemsize
    ishape = shrink_to_budget(ishape, data_nbytes, index_dtype.itemsize + 2 * dtype.itemsize, CASE_BUDGET)
    negatives = bool(rng.random() < 1 / 3)
    attr = axis - rank if rng.random() < 0.25 else axis  # the attribute sometimes negative
    data = random_data(rng, dshape, dtype)
    indices = random_indices(rng, ishape, dshape[axis], index_dtype, negatives)
    return Case("GatherElements", [("data", data), ("indices", indices)], {"axis": attr}, tuple(ishape), dtype,
                {"attribute": f"axis={attr}", "slice_bytes": "", "negatives": negatives})


def draw_slice_dims(rng, rank, item, data_elems):
    """The dimensions of a gathered slice of `rank` dimensions (none: a one-element slice of 1 to 8
    bytes), from 1 byte to 8 KiB, at most a quarter of the data. Draws from `rng` exactly as the
    inline code it replaces did, so every seed keeps its configurations."""
    if rank == 0:
        return []
    if rng.random() < 0.2:  # a power of two sometimes; mostly not (292 bytes, 1000 bytes, ...)
        slice_bytes = 1 << int(rng.integers(0, 14))
    else:
        slice_bytes = log_uniform_int(rng, item, 8 << 10)
    slice_elems = max(1, min(slice_bytes // item, data_elems // 4))
    return split_dims(rng, slice_elems, rank, alpha=1.0)


def gen_gather_nd(rng, max_bytes):
    dtype = pick_dtype(rng)
    item = dtype.itemsize
    data_bytes = log_uniform_int(rng, MIN_DATA_BYTES, max_bytes)
    data_elems = max(1, data_bytes // item)
    b = int(rng.integers(0, 3))
    k = int(rng.integers(1, min(4, 6 - b) + 1))
    weights = np.array([0.25, 0.45, 0.3][:min(2, 6 - b - k) + 1])
    s = int(rng.choice(len(weights), p=weights / weights.sum()))  # slice rank; data rank b + k + s <= 6
    slice_dims = draw_slice_dims(rng, s, item, data_elems)
    slice_elems = math.prod(slice_dims)
    batch_dims = split_dims(rng, log_uniform_int(rng, 1, min(64, max(1, data_elems // slice_elems // 4))), b)
    batch = math.prod(batch_dims)
    positions = max(1, data_elems // (batch * slice_elems))
    indexed_dims = split_dims(rng, positions, k)
    dshape = clamp_data(batch_dims + indexed_dims + slice_dims, item, max_bytes)
    batch_dims, indexed_dims = dshape[:b], dshape[b:b + k]
    positions = math.prod(indexed_dims)
    # tuples per batch: 0-2 extra index dims holding log-uniform 1 .. 2 x positions (+ a few) tuples
    m = int(rng.choice([0, 1, 2], p=[0.1, 0.5, 0.4]))
    grid = split_dims(rng, log_uniform_int(rng, 1, 2 * positions + 16), m)
    data_nbytes = math.prod(dshape) * item
    per_tuple = k * 8 + 2 * slice_elems * item
    grid = shrink_to_budget(grid, data_nbytes, batch * per_tuple, CASE_BUDGET)
    ishape = batch_dims + grid + [k]
    negatives = bool(rng.random() < 1 / 3)
    data = random_data(rng, dshape, dtype)
    # ONNX's GatherND takes int64 indices only (ORT rejects int32 at model check)
    indices = random_indices(rng, ishape, np.asarray(indexed_dims, dtype=np.int64), np.dtype(np.int64), negatives)
    out_shape = tuple(batch_dims + grid + slice_dims)
    return Case("GatherND", [("data", data), ("indices", indices)], {"batch_dims": b}, out_shape, dtype,
                {"attribute": f"batch_dims={b}", "slice_bytes": slice_elems * item, "negatives": negatives})


def gen_gather(rng, max_bytes):
    dtype = pick_dtype(rng)
    item = dtype.itemsize
    data_bytes = log_uniform_int(rng, MIN_DATA_BYTES, max_bytes)
    data_elems = max(1, data_bytes // item)
    rank = int(rng.integers(1, 7))
    # slice rank (the dims after the axis) drawn first: a uniform axis would make ~40% of the
    # configurations one-element slices (every rank-1 draw, and the last axis of the others)
    s = 0 if rank == 1 or rng.random() < 0.2 else int(rng.integers(1, rank))
    axis = rank - 1 - s
    slice_dims = draw_slice_dims(rng, s, item, data_elems)
    positions = max(1, data_elems // math.prod(slice_dims))  # outer x axis
    # outer log-uniform 1 .. positions/2, so the axis keeps at least 2 (log-uniform 2 .. positions)
    outer = log_uniform_int(rng, 1, max(1, positions // 2)) if axis > 0 else 1
    outer_dims = split_dims(rng, outer, axis)
    dshape = clamp_data(outer_dims + [max(1, positions // outer)] + slice_dims, item, max_bytes)
    outer_dims, axis_len, slice_dims = dshape[:axis], dshape[axis], dshape[axis + 1:]
    outer, slice_elems = math.prod(outer_dims), math.prod(slice_dims)
    # index rank 0 (a scalar: one slice per outer position) to 3, holding log-uniform
    # 1 .. 2 x axis length (+ a few) values, so both sparse lookups and more slices than the axis has
    q = int(rng.choice([0, 1, 2, 3], p=[0.15, 0.35, 0.3, 0.2]))
    ishape = split_dims(rng, log_uniform_int(rng, 1, 2 * axis_len + 16), q)
    index_dtype = np.dtype(np.int32 if rng.random() < 0.5 else np.int64)
    data_nbytes = math.prod(dshape) * item
    ishape = shrink_to_budget(ishape, data_nbytes, index_dtype.itemsize + 2 * outer * slice_elems * item,
                              CASE_BUDGET)
    negatives = bool(rng.random() < 1 / 3)
    attr = axis - rank if rng.random() < 0.25 else axis  # the attribute sometimes negative
    data = random_data(rng, dshape, dtype)
    # np.asarray: a rank-0 draw must stay an ndarray (ORT and the binding take arrays)
    indices = np.asarray(random_indices(rng, ishape, axis_len, index_dtype, negatives))
    out_shape = tuple(outer_dims + ishape + slice_dims)
    return Case("Gather", [("data", data), ("indices", indices)], {"axis": attr}, out_shape, dtype,
                {"attribute": f"axis={attr}", "slice_bytes": slice_elems * item, "negatives": negatives})


# --- scatters ------------------------------------------------------------------------------------
# Drawn only when named in --ops (the default stays the three gathers, so every earlier seed keeps
# its configurations): nothing below is called, and no draw made, for a gather configuration.

SCATTER_REDUCTIONS = ["none", "add", "mul", "max", "min"]
SCATTER_REDUCTION_P = [0.3, 0.2, 0.15, 0.175, 0.175]


def ort_scatter_supports(op, reduction, dtype):
    """Whether onnxruntime's CPU kernel runs `op` with `reduction` on `dtype` (probed with 1.32 on
    every dtype of DTYPES_BY_WIDTH): none takes them all; add and mul all but float16 (bool: or,
    and); max and min all but bool, float16 in ScatterElements only. The others fail at run time
    ("MLFloat16 data type is not supported with ScatterND opset 18 when reduction is 'max'")."""
    if reduction == "none":
        return True
    if dtype == np.float16:
        return reduction in ("max", "min") and op == "ScatterElements"
    if dtype == np.bool_:
        return reduction in ("add", "mul")
    return True


def pick_scatter(rng, op):
    """(reduction, dtype): the reduction first, then a width (1, 2, 4, 8 bytes) and a dtype of that
    width that ORT supports with it (each width has one)."""
    reduction = SCATTER_REDUCTIONS[int(rng.choice(len(SCATTER_REDUCTIONS), p=SCATTER_REDUCTION_P))]
    width = [1, 2, 4, 8][rng.integers(4)]
    choices = [d for d in DTYPES_BY_WIDTH[width] if ort_scatter_supports(op, reduction, np.dtype(d))]
    return reduction, np.dtype(choices[rng.integers(len(choices))])


# mul updates for float data: powers of two, so every product is exact (unless it overflows or
# underflows), whatever the order
_MUL_FACTORS = [1.0, -1.0, 1.0, -1.0, 2.0, 0.5, -2.0, -0.5]


def scatter_values(rng, shape, dtype, reduction, role):
    """data (role "data") or updates ("updates") for a reduction, drawn so that ORT's and gatherkit's
    outputs are comparable bitwise. Integers (and bool) are random bits: add and mul wrap in both
    (bool: or, and). Floats: add takes small integers (data -64..64, updates -8..8), so every
    partial sum is exact whatever the order; mul multiplies normal data by powers of two; max and
    min take normal values with no zeros and no NaNs (drawn so when gatherkit still ordered -0
    below +0 and kept an existing NaN; it now follows ORT's `a > b ? a : b` on both, and the
    draws stay as they were so that seeds reproduce)."""
    shape = tuple(shape)
    if dtype.kind == "f":
        if reduction == "add":
            hi = 64 if role == "data" else 8
            return np.asarray(rng.integers(-hi, hi + 1, size=shape, dtype=np.int8)).astype(dtype)
        if reduction == "mul" and role == "updates":
            factors = np.asarray(_MUL_FACTORS, dtype=dtype)
            return np.asarray(factors[rng.integers(0, len(factors), size=shape, dtype=np.uint8)])
        values = random_data(rng, shape, dtype)
        if reduction in ("max", "min"):
            values[values == 0] = 1  # float16 rounds |x| < 2^-25 to +-0
        return values
    return random_data(rng, shape, dtype)


def gen_scatter_elements(rng, max_bytes):
    reduction, dtype = pick_scatter(rng, "ScatterElements")
    item = dtype.itemsize
    data_bytes = log_uniform_int(rng, MIN_DATA_BYTES, max_bytes)
    rank = int(rng.integers(1, 6))
    dshape = clamp_data(split_dims(rng, data_bytes // item, rank), item, max_bytes)
    axis = int(rng.integers(rank))
    # The indices' (= updates') shape: from the data's with the axis dim doubled (past the data's,
    # duplicates are certain), dims picked at random shrink by random factors down to a
    # log-uniform count of updates, 1 .. 2 x the data's elements (a few to millions).
    ishape = list(dshape)
    ishape[axis] = 2 * dshape[axis]
    target = log_uniform_int(rng, 1, math.prod(ishape))
    while math.prod(ishape) > target:
        free = [j for j in range(rank) if ishape[j] > 1]
        j = free[int(rng.integers(len(free)))]
        factor = math.exp(rng.uniform(0, math.log(math.prod(ishape) / target)))
        ishape[j] = max(1, min(ishape[j] - 1, int(ishape[j] / factor)))
    index_dtype = np.dtype(np.int32 if rng.random() < 0.5 else np.int64)
    data_nbytes = math.prod(dshape) * item
    ishape = shrink_to_budget(ishape, 3 * data_nbytes, index_dtype.itemsize + item, CASE_BUDGET)
    negatives = bool(rng.random() < 1 / 3)
    attr = axis - rank if rng.random() < 0.25 else axis  # the attribute sometimes negative
    data = scatter_values(rng, dshape, dtype, reduction, "data")
    indices = random_indices(rng, ishape, dshape[axis], index_dtype, negatives)
    updates = scatter_values(rng, ishape, dtype, reduction, "updates")
    # Duplicates (random indices along the axis) are compared at every thread count: ORT applies
    # each line along the axis on one thread, in index order, as gatherkit folds them.
    return Case("ScatterElements", [("data", data), ("indices", indices), ("updates", updates)],
                {"axis": attr, "reduction": reduction}, tuple(dshape), dtype,
                {"attribute": f"axis={attr} {reduction}", "slice_bytes": item, "negatives": negatives})


def distinct_positions(rng, positions, n):
    """n distinct values of [0, positions) (n <= positions), int64, in random order."""
    if positions <= 1 << 22:
        return rng.permutation(positions)[:n]
    if n <= positions // 16:  # sparse: oversample, deduplicate, keep a random n of them
        while True:
            found = np.unique(rng.integers(0, positions, n + n // 8 + 64, dtype=np.int64))
            if found.size >= n:
                return found[rng.permutation(found.size)[:n]]
    p = min(1.0, 1.1 * n / positions)
    while True:
        found = np.flatnonzero(rng.random(positions, dtype=np.float32) < p)
        if found.size >= n:
            rng.shuffle(found)
            return found[:n]
        p = min(1.0, 1.5 * p)


def gen_scatter_nd(rng, max_bytes):
    reduction, dtype = pick_scatter(rng, "ScatterND")
    item = dtype.itemsize
    data_bytes = log_uniform_int(rng, MIN_DATA_BYTES, max_bytes)
    data_elems = max(1, data_bytes // item)
    rank = int(rng.integers(1, 6))
    # tuple length k 1 .. rank, 0 rarely (each empty tuple addresses the whole tensor)
    k = 0 if rng.random() < 0.03 else int(rng.integers(1, rank + 1))
    if k == 0:
        dshape = clamp_data(split_dims(rng, data_elems, rank), item, max_bytes)
    else:  # the slice (data dims k..) drawn as GatherND's: one element (k = rank) to ~8 KiB
        slice_dims = draw_slice_dims(rng, rank - k, item, data_elems)
        positions = max(1, data_elems // math.prod(slice_dims))
        dshape = clamp_data(split_dims(rng, positions, k) + slice_dims, item, max_bytes)
    indexed_dims, slice_dims = dshape[:k], dshape[k:]
    positions, slice_elems = math.prod(indexed_dims), math.prod(slice_dims)
    # Half the configurations draw tuples independently (duplicates: log-uniform sqrt(positions) ..
    # 2 x positions + 16 tuples, so repeats are likely), half distinct ones (1 .. positions
    # tuples); k = 0 repeats by nature (1-4 tuples). 0-2 index dims hold them (0: one tuple).
    duplicates = k == 0 or bool(rng.random() < 0.5)
    m = int(rng.choice([0, 1, 2], p=[0.1, 0.5, 0.4]))
    if k == 0:
        n = log_uniform_int(rng, 1, 4)
    elif duplicates:
        n = log_uniform_int(rng, max(1, math.isqrt(positions)), 2 * positions + 16)
    else:
        n = log_uniform_int(rng, 1, positions)
    grid = split_dims(rng, n, m)
    data_nbytes = math.prod(dshape) * item
    # data, both outputs and (duplicates) ORT's 1-thread reference output
    grid = shrink_to_budget(grid, (3 + duplicates) * data_nbytes, k * 8 + slice_elems * item, CASE_BUDGET)
    if not duplicates:
        grid = shrink_to_budget(grid, 0, 1, positions)  # split_dims rounds: at most `positions` tuples
    n = math.prod(grid)
    if duplicates:
        tuples = rng.integers(0, np.asarray(indexed_dims, dtype=np.int64), size=(n, k), dtype=np.int64)
    else:
        flat = distinct_positions(rng, positions, n)
        tuples = np.stack(np.unravel_index(flat, indexed_dims), axis=-1).astype(np.int64)
        del flat
    negatives = bool(rng.random() < 1 / 3)
    if negatives:  # about half the components written as the equivalent negative index
        tuples -= np.where(rng.random(tuples.shape) < 0.5, np.asarray(indexed_dims, dtype=np.int64), 0)
    # ONNX's ScatterND takes int64 indices only in ORT (gatherkit takes int32 too)
    indices = tuples.reshape(grid + [k])
    data = scatter_values(rng, dshape, dtype, reduction, "data")
    updates = scatter_values(rng, grid + slice_dims, dtype, reduction, "updates")
    # With duplicates ORT's ScatterND differs run to run above one thread (its threads split the
    # tuples unordered: the last duplicate varies, reductions race and lose updates), so
    # gatherkit's output is checked against ORT's 1-thread output there (see ortbench.Case).
    repeats = duplicates and n > 1
    return Case("ScatterND", [("data", data), ("indices", indices), ("updates", updates)],
                {"reduction": reduction}, tuple(dshape), dtype,
                {"attribute": f"{reduction}{' dup' if duplicates else ''}", "slice_bytes": slice_elems * item,
                 "negatives": negatives},
                ort_deterministic_threads=1 if repeats else None)


GENERATORS = {
    "GatherElements": gen_gather_elements,
    "GatherND": gen_gather_nd,
    "Gather": gen_gather,
    "ScatterElements": gen_scatter_elements,
    "ScatterND": gen_scatter_nd,
}
# --ops' default: the gathers, which every earlier seed drew from (the scatters came later)
DEFAULT_OPS = ["GatherElements", "GatherND", "Gather"]


def make_case(seed, case_id, ops, max_bytes):
    """Configuration `case_id` of the sweep: depends only on (seed, case_id, ops, max_bytes)."""
    rng = np.random.default_rng([seed, case_id])
    op = ops[int(rng.integers(len(ops)))]
    return GENERATORS[op](rng, max_bytes)


# --- output -----------------------------------------------------------------------------------------

def shape_str(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def case_columns(case_id, case):
    return [
        f"{case_id:>4}", f"{case.op:<14}", f"{case.data.dtype.name:<7}", f"{case.indices.dtype.name:<5}",
        f"{shape_str(case.data.shape):<26}", f"{shape_str(case.indices.shape):<26}",
        f"{case.info['attribute'] + ('*' if case.info['negatives'] else ''):<13}",
        f"{str(case.info['slice_bytes']):>6}", f"{case.data.nbytes / 2**20:8.2f}",
    ]


def header_line(threads_list):
    cols = [f"{'id':>4}", f"{'op':<14}", f"{'dtype':<7}", f"{'idx':<5}", f"{'data shape':<26}",
            f"{'indices shape':<26}", f"{'attribute':<13}", f"{'sliceB':>6}", f"{'data MiB':>8}"]
    for t in threads_list:
        cols.append(f"| {f'ORT {t}t ms':>10} {f'gk {t}t ms':>10} {f'ratio {t}t':>8}")
    if len(threads_list) > 1:
        cols.append("| " + " ".join(f"{f'{t}t/{threads_list[0]}t':>5}" for t in threads_list[1:]))
    return " ".join(cols)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=100, help="configurations (default 100)")
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds per configuration (default 7)")
    parser.add_argument("--max-bytes", type=parse_bytes, default=128 << 20,
                        help="largest data tensor, e.g. 8M (default 128M)")
    parser.add_argument("--ops", default=",".join(DEFAULT_OPS),
                        help=f"comma list out of {','.join(GENERATORS)} (default {','.join(DEFAULT_OPS)}, the "
                             f"configurations of earlier seeds; GatherElements,GatherND draws those of runs "
                             f"from before Gather)")
    parser.add_argument("--threads", type=parse_threads, default=[1, 2], help="comma list (default 1,2)")
    parser.add_argument("--csv", default=None, help="also write one row per configuration here")
    parser.add_argument("--only", default=None, help="comma list of configuration ids to run (1-based)")
    args = parser.parse_args()

    ops = [op.strip() for op in args.ops.split(",") if op.strip()]
    for op in ops:
        if op not in GENERATORS:
            parser.error(f"unknown op {op!r}; known: {', '.join(GENERATORS)}")
    if args.max_bytes < MIN_DATA_BYTES:
        parser.error(f"--max-bytes must be at least {MIN_DATA_BYTES}")
    ids = list(range(1, args.count + 1)) if args.only is None else [int(x) for x in args.only.split(",")]
    threads_list = args.threads

    print(ortbench.run_header("gatherkit sweep", args.seed), flush=True)
    print(f"count {len(ids)}, repeat {args.repeat}, max data {ortbench.fmt_bytes(args.max_bytes)}, ops {','.join(ops)}, "
          f"threads {','.join(map(str, threads_list))}")
    ortbench.measure_glue(threads_list, ops)
    print("ratio = adjusted ORT ms / gk ms (> 1: gatherkit faster); * = negative indices mixed in")
    print(header_line(threads_list), flush=True)

    rows = []
    for case_id in ids:
        case = make_case(args.seed, case_id, ops, args.max_bytes)
        outs = ortbench.new_outputs(case)
        result = {"id": case_id, "ort_raw": {}, "ort": {}, "gk": {}, "ratio": {}, "ceiling": {}}
        cells = []
        for t in threads_list:
            try:
                ort_ms, gk_ms, glue_ms, gk_tiny_ms = ortbench.time_case(case, t, args.repeat, outs, glue=True)
            except ortbench.Mismatch as e:
                print(" ".join(case_columns(case_id, case)), flush=True)
                sys.exit(f"MISMATCH in configuration {case_id} (seed {args.seed}, {case.op}, "
                         f"{case.info['attribute']}, data {case.data.dtype} {case.data.shape}, indices "
                         f"{case.indices.dtype} {case.indices.shape}): {e}")
            adjusted = ortbench.adjusted(ort_ms, glue_ms)
            result["ort_raw"][t], result["ort"][t], result["gk"][t] = ort_ms, adjusted, gk_ms
            result["ratio"][t] = adjusted / gk_ms
            # Over the shorter of the two, so that a call timed below its tiny one (noise) never
            # gets a ceiling under its own ratio: the ceilings' geo-mean then bounds the ratios'.
            result["ceiling"][t] = adjusted / min(gk_tiny_ms, gk_ms)
            cells.append(f"| {adjusted:10.3f} {gk_ms:10.3f} {adjusted / gk_ms:7.2f}x")
        if len(threads_list) > 1:
            own = ortbench.time_thread_counts(case, threads_list, args.repeat, outs[1])
            result["self"] = {t: ms / own[0] for t, ms in zip(threads_list, own)}
            cells.append("| " + " ".join(f"{result['self'][t]:5.2f}" for t in threads_list[1:]))
        print(" ".join(case_columns(case_id, case) + cells), flush=True)
        result["total_bytes"] = case.total_bytes()
        result["desc"] = {
            "op": case.op, "dtype": case.data.dtype.name, "index_dtype": case.indices.dtype.name,
            "data_shape": shape_str(case.data.shape), "indices_shape": shape_str(case.indices.shape),
            "attribute": case.info["attribute"], "slice_bytes": case.info["slice_bytes"],
            "negatives": int(case.info["negatives"]), "data_bytes": case.data.nbytes,
        }
        del case, outs  # free the arrays before the next configuration is drawn
        rows.append(result)

    print()
    for t in threads_list:
        ratios = [r["ratio"][t] for r in rows]
        if not ratios:
            continue
        worst = min(rows, key=lambda r: r["ratio"][t])
        losses = [r["id"] for r in rows if r["ratio"][t] < 1.0]
        print(f"{t} thread(s): geo-mean ratio {statistics.geometric_mean(ratios):.2f}x, min {worst['ratio'][t]:.2f}x "
              f"(config {worst['id']}), {len(losses)}/{len(rows)} lose (ratio < 1.0)"
              + (f": {','.join(map(str, losses[:20]))}{',...' if len(losses) > 20 else ''}" if losses else ""))
        ceilings = [r["ceiling"][t] for r in rows]
        ties = sum(c < TIE_CEILING for c in ceilings)
        others = [r["ratio"][t] for r in rows if r["ceiling"][t] >= TIE_CEILING]
        print(f"    ceiling (gatherkit's calls as fast as its tiny call): geo-mean "
              f"{statistics.geometric_mean(ceilings):.2f}x; {ties}/{len(rows)} configurations have a ceiling "
              f"under {TIE_CEILING:.2f}x (ties by construction)"
              + (f"; the others' geo-mean ratio {statistics.geometric_mean(others):.2f}x, "
                 f"{sum(x < 1.0 for x in others)} lose" if others and ties else ""))
        by_op = {}
        for r in rows:
            by_op.setdefault(r["desc"]["op"], []).append(r)
        if len(by_op) > 1:  # per op as well
            print("    " + ", ".join(
                f"{op}: {statistics.geometric_mean([r['ratio'][t] for r in group]):.2f}x, "
                f"{sum(r['ratio'][t] < 1.0 for r in group)}/{len(group)} lose" for op, group in by_op.items()))
    base = threads_list[0]
    for t in threads_list[1:]:
        slower = [r["id"] for r in rows if r["self"][t] > 1.05]
        worst = max(rows, key=lambda r: r["self"][t])
        print(f"{t}t vs {base}t (gatherkit against itself, settled calls, pool idle): {len(slower)}/{len(rows)} "
              f"configurations take > 1.05 x the {base}-thread time, worst {worst['self'][t]:.2f}x (config "
              f"{worst['id']})" + (f": {','.join(map(str, slower[:20]))}{',...' if len(slower) > 20 else ''}"
                                   if slower else ""))

    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            head = ["id", "op", "dtype", "index_dtype", "data_shape", "indices_shape", "attribute", "slice_bytes",
                    "negatives", "data_bytes", "total_bytes"]
            for t in threads_list:
                head += [f"ort_raw_ms_{t}t", f"ort_ms_{t}t", f"gk_ms_{t}t", f"ratio_{t}t"]
            head += [f"gk_{t}t_over_{base}t" for t in threads_list[1:]]
            head += [f"ceiling_{t}t" for t in threads_list]
            w.writerow(head)
            for r in rows:
                d = r["desc"]
                row = [r["id"], d["op"], d["dtype"], d["index_dtype"], d["data_shape"], d["indices_shape"],
                       d["attribute"], d["slice_bytes"], d["negatives"], d["data_bytes"], r["total_bytes"]]
                for t in threads_list:
                    row += [f"{r['ort_raw'][t]:.6f}", f"{r['ort'][t]:.6f}", f"{r['gk'][t]:.6f}", f"{r['ratio'][t]:.4f}"]
                row += [f"{r['self'][t]:.4f}" for t in threads_list[1:]]
                row += [f"{r['ceiling'][t]:.4f}" for t in threads_list]
                w.writerow(row)
        print(f"wrote {args.csv}")


if __name__ == "__main__":
    main()
