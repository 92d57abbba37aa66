"""The Python binding against the spec examples, every numpy dtype, strings, and the errors."""

import numpy as np
import pytest

import gatherkit
from gatherkit._abi import (GK_STATUS_INDEX_OUT_OF_BOUNDS, GK_STATUS_INVALID_ATTRIBUTE,
                            GK_STATUS_SHAPE_MISMATCH, GK_STATUS_UNSUPPORTED_DTYPE,
                            GK_STATUS_UNSUPPORTED_VERSION)

ALL_DTYPES = [
    np.float32, np.uint8, np.int8, np.uint16, np.int16, np.int32, np.int64, np.bool_, np.float16,
    np.float64, np.uint32, np.uint64, np.complex64, np.complex128,
]


def test_version_is_semver():
    major, minor, patch = gatherkit.library_version().split(".")
    assert all(part.isdigit() for part in (major, minor, patch))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("flavor,version", [("onnx", 11), ("onnx", 13), ("onnx", 0), ("openvino", 6)])
def test_gather_elements_spec_examples(index_dtype, flavor, version):
    data = np.array([[1, 2], [3, 4]], dtype=np.float32)
    out = gatherkit.gather_elements(data, np.array([[0, 0], [1, 0]], dtype=index_dtype), axis=1,
                                    flavor=flavor, version=version)
    np.testing.assert_array_equal(out, [[1, 1], [4, 3]])
    assert out.dtype == np.float32
    data = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    out = gatherkit.gather_elements(data, np.array([[-1, -2, 0], [-2, 0, 0]], dtype=index_dtype), axis=0,
                                    flavor=flavor, version=version)
    np.testing.assert_array_equal(out, [[7, 5, 3], [4, 2, 3]])


def test_gather_nd_spec_examples():
    data = np.array([[0, 1], [2, 3]], dtype=np.int32)
    np.testing.assert_array_equal(gatherkit.gather_nd(data, np.array([[0, 0], [1, 1]])), [0, 3])
    np.testing.assert_array_equal(gatherkit.gather_nd(data, np.array([[1], [0]])), [[2, 3], [0, 1]])
    data = np.arange(8, dtype=np.int32).reshape(2, 2, 2)
    np.testing.assert_array_equal(gatherkit.gather_nd(data, np.array([[0, 1], [1, 0]])), [[2, 3], [4, 5]])
    np.testing.assert_array_equal(gatherkit.gather_nd(data, np.array([[[0, 1]], [[1, 0]]])), [[[2, 3]], [[4, 5]]])
    np.testing.assert_array_equal(gatherkit.gather_nd(data, np.array([[1], [0]]), batch_dims=1), [[2, 3], [4, 5]])


def test_gather_nd_openvino_5_folds_batch_dimensions():
    data = np.arange(48, dtype=np.int16).reshape(2, 3, 4, 2)
    indices = np.zeros((2, 3, 3, 2), dtype=np.int64)
    assert gatherkit.gather_nd(data, indices, 2, flavor="openvino", version=5).shape == (6, 3)
    assert gatherkit.gather_nd(data, indices, 2, flavor="openvino", version=8).shape == (2, 3, 3)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_numpy_dtype_matches_numpy_indexing(dtype):
    rng = np.random.default_rng(5)
    data = (rng.integers(0, 100, size=(4, 5, 3)) % (2 if dtype == np.bool_ else 100)).astype(dtype)
    indices = rng.integers(-5, 5, size=(4, 7, 3))
    expected = np.take_along_axis(data, np.where(indices < 0, indices + 5, indices), axis=1)
    np.testing.assert_array_equal(gatherkit.gather_elements(data, indices, axis=1, num_threads=2), expected)
    tuples = rng.integers(0, 4, size=(6, 1))
    np.testing.assert_array_equal(gatherkit.gather_nd(data, tuples), data[tuples[:, 0]])


