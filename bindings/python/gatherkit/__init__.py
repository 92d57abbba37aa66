"""gatherkit for Python: ONNX GatherElements / GatherND / Gather (and the OpenVINO variants) and
ScatterElements / ScatterND on numpy arrays and any DLPack array (PyTorch CPU tensors, JAX
arrays), through the library's C ABI with ctypes (no compiled extension).

    >>> import numpy as np, gatherkit
    >>> gatherkit.gather_elements(np.array([[1, 2], [3, 4]]), np.array([[0, 0], [1, 0]]), axis=1)
    array([[1, 1],
           [4, 3]])
    >>> data = np.zeros(4, dtype=np.int64)
    >>> gatherkit.scatter_nd(data, np.array([[1], [3], [1]]), np.array([5, 7, 2]), "add", out=data) is data
    True
    >>> data
    array([0, 7, 0, 7])

The shared library is found through the ``GATHERKIT_LIBRARY`` environment variable first (a path to
``libgatherkit.so``), then the one built into the installed package (``pip install .`` at the
repository's root), then the source tree's optimized builds (``build/lib``, ``target/release``; the
most recently built first), then its debug build (``target/debug``), then the system loader.
``library_path()`` says which file was loaded.
"""

import ctypes
import ctypes.util
import operator
import os
import math
import pathlib
import struct

import numpy as np

from . import _abi, _dlpack

# The binding's own version: the header's, whose ABI it was written for (library_version() is the
# loaded library's).
__version__ = f"{_abi.GK_VERSION_MAJOR}.{_abi.GK_VERSION_MINOR}.{_abi.GK_VERSION_PATCH}"

__all__ = ["gather", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd", "GatherkitError",
           "library_version", "library_path", "STATUS_NAMES"]

# Built from _abi so that a status added to the header needs no second edit here.
STATUS_NAMES = {
    value: name[len("GK_STATUS_"):] for name, value in vars(_abi).items() if name.startswith("GK_STATUS_")
}

_FLAVORS = {"onnx": _abi.GK_FLAVOR_ONNX, "openvino": _abi.GK_FLAVOR_OPENVINO}

# The ONNX `reduction` attribute's strings -> GK_REDUCTION_* codes, in the header's order.
_REDUCTIONS = {
    "none": _abi.GK_REDUCTION_NONE,
    "add": _abi.GK_REDUCTION_ADD,
    "mul": _abi.GK_REDUCTION_MUL,
    "max": _abi.GK_REDUCTION_MAX,
    "min": _abi.GK_REDUCTION_MIN,
}

# numpy dtype -> GK_DTYPE_* code. Strings are object arrays (str or bytes elements).
_DTYPE_CODES = {
    np.dtype(np.float32): _abi.GK_DTYPE_FLOAT,
    np.dtype(np.uint8): _abi.GK_DTYPE_UINT8,
    np.dtype(np.int8): _abi.GK_DTYPE_INT8,
    np.dtype(np.uint16): _abi.GK_DTYPE_UINT16,
    np.dtype(np.int16): _abi.GK_DTYPE_INT16,
    np.dtype(np.int32): _abi.GK_DTYPE_INT32,
    np.dtype(np.int64): _abi.GK_DTYPE_INT64,
    np.dtype(np.bool_): _abi.GK_DTYPE_BOOL,
    np.dtype(np.float16): _abi.GK_DTYPE_FLOAT16,
    np.dtype(np.float64): _abi.GK_DTYPE_DOUBLE,
    np.dtype(np.uint32): _abi.GK_DTYPE_UINT32,
    np.dtype(np.uint64): _abi.GK_DTYPE_UINT64,
    np.dtype(np.complex64): _abi.GK_DTYPE_COMPLEX64,
    np.dtype(np.complex128): _abi.GK_DTYPE_COMPLEX128,
}
try:  # bfloat16 when ml_dtypes is installed
    import ml_dtypes

    _DTYPE_CODES[np.dtype(ml_dtypes.bfloat16)] = _abi.GK_DTYPE_BFLOAT16
except ImportError:  # pragma: no cover - optional dependency
    pass


class GatherkitError(Exception):
    """A failed call: ``status`` is the GK_STATUS_* code, ``status_name`` its name, ``message`` the
    library's explanation (which argument, value, position and what was allowed)."""

    def __init__(self, status, message):
        self.status = status
        self.status_name = STATUS_NAMES.get(status, "UNKNOWN")
        self.message = message
        super().__init__(f"{self.status_name} ({status}): {message}")


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_size_t),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("data", ctypes.c_void_p),
    ]


class _StridedTensor(ctypes.Structure):
    # gk_strided_tensor as of 0.2.0; struct_size tells the library which fields this binding knows.
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_size_t),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("data", ctypes.c_void_p),
    ]


class _Options(ctypes.Structure):
    # gk_options as of 0.2.0; struct_size tells the library which fields this binding knows.
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("flavor", ctypes.c_int32),
        ("version", ctypes.c_int32),
        ("num_threads", ctypes.c_size_t),
        ("parallel_for", ctypes.c_void_p),
        ("parallel_for_ctx", ctypes.c_void_p),
        ("parallel_for_concurrency", ctypes.c_size_t),
    ]


