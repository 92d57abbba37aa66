"""scatter_elements and scatter_nd: the spec examples with exact values, in place, reductions,
duplicates, the errors, and random cases against a numpy loop reference."""

import numpy as np
import pytest

import gatherkit
from gatherkit._abi import (GK_STATUS_INDEX_OUT_OF_BOUNDS, GK_STATUS_INVALID_ATTRIBUTE,
                            GK_STATUS_INVALID_RANK, GK_STATUS_OVERLAP, GK_STATUS_SHAPE_MISMATCH,
                            GK_STATUS_UNSUPPORTED_DTYPE, GK_STATUS_UNSUPPORTED_VERSION)

F32 = np.float32


def bits(array):
    """The bytes of an array, for bitwise comparisons (NaN payloads and -0.0 included)."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8).tobytes()


def assert_bitwise_equal(got, expected):
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got, expected)
    assert bits(got) == bits(expected), (got, expected)


def f32_bits(value):
    return int(np.array(value, F32).view(np.uint32))


# --- spec examples ----------------------------------------------------------------------------------

@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("version", [11, 13, 16, 18, 0])
def test_scatter_elements_spec_examples(index_dtype, version):
    def run(data, indices, updates, axis):
        return gatherkit.scatter_elements(np.array(data, F32), np.array(indices, index_dtype), np.array(updates, F32),
                                          axis, version=version)

    out = run(np.zeros((3, 3)), [[1, 0, 2], [0, 2, 1]], [[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]], 0)
    assert_bitwise_equal(out, np.array([[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]], F32))
    out = run([[1, 2, 3, 4, 5]], [[1, 3]], [[1.1, 2.1]], 1)
    assert_bitwise_equal(out, np.array([[1.0, 1.1, 3.0, 2.1, 5.0]], F32))
    out = run([[1, 2, 3, 4, 5]], [[1, -3]], [[1.1, 2.1]], 1)
    assert_bitwise_equal(out, np.array([[1.0, 1.1, 2.1, 4.0, 5.0]], F32))
    # The spec's extra cases: indices longer than the axis (last wins), and smaller than data.
    out = run([[1, 2, 3]], [[0, 1, 1, 2, 0]], [[10, 20, 30, 40, 50]], 1)
    assert_bitwise_equal(out, np.array([[50, 30, 40]], F32))
    out = run(np.zeros((2, 3)), [[2, 2, 0], [1, 1, 1]], [[1, 2, 3], [4, 5, 6]], 1)
    assert_bitwise_equal(out, np.array([[3, 0, 2], [0, 6, 0]], F32))
    out = run(np.zeros((2, 3)), [[-1]], [[1]], -2)
    assert_bitwise_equal(out, np.array([[0, 0, 0], [1, 0, 0]], F32))


@pytest.mark.parametrize("reduction,version,element_bits", [
    # (2.0f + 1.1f) + 2.1f and (2.0f * 1.1f) * 2.1f, as the spec gives them.
    ("add", 16, 0x40A66666), ("add", 18, 0x40A66666),
    ("mul", 16, 0x4093D70A), ("mul", 0, 0x4093D70A),
    ("max", 18, f32_bits(2.1)), ("min", 18, f32_bits(1.1)),
])
def test_scatter_elements_backend_reduction_tests(reduction, version, element_bits):
    data = np.array([[1, 2, 3, 4, 5]], F32)
    out = gatherkit.scatter_elements(data, np.array([[1, 1]]), np.array([[1.1, 2.1]], F32), axis=1,
                                     reduction=reduction, version=version)
    expected = data.copy()
    expected[0, 1] = np.array(element_bits, np.uint32).view(F32)
    assert_bitwise_equal(out, expected)
    np.testing.assert_array_equal(data, [[1, 2, 3, 4, 5]])  # not in place: data unchanged


ND_DATA = np.array([[[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
                    [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]],
                    [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]],
                    [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]], F32)
ND_UPDATES = np.array([[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]],
                       [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 4]]], F32)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("version", [11, 13, 16, 18, 0])
def test_scatter_nd_spec_examples(index_dtype, version):
    out = gatherkit.scatter_nd(np.arange(1, 9, dtype=F32), np.array([[4], [3], [1], [7]], index_dtype),
                               np.array([9, 10, 11, 12], F32), version=version)
    assert_bitwise_equal(out, np.array([1, 11, 3, 10, 9, 6, 7, 12], F32))
    out = gatherkit.scatter_nd(ND_DATA, np.array([[0], [2]], index_dtype), ND_UPDATES, version=version)
    expected = ND_DATA.copy()
    expected[0], expected[2] = ND_UPDATES[0], ND_UPDATES[1]
    assert_bitwise_equal(out, expected)
    # The spec's extra cases: negative components, k = 0, duplicates (last wins).
    data = np.array([[0, 1, 2], [3, 4, 5]], F32)
    out = gatherkit.scatter_nd(data, np.array([[1, -1], [0, 0]], index_dtype), np.array([100, 200], F32),
                               version=version)
    assert_bitwise_equal(out, np.array([[200, 1, 2], [3, 4, 100]], F32))
    out = gatherkit.scatter_nd(data, np.array([[-1]], index_dtype), np.array([[7, 8, 9]], F32), version=version)
    assert_bitwise_equal(out, np.array([[0, 1, 2], [7, 8, 9]], F32))
    out = gatherkit.scatter_nd(data, np.zeros((1, 0), index_dtype), np.full((1, 2, 3), 9, F32), version=version)
    assert_bitwise_equal(out, np.full((2, 3), 9, F32))
    out = gatherkit.scatter_nd(np.zeros((2, 3), F32), np.array([[[1], [0]], [[1], [1]]], index_dtype),
                               np.arange(12, dtype=F32).reshape(2, 2, 3), version=version)
    assert_bitwise_equal(out, np.array([[3, 4, 5], [9, 10, 11]], F32))


@pytest.mark.parametrize("reduction,block0", [
    ("add", [[7, 8, 9, 10], [13, 14, 15, 16], [18, 17, 16, 15], [16, 15, 14, 13]]),
    ("mul", [[5, 10, 15, 20], [60, 72, 84, 96], [168, 147, 126, 105], [128, 96, 64, 32]]),
    ("max", [[5, 5, 5, 5], [6, 6, 7, 8], [8, 7, 7, 7], [8, 8, 8, 8]]),
    ("min", [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3], [4, 3, 2, 1]]),
])
def test_scatter_nd_backend_reduction_tests(reduction, block0):
    out = gatherkit.scatter_nd(ND_DATA, np.array([[0], [0]]), ND_UPDATES, reduction=reduction)
    expected = ND_DATA.copy()
    expected[0] = block0  # blocks 1-3 are data's, unchanged (the spec's comments get block 2 wrong)
    assert_bitwise_equal(out, expected)


@pytest.mark.parametrize("reduction,expected", [("max", [[5, 2], [3, 4]]), ("min", [[1, 2], [3, 1]])])
def test_scatter_nd_element_indices_max_min(reduction, expected):
    out = gatherkit.scatter_nd(np.array([[1, 2], [3, 4]], F32), np.array([[0, 0], [1, 1]]), np.array([5, 1], F32),
                               reduction=reduction, version=18)
    assert_bitwise_equal(out, np.array(expected, F32))


def test_strings_scatter_as_the_same_objects():
    words = np.array(["zero", "one", "two"], dtype=object)
    updates = np.array(["TWO", "ZERO", "zero again"], dtype=object)
    out = gatherkit.scatter_elements(words, np.array([2, 0, -3]), updates)
    assert list(out) == ["zero again", "one", "TWO"]
    assert out[0] is updates[2] and out[1] is words[1] and out[2] is updates[0]
    assert list(words) == ["zero", "one", "two"]
    out = gatherkit.scatter_nd(np.array([[b"a", b"b"], [b"c", b"d"]], dtype=object), np.array([[1]]),
                               np.array([[b"x", b"y"]], dtype=object))
    assert out.tolist() == [[b"a", b"b"], [b"x", b"y"]]
    with pytest.raises(ValueError, match="out= is not supported for string data"):
        gatherkit.scatter_nd(words, np.array([[0]]), np.array(["a"], dtype=object), out=words)
    numbers = np.zeros(3, F32)
    with pytest.raises(gatherkit.GatherkitError) as e:  # strings into numbers, in place
        gatherkit.scatter_nd(numbers, np.array([[0]]), np.array(["a"], dtype=object), out=numbers)
    assert e.value.status == GK_STATUS_UNSUPPORTED_DTYPE and "updates dtype is string" in e.value.message


# --- in place ------------------------------------------------------------------------------------

def test_out_data_scatters_in_place():
    data = np.arange(12, dtype=F32).reshape(3, 4)
    got = gatherkit.scatter_elements(data, np.array([[2, 0]]), np.array([[-1, -2]], F32), axis=1, out=data)
    assert got is data
    assert np.shares_memory(got, data)
    np.testing.assert_array_equal(data, [[-2, 1, -1, 3], [4, 5, 6, 7], [8, 9, 10, 11]])
    got = gatherkit.scatter_nd(data, np.array([[2], [-1]]), np.array([[1, 1, 1, 1], [2, 2, 2, 2]], F32),
                               reduction="add", out=data, num_threads=2)
    assert got is data
    np.testing.assert_array_equal(data, [[-2, 1, -1, 3], [4, 5, 6, 7], [11, 12, 13, 14]])


def test_out_with_exactly_data_memory_and_layout_is_in_place():
    data = np.zeros((2, 3), np.int64)
    view = data[...]  # another array object over the same memory, shape and dtype
    assert view is not data
    got = gatherkit.scatter_nd(data, np.array([[1, 2]]), np.array([7], np.int64), out=view)
    assert got is view and np.shares_memory(got, data)
    np.testing.assert_array_equal(data, [[0, 0, 0], [0, 0, 7]])


def test_in_place_error_leaves_data_untouched():
    data = np.arange(6, dtype=np.float64).reshape(2, 3)
    before = data.copy()
    with pytest.raises(gatherkit.GatherkitError) as e:
        # The first index is good (and would be written by a scatter that checked as it went).
        gatherkit.scatter_elements(data, np.array([[0, 1], [5, -4]]), np.full((2, 2), -1.0), axis=1, out=data)
    assert e.value.status == GK_STATUS_INDEX_OUT_OF_BOUNDS
    np.testing.assert_array_equal(data, before)
    out = np.full((2, 3), 42.0)
    with pytest.raises(gatherkit.GatherkitError):
        gatherkit.scatter_nd(data, np.array([[0, 0], [2, 0]]), np.array([1.0, 2.0]), out=out)
    np.testing.assert_array_equal(out, np.full((2, 3), 42.0))  # a separate out is untouched too


@pytest.mark.parametrize("make", [
    # out overlaps data without being exactly its memory (both C-contiguous: the library sees it).
    lambda buf: dict(data=buf[:6].reshape(2, 3), updates=np.ones((1, 1), F32), out=buf[2:8].reshape(2, 3)),
    # out is data, but updates is part of data.
    lambda buf: dict(data=buf[:6].reshape(2, 3), updates=buf[:1].reshape(1, 1), out=buf[:6].reshape(2, 3)),
    # out overlaps updates.
    lambda buf: dict(data=np.zeros((2, 3), F32), updates=buf[:1].reshape(1, 1), out=buf[:6].reshape(2, 3)),
    # data is not C-contiguous (the binding passes a copy), and shares memory with out.
    lambda buf: dict(data=buf[:12].reshape(2, 6)[:, ::2], updates=np.ones((1, 1), F32),
                     out=buf[:6].reshape(2, 3)),
    # the same, with out at data's address: still not data's layout.
    lambda buf: dict(data=buf[:12].reshape(3, 4).T[:2, :], updates=np.ones((1, 1), F32),
                     out=buf[:6].reshape(2, 3)),
])
def test_any_other_overlap_is_the_library_overlap_error(make):
    buf = np.zeros(16, F32)
    args = make(buf)
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.scatter_elements(args["data"], np.array([[0]]), args["updates"], out=args["out"])
    assert e.value.status == GK_STATUS_OVERLAP and e.value.status_name == "OVERLAP"
    assert "overlap" in e.value.message
    np.testing.assert_array_equal(buf, np.zeros(16, F32))


def test_out_must_match_data():
    data = np.zeros((2, 3), np.int32)
    for out in (np.zeros((3, 2), np.int32), np.zeros((2, 3), np.int64), np.zeros((3, 2), np.int32).T,
                data.reshape(3, 2)):
        with pytest.raises(ValueError, match="out must be"):
            gatherkit.scatter_nd(data, np.array([[0, 0]]), np.array([1], np.int32), out=out)
    with pytest.raises(TypeError, match="out must be a numpy array or an object with __dlpack__, not list"):
        gatherkit.scatter_nd(data, np.array([[0, 0]]), np.array([1], np.int32), out=[[0, 0, 0], [0, 0, 0]])
    readonly = data.copy()
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="out must be"):
        gatherkit.scatter_nd(readonly, np.array([[0, 0]]), np.array([1], np.int32), out=readonly)


# --- reductions --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,data,updates,reduction,expected", [
    (np.int8, [100], [100], "add", [-56]),
    (np.int8, [100], [100], "mul", [16]),
    (np.uint8, [200], [100], "add", [44]),
    (np.float16, [2048], [1, 1], "add", [2048]),
    (np.int32, [-3], [5, -7], "max", [5]),
    (np.uint64, [2**64 - 1], [0, 3], "min", [0]),
    (np.bool_, [False], [True, False], "add", [True]),   # OR
    (np.bool_, [True], [True, False], "mul", [False]),   # AND
    (np.bool_, [False], [False, True], "max", [True]),   # OR
    (np.bool_, [True], [True, False], "min", [False]),   # AND
    (np.complex64, [1 + 2j], [3 - 1j, 1j], "add", [4 + 2j]),
    (np.complex128, [1 + 2j], [3 - 1j], "mul", [5 + 5j]),
])
def test_reductions_in_the_dtype(dtype, data, updates, reduction, expected):
    data, updates = np.array(data, dtype), np.array(updates, dtype)
    out = gatherkit.scatter_elements(data, np.zeros(updates.shape, np.int64), updates, reduction=reduction)
    assert_bitwise_equal(out, np.array(expected, dtype))


def test_max_min_nan_and_signed_zero():
    """ONNX Runtime's rule: the existing value stays only when strictly greater (smaller)."""
    nan = np.float32("nan")
    data = np.array([nan, 1, nan, 3], F32)
    updates = np.array([1, nan, nan, 4], F32)
    indices = np.array([[0], [1], [2], [3]])
    # An existing NaN is replaced, a NaN update lands.
    np.testing.assert_array_equal(gatherkit.scatter_nd(data, indices, updates, reduction="max"), [1, nan, nan, 4])
    np.testing.assert_array_equal(gatherkit.scatter_nd(data, indices, updates, reduction="min"), [1, nan, nan, 3])
    out = gatherkit.scatter_elements(np.ones(2, F32), np.array([0, 0, 1, 1]), np.array([nan, 5, 5, nan], F32),
                                     reduction="max")
    np.testing.assert_array_equal(out, [5, nan])
    # A tie takes the update: the zeros' signs are the updates'.
    zeros = np.array([-0.0, 0.0], F32)
    for reduction in ("max", "min"):
        out = gatherkit.scatter_elements(zeros, np.array([0, 1]), np.array([0.0, -0.0], F32), reduction=reduction)
        assert list(np.signbit(out)) == [False, True]


