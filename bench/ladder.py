#!/usr/bin/env python3
"""Size ladder of gatherkit against ONNX Runtime's CPU kernels: five fixed shape families, each
scaled so that the data is 4 KiB, 16 KiB, ..., 256 MiB (powers of 4, cut at --max-bytes), timed
at each thread count on identical inputs with outputs checked bitwise equal. Prints a table and
optionally writes a CSV and a PNG plot of the speedup over ORT against the data size.

    pip install numpy onnx onnxruntime matplotlib
    PYTHONPATH=bindings/python python3 bench/ladder.py --plot bench/ladder.png
    PYTHONPATH=bindings/python python3 bench/ladder.py --max-bytes 4M --repeat 3 --csv /tmp/ladder.csv

(GATHERKIT_LIBRARY=path/to/libgatherkit.so picks a build.) Families (float32 data, int64
indices, index values uniform over the valid range, fixed seed):

    ge-last   GatherElements [n/256, 256], axis=1, indices the data's shape
    ge-axis0  GatherElements [a, b, b] (about a cube), axis=0, indices the data's shape
    nd-1k     GatherND [n/256, 256] (1 KiB slices), indices [n/256, 1]: as many tuples as rows
    nd-k3     GatherND [a, b, b] (4-byte elements), indices [n/4, 3]
    g-mid     Gather [a, b, b], axis=1, indices [b]: a slices of b elements (32 B to 1 KiB) per index

Timing, the ORT overhead correction (speedup = adjusted ORT time / gatherkit time) and the
checks are sweep.py's (shared in ortbench.py); so is the next-to-last column, gatherkit's 2-thread
time over its 1-thread time with the two timed alternating with each other (settled calls, pool
idle: each timed call wakes the workers). The last column is the same ratio with each timed call
right after its untimed twin, while the workers still spin ("awake"): the pool's own per-call
cost, without the operating system's wake-up; the summary gives its 1 MiB times. The largest rung
holds about 1.3 GiB (ge-last: data + int64 indices + two outputs).
"""

import argparse
import csv
import math

import fresh_mappings  # noqa: F401  (before numpy allocates)
import quiet_blas  # noqa: F401  (before numpy)
import numpy as np

import ortbench
from ortbench import Case, parse_bytes, parse_threads

MIN_BYTES = 4 << 10
MAX_BYTES = 256 << 20
F32 = np.dtype(np.float32)


def cube_dims(n):
    """[a, b, b] with a * b * b == n (n a power of two), about a cube, a >= b."""
    e = int(n).bit_length() - 1
    eb = e // 3
    return [1 << (e - 2 * eb), 1 << eb, 1 << eb]