def _candidates():
    env = os.environ.get("GATHERKIT_LIBRARY")
    if env:
        yield env
        return
    here = pathlib.Path(__file__).resolve().parent
    # An installed package (pip install): the library built into it, whatever its suffix.
    yield from sorted(str(path) for path in here.glob("libgatherkit*.so"))
    yield from _tree_builds(here.parents[2])
    found = ctypes.util.find_library("gatherkit")
    yield found or "libgatherkit.so.0"


# Where a source tree's builds leave the shared library: CMake's and cargo's optimized ones, and
# cargo's debug build, tried only when neither of the others exists.
_TREE_BUILDS = ("build/lib/libgatherkit.so", "target/release/libgatherkit.so")
_TREE_DEBUG_BUILD = "target/debug/libgatherkit.so"


def _tree_builds(root):
    """The source tree's builds of the library that exist: the optimized ones, the most recently
    built first (a tree built both ways, CMake for the quick start and then ``cargo build
    --release`` after a change, would otherwise keep loading the older one, silently; ties keep
    CMake's first), then the debug build (never before an optimized one: a benchmark would time
    it unawares)."""
    found = []
    for order, rel in enumerate(_TREE_BUILDS):
        path = pathlib.Path(root) / rel
        try:
            built = path.stat().st_mtime_ns
        except OSError:
            continue
        found.append((-built, order, str(path)))
    debug = pathlib.Path(root) / _TREE_DEBUG_BUILD
    return [path for _, _, path in sorted(found)] + ([str(debug)] if debug.exists() else [])


def _load():
    errors = []
    for candidate in _candidates():
        try:
            lib = ctypes.CDLL(candidate)
        except OSError as e:
            errors.append(f"{candidate}: {e}")
            continue
        tensor_p = ctypes.POINTER(_Tensor)
        options_p = ctypes.POINTER(_Options)
        # Operator name -> its attributes (each an int64_t), in the C functions' order.
        for name, attributes in (("gk_gather_elements", 1), ("gk_gather_nd", 1), ("gk_gather", 2)):
            fn = getattr(lib, name)
            fn.argtypes = [tensor_p, tensor_p] + [ctypes.c_int64] * attributes + [tensor_p, options_p]
            fn.restype = ctypes.c_int32
            fn = getattr(lib, name + "_output_shape")
            fn.argtypes = [tensor_p, tensor_p] + [ctypes.c_int64] * attributes + [
                options_p,
                ctypes.POINTER(ctypes.c_int64),
                ctypes.c_size_t,
                ctypes.POINTER(ctypes.c_size_t),
            ]
            fn.restype = ctypes.c_int32
        # The gathers with inputs read through strides.
        strided_p = ctypes.POINTER(_StridedTensor)
        for name, attributes in (("gk_gather_elements_strided", 1), ("gk_gather_nd_strided", 1),
                                 ("gk_gather_strided", 2)):
            fn = getattr(lib, name)
            fn.argtypes = [strided_p, strided_p] + [ctypes.c_int64] * attributes + [tensor_p, options_p]
            fn.restype = ctypes.c_int32
        # Scatters: (data, indices, updates), then ScatterElements' axis, then the reduction code.
        for name, axis in (("gk_scatter_elements", True), ("gk_scatter_nd", False)):
            fn = getattr(lib, name)
            fn.argtypes = [tensor_p] * 3 + [ctypes.c_int64] * axis + [ctypes.c_int32, tensor_p, options_p]
            fn.restype = ctypes.c_int32
        lib.gk_last_error_message.argtypes = []
        lib.gk_last_error_message.restype = ctypes.c_char_p
        lib.gk_version.argtypes = []
        lib.gk_version.restype = ctypes.c_char_p
        return lib
    raise OSError("gatherkit: libgatherkit not found (set GATHERKIT_LIBRARY): " + "; ".join(errors))


_lib = _load()


def library_version():
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.gk_version().decode()


def library_path():
    """The file of the loaded library, symbolic links resolved (or, when the system loader found
    it, the name it was asked for): which build the binding uses, as found in the order the
    module's documentation gives."""
    name = _lib._name
    return os.path.realpath(name) if os.sep in name else name


def _check(status):
    if status != _abi.GK_STATUS_OK:
        raise GatherkitError(status, _lib.gk_last_error_message().decode("utf-8", "replace"))


def _copy_arg(copy):
    if copy is not None and copy is not True and copy is not False:
        raise ValueError(f"copy must be None, True or False, not {copy!r}")
    return copy


