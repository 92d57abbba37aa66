"""The direct path (numpy arrays the library reads where they are, dense or strided; the output's
shape from the operator's formula; one C call) against the general path (shape query, ctypes
descriptors, then the call), which switching `_DIRECT` off forces."""

import numpy as np
import pytest

import dlpack_producer as dp
import gatherkit
from gatherkit._abi import GK_STATUS_INDEX_OUT_OF_BOUNDS

QUERIES = ("gk_gather_elements_output_shape", "gk_gather_nd_output_shape", "gk_gather_output_shape")


@pytest.fixture
def queries(monkeypatch):
    """Counts the calls of the three shape queries (each still answers)."""
    counts = dict.fromkeys(QUERIES, 0)
    for name in QUERIES:
        query = getattr(gatherkit._lib, name)

        def counting(*args, _query=query, _name=name):
            counts[_name] += 1
            return _query(*args)

        monkeypatch.setattr(gatherkit._lib, name, counting)
    return counts


def three_gathers(data, indices2d):
    """GatherElements along axis 1, GatherND of 1-tuples, Gather along axis 0."""
    return [
        gatherkit.gather_elements(data, indices2d, axis=1),
        gatherkit.gather_nd(data, np.ascontiguousarray(indices2d[:, :1])),
        gatherkit.gather(data, indices2d, axis=0),
    ]


def test_dense_numpy_inputs_take_one_call_without_a_shape_query(queries):
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    indices = np.array([[0, 2], [-1, 1], [2, 0]], dtype=np.int64)
    got = three_gathers(data, indices)
    assert queries == dict.fromkeys(QUERIES, 0)
    np.testing.assert_array_equal(got[0], np.take_along_axis(data, np.where(indices < 0, indices + 4, indices), 1))
    np.testing.assert_array_equal(got[1], data[[0, 2, 2]])
    np.testing.assert_array_equal(got[2], np.take(data, indices, axis=0))
    # A transposed input is read through its strides, on the direct path too.
    got = gatherkit.gather_elements(data.T, indices.T, axis=0)
    assert queries == dict.fromkeys(QUERIES, 0)
    np.testing.assert_array_equal(got, np.take_along_axis(data.T, np.where(indices.T < 0, indices.T + 4, indices.T), 0))
    # A big-endian one is copied first, on the general path.
    got = gatherkit.gather_elements(data.astype(">f4"), indices, axis=1)
    assert queries["gk_gather_elements_output_shape"] == 1
    np.testing.assert_array_equal(got, np.take_along_axis(data, np.where(indices < 0, indices + 4, indices), 1))


def test_openvino_gather_nd_and_gather_keep_the_query(queries):
    data = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    gatherkit.gather_nd(data, np.zeros((2, 1), np.int64), flavor="openvino")
    gatherkit.gather(data, np.zeros((2, 1), np.int64), axis=1, batch_dims=0, flavor="openvino")
    assert queries["gk_gather_nd_output_shape"] == 1 and queries["gk_gather_output_shape"] == 1


def test_a_formula_that_misses_hands_the_call_to_the_general_path(queries, monkeypatch):
    monkeypatch.setattr(gatherkit, "_gather_elements_shape", lambda d, i, a: i + (1,))
    data = np.arange(6, dtype=np.int32).reshape(2, 3)
    indices = np.array([[1, 0, 1]], dtype=np.int32)
    got = gatherkit.gather_elements(data, indices, axis=0)
    np.testing.assert_array_equal(got, [[3, 1, 5]])
    assert queries["gk_gather_elements_output_shape"] == 1
    out = np.full((1, 3), -1, np.int32)
    assert gatherkit.gather_elements(data, indices, axis=0, out=out) is out
    np.testing.assert_array_equal(out, [[3, 1, 5]])


def laid_out(array, rng):
    """``array``'s values in a layout drawn at random: dense, reversed (negative strides),
    every other element of a larger buffer, or column-major; or its first row broadcast along
    the first axis (a zero stride: other values, the same for both paths)."""
    kind = rng.integers(5)
    if kind == 0 or array.ndim == 0:
        return array
    if kind == 1:
        flip = (slice(None, None, -1),) * array.ndim
        return np.ascontiguousarray(array[flip])[flip]
    if kind == 2:
        wide = np.zeros(array.shape[:-1] + (2 * array.shape[-1],), array.dtype)
        wide[..., ::2] = array
        return wide[..., ::2]
    if kind == 3:
        return np.asfortranarray(array)
    return np.broadcast_to(array[:1], array.shape)


def outcome(call):
    try:
        return call()
    except gatherkit.GatherkitError as e:
        return (e.status, e.message)