def test_bfloat16_scatter():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = ml_dtypes.bfloat16
    data = np.array([256, 1], dtype=bf16)
    out = gatherkit.scatter_elements(data, np.array([0, 0, 1]), np.array([1, 1, 2], dtype=bf16), reduction="add")
    assert out.dtype == data.dtype
    np.testing.assert_array_equal(out.astype(np.float32), [256, 3])  # 256 + 1 rounds to 256 (8-bit significand)
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.scatter_nd(data, np.array([[0]]), np.array([1], dtype=bf16), version=11)
    assert e.value.status == GK_STATUS_UNSUPPORTED_DTYPE and "bfloat16" in e.value.message


# --- duplicates --------------------------------------------------------------------------------

@pytest.mark.parametrize("num_threads", [1, 2, 3, 0])
def test_duplicates_last_wins_in_row_major_order(num_threads):
    n = 100_000  # large enough to be split between threads
    indices = np.zeros(n, np.int64)
    indices[::2] = 1
    updates = np.arange(n, dtype=np.int64)
    out = gatherkit.scatter_elements(np.full(3, -1, np.int64), indices, updates, num_threads=num_threads)
    np.testing.assert_array_equal(out, [n - 1, n - 2, -1])
    rows = np.zeros((n, 1), np.int64)
    out = gatherkit.scatter_nd(np.zeros((2, 4), np.float64), rows, np.arange(4 * n, dtype=np.float64).reshape(n, 4),
                               num_threads=num_threads)
    np.testing.assert_array_equal(out, [[4 * n - 4, 4 * n - 3, 4 * n - 2, 4 * n - 1], [0, 0, 0, 0]])