def _strides_in_elements(array):
    return tuple(s // array.itemsize if s % array.itemsize == 0 else f"{s} bytes" for s in array.strides)


def _borrow(value, what, copy, strided):
    """``value`` as a numpy array, over the caller's own memory whenever it has some (a numpy
    array, or any object with ``__dlpack__``), in a layout the C ABI reads: dense row-major, or
    with ``strided`` (the gathers' inputs) any layout whose strides are whole elements, in native
    byte order. Anything else (a scatter's transposed, stepped, broadcast or reversed input;
    big-endian bytes), and a value that is not an array at all (a list, a scalar), is copied only
    when ``copy`` allows it: None (the default, as in ``numpy.asarray``) copies when that is
    needed, True always copies, False never does and raises ValueError instead."""
    if value is None:
        raise TypeError(f"{what} must be an array (numpy, or any object with __dlpack__) or array-like, not None")
    if isinstance(value, np.ndarray):
        array = value
    elif hasattr(value, "__dlpack__"):
        array = _dlpack.as_numpy(value, what)
    elif copy is False:
        raise ValueError(f"{what} is a {type(value).__name__}, not an array: making one is a copy, which "
                         f"copy=False forbids")
    else:
        # A new array of the binding's own: there is no caller's memory to read or to overlap.
        return np.asarray(value), None
    if array.dtype == np.dtype(object) or array.dtype.kind in "US":
        return array, array  # strings: _Prepared passes element numbers, never the objects' memory
    problem = None
    if not array.dtype.isnative:
        problem = (f"big-endian ({array.dtype.str}; convert with .astype('{array.dtype.newbyteorder('=').str}'))")
    elif not array.flags.aligned:
        problem = (f"misaligned (address {array.ctypes.data:#x}; {array.dtype} elements need "
                   f"{array.dtype.alignment}-byte alignment)")
    elif strided and not _whole_element_strides(array):
        problem = f"strided by bytes that are not whole elements (strides in bytes {array.strides})"
    elif not strided and not array.flags.c_contiguous:
        problem = (f"not dense row-major (shape {array.shape}, strides in elements "
                   f"{_strides_in_elements(array)}), which scatters do not read in place")
    if problem is not None:
        if copy is False:
            raise ValueError(f"{what} is {problem}; copy=False forbids the copy (copy=None allows it)")
        # A fresh array: numpy allocates it aligned, row-major, in native byte order.
        return np.array(array, dtype=array.dtype.newbyteorder("="), order="C", copy=True), array
    return (np.array(array, order="C") if copy is True else array), array


def _whole_element_strides(array):
    # A dimension of extent 0 or 1 never steps, whatever its stride says (numpy calls such an
    # array contiguous, and the direct path reads it as one).
    return all(s % array.itemsize == 0 for s, n in zip(array.strides, array.shape) if n > 1)


class _Prepared:
    """An input array as a C tensor descriptor; keeps what the descriptor points to alive.

    String tensors (object arrays of str or bytes) are passed as handles that are element numbers
    (1-based) rather than addresses: the library copies handles and never reads them, so the
    output's handles say which input object each output element is, and the output holds those
    very objects (an address map would confuse objects that share a buffer, such as CPython's
    cached one-byte bytes objects). A scatter's updates number on from data's: ``first_handle``
    is the first element's number."""

    def __init__(self, value, what, copy=None, first_handle=1, strided=False):
        array, view = _borrow(value, what, copy, strided)
        if array.dtype.kind in "US":
            raise TypeError(
                f"{what}: numpy fixed-width string arrays (dtype {array.dtype}) are not supported; "
                f"pass dtype=object with str or bytes elements")
        # What the caller passed, as a numpy array over its memory (before any copy; None for a
        # list or scalar, which has no memory of the caller's): overlap checks.
        self.original = view
        self.dims = array.shape
        if array.dtype == np.dtype(object):
            self.objects = array.reshape(-1)
            for k, s in enumerate(self.objects):
                if not isinstance(s, (str, bytes)):
                    if isinstance(s, int):
                        raise TypeError(
                            f"{what}[{k}] is the Python int {s}, which fits no numpy integer dtype "
                            f"(for indices: int32 or int64); object arrays must hold str or bytes")
                    raise TypeError(
                        f"{what}[{k}] is a {type(s).__name__}; object arrays must hold str or bytes")
            if what == "indices":
                raise GatherkitError(_abi.GK_STATUS_UNSUPPORTED_DTYPE,
                                     "indices: str or bytes values; indices must be int32 or int64")
            self.code = _abi.GK_DTYPE_STRING
            self.keep = np.arange(first_handle, first_handle + len(self.objects), dtype=np.uintp)
            self.array = None
            address = self.keep.ctypes.data
        else:
            code = _DTYPE_CODES.get(array.dtype)
            if code is None:
                raise GatherkitError(_abi.GK_STATUS_UNSUPPORTED_DTYPE,
                                     f"{what}: numpy dtype {array.dtype} has no gatherkit dtype")
            self.code = code
            self.array = array
            address = array.ctypes.data
        self.shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
        self.tensor = _Tensor(self.code, array.ndim, self.shape, address)
        # A layout other than dense row-major (gathers only): the same tensor with its strides.
        self.strided = None
        if self.array is not None and not array.flags.c_contiguous:
            strides = (ctypes.c_int64 * max(array.ndim, 1))(*(s // array.itemsize for s in array.strides))
            self.strided = _StridedTensor(ctypes.sizeof(_StridedTensor), self.code, array.ndim, self.shape,
                                          strides, address)


def _output(out, shape, dtype, hint=""):
    """``out`` (a numpy array or any writable object with ``__dlpack__``) as a numpy array over its
    memory, which must already be dense row-major with the output's shape and dtype: the result is
    written there and nowhere else, so there is no copy to allow."""
    if isinstance(out, np.ndarray):
        array = out
        if not array.flags.writeable:
            raise ValueError("out is read-only; out must be writable")
    elif hasattr(out, "__dlpack__"):
        array = _dlpack.as_numpy(out, "out", writable=True)
    else:
        raise TypeError(f"out must be a numpy array or an object with __dlpack__, not {type(out).__name__}")
    wanted = f"; out must be a writable dense row-major {dtype} array of shape {shape}{hint}"
    if array.shape != shape:
        raise ValueError(f"out has shape {array.shape}" + wanted)
    if array.dtype != dtype:
        raise ValueError(f"out has dtype {array.dtype}" + wanted)
    if not array.flags.c_contiguous:
        raise ValueError(f"out is not dense row-major (strides in elements {_strides_in_elements(array)})" + wanted)
    return array


_INT64 = (-(1 << 63), (1 << 63) - 1)
_INT32 = (-(1 << 31), (1 << 31) - 1)
_SIZE_T = (0, (1 << (8 * ctypes.sizeof(ctypes.c_size_t))) - 1)


def _int_arg(name, value, bounds, c_type):
    """`value` as an integer for a C argument of `c_type`: integers only (bool and floats are
    refused, numpy integers accepted), within `bounds`, so nothing wraps silently."""
    if type(value) is int and bounds[0] <= value <= bounds[1]:
        return value
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not bool")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(value).__name__} ({value!r})") from None
    low, high = bounds
    if not low <= number <= high:
        raise ValueError(f"{name} is {number}; it must be in [{low}, {high}] (a C {c_type})")
    return number


def _reduction(reduction):
    if not isinstance(reduction, str) or reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {list(_REDUCTIONS)}, not {reduction!r}")
    return _REDUCTIONS[reduction]


# Options built for (flavor, version, num_threads) given as plain ints: the library only reads
# them, so one structure serves every call that asks the same (a few, in practice; bounded).
_OPTIONS_CACHE = {}
_OPTIONS_CACHE_MAX = 64


def _options(flavor, version, num_threads):
    if type(version) is int and type(num_threads) is int:
        key = (flavor, version, num_threads)
        options = _OPTIONS_CACHE.get(key)
        if options is None:
            options = _new_options(flavor, version, num_threads)
            if len(_OPTIONS_CACHE) < _OPTIONS_CACHE_MAX:
                _OPTIONS_CACHE[key] = options
        return options
    return _new_options(flavor, version, num_threads)


def _new_options(flavor, version, num_threads):
    if flavor not in _FLAVORS:
        raise ValueError(f"flavor must be one of {sorted(_FLAVORS)}, not {flavor!r}")
    version = _int_arg("version", version, _INT32, "int32_t")
    num_threads = _int_arg("num_threads", num_threads, _SIZE_T, "size_t")
    return _Options(ctypes.sizeof(_Options), _FLAVORS[flavor], version, num_threads, None, None, 0)


def _run(query, gather, data, indices, attributes, options, out, copy, direct=None, predict=None):
    copy = _copy_arg(copy)
    if direct is not None and _DIRECT and copy is not True:
        result, data, indices = _run_direct(direct, data, indices, attributes, options, out, predict)
        if result is not None:
            return result
    d = _Prepared(data, "data", copy, strided=True)
    i = _Prepared(indices, "indices", copy, strided=True)
    shape = (ctypes.c_int64 * _abi.GK_MAX_RANK)()
    rank = ctypes.c_size_t(0)
    _check(query(ctypes.byref(d.tensor), ctypes.byref(i.tensor), *attributes, ctypes.byref(options), shape,
                 _abi.GK_MAX_RANK, ctypes.byref(rank)))
    out_shape = tuple(shape[k] for k in range(rank.value))
    if d.code == _abi.GK_DTYPE_STRING:
        if out is not None:
            raise ValueError("out= is not supported for string data")
        handles = (ctypes.c_void_p * max(int(np.prod(out_shape, dtype=np.int64)), 1))()
        out_tensor = _Tensor(_abi.GK_DTYPE_STRING, len(out_shape),
                             (ctypes.c_int64 * max(len(out_shape), 1))(*out_shape),
                             ctypes.cast(handles, ctypes.c_void_p).value)
        gather, inputs = _gather_inputs(gather, d, i)
        _check(gather(*inputs, *attributes, ctypes.byref(out_tensor), ctypes.byref(options)))
        # Handles are copied, never made: each is an input element's number (1-based).
        result = np.empty(out_shape, dtype=object)
        flat = result.reshape(-1)
        for k in range(flat.size):
            flat[k] = d.objects[handles[k] - 1]
        return result
    target = np.empty(out_shape, dtype=d.array.dtype) if out is None else _output(out, out_shape, d.array.dtype)
    out_tensor = _Tensor(d.code, len(out_shape), (ctypes.c_int64 * max(len(out_shape), 1))(*out_shape),
                         target.ctypes.data)
    gather, inputs = _gather_inputs(gather, d, i)
    _check(gather(*inputs, *attributes, ctypes.byref(out_tensor), ctypes.byref(options)))
    return target if out is None else out


# --- the direct path ---------------------------------------------------------------------------
# A gather of numpy arrays the library reads where they are (a numeric dtype in native byte
# order, aligned, whole-element strides), with the output's shape from the operator's formula:
# the three descriptors and their shapes packed into one buffer with one struct call, one C call
# (no shape query, no descriptor objects): a tiny gather took about 8 us this way against 21 us
# on the general path, whose cost is mostly making ctypes objects, and 9 us for onnxruntime's
# InferenceSession.run of the same node (a Zen 4, bench/python_call.py). Everything else takes
# the general path below, as does a call whose output the library finds not to match
# (OUTPUT_MISMATCH: the formula did not apply); that path reports what is wrong.
# The library checks the output descriptor before it writes anything, so a call handed on to
# the general path has left no trace.

_TENSOR_BYTES = ctypes.sizeof(_Tensor)
# gk_tensor as struct packs it natively: dtype, rank, shape pointer, data pointer.
_TENSOR_FORMAT = "iNPP"
_STRIDED_BYTES = ctypes.sizeof(_StridedTensor)
# gk_strided_tensor as struct packs it natively: struct_size, dtype, rank, shape, strides, data.
_STRIDED_FORMAT = "NiNPPP"
# Room for a scatter's four descriptors and their shapes, or a strided gather's descriptors and
# their shapes and strides, at the largest rank; aligned as the descriptors' fields are.
_Scratch = ctypes.c_uint64 * ((2 * _STRIDED_BYTES + 4 * _TENSOR_BYTES) // 8 + 5 * _abi.GK_MAX_RANK)
_PACKERS = {}


def _packer(head, values):
    """The struct that packs the descriptors `head` describes, then `values` int64 values (their
    shapes and strides), made once per pair."""
    packer = _PACKERS.get((head, values))
    if packer is None:
        packer = struct.Struct(head + "q" * values)
        _PACKERS[head, values] = packer
    return packer


# The packed layout must be the descriptors', with the shapes right after them (it is on every
# ABI ctypes and struct agree on); where it is not, every call takes the general path.
_HEAD3 = "@" + _TENSOR_FORMAT * 3
_HEAD4 = "@" + _TENSOR_FORMAT * 4
_STRIDED_HEAD = "@" + _STRIDED_FORMAT * 2 + _TENSOR_FORMAT
_DIRECT = (_TENSOR_BYTES % 8 == 0 and _STRIDED_BYTES % 8 == 0
           and struct.calcsize(_HEAD4) == 4 * _TENSOR_BYTES
           and struct.calcsize(_HEAD3 + "q") == 3 * _TENSOR_BYTES + 8
           and struct.calcsize(_STRIDED_HEAD + "q") == 2 * _STRIDED_BYTES + _TENSOR_BYTES + 8)

# Outputs from this many bytes are allocated only after the library has checked the call (the
# general path's shape query): the direct path allocates before it, so a bad call asking for a
# huge output would fail in numpy (MemoryError) rather than with the library's error; and the
# query costs nothing next to such a call's work (16 MiB take a millisecond or more to write).
_DIRECT_OUTPUT_MAX_BYTES = 16 << 20


# The two packings, written out: a loop over the descriptors cost about 1 us a call, an eighth
# of a tiny gather's time. Each takes (dtype code, shape, address) per descriptor and returns
# the buffer (which must outlive the call) and the first descriptor's address; the shapes follow
# the descriptors.


def _packed3(a, b, c):
    ra, rb, rc = len(a[1]), len(b[1]), len(c[1])
    scratch = _Scratch()
    base = ctypes.addressof(scratch)
    shapes = base + 3 * _TENSOR_BYTES
    _packer(_HEAD3, ra + rb + rc).pack_into(
        scratch, 0,
        a[0], ra, shapes, a[2],
        b[0], rb, shapes + 8 * ra, b[2],
        c[0], rc, shapes + 8 * (ra + rb), c[2],
        *a[1], *b[1], *c[1])
    return scratch, base


def _packed4(a, b, c, d):
    ra, rb, rc, rd = len(a[1]), len(b[1]), len(c[1]), len(d[1])
    scratch = _Scratch()
    base = ctypes.addressof(scratch)
    shapes = base + 4 * _TENSOR_BYTES
    _packer(_HEAD4, ra + rb + rc + rd).pack_into(
        scratch, 0,
        a[0], ra, shapes, a[2],
        b[0], rb, shapes + 8 * ra, b[2],
        c[0], rc, shapes + 8 * (ra + rb), c[2],
        d[0], rd, shapes + 8 * (ra + rb + rc), d[2],
        *a[1], *b[1], *c[1], *d[1])
    return scratch, base


def _packed_strided(a, b, c):
    """Two strided descriptors ((dtype code, shape, address, element strides or None) each) and
    an output descriptor ((dtype code, shape, address)), with the shapes and strides after them;
    as `_packed3` otherwise. None strides are NULL: dense row-major."""
    ra, rb, rc = len(a[1]), len(b[1]), len(c[1])
    sa = ra if a[3] is not None else 0
    sb = rb if b[3] is not None else 0
    scratch = _Scratch()
    base = ctypes.addressof(scratch)
    shape_a = base + 2 * _STRIDED_BYTES + _TENSOR_BYTES
    strides_a = shape_a + 8 * ra
    shape_b = strides_a + 8 * sa
    strides_b = shape_b + 8 * rb
    shape_c = strides_b + 8 * sb
    _packer(_STRIDED_HEAD, ra + sa + rb + sb + rc).pack_into(
        scratch, 0,
        _STRIDED_BYTES, a[0], ra, shape_a, strides_a if sa else 0, a[2],
        _STRIDED_BYTES, b[0], rb, shape_b, strides_b if sb else 0, b[2],
        c[0], rc, shape_c, c[2],
        *a[1], *(a[3] or ()), *b[1], *(b[3] or ()), *c[1])
    return scratch, base


def _direct_function(name, attributes):
    """The C function `name` as a second foreign function object taking addresses, so that the
    general path's argument types stay as they are."""
    fn = _lib[name]
    fn.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_int64] * attributes + [ctypes.c_void_p] * 2
    fn.restype = ctypes.c_int32
    return fn


def _address(array):
    """The address of a dense numpy array's first byte: through the buffer protocol where numpy
    lends a writable one (half the time of ``array.ctypes.data``), else through ``ctypes``."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError):  # read-only, or no bytes to lend
        return array.ctypes.data


def _direct_array(value, what):
    """``value`` read through its DLPack capsule when it is no numpy array but has one (as the
    general path reads it, with the same errors): a numpy array over the caller's memory.
    Anything else as it is (numpy arrays; lists, scalars and numpy subclasses, which
    ``_readable`` leaves to the general path)."""
    if type(value) is np.ndarray or not hasattr(value, "__dlpack__") or isinstance(value, np.ndarray):
        return value
    return _dlpack.as_numpy(value, what)


def _readable(value):
    """(dtype code, address of the first element, strides in elements or None when dense
    row-major) of ``value`` when it is a numpy array the library's gathers read where it is, as
    the general path would pass it (aligned, whole-element strides); else None."""
    if type(value) is not np.ndarray:
        return None
    code = _DTYPE_CODES.get(value.dtype)
    if code is None:
        return None
    if value.flags.c_contiguous:
        address = _address(value)
        if address % value.dtype.alignment:
            return None
        return code, address, None
    if not value.flags.aligned or not _whole_element_strides(value):
        return None
    return code, value.ctypes.data, tuple(stride // value.itemsize for stride in value.strides)


def _dense(value):
    """(dtype code, address) of ``value`` when it is a numpy array the library reads in place
    without a copy or strides (what the scatters read); else None."""
    readable = _readable(value)
    if readable is None or readable[2] is not None:
        return None
    return readable[:2]


def _direct_target(out, shape, dtype):
    """Where the direct path writes an output of `shape` and `dtype`: a new array (under
    `_DIRECT_OUTPUT_MAX_BYTES`), or `out` when it is a writable dense numpy array of that shape
    and dtype; None when the call must take the general path."""
    if out is None:
        if math.prod(shape) * dtype.itemsize >= _DIRECT_OUTPUT_MAX_BYTES:
            return None
        try:
            return np.empty(shape, dtype)
        except (ValueError, MemoryError):  # more dimensions than numpy allows, or no memory
            return None
    if (type(out) is np.ndarray and out.shape == shape and out.dtype == dtype
            and out.flags.c_contiguous and out.flags.writeable):
        return out
    return None


def _run_direct(gather, data, indices, attributes, options, out, predict):
    """(The result, data, indices): the result None when the call must take the general path,
    which then goes on with the inputs as read here (a DLPack input read once). Inputs are read
    in order, and an input the library cannot read where it is hands the call on before the next
    is read, so that an error comes from the input the general path would name first."""
    data = _direct_array(data, "data")
    d = _readable(data)
    if d is None:
        return None, data, indices
    indices = _direct_array(indices, "indices")
    i = _readable(indices)
    if i is None:
        return None, data, indices
    shape = predict(data.shape, indices.shape, attributes)
    if shape is None or len(shape) > _abi.GK_MAX_RANK:
        return None, data, indices
    target = _direct_target(out, shape, data.dtype)
    if target is None:
        return None, data, indices
    dense, strided = gather
    if d[2] is None and i[2] is None:
        scratch, base = _packed3((d[0], data.shape, d[1]), (i[0], indices.shape, i[1]),
                                 (d[0], shape, _address(target)))
        out_at = base + 2 * _TENSOR_BYTES
        status = dense(base, base + _TENSOR_BYTES, *attributes, out_at, ctypes.addressof(options))
    else:
        scratch, base = _packed_strided((d[0], data.shape, d[1], d[2]), (i[0], indices.shape, i[1], i[2]),
                                        (d[0], shape, _address(target)))
        out_at = base + 2 * _STRIDED_BYTES
        status = strided(base, base + _STRIDED_BYTES, *attributes, out_at, ctypes.addressof(options))
    if status == _abi.GK_STATUS_OUTPUT_MISMATCH:
        return None, data, indices
    _check(status)
    return target, data, indices


def _scatter_direct(scatter, data, indices, updates, attributes, options, out):
    """The direct path of a scatter (its output has data's shape, so there is no query to skip:
    only the descriptor objects): (the result, data, indices, updates), as for the gathers
    (`_run_direct`). Nothing is copied here, so the library sees every overlap of ``out`` with an
    input itself."""
    data = _direct_array(data, "data")
    d = _dense(data)
    if d is None:
        return None, data, indices, updates
    indices = _direct_array(indices, "indices")
    i = _dense(indices)
    if i is None:
        return None, data, indices, updates
    updates = _direct_array(updates, "updates")
    u = _dense(updates)
    if u is None:
        return None, data, indices, updates
    shape = data.shape
    target = _direct_target(out, shape, data.dtype)
    if target is None:
        return None, data, indices, updates
    scratch, base = _packed4((d[0], shape, d[1]), (i[0], indices.shape, i[1]), (u[0], updates.shape, u[1]),
                             (d[0], shape, _address(target)))
    status = scatter(base, base + _TENSOR_BYTES, base + 2 * _TENSOR_BYTES, *attributes, base + 3 * _TENSOR_BYTES,
                     ctypes.addressof(options))
    if status == _abi.GK_STATUS_OUTPUT_MISMATCH:
        return None, data, indices, updates
    _check(status)
    return target, data, indices, updates


def _gather_elements_shape(data_shape, indices_shape, attributes):
    # Every flavor and version: the indices' shape.
    return indices_shape


def _onnx_gather_nd_shape(data_shape, indices_shape, attributes):
    (batch_dims,) = attributes
    if not indices_shape:
        return None
    k = indices_shape[-1]
    if batch_dims < 0 or batch_dims + k > len(data_shape):
        return None
    return indices_shape[:-1] + data_shape[batch_dims + k:]


def _onnx_gather_shape(data_shape, indices_shape, attributes):
    axis, batch_dims = attributes
    rank = len(data_shape)
    if batch_dims != 0 or not -rank <= axis < rank:
        return None
    axis %= rank
    return data_shape[:axis] + indices_shape + data_shape[axis + 1:]


# Each gather's dense function and its `_strided` twin (both inputs as strided descriptors).
_DIRECT_GATHER_ELEMENTS = (_direct_function("gk_gather_elements", 1),
                           _direct_function("gk_gather_elements_strided", 1))
_DIRECT_GATHER_ND = (_direct_function("gk_gather_nd", 1), _direct_function("gk_gather_nd_strided", 1))
_DIRECT_GATHER = (_direct_function("gk_gather", 2), _direct_function("gk_gather_strided", 2))
# A scatter's arguments: data, indices, updates, then ScatterElements' axis and the reduction code.
_DIRECT_SCATTER_ELEMENTS = _lib["gk_scatter_elements"]
_DIRECT_SCATTER_ELEMENTS.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64, ctypes.c_int32] + [ctypes.c_void_p] * 2
_DIRECT_SCATTER_ELEMENTS.restype = ctypes.c_int32
_DIRECT_SCATTER_ND = _lib["gk_scatter_nd"]
_DIRECT_SCATTER_ND.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int32] + [ctypes.c_void_p] * 2
_DIRECT_SCATTER_ND.restype = ctypes.c_int32


def _gather_inputs(gather, d, i):
    """The gather's C function and its two input arguments: the dense function when both inputs
    are dense, its ``_strided`` twin (both inputs as strided descriptors) otherwise."""
    if d.strided is None and i.strided is None:
        return gather, (ctypes.byref(d.tensor), ctypes.byref(i.tensor))
    strided = getattr(_lib, gather.__name__ + "_strided")
    return strided, tuple(ctypes.byref(x.strided if x.strided is not None else _as_strided(x)) for x in (d, i))


def _as_strided(prepared):
    """A dense input as a strided descriptor with NULL strides (row-major)."""
    t = prepared.tensor
    prepared.strided = _StridedTensor(ctypes.sizeof(_StridedTensor), t.dtype, t.rank, t.shape, None, t.data)
    return prepared.strided


_COMMON_KEYWORDS = """
    Inputs are numpy arrays, any object with ``__dlpack__`` (a PyTorch CPU tensor, say), or
    array-likes (lists). The gathers read their inputs where they are, whatever the layout
    (transposed, stepped, sliced, broadcast with stride 0, reversed): only the elements gathered
    are read. The scatters read dense row-major inputs where they are. Anything else (a
    scatter's other layouts, big-endian bytes, a list) is handled by ``copy``: None (default)
    copies it first, False raises ValueError naming the input and its layout, True copies every
    input. ``out``, if given, is a writable dense row-major array (numpy, or a DLPack tensor such
    as a slice ``t[2:5]`` of a larger PyTorch tensor) of the output's shape and dtype; it is
    written and returned. Otherwise the result is a new numpy array (``torch.from_dlpack(result)``
    views it as a tensor without a copy). ``flavor`` is "onnx" or "openvino", ``version`` the
    opset (0 = newest), ``num_threads`` a cap on threads (0 = the library's default). Raises
    GatherkitError on bad input."""


def gather_elements(data, indices, axis=0, *, flavor="onnx", version=0, num_threads=0, out=None, copy=None):
    """GatherElements: ``out[p] = data[p with p[axis] replaced by indices[p]]``; the output has the
    indices' shape.
    """
    return _run(_lib.gk_gather_elements_output_shape, _lib.gk_gather_elements, data, indices,
                (_int_arg("axis", axis, _INT64, "int64_t"),), _options(flavor, version, num_threads), out, copy,
                _DIRECT_GATHER_ELEMENTS, _gather_elements_shape)


def gather_nd(data, indices, batch_dims=0, *, flavor="onnx", version=0, num_threads=0, out=None, copy=None):
    """GatherND: each index tuple (the last dimension of ``indices``) selects a slice of ``data``
    within its batch (the first ``batch_dims`` dimensions)."""
    return _run(_lib.gk_gather_nd_output_shape, _lib.gk_gather_nd, data, indices,
                (_int_arg("batch_dims", batch_dims, _INT64, "int64_t"),), _options(flavor, version, num_threads),
                out, copy, *((_DIRECT_GATHER_ND, _onnx_gather_nd_shape) if flavor == "onnx" else ()))


def gather(data, indices, axis=0, batch_dims=0, *, flavor="onnx", version=0, num_threads=0, out=None, copy=None):
    """Gather (``numpy.take`` along ``axis`` for ONNX): each index value picks a slice of ``data``;
    the output shape is ``data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis+1:]``.
    ``indices`` may be a scalar. ``batch_dims`` must be 0 for ONNX; OpenVINO Gather-8 takes it (a
    negative value counts from the indices' rank). OpenVINO's zero-filling of out-of-range indices
    is an error here."""
    return _run(_lib.gk_gather_output_shape, _lib.gk_gather, data, indices,
                (_int_arg("axis", axis, _INT64, "int64_t"), _int_arg("batch_dims", batch_dims, _INT64, "int64_t")),
                _options(flavor, version, num_threads), out, copy,
                *((_DIRECT_GATHER, _onnx_gather_shape) if flavor == "onnx" else ()))


def _scatter(fn, data, indices, updates, attributes, options, out, copy, direct=None):
    copy = _copy_arg(copy)
    if direct is not None and _DIRECT and copy is not True:
        result, data, indices, updates = _scatter_direct(direct, data, indices, updates, attributes, options, out)
        if result is not None:
            return result
    d = _Prepared(data, "data", copy)
    i = _Prepared(indices, "indices", copy)
    u = _Prepared(updates, "updates", copy, first_handle=d.keep.size + 1 if d.code == _abi.GK_DTYPE_STRING else 1)
    inputs = (ctypes.byref(d.tensor), ctypes.byref(i.tensor), ctypes.byref(u.tensor))
    out_shape = d.dims  # a scatter's output has data's shape and dtype
    out_dims = (ctypes.c_int64 * max(len(out_shape), 1))(*out_shape)
    if d.code == _abi.GK_DTYPE_STRING:
        if out is not None:
            raise ValueError("out= is not supported for string data")
        handles = (ctypes.c_void_p * max(d.keep.size, 1))()
        out_tensor = _Tensor(_abi.GK_DTYPE_STRING, len(out_shape), out_dims, ctypes.cast(handles, ctypes.c_void_p).value)
        _check(fn(*inputs, *attributes, ctypes.byref(out_tensor), ctypes.byref(options)))
        # Handles are copied, never made: 1..n are data's elements, n+1.. the updates'.
        objects = np.concatenate([d.objects, u.objects]) if u.code == _abi.GK_DTYPE_STRING else d.objects
        result = np.empty(out_shape, dtype=object)
        flat = result.reshape(-1)
        for k in range(flat.size):
            flat[k] = objects[handles[k] - 1]
        return result
    if out is None:
        target = np.empty(out_shape, dtype=d.array.dtype)
    else:
        target = _output(out, out_shape, d.array.dtype, hint=" (data itself for in place)")
        # The library sees the overlap of out with an input passed as it is; an input copied above
        # hides it, so that overlap is refused here, with the library's status.
        for what, prepared in (("data", d), ("indices", i), ("updates", u)):
            if prepared.array is None or prepared.original is None or copy is True:
                # String handles and converted lists are buffers of the binding's own; with
                # copy=True the caller asked for copies, which the output may overlap.
                continue
            copied = prepared.array.ctypes.data != prepared.original.ctypes.data
            if copied and prepared.array.size and np.shares_memory(target, prepared.original):
                raise GatherkitError(
                    _abi.GK_STATUS_OVERLAP,
                    f"out shares memory with {what} (which was copied, not being dense row-major); out must "
                    f"not overlap an input, except that out may be data itself (a dense array) for an "
                    f"in-place call")
    out_tensor = _Tensor(d.code, len(out_shape), out_dims, target.ctypes.data)
    _check(fn(*inputs, *attributes, ctypes.byref(out_tensor), ctypes.byref(options)))
    return target if out is None else out


def scatter_elements(data, indices, updates, axis=0, reduction="none", *, flavor="onnx", version=0, num_threads=0,
                     out=None, copy=None):
    """ScatterElements: a copy of ``data`` where, for every position ``p`` of ``indices`` in
    row-major order, the element ``p`` with ``p[axis]`` replaced by ``indices[p]`` is set to
    ``updates[p]`` (``reduction="none"``: the last duplicate wins) or combined with it ("add",
    "mul" from version 16; "max", "min" from 18). ``updates`` has the indices' shape and data's
    dtype (it is not converted). ``version`` is the opset (0 = newest, 18).

    ``out`` (see below) has data's shape and dtype. ``out=data`` (data itself, or an array with exactly its memory, shape and dtype)
    scatters in place: only the updated elements are written. Any other overlap of ``out`` with an
    input raises GatherkitError (OVERLAP). Every index is checked before anything is written, so on
    any error ``out`` (and in place, ``data``) is unchanged. Raises GatherkitError on bad input."""
    return _scatter(_lib.gk_scatter_elements, data, indices, updates,
                    (_int_arg("axis", axis, _INT64, "int64_t"), _reduction(reduction)),
                    _options(flavor, version, num_threads), out, copy, _DIRECT_SCATTER_ELEMENTS)


def scatter_nd(data, indices, updates, reduction="none", *, flavor="onnx", version=0, num_threads=0, out=None,
               copy=None):
    """ScatterND: a copy of ``data`` where each index tuple (the last dimension of ``indices``,
    ``k`` values, ``0 <= k <= data.ndim``), in row-major order, has its slice ``out[tuple]`` set to
    (or combined with) its part of ``updates``, whose shape is
    ``indices.shape[:-1] + data.shape[k:]``. Indices are int64 (ONNX) or int32. ``reduction``,
    ``version``, ``out`` (and in place, ``out=data``) as for scatter_elements. Raises
    GatherkitError on bad input."""
    return _scatter(_lib.gk_scatter_nd, data, indices, updates, (_reduction(reduction),),
                    _options(flavor, version, num_threads), out, copy, _DIRECT_SCATTER_ND)


for _operator in (gather_elements, gather_nd, gather, scatter_elements, scatter_nd):
    _operator.__doc__ = _operator.__doc__.rstrip() + "\n" + _COMMON_KEYWORDS
del _operator