def test_bfloat16_through_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    data = np.array([1.5, 2.5, 3.5], dtype=ml_dtypes.bfloat16)
    out = gatherkit.gather_elements(data, np.array([2, 0]))
    assert out.dtype == data.dtype
    np.testing.assert_array_equal(out.astype(np.float32), [3.5, 1.5])
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.gather_elements(data, np.array([0]), version=11)
    assert e.value.status == GK_STATUS_UNSUPPORTED_DTYPE and "bfloat16" in e.value.message


def test_strings_come_back_as_the_same_objects():
    words = np.array(["zero", "one", "two", "three"], dtype=object)
    out = gatherkit.gather_elements(words, np.array([3, -4, 1]))
    assert out.dtype == object
    assert list(out) == ["three", "zero", "one"]
    assert out[0] is words[3]
    out = gatherkit.gather_nd(np.array([[b"a", b"b"], [b"c", b"d"]], dtype=object), np.array([[1, 0]]))
    assert list(out) == [b"c"]


def test_errors_carry_status_and_message():
    data = np.arange(6, dtype=np.float64).reshape(2, 3)
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.gather_elements(data, np.array([[0, 3, 0]]), axis=1)
    assert e.value.status == GK_STATUS_INDEX_OUT_OF_BOUNDS and e.value.status_name == "INDEX_OUT_OF_BOUNDS"
    assert "indices[0, 1] = 3" in e.value.message and "[-3, 2]" in e.value.message
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.gather_elements(data, np.array([[0]]), axis=2)
    assert e.value.status == GK_STATUS_INVALID_ATTRIBUTE and "axis 2" in e.value.message
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.gather_nd(data, np.array([[0, 0, 0]]))
    assert e.value.status == GK_STATUS_SHAPE_MISMATCH
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.gather_elements(data, np.array([[0.0]]))
    assert e.value.status == GK_STATUS_UNSUPPORTED_DTYPE and "indices dtype is double" in e.value.message
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.gather_elements(data, np.array([[0]]), version=10)
    assert e.value.status == GK_STATUS_UNSUPPORTED_VERSION
    with pytest.raises(ValueError):
        gatherkit.gather_elements(data, np.array([[0]]), flavor="tflite")


def test_out_is_written_in_place_and_checked():
    data = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = np.full((2, 2), -1, dtype=np.int32)
    got = gatherkit.gather_elements(data, np.array([[2, 0], [1, 1]]), axis=1, out=out)
    assert got is out
    np.testing.assert_array_equal(out, [[2, 0], [4, 4]])
    with pytest.raises(ValueError):
        gatherkit.gather_elements(data, np.array([[2, 0], [1, 1]]), axis=1, out=np.empty((2, 3), np.int32))
    with pytest.raises(ValueError):
        gatherkit.gather_nd(data, np.array([[1]]), out=np.empty((1, 3), np.int64))


@pytest.mark.parametrize("call,name,error", [
    (lambda: gatherkit.gather_elements([1, 2], [0], axis=2**64), "axis", ValueError),
    (lambda: gatherkit.gather_elements([1, 2], [0], axis=-2**63 - 1), "axis", ValueError),
    (lambda: gatherkit.gather_nd([1, 2], [[0]], batch_dims=2**64), "batch_dims", ValueError),
    (lambda: gatherkit.gather_elements([1, 2], [0], version=2**32 + 11), "version", ValueError),
    (lambda: gatherkit.gather_elements([1, 2], [0], num_threads=-1), "num_threads", ValueError),
    (lambda: gatherkit.gather_elements([1, 2], [0], num_threads=2**64), "num_threads", ValueError),
    (lambda: gatherkit.gather_elements([1, 2], [0], axis=1.7), "axis", TypeError),
    (lambda: gatherkit.gather_elements([1, 2], [0], axis="1"), "axis", TypeError),
    (lambda: gatherkit.gather_elements([1, 2], [0], axis=True), "axis", TypeError),
    (lambda: gatherkit.gather_nd([1, 2], [[0]], batch_dims=0.0), "batch_dims", TypeError),
])
def test_integer_arguments_never_wrap(call, name, error):
    # ctypes would wrap these silently (axis=2**64 ran as axis 0, num_threads=-1 as SIZE_MAX).
    with pytest.raises(error, match=name):
        call()