# --- errors ------------------------------------------------------------------------------------

def test_first_bad_index_is_named_exactly():
    data = np.zeros((2, 3), F32)
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.scatter_elements(data, np.array([[0, 1], [5, -4]]), np.zeros((2, 2), F32), axis=1)
    assert e.value.status == GK_STATUS_INDEX_OUT_OF_BOUNDS and e.value.status_name == "INDEX_OUT_OF_BOUNDS"
    assert e.value.message == ("ScatterElements-18: indices[1, 0] = 5 is out of range; "
                               "allowed is [-3, 2] for data.shape[1] = 3")
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.scatter_nd(data, np.array([[0, 0], [1, 3], [2, 0]], np.int32), np.zeros(3, F32), version=16)
    assert e.value.status == GK_STATUS_INDEX_OUT_OF_BOUNDS
    assert e.value.message == ("ScatterND-16: index tuple indices[1, :], component 1 (indices[1, 1]) = 3 is out "
                               "of range; allowed is [-3, 2] for data.shape[1] = 3")


@pytest.mark.parametrize("call,status,fragment", [
    (lambda: gatherkit.scatter_elements(np.zeros(3, F32), [0], np.zeros(1, F32), version=10),
     GK_STATUS_UNSUPPORTED_VERSION, "10"),
    (lambda: gatherkit.scatter_nd(np.zeros(3, F32), [[0]], np.zeros(1, F32), flavor="openvino"),
     GK_STATUS_UNSUPPORTED_VERSION, "ScatterND"),
    (lambda: gatherkit.scatter_elements(np.zeros(3, F32), [0], np.zeros(1, np.float64)),
     GK_STATUS_UNSUPPORTED_DTYPE, "updates dtype is double but data dtype is float"),
    (lambda: gatherkit.scatter_elements(np.zeros(3, F32), [0.0], np.zeros(1, F32)),
     GK_STATUS_UNSUPPORTED_DTYPE, "indices dtype is double"),
    (lambda: gatherkit.scatter_elements(np.zeros((2, 2), F32), [0], np.zeros(1, F32)),
     GK_STATUS_INVALID_RANK, "rank"),
    (lambda: gatherkit.scatter_nd(np.zeros(3, F32), np.int64(0), np.zeros((), F32)),
     GK_STATUS_INVALID_RANK, "rank"),
    (lambda: gatherkit.scatter_elements(np.zeros(3, F32), [0], np.zeros(1, F32), axis=1),
     GK_STATUS_INVALID_ATTRIBUTE, "axis 1"),
    (lambda: gatherkit.scatter_elements(np.zeros(3, F32), [0], np.zeros(1, F32), reduction="add", version=13),
     GK_STATUS_INVALID_ATTRIBUTE, "reduction add"),
    (lambda: gatherkit.scatter_nd(np.zeros(3, F32), [[0]], np.zeros(1, F32), reduction="min", version=17),
     GK_STATUS_INVALID_ATTRIBUTE, "reduction min"),
    (lambda: gatherkit.scatter_nd(np.zeros(3, np.complex64), [[0]], np.zeros(1, np.complex64), reduction="max"),
     GK_STATUS_UNSUPPORTED_DTYPE, "max"),
    (lambda: gatherkit.scatter_nd(np.array(["a"], object), [[0]], np.array(["b"], object), reduction="add"),
     GK_STATUS_UNSUPPORTED_DTYPE, "string"),
    (lambda: gatherkit.scatter_elements(np.zeros(3, F32), [0, 1], np.zeros(1, F32)),
     GK_STATUS_SHAPE_MISMATCH, "updates"),
    (lambda: gatherkit.scatter_elements(np.zeros((2, 3), F32), np.zeros((3, 1), np.int64), np.zeros((3, 1), F32),
                                        axis=1),
     GK_STATUS_SHAPE_MISMATCH, "indices"),
    (lambda: gatherkit.scatter_nd(np.zeros(3, F32), [[0, 0]], np.zeros(1, F32)),
     GK_STATUS_SHAPE_MISMATCH, "indices"),
    (lambda: gatherkit.scatter_nd(np.zeros((2, 3), F32), [[0]], np.zeros((1, 2), F32)),
     GK_STATUS_SHAPE_MISMATCH, "updates"),
])
def test_errors_carry_status_and_message(call, status, fragment):
    with pytest.raises(gatherkit.GatherkitError) as e:
        call()
    assert e.value.status == status, e.value
    assert fragment in e.value.message, e.value.message


