"""Shared pieces of bench/sweep.py and bench/ladder.py: one-node ONNX Runtime sessions, the
gatherkit calls, per-op builders, alternating median timing, the per-call overhead correction and
the run header. Not a script; needs numpy, onnx, onnxruntime and the gatherkit binding on
PYTHONPATH (see sweep.py's docstring).

ORT is timed through io binding: inputs and a preallocated output are bound once, so a run neither
allocates nor copies (gatherkit is likewise called with a preallocated ``out=``). A tiny call of each op
(a [1] float tensor, one index) is timed for both; ``adjusted`` subtracts that op's
(ort_tiny - gk_tiny) from each ORT time so that small cases compare kernels, not Python glue. With
``time_case(..., glue=True)`` the tiny calls are timed in the same alternating rounds as the case
itself, so the correction comes from the same machine state: measured once at the start of a run,
it was off by up to 1 us on a shared machine whose per-call times drift within a process (a tiny
call at 3.2 us at the start, a 15-element call at 2.1 us later), enough to turn every
few-microsecond configuration into a 0.6x "loss" or, the other way, a win.
"""

import ctypes
import statistics
import time
from dataclasses import dataclass, field

import fresh_mappings
import quiet_blas  # noqa: F401  (before numpy)
import numpy as np
import onnxruntime as ort
from onnx import helper

import gatherkit

# Smallest adjusted ORT time (ms): the overhead correction never makes a time zero or negative.
ADJUSTED_FLOOR_MS = 1e-3


# --- per-op builders --------------------------------------------------------------------------
# op name -> (ORT node builder, gatherkit call, C entry point). A node builder takes the input
# names (in the node's input order) and the attribute dict; a gatherkit call takes the input
# arrays, the attribute dict, the preallocated output and the thread count. Adding an op means
# one entry here (plus, for sweep.py, a configuration generator in its GENERATORS); naming its C
# function and attributes lets gk_caller time it as a bare call.

@dataclass(frozen=True)
class OpSpec:
    ort_node: object  # (input_names, attrs) -> onnx NodeProto with output "out"
    gk_call: object   # (arrays, attrs, out, threads) -> None
    opset: int = 13   # opset the ORT model is built with
    # For gk_caller's bare ctypes call: the C function's name and attrs -> its attribute
    # arguments, which follow the inputs (data, indices[, updates]) in the C argument order.
    # None: gk_call is timed instead.
    c_function: str = None
    c_attributes: object = None


OPS = {
    "GatherElements": OpSpec(
        ort_node=lambda names, attrs: helper.make_node("GatherElements", names, ["out"], axis=attrs["axis"]),
        gk_call=lambda arrays, attrs, out, threads: gatherkit.gather_elements(
            arrays[0], arrays[1], attrs["axis"], num_threads=threads, out=out),
        c_function="gk_gather_elements", c_attributes=lambda attrs: (attrs["axis"],)),
    "GatherND": OpSpec(
        ort_node=lambda names, attrs: helper.make_node("GatherND", names, ["out"], batch_dims=attrs["batch_dims"]),
        gk_call=lambda arrays, attrs, out, threads: gatherkit.gather_nd(
            arrays[0], arrays[1], attrs["batch_dims"], num_threads=threads, out=out),
        c_function="gk_gather_nd", c_attributes=lambda attrs: (attrs["batch_dims"],)),
    # ONNX Gather has no batch_dims; the C function's (OpenVINO's) is passed as 0.
    "Gather": OpSpec(
        ort_node=lambda names, attrs: helper.make_node("Gather", names, ["out"], axis=attrs["axis"]),
        gk_call=lambda arrays, attrs, out, threads: gatherkit.gather(
            arrays[0], arrays[1], attrs["axis"], num_threads=threads, out=out),
        c_function="gk_gather", c_attributes=lambda attrs: (attrs["axis"], 0)),
    # Scatters at opset 18, the first with every reduction. attrs["reduction"] is the ONNX string.
    "ScatterElements": OpSpec(
        ort_node=lambda names, attrs: helper.make_node("ScatterElements", names, ["out"], axis=attrs["axis"],
                                                       reduction=attrs["reduction"]),
        gk_call=lambda arrays, attrs, out, threads: gatherkit.scatter_elements(
            arrays[0], arrays[1], arrays[2], attrs["axis"], attrs["reduction"], num_threads=threads, out=out),
        opset=18, c_function="gk_scatter_elements",
        c_attributes=lambda attrs: (attrs["axis"], gatherkit._REDUCTIONS[attrs["reduction"]])),
    "ScatterND": OpSpec(
        ort_node=lambda names, attrs: helper.make_node("ScatterND", names, ["out"], reduction=attrs["reduction"]),
        gk_call=lambda arrays, attrs, out, threads: gatherkit.scatter_nd(
            arrays[0], arrays[1], arrays[2], attrs["reduction"], num_threads=threads, out=out),
        opset=18, c_function="gk_scatter_nd",
        c_attributes=lambda attrs: (gatherkit._REDUCTIONS[attrs["reduction"]],)),
}


