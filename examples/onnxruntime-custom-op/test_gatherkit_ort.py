"""gatherkit's custom op library inside ONNX Runtime, checked against ONNX Runtime's own operators.

Each case builds two one-node ONNX models with the onnx package: the standard GatherElements or
GatherND (default domain, opset 13) and the same node in the custom domain "ai.gatherkit"
(opset 1), which runs gatherkit through libgatherkit_ort.so (registered with
SessionOptions.register_custom_ops_library). Both run in ONNX Runtime on the same inputs; outputs
must be equal bit for bit, and an invalid input must fail in both, with gatherkit's message in the
custom op's error.

Run: python3 -m pytest -q test_gatherkit_ort.py   (or python3 test_gatherkit_ort.py)
The library: $GATHERKIT_ORT_LIB, default build/libgatherkit_ort.so next to this file.
"""

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ.get("GATHERKIT_ORT_LIB", os.path.join(HERE, "build", "libgatherkit_ort.so"))
DOMAIN = "ai.gatherkit"


def make_model(op, data, indices, domain, **attrs):
    """A one-node model out = op(data, indices): inputs with their exact shapes, the output with
    its rank and symbolic dimensions."""
    data_type = helper.np_dtype_to_tensor_dtype(data.dtype)
    index_type = helper.np_dtype_to_tensor_dtype(indices.dtype)
    node = helper.make_node(op, ["data", "indices"], ["out"], domain=domain, **attrs)
    graph = helper.make_graph(
        [node],
        f"{op}_{domain or 'onnx'}",
        [
            helper.make_tensor_value_info("data", data_type, list(data.shape)),
            helper.make_tensor_value_info("indices", index_type, list(indices.shape)),
        ],
        [helper.make_tensor_value_info("out", data_type, [f"o{i}" for i in range(out_rank(op, data, indices, attrs))])],
    )
    opsets = [helper.make_opsetid("", 13)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8  # readable by every ONNX Runtime from 1.10 on
    if not domain:
        onnx.checker.check_model(model)
    return model.SerializeToString()


def out_rank(op, data, indices, attrs):
    if op == "GatherElements":
        return data.ndim
    # GatherND: q + r - k - 1 - batch_dims
    return indices.ndim + data.ndim - indices.shape[-1] - 1 - attrs.get("batch_dims", 0)


def session(model, custom, threads=1):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.log_severity_level = 3
    if custom:
        so.register_custom_ops_library(LIB)
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def run_both(op, data, indices, threads=1, **attrs):
    feeds = {"data": data, "indices": indices}
    # ONNX GatherND takes int64 indices only: the reference gets them widened.
    wide = indices.astype(np.int64) if op == "GatherND" else indices
    expected = session(make_model(op, data, wide, "", **attrs), False).run(None, {"data": data, "indices": wide})[0]
    got = session(make_model(op, data, indices, DOMAIN, **attrs), True, threads).run(None, feeds)[0]
    return expected, got


def assert_same(expected, got):
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    # Bitwise: NaN payloads and -0.0 included.
    assert expected.tobytes() == got.tobytes()


# Every ONNX Runtime tensor type numpy has (ORT has no complex tensors; bfloat16 needs ml_dtypes and
# ORT's Python binding does not take it as a feed).
DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32,
          np.uint32, np.int64, np.uint64, np.bool_]


def sample(dtype, shape, rng):
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(n).astype(dtype).reshape(shape)
    return rng.integers(0, 100, n).astype(dtype).reshape(shape)


@pytest.fixture(scope="module", autouse=True)
def library_exists():
    if not os.path.exists(LIB):
        pytest.fail(f"{LIB} not built: see README.md in {HERE}")


def test_readme_example():
    # gatherkit's README example: GatherElements-13, axis 0, negative indices.
    data = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    indices = np.array([[-1, -2, 0], [-2, 0, 0]], dtype=np.int64)
    expected, got = run_both("GatherElements", data, indices, axis=0)
    assert_same(expected, got)
    assert got.tolist() == [[7, 5, 3], [4, 2, 3]]


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_gather_elements_dtypes(dtype, index_dtype):
    rng = np.random.default_rng(1)
    data = sample(dtype, (4, 5, 6), rng)
    for axis in (0, 1, 2, -1, -3):
        dim = data.shape[axis]
        shape = list(data.shape)
        shape[axis] = 7
        shape[(axis + 1) % 3] -= 1  # indices may be smaller than data off the axis
        indices = rng.integers(-dim, dim, shape).astype(index_dtype)
        expected, got = run_both("GatherElements", data, indices, axis=axis)
        assert_same(expected, got)
        # And numpy's meaning of it, independently of ONNX Runtime.
        positive = np.where(indices < 0, indices + dim, indices)
        np.testing.assert_array_equal(got, np.take_along_axis(_crop(data, shape, axis), positive, axis))


