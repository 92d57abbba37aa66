"""DLPack in, with ctypes only: any object with ``__dlpack__`` (a PyTorch CPU tensor, a JAX or CuPy
array, numpy's own arrays) becomes a numpy array over the *same memory*, never a copy.

The producer's capsule is kept alive by the returned array (through the object numpy reads the
``__array_interface__`` from), and is never renamed to ``used_dltensor``: gatherkit only borrows
the memory for the length of a call, so the capsule's own destructor calls the producer's deleter
when the last view is gone, which is the protocol's rule for an unconsumed capsule.

Layouts are taken as they are: ``strides`` (in elements; read whenever present, and required by
DLPack 1.2 for ndim > 0, so NULL means the legacy compact row-major layout), ``byte_offset``,
stride 0 and negative strides. Whether a layout can be passed to the library as it is, or must be
copied first, is the caller's decision (``copy=``), not this module's.
"""

import ctypes

import numpy as np

# The one DLDeviceType accepted: plain host memory. (CUDA-host and ROCm-host memory is readable
# by the CPU too, but pinned buffers are a device runtime's; they are refused, by name, as other
# devices are.)
_KDL_CPU = 1
_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI",
                 10: "ROCm", 11: "ROCm host", 12: "ExtDev", 13: "CUDA managed", 14: "oneAPI", 15: "WebGPU",
                 16: "Hexagon", 17: "MAIA"}

# DLDataTypeCode -> numpy kind; kDLBfloat (4) is handled apart (numpy knows it through ml_dtypes).
_KDL_INT, _KDL_UINT, _KDL_FLOAT, _KDL_BFLOAT, _KDL_COMPLEX, _KDL_BOOL = 0, 1, 2, 4, 5, 6
_TYPESTR = {
    (_KDL_INT, 8): "|i1", (_KDL_INT, 16): "<i2", (_KDL_INT, 32): "<i4", (_KDL_INT, 64): "<i8",
    (_KDL_UINT, 8): "|u1", (_KDL_UINT, 16): "<u2", (_KDL_UINT, 32): "<u4", (_KDL_UINT, 64): "<u8",
    (_KDL_FLOAT, 16): "<f2", (_KDL_FLOAT, 32): "<f4", (_KDL_FLOAT, 64): "<f8",
    (_KDL_COMPLEX, 64): "<c8", (_KDL_COMPLEX, 128): "<c16",
    (_KDL_BOOL, 8): "|b1",
}
_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque handle", 4: "bfloat", 5: "complex", 6: "bool",
               7: "float8_e3m4", 8: "float8_e4m3"}

DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))),
]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _Borrowed:
    """What numpy builds the view from: the ``__array_interface__`` of the producer's memory, and
    the capsule and producer object that keep that memory alive as long as the view lives."""

    def __init__(self, interface, capsule, producer):
        self.__array_interface__ = interface
        self._capsule = capsule
        self._producer = producer


def _capsule(obj, what):
    """The object's DLPack capsule, versioned (DLPack >= 1.0, which carries a read-only flag) when
    the producer offers it."""
    device = getattr(obj, "__dlpack_device__", None)
    if device is not None:
        device_type, device_id = device()
        if int(device_type) != _KDL_CPU:
            name = _DEVICE_NAMES.get(int(device_type), f"device type {int(device_type)}")
            raise ValueError(f"{what} is on the {name} device (id {device_id}); gatherkit reads CPU memory "
                             f"only: move it first (e.g. tensor.cpu())")
    try:
        return obj.__dlpack__(max_version=(1, 0))
    except TypeError:  # a producer from before DLPack 1.0: no max_version keyword
        return obj.__dlpack__()


def as_numpy(obj, what, writable=False):
    """A numpy array over the memory of ``obj`` (anything with ``__dlpack__``), with its dtype,
    shape and strides; no element is copied. ``what`` names the argument in errors. With
    ``writable``, a tensor its producer marks read-only is refused."""
    capsule = _capsule(obj, what)
    if _capsule_is_valid(capsule, b"dltensor_versioned"):
        managed = DLManagedTensorVersioned.from_address(_capsule_get_pointer(capsule, b"dltensor_versioned"))
        if managed.version.major != 1:
            raise ValueError(f"{what}: DLPack version {managed.version.major}.{managed.version.minor}; "
                             f"gatherkit reads DLPack 1.x")
        read_only = bool(managed.flags & DLPACK_FLAG_BITMASK_READ_ONLY)
    elif _capsule_is_valid(capsule, b"dltensor"):
        managed = DLManagedTensor.from_address(_capsule_get_pointer(capsule, b"dltensor"))
        read_only = False  # pre-1.0 DLPack cannot say; numpy refuses to export read-only arrays this way
    else:
        raise TypeError(f"{what}.__dlpack__() returned {type(capsule).__name__}, not a DLPack capsule")
    tensor = managed.dl_tensor
    if tensor.device.device_type != _KDL_CPU:
        name = _DEVICE_NAMES.get(tensor.device.device_type, f"device type {tensor.device.device_type}")
        raise ValueError(f"{what} is on the {name} device; gatherkit reads CPU memory only")
    if writable and read_only:
        raise ValueError(f"{what} is read-only (its DLPack producer marks it so); out must be writable")
    dtype = _numpy_dtype(tensor.dtype, what)
    ndim = tensor.ndim
    shape = tuple(tensor.shape[:ndim]) if ndim else ()
    if ndim and tensor.strides:
        strides = tuple(stride * dtype.itemsize for stride in tensor.strides[:ndim])
    else:
        strides = None  # compact row-major (pre-1.2 producers may leave strides NULL)
    address = (tensor.data or 0) + tensor.byte_offset
    if any(n == 0 for n in shape) and not address:
        address = 1  # an empty tensor may have no memory; numpy needs some non-NULL address
    storage = dtype if dtype.kind != "V" else np.dtype(np.uint16)
    interface = {
        "version": 3,
        "shape": shape,
        "typestr": storage.str,
        "data": (address, read_only),
        "strides": strides,
    }
    array = np.asarray(_Borrowed(interface, capsule, obj))
    return array.view(dtype) if storage is not dtype else array


# (code, bits, lanes) -> numpy dtype, for the DLPack dtypes read so far (making a numpy dtype from
# its string took a tenth of reading a capsule).
_DTYPES = {}


def _numpy_dtype(dl_dtype, what):
    code, bits, lanes = dl_dtype.code, dl_dtype.bits, dl_dtype.lanes
    dtype = _DTYPES.get((code, bits, lanes))
    if dtype is None:
        dtype = _DTYPES[code, bits, lanes] = _new_numpy_dtype(code, bits, lanes, what)
    return dtype


def _new_numpy_dtype(code, bits, lanes, what):
    described = f"{_CODE_NAMES.get(code, f'type code {code}')}{bits}" + (f"x{lanes}" if lanes != 1 else "")
    if lanes != 1:
        raise TypeError(f"{what}: DLPack dtype {described} is a vector type (lanes {lanes}); gatherkit "
                        f"takes scalar elements")
    if code == _KDL_BFLOAT and bits == 16:
        try:
            import ml_dtypes
        except ImportError:
            raise TypeError(f"{what}: DLPack dtype bfloat16 needs the ml_dtypes package "
                            f"(pip install ml_dtypes)") from None
        return np.dtype(ml_dtypes.bfloat16)
    typestr = _TYPESTR.get((code, bits))
    if typestr is None:
        raise TypeError(f"{what}: DLPack dtype {described} has no gatherkit dtype")
    return np.dtype(typestr)