@pytest.mark.parametrize("reduction", ["sum", "ADD", "", None, 1])
def test_unknown_reduction_names_the_allowed_values(reduction):
    with pytest.raises(ValueError) as e:
        gatherkit.scatter_elements(np.zeros(3, F32), [0], np.zeros(1, F32), reduction=reduction)
    assert repr(reduction) in str(e.value) and "['none', 'add', 'mul', 'max', 'min']" in str(e.value)
    with pytest.raises(ValueError):
        gatherkit.scatter_nd(np.zeros(3, F32), [[0]], np.zeros(1, F32), reduction=reduction)


@pytest.mark.parametrize("call,name,error", [
    (lambda: gatherkit.scatter_elements([1, 2], [0], [5], axis=2**64), "axis", ValueError),
    (lambda: gatherkit.scatter_elements([1, 2], [0], [5], axis=0.0), "axis", TypeError),
    (lambda: gatherkit.scatter_nd([1, 2], [[0]], [5], version=2**32), "version", ValueError),
    (lambda: gatherkit.scatter_nd([1, 2], [[0]], [5], num_threads=-1), "num_threads", ValueError),
    (lambda: gatherkit.scatter_nd([1, 2], [[0]], [5], flavor="tflite"), "flavor", ValueError),
    (lambda: gatherkit.scatter_nd([1, 2], [[0]], None), "updates must be", TypeError),
])
def test_bad_python_arguments(call, name, error):
    with pytest.raises(error, match=name):
        call()