def general_outcome(monkeypatch, call):
    """The outcome of `call` with the direct path switched off: the general path, on the same
    inputs (nothing copied)."""
    with monkeypatch.context() as m:
        m.setattr(gatherkit, "_DIRECT", False)
        return outcome(call)


try:
    import ml_dtypes

    BFLOAT16 = [ml_dtypes.bfloat16]
except ImportError:  # pragma: no cover
    BFLOAT16 = []


def same(a, b):
    if isinstance(a, tuple) or isinstance(b, tuple):
        return a == b
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_direct_and_general_paths_agree_on_results_and_errors(seed, queries, monkeypatch):
    rng = np.random.default_rng(seed)
    dtypes = [np.uint8, np.int16, np.float16, np.float32, np.int64, np.complex128, np.bool_] + BFLOAT16
    for _ in range(150):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(n) for n in rng.integers(0 if rng.random() < 0.1 else 1, 5, rank))
        dtype = dtypes[rng.integers(len(dtypes))]
        data = laid_out(rng.integers(0, 100, shape).astype(dtype), rng)
        if rng.random() < 0.3:
            data.flags.writeable = False  # a read-only input is read in place too
        index_dtype = np.int32 if rng.random() < 0.5 else np.int64
        axis = int(rng.integers(-rank - 1, rank + 1))  # sometimes out of range
        extent = shape[axis] if -rank <= axis < rank else 3
        # Mostly valid values, some negative, now and then one out of range.
        high = extent + (1 if rng.random() < 0.15 else 0)
        op = rng.integers(3)
        if op == 0:
            idx_shape = tuple(min(n, int(rng.integers(0, 5))) if d != axis % rank else int(rng.integers(0, 5))
                              for d, n in enumerate(shape))
            if rng.random() < 0.1:
                idx_shape = idx_shape + (1,)  # a rank mismatch
            indices = laid_out(rng.integers(-extent, max(high, 1), idx_shape).astype(index_dtype), rng)

            def call(out=None):
                return gatherkit.gather_elements(data, indices, axis=axis, out=out)
        elif op == 1:
            batch_dims = int(rng.integers(0, min(rank, 2)))
            k = int(rng.integers(0, rank - batch_dims + (1 if rng.random() < 0.1 else 0)))
            idx_shape = shape[:batch_dims] + tuple(int(n) for n in rng.integers(0, 4, int(rng.integers(0, 2)))) + (k,)
            bound = min(shape[batch_dims:batch_dims + k] or (1,))
            values = rng.integers(-bound, max(bound + (high - extent), 1), idx_shape)
            indices = laid_out(values.astype(index_dtype), rng)

            def call(out=None):
                return gatherkit.gather_nd(data, indices, batch_dims=batch_dims, out=out)
        else:
            idx_shape = tuple(int(n) for n in rng.integers(0, 4, int(rng.integers(0, 3))))
            indices = laid_out(rng.integers(-extent, max(high, 1), idx_shape).astype(index_dtype), rng)
            batch_dims = 1 if rng.random() < 0.05 else 0  # ONNX refuses any other than 0

            def call(out=None):
                return gatherkit.gather(data, indices, axis=axis, batch_dims=batch_dims, out=out)
        general = general_outcome(monkeypatch, call)
        queries.update(dict.fromkeys(QUERIES, 0))
        direct = outcome(call)
        assert same(direct, general), (op, shape, idx_shape, axis, dtype, direct, general)
        if not isinstance(direct, tuple):
            # A call that succeeds made no shape query: the formula applied.
            assert sum(queries.values()) == 0, (op, shape, idx_shape, axis)
            out = np.empty_like(direct)
            assert call(out) is out and same(out, general)


def test_the_direct_path_writes_a_given_out_and_reports_bad_indices():
    data = np.arange(20, dtype=np.float64).reshape(4, 5)
    indices = np.array([3, -4, 1], dtype=np.int64)
    out = np.zeros((4, 3))
    assert gatherkit.gather(data, indices, axis=1, out=out) is out
    np.testing.assert_array_equal(out, data[:, [3, 1, 1]])
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.gather(data, np.array([0, 5]), axis=1, out=out[:, :2].copy())
    assert e.value.status == GK_STATUS_INDEX_OUT_OF_BOUNDS and "indices[1] = 5" in e.value.message
    # An out of another shape is refused as before, naming the shape wanted.
    with pytest.raises(ValueError, match=r"out has shape \(4, 2\).*shape \(4, 3\)"):
        gatherkit.gather(data, indices, axis=1, out=np.zeros((4, 2)))


