"""A small DLPack producer in pure Python (ctypes), for layouts numpy's own ``__dlpack__`` never
exports: stride 0 (broadcast), negative strides, a ``byte_offset``, a non-CPU device, vector
lanes, bfloat16, the read-only flag, and both capsule kinds (pre-1.0 ``dltensor`` and 1.x
``dltensor_versioned``).

It follows the protocol as a producer must: the capsule's destructor calls the managed tensor's
deleter when the capsule was not consumed (still named as produced), and ``deleted`` counts those
calls, so a test can see that a consumer neither leaks the tensor nor frees it twice.
"""

import ctypes

import numpy as np

from gatherkit import _dlpack

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
# The destructor runs while the capsule is being freed: take it as a plain address, not an object.
_capsule_is_valid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_get_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_DESTRUCTOR = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)

class NumpyExporter:
    """Any object with __dlpack__: here numpy's own export, so that the binding reads a real
    capsule (not a numpy array, which it would take as one)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


KDL_CPU, KDL_CUDA = 1, 2
CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
KDL_BFLOAT = 4


def dl_dtype_of(dtype):
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return KDL_BFLOAT, 16
    return CODES[dtype.kind], dtype.itemsize * 8


class Producer:
    """A tensor of ``base`` (a numpy array that owns the memory) seen with ``shape`` and
    ``strides`` (in elements) from ``offset`` elements into it. ``versioned`` picks the capsule
    kind. ``dl_dtype`` (code, bits, lanes) and ``device`` override what is exported."""

    def __init__(self, base, shape, strides, offset=0, *, versioned=True, read_only=False, device=KDL_CPU,
                 dl_dtype=None, strides_null=False):
        self.base = base
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides = (ctypes.c_int64 * max(len(shape), 1))(*strides)
        code, bits = dl_dtype_of(base.dtype) if dl_dtype is None else dl_dtype[:2]
        lanes = 1 if dl_dtype is None else dl_dtype[2]
        self.versioned = versioned
        self.read_only = read_only
        self.device = device
        self.exports = 0
        self.deleted = 0
        self._live = []  # every managed tensor handed out, kept alive for ctypes
        self._spec = (code, bits, lanes, len(shape), offset, strides_null)

    def __dlpack_device__(self):
        return self.device, 0

    def _tensor(self):
        code, bits, lanes, ndim, offset, strides_null = self._spec
        tensor = _dlpack.DLTensor()
        tensor.data = self.base.ctypes.data
        tensor.device = _dlpack.DLDevice(self.device, 0)
        tensor.ndim = ndim
        tensor.dtype = _dlpack.DLDataType(code, bits, lanes)
        tensor.shape = self.shape
        tensor.strides = None if strides_null else self.strides
        tensor.byte_offset = offset * self.base.itemsize
        return tensor

    def __dlpack__(self, *, stream=None, max_version=None, **_):
        self.exports += 1
        versioned = self.versioned and max_version is not None and max_version[0] >= 1
        if versioned:
            kind = _dlpack.DLManagedTensorVersioned
            managed = kind()
            managed.version = _dlpack.DLPackVersion(1, 1)
            managed.flags = _dlpack.DLPACK_FLAG_BITMASK_READ_ONLY if self.read_only else 0
            name = b"dltensor_versioned"
        else:
            kind = _dlpack.DLManagedTensor
            managed = kind()
            name = b"dltensor"
        managed.dl_tensor = self._tensor()

        def deleter(_pointer):
            # Counted, not freed: the ctypes objects stay alive with the producer, since this very
            # callback is one of them.
            self.deleted += 1

        managed.deleter = dict(kind._fields_)["deleter"](deleter)

        def destructor(capsule):
            # Unconsumed (still the produced name): the producer's deleter runs, as DLPack says.
            if _capsule_is_valid_raw(capsule, name):
                pointer = _capsule_get_pointer_raw(capsule, name)
                kind.from_address(pointer).deleter(ctypes.cast(pointer, ctypes.POINTER(kind)))

        entry = (managed, deleter, _DESTRUCTOR(destructor), managed.deleter)
        self._live.append(entry)
        return _capsule_new(ctypes.addressof(managed), name, ctypes.cast(entry[2], ctypes.c_void_p))


def view(array, index=None, *, versioned=True, **kwargs):
    """A producer over numpy array ``array`` exactly as it is laid out (any strides, even
    negative ones and 0), optionally after indexing it with ``index``."""
    seen = array if index is None else array[index]
    base = array.base if array.base is not None else array
    while isinstance(base, np.ndarray) and base.base is not None and isinstance(base.base, np.ndarray):
        base = base.base
    itemsize = seen.itemsize
    offset_bytes = seen.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    assert offset_bytes % itemsize == 0 and all(s % itemsize == 0 for s in seen.strides)
    base_elements = np.frombuffer(base, dtype=seen.dtype) if base.dtype != seen.dtype else base.reshape(-1)
    # data points at the start of base; byte_offset reaches the view's first element.
    return Producer(base_elements, seen.shape, [s // itemsize for s in seen.strides], offset_bytes // itemsize,
                    versioned=versioned, **kwargs)