def _crop(data, index_shape, axis):
    """data cut to the indices' extent off the axis (what take_along_axis needs)."""
    return data[tuple(slice(None) if d == axis % data.ndim else slice(0, index_shape[d]) for d in range(data.ndim))]


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_gather_nd_dtypes(dtype, index_dtype):
    rng = np.random.default_rng(2)
    data = sample(dtype, (3, 4, 5, 2), rng)
    # (batch_dims, indices shape): tuples of 1..r-b values, with and without batch dims.
    for batch_dims, ishape in [(0, (6, 1)), (0, (2, 3, 2)), (0, (5, 4)), (1, (3, 2, 2)), (2, (3, 4, 1)),
                               (2, (3, 4, 7, 2)), (1, (3, 3))]:
        k = ishape[-1]
        bounds = np.array(data.shape[batch_dims:batch_dims + k])
        indices = (rng.integers(0, 1 << 30, ishape) % np.broadcast_to(2 * bounds, ishape) - bounds).astype(index_dtype)
        expected, got = run_both("GatherND", data, indices, batch_dims=batch_dims)
        assert_same(expected, got)


def test_gather_nd_spec_examples():
    # The ONNX GatherND examples 4 and 5.
    data = np.array([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], dtype=np.int32)
    indices = np.array([[[0, 1]], [[1, 0]]], dtype=np.int64)
    expected, got = run_both("GatherND", data, indices)
    assert_same(expected, got)
    assert got.tolist() == [[[2, 3]], [[4, 5]]]
    indices = np.array([[1], [0]], dtype=np.int64)
    expected, got = run_both("GatherND", data, indices, batch_dims=1)
    assert_same(expected, got)
    assert got.tolist() == [[2, 3], [4, 5]]


def test_empty_tensors():
    data = np.zeros((3, 0), dtype=np.float32)
    indices = np.zeros((2, 0), dtype=np.int64)
    assert_same(*run_both("GatherElements", data, indices, axis=0))
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    indices = np.zeros((0, 1), dtype=np.int64)
    assert_same(*run_both("GatherND", data, indices))


@pytest.mark.parametrize("threads", [1, 2])
def test_large_uses_ort_thread_pool(threads):
    # Big enough (~8 MiB out) for gatherkit to split it into tasks run by ORT's intra-op pool.
    rng = np.random.default_rng(3)
    data = rng.standard_normal((512, 4096)).astype(np.float32)
    indices = rng.integers(-512, 512, (512, 4096)).astype(np.int64)
    assert_same(*run_both("GatherElements", data, indices, threads=threads, axis=0))
    indices = rng.integers(0, 512, (1024, 1)).astype(np.int64)
    assert_same(*run_both("GatherND", data, indices, threads=threads))


def _errors(op, data, indices, **attrs):
    feeds = {"data": data, "indices": indices}
    with pytest.raises(Exception) as standard:
        session(make_model(op, data, indices, "", **attrs), False).run(None, feeds)
    with pytest.raises(Exception) as custom:
        session(make_model(op, data, indices, DOMAIN, **attrs), True).run(None, feeds)
    return str(standard.value), str(custom.value)


def test_index_out_of_bounds_is_an_ort_error():
    data = np.arange(9, dtype=np.float32).reshape(3, 3)
    indices = np.array([[0, 3, 0]], dtype=np.int64)
    _, message = _errors("GatherElements", data, indices, axis=0)
    assert "ai.gatherkit GatherElements (gatherkit): index out of bounds" in message
    assert "3" in message
    indices = np.array([[0, -4]], dtype=np.int64)
    _, message = _errors("GatherND", data, indices)
    assert "ai.gatherkit GatherND (gatherkit): index out of bounds" in message


def test_bad_attribute_and_shape_are_ort_errors():
    data = np.arange(9, dtype=np.float32).reshape(3, 3)
    indices = np.zeros((3, 3), dtype=np.int64)
    with pytest.raises(Exception, match=r"ai\.gatherkit GatherElements \(gatherkit\): invalid attribute"):
        session(make_model("GatherElements", data, indices, DOMAIN, axis=2), True).run(
            None, {"data": data, "indices": indices})
    indices = np.zeros((3, 1, 1), dtype=np.int64)  # rank differs from data's
    with pytest.raises(Exception, match=r"ai\.gatherkit GatherElements \(gatherkit\): "):
        session(make_model("GatherElements", data, indices, DOMAIN, axis=0), True).run(
            None, {"data": data, "indices": indices})
    indices = np.zeros((2, 4), dtype=np.int64)  # tuple longer than data's rank
    with pytest.raises(Exception, match=r"ai\.gatherkit GatherND \(gatherkit\): "):
        session(make_model("GatherND", data, indices, DOMAIN), True).run(
            None, {"data": data, "indices": indices})


def test_string_tensors_are_refused():
    data = np.array([["a", "b"], ["c", "d"]], dtype=object)
    indices = np.array([[1, 0]], dtype=np.int64)
    model = make_model("GatherElements", data, indices, DOMAIN, axis=0)
    with pytest.raises(Exception, match="string tensor"):
        session(model, True).run(None, {"data": data, "indices": indices})


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"] + sys.argv[1:]))