@pytest.fixture
def descriptors_made(monkeypatch):
    """The inputs (by argument name) the general path made descriptor objects for."""
    made = []
    prepared = gatherkit._Prepared

    def counting(*args, **kwargs):
        made.append(args[1])
        return prepared(*args, **kwargs)

    monkeypatch.setattr(gatherkit, "_Prepared", counting)
    return made


def test_dense_scatters_make_no_descriptor_objects(descriptors_made):
    made = descriptors_made
    data = np.arange(8, dtype=np.int32)
    got = gatherkit.scatter_elements(data, np.array([1, 3]), np.array([50, 70], np.int32))
    np.testing.assert_array_equal(got, [0, 50, 2, 70, 4, 5, 6, 7])
    got = gatherkit.scatter_nd(data, np.array([[2], [2]]), np.array([5, 6], np.int32), "add")
    np.testing.assert_array_equal(got, [0, 1, 13, 3, 4, 5, 6, 7])
    assert made == []
    # A list of updates is made into an array first: the general path.
    gatherkit.scatter_elements(np.arange(3), np.array([1]), [9])
    assert made == ["data", "indices", "updates"]


@pytest.mark.parametrize("seed", range(3))
def test_direct_and_general_scatters_agree_on_results_and_errors(seed, monkeypatch):
    rng = np.random.default_rng(100 + seed)
    for _ in range(150):
        rank = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 5, rank))
        dtype = [np.uint8, np.float32, np.int64, np.float16][rng.integers(4)]
        data = rng.integers(0, 50, shape).astype(dtype)
        reduction = ["none", "add", "mul", "max", "min"][rng.integers(5)]
        index_dtype = np.int32 if rng.random() < 0.5 else np.int64
        if rng.random() < 0.5:
            axis = int(rng.integers(-rank, rank))
            extent = shape[axis]
            idx_shape = tuple(int(rng.integers(1, n + 1)) for n in shape)
            indices = rng.integers(-extent, extent + (1 if rng.random() < 0.15 else 0), idx_shape).astype(index_dtype)
            updates = rng.integers(0, 50, idx_shape).astype(dtype if rng.random() < 0.95 else np.int16)

            def call(out=None):
                return gatherkit.scatter_elements(data, indices, updates, axis, reduction, out=out)
        else:
            k = int(rng.integers(1, rank + 1))
            lead = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(1, 3))))
            bound = min(shape[:k])
            indices = rng.integers(-bound, bound + (1 if rng.random() < 0.15 else 0), lead + (k,)).astype(index_dtype)
            updates = rng.integers(0, 50, lead + shape[k:]).astype(dtype)

            def call(out=None):
                return gatherkit.scatter_nd(data, indices, updates, reduction, out=out)
        general = general_outcome(monkeypatch, call)
        direct = outcome(call)
        assert same(direct, general), (shape, dtype, reduction, direct, general)
        if isinstance(direct, tuple):
            continue
        # In place: only the updated elements are written, the result is the same.
        in_place = data.copy()
        data, kept = in_place, data
        result = outcome(lambda: call(out=in_place))
        data = kept
        assert result is in_place and same(in_place, general)


def test_a_scatter_into_an_overlapping_out_is_refused_by_the_library():
    buffer = np.arange(9, dtype=np.int32)
    data, out = buffer[:8], buffer[1:]
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.scatter_elements(data, np.array([0]), np.array([5], np.int32), out=out)
    assert e.value.status_name == "OVERLAP"
    np.testing.assert_array_equal(buffer, np.arange(9))


def test_dlpack_inputs_take_the_direct_path_and_lists_the_general(descriptors_made):
    made = descriptors_made
    data = np.arange(12, dtype=np.int16).reshape(3, 4)
    indices = np.array([[2, 0, 1, 2]], dtype=np.int64)
    got = gatherkit.gather_elements(dp.NumpyExporter(data), dp.NumpyExporter(indices), axis=0)
    np.testing.assert_array_equal(got, [[8, 1, 6, 11]])
    target = np.zeros(12, np.int16)
    exported = [dp.NumpyExporter(a) for a in (target, np.array([5]), np.array([7], np.int16))]
    assert gatherkit.scatter_elements(*exported, out=target) is target
    assert target[5] == 7 and made == []
    # A transposed DLPack input is read through its strides, directly too.
    column = np.ascontiguousarray(indices.T[:, :1])
    got = gatherkit.gather_elements(dp.NumpyExporter(data.T), dp.NumpyExporter(column), axis=1)
    np.testing.assert_array_equal(got, np.take_along_axis(data.T, indices.T[:, :1], 1))
    assert made == []
    # With a list of indices, the general path (and the same result).
    got = gatherkit.gather_elements(dp.NumpyExporter(data.T), column.tolist(), axis=1)
    np.testing.assert_array_equal(got, np.take_along_axis(data.T, indices.T[:, :1], 1))
    assert made == ["data", "indices"]


