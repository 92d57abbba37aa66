#!/usr/bin/env python3
"""Two builds of libgatherkit timed against each other in one process, on W1-W9 and G1-G4.

    python3 bench/ab.py A/libgatherkit.so B/libgatherkit.so [--repeat 15] [--threads 1 2] [--only W2 G1]

Calls alternate A, B, A, B, ... so that both builds see the same machine state (the machines here
are shared and noisy: compare ratios within one run, never across runs). Outputs are checked equal.
Prints the medians and B/A (below 1: B is faster). At 2 threads, read B/A with care: each build
has its own pool, whose workers keep spinning for up to 50 us after a call, on the core the other
build's worker then needs (a 1 MiB GatherND moved by 30% from that alone); compare thread
counts of one build in its own process (the sweep's and the ladder's 2t/1t columns). Needs numpy only. The two paths must differ
(the loader keeps one copy per file). A G row (Gather) is skipped, with a note, when either build
lacks gk_gather (0.1.x, and 0.2 builds from before Gather), so such a build can still be compared
on W1-W9.
"""

import argparse
import ctypes
import pathlib
import runpy
import statistics
import time

import fresh_mappings  # noqa: F401  (before numpy allocates)
import quiet_blas  # noqa: F401  (before numpy)
import numpy as np

from workloads import output_shape, workloads

# The binding's table of the header's numbers (checked against include/gatherkit.h by its tests),
# run as a plain file: importing the gatherkit package would load a third libgatherkit besides the
# two under test, and fail where none is on its search path. The numbers have not changed since
# 0.1.0, so they hold for both builds.
ABI = runpy.run_path(str(pathlib.Path(__file__).resolve().parents[1] / "bindings/python/gatherkit/_abi.py"))

DTYPES = {
    np.dtype(np.float32): ABI["GK_DTYPE_FLOAT"],
    np.dtype(np.int32): ABI["GK_DTYPE_INT32"],
    np.dtype(np.int64): ABI["GK_DTYPE_INT64"],
    np.dtype(np.float16): ABI["GK_DTYPE_FLOAT16"],
}


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int32), ("rank", ctypes.c_size_t),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p)]


class Options01(ctypes.Structure):
    """gk_options of 0.1.x."""
    _fields_ = [("flavor", ctypes.c_int32), ("version", ctypes.c_int32), ("num_threads", ctypes.c_size_t)]


class Options(ctypes.Structure):
    """gk_options from 0.2.0 on (struct_size first)."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("flavor", ctypes.c_int32), ("version", ctypes.c_int32),
                ("num_threads", ctypes.c_size_t), ("parallel_for", ctypes.c_void_p),
                ("parallel_for_ctx", ctypes.c_void_p), ("parallel_for_concurrency", ctypes.c_size_t)]


# op -> (C function, its int64 attributes after (data, indices)). Gather's batch_dims is always 0
# here: ONNX Gather has none.
C_FUNCTIONS = {
    "GatherElements": ("gk_gather_elements", 1),
    "GatherND": ("gk_gather_nd", 1),
    "Gather": ("gk_gather", 2),
}


def tensor(array):
    # at least one element: a rank-0 (scalar) index still gets a valid shape pointer
    shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
    return Tensor(DTYPES[array.dtype], array.ndim, shape, array.ctypes.data), shape


class Build:
    def __init__(self, path):
        self.path = path
        self.lib = ctypes.CDLL(path)
        self.functions = {}  # op -> C function, for the ops this build exports
        for op, (name, attributes) in C_FUNCTIONS.items():
            fn = getattr(self.lib, name, None)
            if fn is None:
                continue
            fn.argtypes = [ctypes.POINTER(Tensor)] * 2 + [ctypes.c_int64] * attributes + [
                ctypes.POINTER(Tensor), ctypes.c_void_p]
            fn.restype = ctypes.c_int32
            self.functions[op] = fn
        self.lib.gk_last_error_message.restype = ctypes.c_char_p
        self.lib.gk_version.restype = ctypes.c_char_p
        self.old_options = self.lib.gk_version().decode().startswith("0.1.")

    def caller(self, op, data, indices, attribute, out, threads):
        fn = self.functions[op]
        attributes = (attribute, 0) if op == "Gather" else (attribute,)
        keep = [tensor(data), tensor(indices), tensor(out)]
        d, i, o = (ctypes.byref(t) for t, _ in keep)
        if self.old_options:
            options = ctypes.byref(Options01(flavor=ABI["GK_FLAVOR_ONNX"], version=0, num_threads=threads))
        else:
            options = ctypes.byref(Options(struct_size=ctypes.sizeof(Options), flavor=ABI["GK_FLAVOR_ONNX"],
                                           version=0, num_threads=threads))

        def call():
            status = fn(d, i, *attributes, o, options)
            if status != ABI["GK_STATUS_OK"]:
                raise SystemExit(f"{self.path}: status {status}: {self.lib.gk_last_error_message().decode()}")
        call.keep = keep
        return call


def fmt_ms(ms):
    # G3 takes microseconds: two decimals of a millisecond would print 0.00.
    return f"{ms:.2f}" if ms >= 1 else f"{ms:.4f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    known = [w[0] for w in workloads()]  # the makers are lazy: listing builds no arrays
    if args.only and set(args.only) - set(known):
        parser.error(f"unknown workload(s) {sorted(set(args.only) - set(known))}; known: {' '.join(known)}")
    a, b = Build(args.a), Build(args.b)
    print(f"A = {args.a}\nB = {args.b}")
    print("| id | threads | A ms | B ms | B/A |\n|---|---|---|---|---|")
    for wid, _desc, op, make, attribute in workloads():
        if args.only and wid not in args.only:
            continue
        lacking = [f"{name} ({build.path}, {build.lib.gk_version().decode()})"
                   for name, build in (("A", a), ("B", b)) if op not in build.functions]
        if lacking:
            # before make(): the inputs of a skipped row are never built
            print(f"| {wid} | skipped: no {C_FUNCTIONS[op][0]} in {', '.join(lacking)} | | | |", flush=True)
            continue
        data, indices = make()
        shape = output_shape(op, data, indices, attribute)
        out_a, out_b = np.empty(shape, data.dtype), np.empty(shape, data.dtype)
        for threads in args.threads:
            call_a = a.caller(op, data, indices, attribute, out_a, threads)
            call_b = b.caller(op, data, indices, attribute, out_b, threads)
            call_a(), call_b()  # warm-up: page faults, first touch
            if not np.array_equal(out_a, out_b):
                raise SystemExit(f"{wid}: the two builds' outputs differ")
            times = {call_a: [], call_b: []}
            for _ in range(args.repeat):
                for call in (call_a, call_b):
                    t0 = time.perf_counter()
                    call()
                    times[call].append(time.perf_counter() - t0)
            ma, mb = (statistics.median(times[c]) * 1e3 for c in (call_a, call_b))
            print(f"| {wid} | {threads} | {fmt_ms(ma)} | {fmt_ms(mb)} | {mb / ma:.3f} |", flush=True)


if __name__ == "__main__":
    main()