def test_integer_arguments_accept_numpy_integers():
    out = gatherkit.gather_elements(np.array([5, 6]), np.array([1]), axis=np.int64(0), num_threads=np.uint8(1))
    np.testing.assert_array_equal(out, [6])


def test_empty_and_one_byte_strings_keep_their_objects():
    # CPython caches b'' and one-byte bytes objects, so str and bytes elements could share a
    # buffer: the output must still hold each input object, with its own type.
    items = ["a", b"a", "", b"", "\ud800"]
    data = np.empty(len(items), dtype=object)
    data[:] = items
    out = gatherkit.gather_elements(data, np.arange(len(items)), axis=0)
    assert [type(v) for v in out] == [type(v) for v in items]
    assert all(o is i for o, i in zip(out, data))
    out = gatherkit.gather_elements(data, np.array([4, 3, 2, 1, 0]), axis=0)
    assert all(o is i for o, i in zip(out, data[::-1]))


@pytest.mark.parametrize("data,indices,error,fragment", [
    (None, [0], TypeError, "data must be an array (numpy, or any object with __dlpack__) or array-like, not None"),
    ([1, 2], None, TypeError, "indices must be an array (numpy, or any object with __dlpack__) or array-like, not None"),
    ([2**70], [0], TypeError, "data[0] is the Python int"),
    ([1, 2], [2**70], TypeError, "indices[0] is the Python int"),
    (np.array(["a", "b"]), [0], TypeError, "dtype=object"),
    ([1, 2], np.array(["0"]), TypeError, "dtype=object"),
    (np.array([object()], dtype=object), [0], TypeError, "data[0] is a object"),
])
def test_bad_arguments_say_what_was_wrong_and_what_to_pass(data, indices, error, fragment):
    with pytest.raises(error) as raised:
        gatherkit.gather_elements(data, indices, axis=0)
    assert fragment in str(raised.value)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.complex128])
def test_gather_matches_numpy_take(index_dtype, dtype):
    rng = np.random.default_rng(3)
    for _ in range(40):
        shape = tuple(rng.integers(1, 6, rng.integers(1, 5)))
        axis = int(rng.integers(0, len(shape)))
        indices = rng.integers(-shape[axis], shape[axis], rng.integers(0, 4, rng.integers(0, 3))).astype(index_dtype)
        data = (rng.random(shape) * 100).astype(dtype)
        expected = np.take(data, indices, axis=axis)
        got = gatherkit.gather(data, indices, axis, num_threads=int(rng.integers(1, 4)))
        assert got.shape == expected.shape and np.array_equal(got, expected)


def test_gather_scalar_index_openvino_batch_dims_and_errors():
    data = np.arange(10, dtype=np.int32).reshape(2, 5)
    assert np.array_equal(gatherkit.gather(data, np.int64(1), axis=1), [1, 6])
    indices = np.array([[0, 0, 4], [4, 0, 0]], dtype=np.int64)
    got = gatherkit.gather(data + 1, indices, axis=1, batch_dims=-1, flavor="openvino")
    assert np.array_equal(got, [[1, 1, 5], [10, 6, 6]])
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.gather(data, np.array([0, 5]), axis=1)
    assert e.value.status == GK_STATUS_INDEX_OUT_OF_BOUNDS and "indices[1] = 5" in str(e.value)
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.gather(data, np.array([0]), axis=1, batch_dims=1)
    assert e.value.status == GK_STATUS_INVALID_ATTRIBUTE and "must be 0" in str(e.value)
