#!/usr/bin/env python3
"""What reading strided inputs in place gains over copying them first (what a binding that
takes only dense arrays has to do), at 1 and 2 threads, outputs checked equal.

    cmake --build build && PYTHONPATH=bindings/python python3 bench/strided.py [--repeat 11]

For each case: "copy first" = np.ascontiguousarray(view) and the dense call; "in place" = the
same call on the view (gatherkit's gk_*_strided path); "dense equivalent" = the same gather on
inputs that were dense to begin with, where one exists (the floor the strided walk aims for).
Medians of --repeat runs; the ratio is copy first / in place.
"""

import argparse
import platform
import time

import fresh_mappings  # noqa: F401  (before numpy allocates)
import quiet_blas  # noqa: F401  (before numpy)
import numpy as np

import gatherkit


def median_ms(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2] * 1e3


def cases(rng):
    # Graph networks: torch.gather(x, 0, idx[:, None].expand(-1, F)), an index of strides (1, 0).
    x = rng.standard_normal((100_000, 128), dtype=np.float32)
    idx = rng.integers(0, x.shape[0], 200_000)
    broadcast = np.broadcast_to(idx[:, None], (idx.size, 128))
    yield ("GatherElements, index [200000,128] broadcast (strides 1,0), f32 data [100000,128], axis 0",
           gatherkit.gather_elements, (x, broadcast), {"axis": 0}, (x, idx), gatherkit.gather, {"axis": 0})
    # A transposed matrix, 16 picks per row: only 64K of its 16M elements are needed.
    big = rng.standard_normal((4096, 4096), dtype=np.float32)
    picks = rng.integers(0, 4096, (4096, 16))
    yield ("GatherElements, data [4096,4096] f32 transposed, index [4096,16], axis 1",
           gatherkit.gather_elements, (big.T, picks), {"axis": 1}, None, None, None)
    rows = rng.integers(0, 4096, 256)
    yield ("Gather, 256 rows of data [4096,4096] f32 transposed, axis 0",
           gatherkit.gather, (big.T, rows), {"axis": 0}, None, None, None)
    # Every other row of a table (a stepped view), looked up by GatherND tuples.
    table = rng.standard_normal((16_384, 256), dtype=np.float32)
    tuples = rng.integers(0, 8192, (100_000, 1))
    yield ("GatherND, data [16384,256][::2] f32 (stepped), 100000 one-component tuples",
           gatherkit.gather_nd, (table[::2], tuples), {}, (np.ascontiguousarray(table[::2]), tuples),
           gatherkit.gather_nd, {})
    # A reversed sequence (negative stride), embedding-style row lookup.
    seq = rng.standard_normal((50_000, 512), dtype=np.float32)
    ids = rng.integers(0, seq.shape[0], 20_000)
    yield ("Gather, data [50000,512] f32 reversed (stride -512), 20000 rows, axis 0",
           gatherkit.gather, (seq[::-1], ids), {"axis": 0}, (np.ascontiguousarray(seq[::-1]), ids),
           gatherkit.gather, {"axis": 0})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()
    print(f"gatherkit {gatherkit.library_version()} ({gatherkit.library_path()}) "
          f"on {platform.processor() or platform.machine()}; medians of {args.repeat} runs, ms")
    rng = np.random.default_rng(0)
    print(f"{'case':<92} {'thr':>3} {'copy first':>10} {'in place':>9} {'gain':>6} {'dense eq.':>9}")
    for name, fn, inputs, kwargs, dense_inputs, dense_fn, dense_kwargs in cases(rng):
        expected = fn(*[np.ascontiguousarray(a) for a in inputs], **kwargs)
        got = fn(*inputs, copy=False, **kwargs)
        assert got.dtype == expected.dtype and np.array_equal(got.view(np.uint8), expected.view(np.uint8)), name
        out = np.empty_like(expected)
        for threads in (1, 2):
            copy_first = median_ms(
                lambda: fn(*[np.ascontiguousarray(a) for a in inputs], num_threads=threads, out=out, **kwargs),
                args.repeat)
            in_place = median_ms(lambda: fn(*inputs, num_threads=threads, out=out, copy=False, **kwargs),
                                 args.repeat)
            dense = (f"{median_ms(lambda: dense_fn(*dense_inputs, num_threads=threads, out=out, **dense_kwargs), args.repeat):9.2f}"
                     if dense_fn else f"{'-':>9}")
            print(f"{name:<92} {threads:>3} {copy_first:10.2f} {in_place:9.2f} {copy_first / in_place:5.1f}x {dense}")


if __name__ == "__main__":
    main()
