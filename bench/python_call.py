#!/usr/bin/env python3
"""What a Python caller pays per call: gatherkit's binding (``gatherkit.gather(...)``, a new output
each call) against ONNX Runtime's ``InferenceSession.run`` of the same one-node model (a new
output each call too), both timed alternating in one process, on small float32 gathers where the
call's glue is most of its time. Also gatherkit's general path on the same inputs (the direct
path switched off: the shape query and descriptor objects each call), which every call took
before the direct path. Prints medians in microseconds and ORT's time over gatherkit's.

    pip install numpy onnx onnxruntime
    PYTHONPATH=bindings/python python3 bench/python_call.py [--rounds 2000] [--threads 1]
"""

import argparse
import statistics
import time

import quiet_blas  # noqa: F401  (before numpy)
import numpy as np

import gatherkit
import ortbench


def cases():
    """(name, op, data, indices, attributes): one tiny call and two that move more, per op."""
    rng = np.random.default_rng(1)
    for n in (4, 256, 16384):
        rows = max(n // 64, 2)
        data = rng.random((rows, 64), dtype=np.float32) if n > 4 else rng.random((2, 2), dtype=np.float32)
        cols = data.shape[1]
        indices = rng.integers(0, data.shape[0], size=(max(n // cols, 1), cols))
        yield f"GatherElements {n}", "GatherElements", data, indices, {"axis": 0}
        tuples = rng.integers(0, data.shape[0], size=(max(n // cols, 1), 1))
        yield f"GatherND {n}", "GatherND", data, tuples, {"batch_dims": 0}
        yield f"Gather {n}", "Gather", data, tuples[:, 0].copy(), {"axis": 0}


def binding_call(op, data, indices, attrs, threads):
    fn = {"GatherElements": gatherkit.gather_elements, "GatherND": gatherkit.gather_nd, "Gather": gatherkit.gather}[op]
    return lambda: fn(data, indices, *attrs.values(), num_threads=threads)


def general_path(call):
    """`call` with the binding's direct path switched off for its duration."""
    def run():
        gatherkit._DIRECT = False
        try:
            return call()
        finally:
            gatherkit._DIRECT = True
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    print(f"gatherkit {gatherkit.library_version()} ({gatherkit.library_path()}), {args.threads} thread(s), "
          f"medians of {args.rounds} alternating rounds, us per call")
    print("| call | elements out | ORT run | gatherkit | ORT / gatherkit | gatherkit general path |")
    print("|---|---|---|---|---|---|")
    for name, op, data, indices, attrs in cases():
        session = ortbench.ort_session(op, [("data", data), ("indices", indices)], attrs, args.threads)
        feeds = {"data": data, "indices": indices}
        calls = [lambda: session.run(None, feeds), binding_call(op, data, indices, attrs, args.threads),
                 general_path(binding_call(op, data, indices, attrs, args.threads))]
        expected = calls[0]()[0]
        for call in calls[1:]:
            got = call()
            assert got.shape == expected.shape and got.tobytes() == expected.tobytes(), name
        times = [[] for _ in calls]
        for _ in range(args.rounds):
            for k, call in enumerate(calls):
                t0 = time.perf_counter()
                call()
                times[k].append(time.perf_counter() - t0)
        ort_us, gk_us, general_us = (statistics.median(t) * 1e6 for t in times)
        print(f"| {name.split()[0]} | {expected.size} | {ort_us:.1f} | {gk_us:.1f} | {ort_us / gk_us:.2f}x | "
              f"{general_us:.1f} |")


if __name__ == "__main__":
    main()
