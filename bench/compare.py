#!/usr/bin/env python3
"""gatherkit vs ONNX Runtime's CPU kernels on workloads W1-W9 (see the README's Performance
section), G1-G4 (ONNX Gather) and S1-S3 (ScatterND, ScatterElements; see workloads.py), at 1 and 2
threads, on identical inputs; checks the outputs are equal and prints one table of medians and
ratios.

    pip install numpy onnx onnxruntime
    cmake --build build && PYTHONPATH=bindings/python python3 bench/compare.py [--repeat 15] [--only W3 G1 S1]

Both sides are timed as a C or C++ runtime calls them, with the glue built once: ORT through io
binding (inputs and a preallocated output bound), gatherkit as a bare ctypes call (ortbench.py),
alternating, outputs checked bitwise equal. A row that moves few bytes (G3: one row) still holds
each side's per-call cost; sweep.py also subtracts the difference of those costs.

Index values are uniform random over the valid range (non-negative). The floor is the time to
move the workload's bytes once at the machine's copy rate, measured in the same run with a large
numpy copy (read + write).

Scatter rows: ORT always writes a separate output (io binding binds one), so an in-place row
(S1i: gatherkit with out=data) compares gatherkit's in-place call with ORT's copy. Outputs are
compared bitwise except S2 (float add), which may differ by rounding if ORT sums in another
order; the row's check note says whether it was bitwise equal.
"""

import argparse
import platform
import statistics
import time

import fresh_mappings  # (before numpy allocates)
import quiet_blas  # noqa: F401  (before numpy)
import numpy as np
import onnxruntime as ort

import gatherkit
import ortbench
from workloads import bytes_touched, output_shape, scatter_bytes_touched, scatter_workloads, workloads


def fmt_ms(ms):
    # Below 1 ms (G3) one decimal would print 0.0; the W rows all take longer and print as before.
    return f"{ms:.1f}" if ms >= 1 else f"{ms:.4f}"


def median_ms(fn, repeat):
    fn()  # warm-up (first-touch page faults, thread pools)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def copy_rate(repeat):
    """Bytes per second of a large copy (read + write counted)."""
    src = np.ones(64 << 20, dtype=np.float32)  # 256 MiB
    dst = np.empty_like(src)
    ms = median_ms(lambda: np.copyto(dst, src), repeat)
    return 2 * src.nbytes / (ms / 1e3)


def cases(only):
    """(id, description, ortbench.Case, floor bytes) of each selected row, built lazily (one row's
    arrays at a time)."""
    for wid, desc, op, make, attribute in workloads():
        if only and wid not in only:
            continue
        data, indices = make()
        shape = output_shape(op, data, indices, attribute)
        attrs = {"batch_dims": attribute} if op == "GatherND" else {"axis": attribute}
        case = ortbench.Case(op, [("data", data), ("indices", indices)], attrs, tuple(shape), data.dtype)
        yield wid, desc, case, bytes_touched(op, data, indices, shape, attribute)
    for wid, desc, op, make, attrs, in_place, tolerance in scatter_workloads():
        if only and wid not in only:
            continue
        data, indices, updates = make()
        case = ortbench.Case(op, [("data", data), ("indices", indices), ("updates", updates)], attrs, data.shape,
                             data.dtype, in_place=in_place, tolerance=tolerance)
        yield wid, desc, case, scatter_bytes_touched(op, data, indices, updates, in_place)


def main():
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--only", nargs="*", default=None, help="workload ids, e.g. W3 G1 (default: all)")
    args = parser.parse_args()
    known = [w[0] for w in workloads()] + [w[0] for w in scatter_workloads()]  # lazy makers: no arrays
    if args.only and set(args.only) - set(known):
        parser.error(f"unknown workload(s) {sorted(set(args.only) - set(known))}; known: {' '.join(known)}")

    rate = copy_rate(args.repeat)
    print(f"machine: {platform.processor() or platform.machine()}, "
          f"gatherkit {gatherkit.library_version()} ({gatherkit.library_path()}), "
          f"onnxruntime {ort.__version__}, copy rate {rate / 2**30:.1f} GiB/s (read+write), "
          f"mmap threshold {'fixed at 1 MiB' if fresh_mappings.FIXED else 'not fixed'}")
    header = f"| id | workload | floor ms | " + " | ".join(
        f"ORT {t}t ms | gk {t}t ms | speedup {t}t" for t in (1, 2)) + " |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    speedups = {1: {}, 2: {}}  # per thread count: group letter ("W", "G", "S") -> speedups
    notes = []
    for wid, desc, case, floor_bytes in cases(args.only):
        cells = []
        floor = floor_bytes / rate * 1e3
        checks = set()
        for threads in (1, 2):
            try:
                ort_ms, gk_ms = ortbench.time_case(case, threads, args.repeat)
            except ortbench.Mismatch as e:
                raise SystemExit(f"{wid}: gatherkit and onnxruntime outputs differ: {e}")
            checks.add(f"{threads}t: {case.check}")
            speedups[threads].setdefault(wid[0], []).append(ort_ms / gk_ms)
            cells.append(f"{fmt_ms(ort_ms)} | {fmt_ms(gk_ms)} | {ort_ms / gk_ms:.2f}x")
        print(f"| {wid} | {desc} | {fmt_ms(floor)} | " + " | ".join(cells) + " |", flush=True)
        if case.tolerance is not None:
            notes.append(f"{wid} outputs (tolerance {case.tolerance:g}): " + "; ".join(sorted(checks)))
    for note in notes:
        print(note)
    for threads in (1, 2):
        groups = speedups[threads]
        every = [x for group in groups.values() for x in group]
        if every:
            # Per group as well: the W figure stays comparable with runs from before the G rows.
            split = "" if len(groups) < 2 else " (" + ", ".join(
                f"{g}: {statistics.geometric_mean(v):.2f}x" for g, v in groups.items()) + ")"
            print(f"geometric-mean speedup at {threads} thread(s): {statistics.geometric_mean(every):.2f}x{split}")


if __name__ == "__main__":
    main()