# --- random cases against a numpy loop reference ----------------------------------------------------

def combine(reduction, x, u):
    """f(existing, update) elementwise in the dtype, as gatherkit defines it: ints wrap, float16
    via float32 rounded once (numpy's float16 arithmetic), bool add/max = OR and mul/min = AND,
    max/min as ONNX Runtime: the existing value stays only when strictly greater (smaller)."""
    if reduction == "none":
        return u.copy()
    if x.dtype == np.bool_:
        return x | u if reduction in ("add", "max") else x & u
    with np.errstate(over="ignore", invalid="ignore"):
        if reduction == "add":
            return np.add(x, u)
        if reduction == "mul":
            return np.multiply(x, u)
    if x.dtype.kind in "iu":
        return np.maximum(x, u) if reduction == "max" else np.minimum(x, u)
    keeps = (x > u) if reduction == "max" else (x < u)
    return np.where(keeps, x, u)


def reference_scatter_elements(data, indices, updates, axis, reduction):
    out = data.copy()
    flat, flat_updates = out.reshape(-1), updates.reshape(-1)
    axis %= data.ndim
    for j, p in enumerate(np.ndindex(*indices.shape)):
        t = list(p)
        t[axis] = int(indices[p]) % data.shape[axis]
        f = np.ravel_multi_index(t, data.shape)
        flat[f:f + 1] = combine(reduction, flat[f:f + 1], flat_updates[j:j + 1])
    return out