def family_ge_last(rng, n):
    shape = (n // 256, 256)
    data = rng.random(shape, dtype=np.float32)
    indices = rng.integers(0, 256, size=shape, dtype=np.int64)
    return Case("GatherElements", [("data", data), ("indices", indices)], {"axis": 1}, shape, F32,
                {"desc": f"GatherElements {list(shape)} axis=1"})


def family_ge_axis0(rng, n):
    shape = tuple(cube_dims(n))
    data = rng.random(shape, dtype=np.float32)
    indices = rng.integers(0, shape[0], size=shape, dtype=np.int64)
    return Case("GatherElements", [("data", data), ("indices", indices)], {"axis": 0}, shape, F32,
                {"desc": f"GatherElements {list(shape)} axis=0"})


def family_nd_1k(rng, n):
    rows = n // 256
    data = rng.random((rows, 256), dtype=np.float32)
    indices = rng.integers(0, rows, size=(rows, 1), dtype=np.int64)
    return Case("GatherND", [("data", data), ("indices", indices)], {"batch_dims": 0}, (rows, 256), F32,
                {"desc": f"GatherND {[rows, 256]} idx {[rows, 1]}"})


def family_nd_k3(rng, n):
    shape = cube_dims(n)
    tuples = n // 4
    data = rng.random(shape, dtype=np.float32)
    indices = rng.integers(0, np.array(shape, dtype=np.int64), size=(tuples, 3), dtype=np.int64)
    return Case("GatherND", [("data", data), ("indices", indices)], {"batch_dims": 0}, (tuples,), F32,
                {"desc": f"GatherND {shape} idx {[tuples, 3]}"})


def family_g_mid(rng, n):
    # The middle axis, not an embedding lookup: nd-1k already moves 1 KiB rows by their first
    # index; this one loops over outer positions with slices that grow with the size.
    shape = cube_dims(n)
    data = rng.random(shape, dtype=np.float32)
    indices = rng.integers(0, shape[1], size=(shape[1],), dtype=np.int64)
    return Case("Gather", [("data", data), ("indices", indices)], {"axis": 1}, tuple(shape), F32,
                {"desc": f"Gather {shape} axis=1 idx {[shape[1]]}"})


# Each family's op (for the per-op overhead correction).
FAMILY_OPS = {"ge-last": "GatherElements", "ge-axis0": "GatherElements", "nd-1k": "GatherND", "nd-k3": "GatherND",
              "g-mid": "Gather"}

FAMILIES = {
    "ge-last": family_ge_last,
    "ge-axis0": family_ge_axis0,
    "nd-1k": family_nd_1k,
    "nd-k3": family_nd_k3,
    "g-mid": family_g_mid,
}


def ladder_sizes(max_bytes):
    sizes, size = [], MIN_BYTES
    while size <= min(max_bytes, MAX_BYTES):
        sizes.append(size)
        size *= 4
    return sizes


def plot(rows, threads_list, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    colors = dict(zip(FAMILIES, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    styles = ["-", "--", ":", "-."]
    for family in FAMILIES:
        for j, t in enumerate(threads_list):
            pts = [(r["bytes"], r["speedup"][t]) for r in rows if r["family"] == family]
            if pts:
                xs, ys = zip(*pts)
                ax.plot(xs, ys, styles[j % len(styles)], marker="o", markersize=3, color=colors[family],
                        label=f"{family} {t}t")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    xs = sorted({r["bytes"] for r in rows})
    ax.set_xticks(xs)
    ax.set_xticklabels([ortbench.fmt_bytes(x).replace(" ", "") for x in xs], rotation=45)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}x"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}x"))
    ax.set_xlabel("data bytes")
    ax.set_ylabel("speedup over ONNX Runtime (ORT ms / gatherkit ms)")
    ax.set_title(f"gatherkit vs onnxruntime CPU: {ortbench.cpu_model()}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds per rung (default 7)")
    parser.add_argument("--max-bytes", type=parse_bytes, default=MAX_BYTES, help="largest data, e.g. 4M (default 256M)")
    parser.add_argument("--threads", type=parse_threads, default=[1, 2], help="comma list (default 1,2)")
    parser.add_argument("--families", default=",".join(FAMILIES), help=f"comma list out of {','.join(FAMILIES)}")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data and index values (default 0)")
    parser.add_argument("--csv", default=None)
    parser.add_argument("--plot", default=None, help="write a PNG here, e.g. bench/ladder.png")
    args = parser.parse_args()

    families = [f.strip() for f in args.families.split(",") if f.strip()]
    for f in families:
        if f not in FAMILIES:
            parser.error(f"unknown family {f!r}; known: {', '.join(FAMILIES)}")
    threads_list = args.threads
    sizes = ladder_sizes(args.max_bytes)
    if not sizes:
        parser.error(f"--max-bytes must be at least {MIN_BYTES}")

    print(ortbench.run_header("gatherkit size ladder", args.seed), flush=True)
    print(f"repeat {args.repeat}, sizes {ortbench.fmt_bytes(sizes[0])}..{ortbench.fmt_bytes(sizes[-1])}, "
          f"threads {','.join(map(str, threads_list))}")
    ortbench.measure_glue(threads_list, sorted({FAMILY_OPS[f] for f in families}))
    print("ORT ms adjusted for per-call overhead; speedup = ORT ms / gk ms (> 1: gatherkit faster)")

    cols = ["| size", "family", "shape"] + [f"ORT {t}t ms" for t in threads_list] + \
        [f"gk {t}t ms" for t in threads_list] + [f"speedup {t}t" for t in threads_list] + \
        [f"gk {t}t/{threads_list[0]}t" for t in threads_list[1:]] + \
        [f"awake {t}t/{threads_list[0]}t" for t in threads_list[1:]]
    print(" | ".join(cols) + " |")
    print("|" + "---|" * len(cols))

    rows = []
    for size in sizes:
        for family in families:
            rng = np.random.default_rng([args.seed, size, list(FAMILIES).index(family)])
            case = FAMILIES[family](rng, size // 4)
            assert case.op == FAMILY_OPS[family], family
            assert case.data.nbytes == size, (family, case.data.shape)
            outs = ortbench.new_outputs(case)
            row = {"bytes": size, "family": family, "desc": case.info["desc"], "ort_raw": {}, "ort": {}, "gk": {},
                   "speedup": {}}
            for t in threads_list:
                try:
                    ort_ms, gk_ms, glue_ms, _ = ortbench.time_case(case, t, args.repeat, outs, glue=True)
                except ortbench.Mismatch as e:
                    raise SystemExit(f"MISMATCH at {ortbench.fmt_bytes(size)} {family} ({case.info['desc']}): {e}")
                row["ort_raw"][t], row["ort"][t], row["gk"][t] = ort_ms, ortbench.adjusted(ort_ms, glue_ms), gk_ms
                row["speedup"][t] = row["ort"][t] / gk_ms
            if len(threads_list) > 1:
                own = ortbench.time_thread_counts(case, threads_list, args.repeat, outs[1])
                row["self"] = {t: ms / own[0] for t, ms in zip(threads_list, own)}
                awake = ortbench.time_thread_counts(case, threads_list, args.repeat, outs[1], idle_gap_s=0)
                row["awake"] = {t: ms / awake[0] for t, ms in zip(threads_list, awake)}
                row["gk_awake"] = dict(zip(threads_list, awake))
            del case, outs
            rows.append(row)
            cells = [f"| {ortbench.fmt_bytes(size)}", family, row["desc"]]
            cells += [f"{row['ort'][t]:.3f}" for t in threads_list] + [f"{row['gk'][t]:.3f}" for t in threads_list]
            cells += [f"{row['speedup'][t]:.2f}x" for t in threads_list]
            cells += [f"{row['self'][t]:.2f}" for t in threads_list[1:]]
            cells += [f"{row['awake'][t]:.2f}" for t in threads_list[1:]]
            print(" | ".join(cells) + " |", flush=True)

    print()
    for t in threads_list:
        s = [r["speedup"][t] for r in rows]
        worst = min(rows, key=lambda r: r["speedup"][t])
        print(f"{t} thread(s): geo-mean speedup {math.exp(sum(map(math.log, s)) / len(s)):.2f}x, min "
              f"{worst['speedup'][t]:.2f}x ({worst['family']} at {ortbench.fmt_bytes(worst['bytes'])}), "
              f"{sum(x < 1.0 for x in s)}/{len(s)} below 1.0")
    base = threads_list[0]
    for t in threads_list[1:]:
        slower = [r for r in rows if r["self"][t] > 1.05]
        print(f"{t}t vs {base}t (gatherkit against itself, settled calls, pool idle): {len(slower)}/{len(rows)} rungs "
              f"take > 1.05 x the {base}-thread time" + "".join(
                  f"; {r['family']} at {ortbench.fmt_bytes(r['bytes'])}: {r['self'][t]:.2f}" for r in slower))
        slower = [r for r in rows if r["awake"][t] > 1.05]
        print(f"{t}t vs {base}t (gatherkit against itself, back to back, pool awake): {len(slower)}/{len(rows)} rungs "
              f"take > 1.05 x the {base}-thread time" + "".join(
                  f"; {r['family']} at {ortbench.fmt_bytes(r['bytes'])}: {r['awake'][t]:.2f}" for r in slower))
        for r in rows:
            if r["bytes"] == 1 << 20:
                g1, gt = r["gk_awake"][base], r["gk_awake"][t]
                line = f"    1 MiB {r['family']}, pool awake: {base}t {g1 * 1e3:.1f} us, {t}t {gt * 1e3:.1f} us"
                if gt < 0.95 * g1:  # split: what the pool costs over a perfect split
                    line += f" ({gt * 1e3 - g1 * 1e3 * base / t:+.1f} us over {base}/{t} of the {base}-thread time)"
                else:
                    line += " (one task at both counts)"
                print(line)
        for family in sorted({r["family"] for r in rows}):
            gains = [f"{ortbench.fmt_bytes(r['bytes'])} {1 / r['self'][t]:.2f}x" for r in rows
                     if r["family"] == family and r["bytes"] >= 4 << 20]
            if gains:
                print(f"    {family}: {t}-thread gain from 4 MiB: " + ", ".join(gains))

    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            head = ["data_bytes", "family", "shape"]
            for t in threads_list:
                head += [f"ort_raw_ms_{t}t", f"ort_ms_{t}t", f"gk_ms_{t}t", f"speedup_{t}t"]
            head += [f"gk_{t}t_over_{threads_list[0]}t" for t in threads_list[1:]]
            head += [f"gk_{t}t_over_{threads_list[0]}t_awake" for t in threads_list[1:]]
            w.writerow(head)
            for r in rows:
                line = [r["bytes"], r["family"], r["desc"]]
                for t in threads_list:
                    line += [f"{r['ort_raw'][t]:.6f}", f"{r['ort'][t]:.6f}", f"{r['gk'][t]:.6f}", f"{r['speedup'][t]:.4f}"]
                line += [f"{r['self'][t]:.4f}" for t in threads_list[1:]]
                line += [f"{r['awake'][t]:.4f}" for t in threads_list[1:]]
                w.writerow(line)
        print(f"wrote {args.csv}")
    if args.plot:
        plot(rows, threads_list, args.plot)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
