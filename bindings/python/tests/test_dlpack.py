"""DLPack inputs and outputs, and the copy= rule: arrays are read where they are when the C ABI can
read them (dense row-major, or any layout of whole-element strides for the gathers' inputs, in
native byte order), and copied otherwise only when copy= allows it.

The producers are numpy's own ``__dlpack__`` (through a wrapper, so that the binding cannot take
its numpy path), a pure-Python producer (tests/dlpack_producer.py) for the layouts numpy never
exports, and PyTorch when it is installed.
"""

import gc

import numpy as np
import pytest

import gatherkit
from gatherkit import GatherkitError
import dlpack_producer as dp

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None


NumpyExporter = dp.NumpyExporter


DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128]


def sample(dtype, shape, rng):
    values = rng.integers(0, 100, size=shape)
    return (values % 2 == 1) if np.dtype(dtype) == np.bool_ else values.astype(dtype)


def input_address(value, copy=None):
    """The address the binding hands the C ABI for ``value`` as data."""
    return gatherkit._Prepared(value, "data", copy).tensor.data


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_dlpack_capsules_give_the_numpy_result_for_every_dtype(dtype):
    rng = np.random.default_rng(1)
    data = sample(dtype, (4, 5), rng)
    indices = rng.integers(-4, 4, size=(3, 5))
    expected = gatherkit.gather_elements(data, indices, axis=0)
    got = gatherkit.gather_elements(NumpyExporter(data), NumpyExporter(indices), axis=0)
    assert got.dtype == data.dtype and np.array_equal(got, expected)
    assert np.array_equal(expected, np.take_along_axis(data, indices % 4, axis=0))


@pytest.mark.parametrize("versioned", [False, True], ids=["dltensor", "dltensor_versioned"])
@pytest.mark.parametrize("dtype", DTYPES + ([ml_dtypes.bfloat16] if ml_dtypes else []), ids=lambda d: np.dtype(d).name)
def test_dense_dlpack_inputs_are_read_in_place_whatever_the_dtype(dtype, versioned):
    rng = np.random.default_rng(2)
    data = sample(np.float32, (6, 3), rng).astype(dtype) if np.dtype(dtype).name == "bfloat16" \
        else sample(dtype, (6, 3), rng)
    producer = dp.view(data, versioned=versioned)
    assert input_address(producer, copy=False) == data.ctypes.data  # no copy, not even with copy=None
    assert input_address(producer) == data.ctypes.data
    indices = np.array([5, -6, 2])
    got = gatherkit.gather(producer, dp.view(indices, versioned=versioned), axis=0, copy=False)
    assert got.dtype == data.dtype
    assert np.array_equal(got.view(np.uint8), data[[5, 0, 2]].view(np.uint8))