@dataclass
class Case:
    """One benchmark configuration with its inputs; the output is out_shape x out_dtype."""
    op: str
    inputs: list  # [(name, ndarray)] in the node's input order
    attrs: dict
    out_shape: tuple
    out_dtype: np.dtype
    info: dict = field(default_factory=dict)  # descriptive columns (slice bytes, negatives, ...)
    # A scatter that gatherkit runs in place: its output buffer starts as a copy of data and is
    # passed as both data and output. ORT still writes a separate output. Only for calls that give
    # the same result when repeated on their own output (reduction "none"): timing repeats them.
    in_place: bool = False
    # None: the outputs must be bitwise equal. A float: elementwise within this relative (and, near
    # zero, absolute) tolerance, for float reductions that ORT may apply in another order.
    tolerance: float = None
    # Set by time_case: how the outputs compared ("bitwise equal", or the largest difference).
    check: str = None
    # ORT's output is deterministic only up to this many threads (ScatterND with duplicate index
    # tuples: its threads split the tuples without ordering them, so the last duplicate to land
    # varies and reductions race, losing updates). At more threads gatherkit's output is checked
    # against ORT's output at this thread count (computed once, kept in `reference`) instead of
    # ORT's own output of that run. None: always against ORT's output of the same run.
    ort_deterministic_threads: int = None
    reference: object = None

    @property
    def data(self):
        return self.inputs[0][1]

    @property
    def indices(self):
        return self.inputs[1][1]

    def out_bytes(self):
        return int(np.prod(self.out_shape, dtype=np.int64)) * np.dtype(self.out_dtype).itemsize

    def total_bytes(self):
        """Inputs + the two outputs (ORT's and gatherkit's) held while the case runs."""
        return sum(a.nbytes for _, a in self.inputs) + 2 * self.out_bytes()


# --- ONNX Runtime ---------------------------------------------------------------------------------