def reference_scatter_nd(data, indices, updates, reduction):
    out = data.copy()
    for b in np.ndindex(*indices.shape[:-1]):
        target = out[tuple(int(c) for c in indices[b]) + (Ellipsis,)]
        target[...] = combine(reduction, target, updates[b + (Ellipsis,)])
    return out


RANDOM_DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int32, np.int64, np.bool_, np.complex64]


def random_values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":  # small integers: complex products stay exact, whatever the multiply's form
        return (rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape)).astype(dtype)
    values = rng.normal(0, 4, shape)
    special = rng.random(shape)
    values = np.where(special < 0.05, np.nan, np.where(special < 0.1, 0.0, np.where(special < 0.15, -0.0, values)))
    return values.astype(dtype)


def random_reduction(rng, dtype):
    allowed = ["none", "add", "mul"] + ([] if np.dtype(dtype).kind == "c" else ["max", "min"])
    return allowed[int(rng.integers(len(allowed)))]


def scatter_both_ways(rng, call, data, expected):
    """The library's result from a separate out (every thread count) and in place, bitwise."""
    for threads in (1, 2, 3):
        assert_bitwise_equal(call(data, None, threads), expected)
    in_place = data.copy()
    got = call(in_place, in_place, int(rng.integers(0, 3)))
    assert got is in_place
    assert_bitwise_equal(in_place, expected)