LAYOUTS = {
    "transposed": lambda a: a.T,
    "stepped": lambda a: a[::2, 1::3],
    "negative strides": lambda a: a[::-1, ::-2],
    "offset slice": lambda a: a[1:, 2:],
    "broadcast row": lambda a: np.broadcast_to(a[1], (5, a.shape[1])),
    "broadcast column": lambda a: np.broadcast_to(a[:, 2:3], (a.shape[0], 4)),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("where", ["data", "indices"])
@pytest.mark.parametrize("through", ["numpy", "dlpack"])
def test_gathers_read_strided_inputs_where_they_are(layout, where, through):
    rng = np.random.default_rng(3)
    if where == "data":
        base = rng.integers(0, 1000, size=(6, 8)).astype(np.int64)
        data_view = LAYOUTS[layout](base)
        index_base = rng.integers(-data_view.shape[0], data_view.shape[0], size=(3, data_view.shape[1]))
        index_view = index_base
    else:
        index_base = rng.integers(-9, 9, size=(6, 8))
        index_view = LAYOUTS[layout](index_base)
        base = rng.integers(0, 1000, size=(9, index_view.shape[1])).astype(np.float32)
        data_view = base
    expected = gatherkit.gather_elements(np.ascontiguousarray(data_view), np.ascontiguousarray(index_view), axis=0)
    assert np.array_equal(expected, np.take_along_axis(data_view, index_view % data_view.shape[0], axis=0))
    wrap = _producer_of if through == "dlpack" else (lambda b, layout: layout(b))
    data = wrap(base, LAYOUTS[layout]) if where == "data" else data_view
    indices = wrap(index_base, LAYOUTS[layout]) if where == "indices" else index_view
    for copy in (None, False, True):
        assert np.array_equal(gatherkit.gather_elements(data, indices, axis=0, copy=copy), expected)
    # Nothing was copied: the library got the view's own address and strides.
    view = data_view if where == "data" else index_view
    prepared = gatherkit._Prepared(data if where == "data" else indices, where, False, strided=True)
    assert prepared.strided.data == view.__array_interface__["data"][0]
    assert tuple(prepared.strided.strides[k] for k in range(view.ndim)) == \
        tuple(s // view.itemsize for s in view.strides)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_scatters_copy_strided_inputs_only_when_copy_allows_it(layout):
    rng = np.random.default_rng(4)
    base = rng.integers(0, 100, size=(6, 8)).astype(np.int32)
    updates = LAYOUTS[layout](base)
    data = np.zeros((7, updates.shape[1]), np.int32)
    indices = rng.integers(0, 7, size=updates.shape)
    expected = gatherkit.scatter_elements(data, indices, np.ascontiguousarray(updates), axis=0)
    assert np.array_equal(gatherkit.scatter_elements(data, indices, updates, axis=0), expected)
    assert np.array_equal(gatherkit.scatter_elements(data, indices, _producer_of(base, LAYOUTS[layout]), axis=0),
                          expected)
    with pytest.raises(ValueError, match=r"updates is not dense row-major \(shape .*strides in elements .*scatters "
                                         r"do not read in place; copy=False forbids the copy"):
        gatherkit.scatter_elements(data, indices, updates, axis=0, copy=False)


def _producer_of(base, layout):
    seen = layout(base)
    offset = (seen.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize
    return dp.Producer(base.reshape(-1), seen.shape, [s // base.itemsize for s in seen.strides], offset)


def test_the_graph_network_gather_reads_a_broadcast_index_row_by_row():
    # torch.gather(x, 0, idx[:, None].expand(-1, 128)): the index has strides (1, 0).
    rng = np.random.default_rng(5)
    x = rng.standard_normal((300, 128)).astype(np.float32)
    idx = rng.integers(-300, 300, size=40)
    index = np.broadcast_to(idx[:, None], (40, 128))
    got = gatherkit.gather_elements(x, index, axis=0, copy=False)
    assert np.array_equal(got, x[idx])
    bad = idx.copy()
    bad[17] = 300
    with pytest.raises(GatherkitError, match=r"indices\[17, 0\] = 300 is out of range"):
        gatherkit.gather_elements(x, np.broadcast_to(bad[:, None], (40, 128)), axis=0)


def test_copy_true_copies_even_dense_inputs_and_copy_must_be_none_true_or_false():
    data = np.arange(6.0)
    assert input_address(data, copy=True) != data.ctypes.data
    assert input_address(data, copy=None) == data.ctypes.data
    for bad in (0, 1, "never", "True"):
        with pytest.raises(ValueError, match="copy must be None, True or False"):
            gatherkit.gather(data, [0], copy=bad)


def test_lists_are_arrays_of_the_binding_but_not_under_copy_false():
    assert np.array_equal(gatherkit.gather([1, 2, 3], [2, 0]), [3, 1])
    with pytest.raises(ValueError, match="indices is a list, not an array: making one is a copy"):
        gatherkit.gather(np.arange(3), [2, 0], copy=False)


def test_big_endian_arrays_are_converted_or_named():
    data = np.arange(6, dtype=">f4")
    assert gatherkit.gather(data, np.array([4, 1])).tolist() == [4.0, 1.0]
    with pytest.raises(ValueError, match=r"data is big-endian \(>f4; convert with .astype\('<f4'\)\); copy=False"):
        gatherkit.gather(data, np.array([4, 1]), copy=False)
    out = np.zeros(2, ">f4")
    with pytest.raises(ValueError, match="out has dtype >f4"):
        gatherkit.gather(np.arange(6, dtype="<f4"), np.array([4, 1]), out=out)


def test_devices_other_than_cpu_are_named():
    producer = dp.view(np.arange(4.0), device=dp.KDL_CUDA)
    with pytest.raises(ValueError, match=r"data is on the CUDA device \(id 0\); gatherkit reads CPU memory only"):
        gatherkit.gather(producer, np.array([0]))


def test_dlpack_dtypes_without_a_gatherkit_dtype_are_named():
    base = np.arange(8, dtype=np.float32)
    with pytest.raises(TypeError, match="data: DLPack dtype float32x4 is a vector type"):
        gatherkit.gather(dp.Producer(base, (2,), (1,), dl_dtype=(2, 32, 4)), np.array([0]))
    with pytest.raises(TypeError, match="data: DLPack dtype float8 has no gatherkit dtype"):
        gatherkit.gather(dp.Producer(base.view(np.uint8), (2,), (1,), dl_dtype=(2, 8, 1)), np.array([0]))


def test_legacy_capsules_without_strides_are_row_major():
    base = np.arange(12, dtype=np.int32)
    producer = dp.Producer(base, (3, 4), (0, 0), versioned=False, strides_null=True)
    assert gatherkit.gather(producer, np.array([2, 0]), axis=0).tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]


def test_every_capsule_is_released_once():
    data, indices = np.arange(10.0), np.array([3, 1])
    producers = [dp.view(data), dp.view(indices, versioned=False)]
    for _ in range(3):
        gatherkit.gather(*producers)
    with pytest.raises(GatherkitError):
        gatherkit.gather(producers[0], dp.view(np.array([10])))
    gc.collect()
    data_producer, indices_producer = producers
    assert (data_producer.exports, data_producer.deleted) == (4, 4)  # also through the failed call
    assert (indices_producer.exports, indices_producer.deleted) == (3, 3)


# --- outputs -------------------------------------------------------------------------------------

def test_out_may_be_a_dense_dlpack_tensor_inside_a_larger_one():
    storage = np.full((6, 3), -1, np.int16)
    window = dp.Producer(storage.reshape(-1), (2, 3), (3, 1), offset=3)  # rows 1..2
    data = np.arange(12, dtype=np.int16).reshape(4, 3)
    assert gatherkit.gather(data, np.array([3, 0]), out=window) is window
    assert storage.tolist() == [[-1] * 3, [9, 10, 11], [0, 1, 2]] + [[-1] * 3] * 3


def test_out_that_is_strided_read_only_or_mismatched_is_refused_naming_why():
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    storage = np.zeros((2, 6), np.float32)
    column_pair = dp.Producer(storage.reshape(-1), (2, 3), (6, 2))
    with pytest.raises(ValueError, match=r"out is not dense row-major \(strides in elements \(6, 2\)\); out must "
                                         r"be a writable dense row-major float32 array of shape \(2, 3\)"):
        gatherkit.gather(data, np.array([1, 2]), out=column_pair)
    read_only = dp.view(storage[:, :3].copy(), read_only=True)
    with pytest.raises(ValueError, match="out is read-only"):
        gatherkit.gather(data, np.array([1, 2]), out=read_only)
    with pytest.raises(ValueError, match=r"out has shape \(3,\)"):
        gatherkit.gather(data, np.array([1, 2]), out=dp.view(np.zeros(3, np.float32)))
    assert not storage.any()


def test_in_place_scatter_through_dlpack_writes_the_producers_memory():
    data = np.zeros(5, np.int64)
    producer = dp.view(data)
    result = gatherkit.scatter_nd(producer, np.array([[1], [3], [1]]), np.array([5, 7, 2]), "add", out=producer)
    assert result is producer and data.tolist() == [0, 7, 0, 7, 0]


# --- PyTorch (when installed) --------------------------------------------------------------------

def test_pytorch_tensors_are_read_and_written_in_place():
    torch = pytest.importorskip("torch")
    data = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    index = torch.tensor([[3, 0, 1, 2, 0, 1]])
    got = gatherkit.gather_elements(data, index, axis=0, copy=False)
    assert torch.equal(torch.from_dlpack(got), torch.gather(data, 0, index))
    assert input_address(data, copy=False) == data.data_ptr()
    # out: rows 2..3 of a larger tensor (dense), written where they are.
    big = torch.zeros(5, 6)
    window = big[2:4]
    assert gatherkit.gather_elements(data, torch.tensor([[1] * 6, [2] * 6]), axis=0, out=window) is window
    assert torch.equal(big[2:4], data[1:3]) and not big[:2].any() and not big[4:].any()
    every_other = torch.zeros(2, 12)[:1, ::2]  # shape (1, 6), strides (12, 2)
    with pytest.raises(ValueError, match=r"out is not dense row-major \(strides in elements \(12, 2\)\)"):
        gatherkit.gather_elements(data, index, axis=0, out=every_other)


def test_pytorch_views_are_read_where_they_are():
    torch = pytest.importorskip("torch")
    x = torch.randn(50, 16)
    idx = torch.randint(0, 50, (30,))
    broadcast = idx[:, None].expand(-1, 16)  # strides (1, 0): the graph-network gather
    expected = torch.gather(x, 0, broadcast)
    assert torch.equal(torch.from_dlpack(gatherkit.gather_elements(x, broadcast, axis=0, copy=False)), expected)
    xt = x.t()  # transposed data, also read in place
    zeros = torch.zeros(2, 50, dtype=torch.int64)
    got = gatherkit.gather_elements(xt, zeros, axis=0, copy=False)
    assert torch.equal(torch.from_dlpack(got), torch.gather(xt, 0, zeros))
    # A scatter's strided inputs are copied only when allowed.
    with pytest.raises(ValueError, match=r"indices is not dense row-major \(shape \(30, 16\), strides in "
                                         r"elements \(1, 0\)\)"):
        gatherkit.scatter_elements(torch.zeros(50, 16), broadcast, x[:30], axis=0, copy=False)


@pytest.mark.parametrize("name", ["bfloat16", "float16", "int32", "bool", "complex64", "uint8"])
def test_pytorch_dtypes(name):
    torch = pytest.importorskip("torch")
    if name == "bfloat16" and ml_dtypes is None:
        pytest.skip("bfloat16 needs ml_dtypes")
    dtype = getattr(torch, name)
    data = (torch.arange(12) % 5).reshape(3, 4).to(dtype)
    index = torch.tensor([2, 0], dtype=torch.int32)
    got = gatherkit.gather(data, index, axis=0, copy=False)
    expected = data[index.long()]
    if name == "bfloat16":
        assert np.array_equal(got.view(np.uint16), expected.view(torch.int16).numpy().view(np.uint16))
    else:
        assert torch.equal(torch.from_dlpack(got), expected)


# --- found in review ---------------------------------------------------------------------------

@pytest.mark.parametrize("indices", [np.array([0, 1, 2, 0, 1, 2])[::2], np.arange(3)[::-1],
                                     np.broadcast_to(np.array([2]), (4,))], ids=["stepped", "reversed", "broadcast"])
def test_string_data_with_strided_indices_reads_the_indices_where_they_are(indices):
    data = np.array(["a", "b", "c"], dtype=object)
    got = gatherkit.gather(data, indices, copy=False)
    assert got.tolist() == [data[k] for k in indices]
    got = gatherkit.gather_elements(data, indices, axis=0) if indices.shape == data.shape else None
    if got is not None:
        assert got.tolist() == [data[k] for k in indices]


def test_scatters_refuse_an_out_that_overlaps_a_copied_dlpack_input():
    base = np.arange(16, dtype=np.float64).reshape(4, 4)
    with pytest.raises(GatherkitError, match="out shares memory with data"):
        gatherkit.scatter_elements(dp.view(base.T), np.array([[0]]), np.array([[9.0]]), out=base)
    assert base.tolist() == np.arange(16, dtype=np.float64).reshape(4, 4).tolist()
    # With copy=True the inputs are the binding's copies, which the output may overlap.
    got = gatherkit.scatter_elements(dp.view(base.T), np.array([[0]]), np.array([[9.0]]), out=base, copy=True)
    expected = np.arange(16, dtype=np.float64).reshape(4, 4).T.copy()
    expected[0, 0] = 9.0
    assert got is base and base.tolist() == expected.tolist()


def test_misaligned_arrays_are_copied_or_named():
    raw = np.zeros(8 * 5 + 1, np.uint8)
    misaligned = np.frombuffer(raw.data, dtype=np.float64, count=5, offset=1)
    assert not misaligned.flags.aligned
    assert gatherkit.gather(misaligned, np.array([4, 0])).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match=r"data is misaligned \(address 0x[0-9a-f]+; float64 elements need 8-byte "
                                         r"alignment\); copy=False forbids the copy"):
        gatherkit.gather(misaligned, np.array([4, 0]), copy=False)


def test_list_data_for_scatters():
    assert gatherkit.scatter_nd([1, 2, 3], np.array([[1]]), np.array([9])).tolist() == [1, 9, 3]


def test_jax_arrays_are_read_where_they_are():
    jax_numpy = pytest.importorskip("jax.numpy")
    x = jax_numpy.arange(24, dtype=jax_numpy.float32).reshape(4, 6)
    idx = jax_numpy.array([[3, 0, 1, 2, 0, 1]])
    got = gatherkit.gather_elements(x, idx, axis=0, copy=False)
    assert np.array_equal(got, np.asarray(jax_numpy.take_along_axis(x, idx, axis=0)))
    assert input_address(x, copy=False) == x.unsafe_buffer_pointer()
    if ml_dtypes is not None:
        b = jax_numpy.arange(6, dtype=jax_numpy.bfloat16)
        got = gatherkit.gather(b, jax_numpy.array([5, 0], dtype=jax_numpy.int32), copy=False)
        assert got.dtype == np.dtype(ml_dtypes.bfloat16) and got.astype(np.float32).tolist() == [5.0, 0.0]