def session_options(threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    # Pool threads block instead of spin-waiting after a run. With spinning on (ORT's default) a live
    # session's idle pool keeps the second core busy while gatherkit is timed (why compare.py deletes
    # each session before timing gatherkit); with it off, the session can stay alive while the two
    # implementations alternate. idle_pool_cpu_ms() checks this in every run. The price: each
    # multi-threaded ORT run must wake its pool (measured with onnxruntime 1.32 on 2 cores: +25 to
    # +50 us per 2-thread run on 64 KiB - 1 MiB GatherElements), so ORT's 2-thread times on small
    # cases are somewhat pessimistic; the tiny-call correction does not cover it (that call is too
    # small to use the pool).
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return so


def ort_session(op, inputs, attrs, threads):
    spec = OPS[op]
    names = [name for name, _ in inputs]
    node = spec.ort_node(names, attrs)
    elem = helper.np_dtype_to_tensor_dtype(inputs[0][1].dtype)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for name, a in inputs],
        [helper.make_tensor_value_info("out", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", spec.opset)])
    model.ir_version = 8
    return ort.InferenceSession(model.SerializeToString(), session_options(threads),
                                providers=["CPUExecutionProvider"])


class OrtRunner:
    """A session with the inputs and a preallocated output bound (io binding); calling it runs the
    node once, writing into ``out``. close() drops the session (and its thread pool)."""

    def __init__(self, case, out, threads):
        self.session = ort_session(case.op, case.inputs, case.attrs, threads)
        self.binding = self.session.io_binding()
        self.values = []  # the OrtValues share the numpy buffers; keep them alive with the binding
        for name, array in case.inputs:
            value = ort.OrtValue.ortvalue_from_numpy(array)
            self.binding.bind_ortvalue_input(name, value)
            self.values.append(value)
        value = ort.OrtValue.ortvalue_from_numpy(out)
        self.binding.bind_ortvalue_output("out", value)
        self.values.append(value)

    def __call__(self):
        self.session.run_with_iobinding(self.binding)

    def close(self):
        self.binding = self.values = self.session = None


def gk_caller(case, out, threads):
    """One gatherkit call as a bare ctypes call: descriptors and options are built once, as ORT's
    io binding is, so that the timing holds the C call and nothing of the binding's argument
    handling (about 20 us per call, which a C or C++ caller never pays)."""
    spec = OPS[case.op]
    arrays = [a for _, a in case.inputs]
    if case.in_place:  # out (holding data's values) is data: the C call gets one address for both
        arrays[0] = out
    if spec.c_function is None:
        return lambda: spec.gk_call(arrays, case.attrs, out, threads)
    lib = gatherkit._lib
    inputs = [gatherkit._Prepared(np.asarray(a), name) for (name, _), a in zip(case.inputs, arrays)]
    if case.in_place:
        assert inputs[0].tensor.data == out.ctypes.data, "in place: data was copied"
    out_shape = (ctypes.c_int64 * max(out.ndim, 1))(*out.shape)
    out_tensor = gatherkit._Tensor(inputs[0].code, out.ndim, out_shape, out.ctypes.data)
    options = gatherkit._options("onnx", 0, threads)
    fn = getattr(lib, spec.c_function)
    args = (*(ctypes.byref(i.tensor) for i in inputs), *spec.c_attributes(case.attrs),
            ctypes.byref(out_tensor), ctypes.byref(options))

    def call():
        status = fn(*args)
        if status != gatherkit._abi.GK_STATUS_OK:
            raise RuntimeError(f"gatherkit status {status}: {lib.gk_last_error_message().decode()}")
    call.keep = (inputs, out_shape, out_tensor, options)
    return call


# --- timing ------------------------------------------------------------------------------------------

def balanced_sequence(n):
    """A cyclic order of `n` calls in which every call runs right after each other call exactly
    once per cycle (an Eulerian circuit of the complete directed graph on the calls: n(n-1) calls
    per cycle, each call n-1 times; [0] for one call). A call's time depends on what ran before it:
    after a large call the caches hold that call's data and not the next call's code and
    structures. Rotating one fixed order kept every call's predecessor the same (in [ORT,
    gatherkit, ORT tiny, gatherkit tiny] ORT's tiny call always followed gatherkit's large one and
    ran 10-15x its settled time, while ORT's own large call followed two tiny ones), so the overhead
    correction subtracted a cold call's time from a warm one's. Rounds that are each a permutation
    cannot balance the step from one round to the next; one cycle repeated does."""
    if n <= 1:
        return [0] * n
    unused = {a: [b for b in range(n) if b != a] for a in range(n)}
    path, circuit = [0], []
    while path:
        if unused[path[-1]]:
            path.append(unused[path[-1]].pop())
        else:
            circuit.append(path.pop())
    circuit.reverse()  # starts and ends at call 0: the last step closes the cycle
    return circuit[:-1]


def balanced_calls(n, repeat):
    """The indices of `n` calls to run in turn so that each runs at least `repeat` times (whole
    cycles of balanced_sequence)."""
    cycle = balanced_sequence(n)
    per_cycle = max(n - 1, 1)
    return cycle * -(-repeat // per_cycle)


def alternating_medians(calls, repeat):
    """Median seconds of each call, each run at least `repeat` times (whole cycles of
    balanced_sequence, so that all see the same machine state before them; no warm-up here)."""
    times = [[] for _ in calls]
    for k in balanced_calls(len(calls), repeat):
        t0 = time.perf_counter()
        calls[k]()
        times[k].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


# How long the pool is left idle before each call that settled_medians times: longer than its
# workers' watch for work (2 ms after their last task, pool.rs IDLE_WATCH), so that every timed
# call wakes them as a call after a pause does.
IDLE_GAP_S = 3e-3
# At most this many rounds in settled_medians (each costs two calls and a gap per thread count).
SETTLED_ROUNDS_MAX = 400


def settled_medians(calls, repeat, idle_gap_s=IDLE_GAP_S):
    """Median seconds of each call, each timed at least `repeat` times in the order of
    alternating_medians; but each timed call comes after one untimed call of the same kind and an
    idle gap (IDLE_GAP_S). For one library at different thread counts on one output buffer: timed
    back to back, a 2-thread call finds half of the output's lines in the other core's cache,
    where the 1-thread call before it left them, and pays for moving them (ge-axis0 at 1 MiB, whose
    second thread halves its time against ORT, came out 9% slower than 1 thread), a cost no caller
    that keeps one setting pays. The gap keeps the cost such a caller does pay: the pool's workers
    are asleep when the call starts. With `idle_gap_s` 0 the timed call follows its untimed twin at
    once, while the workers still spin: the pool's own cost, without the operating system's
    wake-up."""
    times = [[] for _ in calls]
    for k in balanced_calls(len(calls), repeat):
        calls[k]()
        if idle_gap_s:
            time.sleep(idle_gap_s)
        t0 = time.perf_counter()
        calls[k]()
        times[k].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


# Rounds for short calls: enough that each side is timed for about ROUNDS_TARGET_S (a median of
# 7 single calls of a few microseconds is mostly timer and scheduler noise), at most ROUNDS_MAX.
ROUNDS_TARGET_S = 0.03
ROUNDS_MAX = 3000


def rounds_for(runner, gk, repeat):
    """`repeat`, or more rounds when one call of the slower side takes under ROUNDS_TARGET_S / repeat
    (estimated from one more call of each, after the warm-up)."""
    longest = 0.0
    for call in (runner, gk):
        t0 = time.perf_counter()
        call()
        longest = max(longest, time.perf_counter() - t0)
    return max(repeat, min(ROUNDS_MAX, int(ROUNDS_TARGET_S / max(longest, 1e-7))))


def outputs_equal(a, b):
    """Bitwise equality (NaN payloads and -0.0 included) of two same-dtype arrays."""
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.reshape(-1).view(np.uint8),
                                                                        b.reshape(-1).view(np.uint8))


def compare_outputs(case, ort_out, gk_out):
    """None when the outputs agree as the case asks (bitwise, or within case.tolerance); else why
    not. Sets case.check to what was found."""
    if outputs_equal(ort_out, gk_out):
        case.check = "bitwise equal"
        return None
    if case.tolerance is None or ort_out.shape != gk_out.shape:
        return "not bitwise equal"
    a, b = ort_out.astype(np.float64), gk_out.astype(np.float64)
    scale = np.maximum(np.abs(a), 1.0)  # relative, or absolute below 1
    worst = float(np.max(np.abs(a - b) / scale))
    case.check = f"not bitwise equal; largest difference {worst:.2g} (relative, absolute below 1)"
    return None if worst <= case.tolerance else case.check + f" > tolerance {case.tolerance:g}"


class Mismatch(Exception):
    pass


def new_outputs(case):
    """ORT's and gatherkit's output buffers."""
    return np.empty(case.out_shape, case.out_dtype), np.empty(case.out_shape, case.out_dtype)


def reference_output(case):
    """ORT's output at case.ort_deterministic_threads threads (computed on first use, then kept in
    case.reference)."""
    if case.reference is None:
        out = np.empty(case.out_shape, case.out_dtype)
        runner = OrtRunner(case, out, case.ort_deterministic_threads)
        try:
            runner()
        finally:
            runner.close()
        case.reference = out
    return case.reference


def adjusted(ort_ms, glue_ms):
    """ORT time minus the glue difference (ort_tiny - gk_tiny, ms), floored at ADJUSTED_FLOOR_MS."""
    return max(ort_ms - glue_ms, ADJUSTED_FLOOR_MS)


def time_case(case, threads, repeat, outs=None, glue=False):
    """(ORT ms, gatherkit ms) medians at `threads`, unadjusted; with `glue`, two more values: the
    difference of the two per-call overheads (ORT's tiny call minus gatherkit's, ms), both tiny
    calls timed in the same rounds as the case (see the module docstring), and gatherkit's tiny
    call itself (ms; the sweep's ceiling, see sweep.py). Warms both up once, checks the outputs
    are bitwise equal (the buffers are first filled with different bytes, so a position one side
    leaves unwritten is caught too; an in-place case's gatherkit buffer starts as data instead),
    times them alternating, and checks again. The ORT session lives only for this call. Raises
    Mismatch. With case.tolerance, outputs within it are accepted (case.check says how close).
    Above case.ort_deterministic_threads, gatherkit is checked against ORT's output at that many
    threads instead (see Case)."""
    ort_out, gk_out = outs if outs is not None else new_outputs(case)
    expected, against = ort_out, ""
    if case.ort_deterministic_threads is not None and threads > case.ort_deterministic_threads:
        expected = reference_output(case)
        against = f" (against ORT's {case.ort_deterministic_threads}-thread output)"
    ort_out.reshape(-1).view(np.uint8).fill(0x00)
    if case.in_place:
        np.copyto(gk_out, case.data)
    else:
        gk_out.reshape(-1).view(np.uint8).fill(0xA5)
    runner = OrtRunner(case, ort_out, threads)
    tiny_runner = None
    try:
        gk = gk_caller(case, gk_out, threads)
        calls = [runner, gk]
        if glue:
            tiny = tiny_case(case.op)
            tiny_ort_out, tiny_gk_out = new_outputs(tiny)
            tiny_runner = OrtRunner(tiny, tiny_ort_out, threads)
            calls += [tiny_runner, gk_caller(tiny, tiny_gk_out, threads)]
            for call in calls[2:]:
                call()
        runner()
        gk()
        why = compare_outputs(case, expected, gk_out)
        if why is not None:
            raise Mismatch(f"{why}{against}: " + describe_mismatch(expected, gk_out, threads, "after warm-up"))
        ort_s, gk_s, *tiny_s = alternating_medians(calls, rounds_for(runner, gk, repeat))
        why = compare_outputs(case, expected, gk_out)
        if why is not None:
            raise Mismatch(f"{why}{against}: " + describe_mismatch(expected, gk_out, threads, "after timing"))
    finally:
        runner.close()
        if tiny_runner is not None:
            tiny_runner.close()
    if glue:
        return ort_s * 1e3, gk_s * 1e3, (tiny_s[0] - tiny_s[1]) * 1e3, tiny_s[1] * 1e3
    return ort_s * 1e3, gk_s * 1e3


def time_thread_counts(case, threads_list, repeat, gk_out, idle_gap_s=IDLE_GAP_S):
    """gatherkit's medians (ms) at each of `threads_list`, timed alternating with one another (not
    with ORT) on the same output buffer, each call settled and after an idle pool (settled_medians):
    what "2 threads against 1" compares. Interleaved with ORT's multi-threaded runs, gatherkit's
    own calls were moved by ORT's pool (a call of a few microseconds that runs the same single task
    at either count came out 70% slower at "2 threads"). Checks that every count gives the same
    bytes."""
    callers = [gk_caller(case, gk_out, t) for t in threads_list]
    callers[0]()
    expected = gk_out.copy()
    for call in callers[1:]:
        if not case.in_place:  # an in-place call's buffer must keep holding data
            gk_out.reshape(-1).view(np.uint8).fill(0x5A)
        call()
        if not outputs_equal(expected, gk_out):
            raise Mismatch(f"gatherkit's outputs differ between thread counts {threads_list}")
    rounds = max(min(rounds_for(callers[0], callers[-1], repeat), SETTLED_ROUNDS_MAX), repeat)
    return [ms * 1e3 for ms in settled_medians(callers, rounds, idle_gap_s)]


def describe_mismatch(ort_out, gk_out, threads, when):
    if ort_out.shape != gk_out.shape:
        return f"{threads} thread(s), {when}: output shapes differ: ORT {ort_out.shape}, gatherkit {gk_out.shape}"
    a = ort_out.reshape(-1).view(np.uint8).reshape(ort_out.size, -1)
    b = gk_out.reshape(-1).view(np.uint8).reshape(gk_out.size, -1)
    bad = np.flatnonzero((a != b).any(axis=1))
    first = int(bad[0])
    pos = np.unravel_index(first, ort_out.shape) if ort_out.ndim else ()
    return (f"{threads} thread(s), {when}: {bad.size} of {ort_out.size} output elements differ; first at "
            f"{tuple(int(p) for p in pos)}: ORT {ort_out.reshape(-1)[first]!r}, gatherkit {gk_out.reshape(-1)[first]!r}")


# --- overhead correction -------------------------------------------------------------------------

def tiny_case(op="GatherElements"):
    """The smallest call of `op`: a [1] float tensor and one int64 index (a [1, 1] tuple for
    GatherND and ScatterND; a [1] update for the scatters)."""
    one = np.ones(1, np.float32)
    if op in ("GatherND", "ScatterND"):
        index = np.zeros((1, 1), np.int64)
        attrs = {"batch_dims": 0} if op == "GatherND" else {"reduction": "none"}
    else:
        index = np.zeros(1, np.int64)
        attrs = {"axis": 0} if op in ("GatherElements", "Gather") else {"axis": 0, "reduction": "none"}
    inputs = [("data", one), ("indices", index)]
    if op.startswith("Scatter"):
        inputs.append(("updates", np.full(1, 2, np.float32)))
    return Case(op, inputs, attrs, (1,), np.dtype(np.float32))


class Overhead:
    """Per-call glue of ORT (io binding run) and of gatherkit (a bare ctypes call) at each thread
    count, from each op's tiny call, measured alternating in the same run. Per op because both
    sides' fixed costs differ by op (with onnxruntime 1.32, a tiny Gather runs about 1.3 us faster
    than a tiny GatherElements): one op's correction applied to another made its small
    configurations compare those fixed costs instead of the kernels."""

    def __init__(self, threads_list, ops, repeat=3000):
        self.ort_us, self.gk_us, self.ort_plain_run_us = {}, {}, {}
        for op in ops:
            case = tiny_case(op)
            for t in threads_list:
                ort_ms, gk_ms = time_case(case, t, repeat)
                self.ort_us[op, t], self.gk_us[op, t] = ort_ms * 1e3, gk_ms * 1e3
        # For the header only: plain session.run (allocates and returns a new output each call).
        case = tiny_case(ops[0])
        for t in threads_list:
            sess = ort_session(case.op, case.inputs, case.attrs, t)
            feed = dict(case.inputs)
            sess.run(None, feed)
            self.ort_plain_run_us[t] = alternating_medians([lambda: sess.run(None, feed)], repeat)[0] * 1e6
            del sess
        self.first_op = ops[0]

    def correction_ms(self, op, threads):
        return (self.ort_us[op, threads] - self.gk_us[op, threads]) / 1e3

    def header(self):
        threads = sorted(self.ort_plain_run_us)
        lines = [f"{t}t session.run of a tiny {self.first_op}: {self.ort_plain_run_us[t]:.1f} us" for t in threads]
        for op, t in self.ort_us:
            lines.append(f"{t}t tiny {op}: ORT {self.ort_us[op, t]:.1f} us (io binding), gk {self.gk_us[op, t]:.1f} us "
                         f"-> {-self.correction_ms(op, t) * 1e3:+.1f} us (each configuration's own, timed with it, is used)")
        return "\n".join(lines)


def idle_pool_cpu_ms(threads=2, window_s=0.1):
    """CPU time (ms) this process burns during `window_s` of sleep right after a multi-threaded ORT
    run with a live session: ~0 when the pool threads block (allow_spinning=0)."""
    rng = np.random.default_rng(0)
    data = rng.random((256, 1024), dtype=np.float32)
    case = Case("GatherElements", [("data", data), ("indices", rng.integers(0, 1024, data.shape))],
                {"axis": 1}, data.shape, data.dtype)
    runner = OrtRunner(case, np.empty_like(data), threads)
    runner()
    runner()
    t0 = time.process_time()
    time.sleep(window_s)
    burnt = time.process_time() - t0
    runner.close()
    return burnt * 1e3


# --- misc -------------------------------------------------------------------------------------------

def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20,
          "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}


def parse_bytes(text):
    """'8M', '128MiB', '4K', '1G' or a plain number of bytes (binary units)."""
    s = text.strip().upper()
    digits = s.rstrip("ABGIKM")
    unit = s[len(digits):]
    if unit not in _UNITS or not digits:
        raise ValueError(f"not a byte size: {text!r}")
    return int(float(digits) * _UNITS[unit])


def parse_threads(text):
    threads = sorted({int(t) for t in text.split(",") if t.strip()})
    if not threads or threads[0] < 1:
        raise ValueError(f"thread counts must be positive: {text!r}")
    return threads


def fmt_bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n} B"


def run_header(title, seed=None):
    parts = [title, f"CPU: {cpu_model()}", f"onnxruntime {ort.__version__}",
             f"gatherkit {gatherkit.library_version()} ({gatherkit.library_path()})",
             f"numpy {np.__version__}",
             "mmap threshold " + ("fixed at 1 MiB" if fresh_mappings.FIXED else "not fixed")]
    if seed is not None:
        parts.append(f"seed {seed}")
    return ", ".join(parts)


def measure_glue(threads_list, ops):
    """The per-call overheads of each op (printed) and, with several threads, a check that ORT's
    idle pool leaves the other cores alone. Returns the Overhead (the sweep and the ladder print it
    as a reference and adjust each configuration by its own, see time_case)."""
    overhead = Overhead(threads_list, ops)
    print(overhead.header())
    if max(threads_list) > 1:
        burnt = idle_pool_cpu_ms(max(threads_list))
        print(f"ORT idle pool CPU after a {max(threads_list)}-thread run: {burnt:.1f} ms per 100 ms"
              + ("  WARNING: ORT pool threads spin; gatherkit timings are disturbed" if burnt > 5 else ""))
    return overhead