@pytest.mark.parametrize("seed", range(6))
def test_scatter_elements_matches_a_numpy_loop(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(40):
        dtype = RANDOM_DTYPES[int(rng.integers(len(RANDOM_DTYPES)))]
        shape = tuple(int(d) for d in rng.integers(1, 5, rng.integers(1, 5)))
        axis = int(rng.integers(len(shape)))
        s = shape[axis]
        ishape = tuple(int(rng.integers(0, 8)) if j == axis else int(rng.integers(0, d + 1))
                       for j, d in enumerate(shape))
        indices = rng.integers(-s, s, ishape).astype(np.int32 if rng.random() < 0.5 else np.int64)
        data, updates = random_values(rng, shape, dtype), random_values(rng, ishape, dtype)
        reduction = random_reduction(rng, dtype)
        attr = axis - len(shape) if rng.random() < 0.3 else axis
        expected = reference_scatter_elements(data, indices, updates, axis, reduction)
        scatter_both_ways(rng, lambda d, out, threads: gatherkit.scatter_elements(
            d, indices, updates, attr, reduction, out=out, num_threads=threads), data, expected)


@pytest.mark.parametrize("seed", range(6))
def test_scatter_nd_matches_a_numpy_loop(seed):
    rng = np.random.default_rng(200 + seed)
    for _ in range(40):
        dtype = RANDOM_DTYPES[int(rng.integers(len(RANDOM_DTYPES)))]
        shape = tuple(int(d) for d in rng.integers(1, 5, rng.integers(1, 5)))
        k = int(rng.integers(0, len(shape) + 1))
        batch = tuple(int(d) for d in rng.integers(0, 5, rng.integers(0, 3)))
        components = [rng.integers(-shape[j], shape[j], batch + (1,)) for j in range(k)]
        indices = (np.concatenate(components, axis=-1) if k else np.zeros(batch + (0,), np.int64))
        indices = indices.astype(np.int32 if rng.random() < 0.5 else np.int64)
        data, updates = random_values(rng, shape, dtype), random_values(rng, batch + shape[k:], dtype)
        reduction = random_reduction(rng, dtype)
        expected = reference_scatter_nd(data, indices, updates, reduction)
        scatter_both_ways(rng, lambda d, out, threads: gatherkit.scatter_nd(
            d, indices, updates, reduction, out=out, num_threads=threads), data, expected)
