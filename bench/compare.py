#!/usr/bin/env python3
"""gatherkit vs ONNX Runtime's CPU kernels on workloads W1-W9 (see the README's Performance
section) and G1-G4 (ONNX Gather; see workloads.py), at 1 and 2 threads, on identical inputs;
checks the outputs are equal and prints one table of medians and ratios.

    pip install numpy onnx onnxruntime
    cmake --build build && PYTHONPATH=bindings/python python3 bench/compare.py [--repeat 15] [--only W3 G1]

Both sides are timed through their Python APIs (session.run, the binding with ``out=``), so a row
that moves few bytes (G3: one row) measures per-call glue as much as the kernels; sweep.py times
bare calls and corrects for that.

Index values are uniform random over the valid range (non-negative). The floor is the time to
move the workload's bytes once at the machine's copy rate, measured in the same run with a large
numpy copy (read + write).
"""

import argparse
import platform
import statistics
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import gatherkit
from workloads import bytes_touched, workloads


# op -> (the ONNX attribute the workload's attribute is, the binding's function)
OPS = {
    "GatherElements": ("axis", gatherkit.gather_elements),
    "GatherND": ("batch_dims", gatherkit.gather_nd),
    "Gather": ("axis", gatherkit.gather),
}


def ort_session(op, data, indices, attribute, threads):
    attrs = {OPS[op][0]: attribute}
    elem = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}[data.dtype.type]
    idx = {np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}[indices.dtype.type]
    node = helper.make_node(op, ["data", "indices"], ["out"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("data", elem, data.shape),
         helper.make_tensor_value_info("indices", idx, indices.shape)],
        [helper.make_tensor_value_info("out", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


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


def main():
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--only", nargs="*", default=None, help="workload ids, e.g. W3 G1 (default: all)")
    args = parser.parse_args()
    known = [w[0] for w in workloads()]  # the makers are lazy: listing builds no arrays
    if args.only and set(args.only) - set(known):
        parser.error(f"unknown workload(s) {sorted(set(args.only) - set(known))}; known: {' '.join(known)}")

    rate = copy_rate(args.repeat)
    print(f"machine: {platform.processor() or platform.machine()}, gatherkit {gatherkit.library_version()}, "
          f"onnxruntime {ort.__version__}, copy rate {rate / 2**30:.1f} GiB/s (read+write)")
    header = f"| id | workload | floor ms | " + " | ".join(
        f"ORT {t}t ms | gk {t}t ms | speedup {t}t" for t in (1, 2)) + " |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    speedups = {1: {}, 2: {}}  # per thread count: group letter ("W", "G") -> speedups
    for wid, desc, op, make, attribute in workloads():
        if args.only and wid not in args.only:
            continue
        data, indices = make()
        cells = []
        floor = None
        for threads in (1, 2):
            sess = ort_session(op, data, indices, attribute, threads)
            feed = {"data": data, "indices": indices}
            expected = sess.run(None, feed)[0]
            call = OPS[op][1]
            got = call(data, indices, attribute, num_threads=threads)
            out = np.empty_like(got)  # preallocated, as a runtime would pass it (ORT reuses its arena)
            if got.shape != expected.shape or not np.array_equal(got, expected):
                raise SystemExit(f"{wid}: gatherkit and onnxruntime outputs differ")
            floor = bytes_touched(op, data, indices, got.shape, attribute) / rate * 1e3
            ort_ms = median_ms(lambda: sess.run(None, feed), args.repeat)
            # ORT's pool threads spin-wait after a run (allow_spinning is on by default); with the
            # session alive they would keep the other core busy while gatherkit is timed.
            del sess
            gk_ms = median_ms(lambda: call(data, indices, attribute, num_threads=threads, out=out), args.repeat)
            speedups[threads].setdefault(wid[0], []).append(ort_ms / gk_ms)
            cells.append(f"{fmt_ms(ort_ms)} | {fmt_ms(gk_ms)} | {ort_ms / gk_ms:.2f}x")
            del expected, got, out
        print(f"| {wid} | {desc} | {fmt_ms(floor)} | " + " | ".join(cells) + " |", flush=True)
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