def test_a_dlpack_input_is_exported_once_whichever_path_the_call_takes():
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    dense, strided = dp.view(data), dp.view(data, (slice(None), slice(None, None, 2)))
    indices = dp.view(np.array([[0, 1, 2], [3, 3, 0]], dtype=np.int64))
    np.testing.assert_array_equal(gatherkit.gather_elements(dense, indices, axis=0),
                                  np.take_along_axis(data[:, :3], np.array([[0, 1, 2], [3, 3, 0]]), 0))
    np.testing.assert_array_equal(gatherkit.gather_elements(strided, indices, axis=0),
                                  np.take_along_axis(data[:, ::2], np.array([[0, 1, 2], [3, 3, 0]]), 0))
    # Strided data and a list: both general, data read once.
    gatherkit.gather(strided, [1, 0], axis=1)
    assert (dense.exports, strided.exports, indices.exports) == (1, 2, 2)


def test_zero_dimensional_inputs_give_the_general_paths_errors(monkeypatch):
    scalar, vector = np.array(3.0), np.arange(4.0)
    calls = [
        lambda: gatherkit.gather_elements(scalar, np.array(0)),
        lambda: gatherkit.gather_nd(scalar, np.array(0)),
        lambda: gatherkit.gather(scalar, np.array(0)),
        lambda: gatherkit.gather(vector, np.array(2)),
        lambda: gatherkit.gather(vector, np.array(-5)),
    ]
    for call in calls:
        assert same(outcome(call), general_outcome(monkeypatch, call))
    assert gatherkit.gather(vector, np.array(2)).shape == ()


def test_a_large_output_is_made_only_after_the_library_checked_the_call(queries):
    # 10^10 float64 out of a bad call: the library's error, not numpy's MemoryError.
    with pytest.raises(gatherkit.GatherkitError) as e:
        gatherkit.gather(np.zeros((2, 100000)), np.zeros(100000, np.float32), axis=0)
    assert e.value.status_name == "UNSUPPORTED_DTYPE"
    # A good call with a 16 MiB output asks for its shape first, then gathers.
    data = np.ones((2, 1 << 20), np.float64)
    assert gatherkit.gather(data, np.array([1, 0]), axis=0).shape == (2, 1 << 20)
    assert queries["gk_gather_output_shape"] == 2


def test_views_the_library_cannot_read_in_place_go_the_general_way(queries, monkeypatch):
    # Strides of a byte count that is no whole number of elements (complex128 over a float64
    # buffer, rows 24 bytes apart), and a misaligned reversed view: copied on the general path,
    # or refused under copy=False.
    pairs = np.arange(12.0).reshape(4, 3)[:, :2].view(np.complex128)
    assert pairs.flags.aligned and pairs.strides == (24, 16)
    raw = np.arange(40, dtype=np.uint8).tobytes()
    misaligned = np.frombuffer(raw, dtype=np.int32, count=9, offset=1)[::-1]
    assert not misaligned.flags.aligned
    for data in (pairs, misaligned):
        indices = np.zeros((1,) + data.shape[1:], np.int64)
        queries.update(dict.fromkeys(QUERIES, 0))
        got = gatherkit.gather_elements(data, indices, axis=0)
        assert queries["gk_gather_elements_output_shape"] == 1
        assert same(got, general_outcome(monkeypatch, lambda: gatherkit.gather_elements(data, indices, axis=0)))
        np.testing.assert_array_equal(got, data[:1])
        with pytest.raises(ValueError, match="copy=False"):
            gatherkit.gather_elements(data, indices, axis=0, copy=False)


def test_a_dimension_of_one_with_an_odd_stride_is_read_in_place_on_both_paths(monkeypatch):
    # numpy calls it contiguous: its stride is never used. Both paths read it as it is, also
    # under copy=False.
    base = np.arange(8, dtype=np.int32)
    odd = np.lib.stride_tricks.as_strided(base, shape=(1, 4), strides=(3, 4))
    indices = np.array([[0, 0, 0, 0]])
    direct = gatherkit.gather_elements(odd, indices, axis=0, copy=False)
    general = general_outcome(monkeypatch, lambda: gatherkit.gather_elements(odd, indices, axis=0, copy=False))
    assert same(direct, general) and direct.tolist() == [[0, 1, 2, 3]]
