//! Every example of the operator specifications, with its exact expected values, under every
//! flavor and version it belongs to, through the typed, allocating and byte APIs, with int32 and
//! int64 indices. The specifications:
//!
//! - ONNX GatherElements: <https://onnx.ai/onnx/operators/onnx__GatherElements.html>
//! - ONNX GatherND: <https://onnx.ai/onnx/operators/onnx__GatherND.html>
//! - OpenVINO GatherElements-6:
//!   <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-elements-6.html>
//! - OpenVINO GatherND-5:
//!   <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-nd-5.html>
//! - OpenVINO GatherND-8:
//!   <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-nd-8.html>
//!
//! The `test_gather*` names are the ONNX backend test cases holding the same values.

use gatherkit::{
    gather_elements, gather_elements_dyn, gather_elements_to_vec, gather_nd, gather_nd_dyn,
    gather_nd_to_vec, DType, DynTensorMut, DynTensorRef, Options, TensorMut, TensorRef,
};
use gatherkit_testkit::test_each;

struct Case {
    name: &'static str,
    data_shape: &'static [usize],
    data: &'static [i32],
    indices_shape: &'static [usize],
    indices: &'static [i64],
    attribute: i64,
    output_shape: &'static [usize],
    output: &'static [i32],
    /// The (flavor, version) pairs the example belongs to.
    versions: &'static [Options],
}

const fn onnx(version: i32) -> Options {
    Options {
        flavor: gatherkit::Flavor::Onnx,
        opset: version,
        num_threads: 0,
        parallel_for: None,
    }
}
const fn openvino(version: i32) -> Options {
    Options {
        flavor: gatherkit::Flavor::OpenVino,
        opset: version,
        num_threads: 0,
        parallel_for: None,
    }
}

const ONNX_GE: &[Options] = &[onnx(11), onnx(12), onnx(13), onnx(0)];
const ALL_GE: &[Options] = &[onnx(11), onnx(13), openvino(6), openvino(0)];
const OPENVINO_GE: &[Options] = &[openvino(6), openvino(0)];
/// Every GatherND version; examples with batch_dims = 0 hold in all of them.
const ALL_ND: &[Options] = &[onnx(11), onnx(12), onnx(13), openvino(5), openvino(8)];
/// Versions with batch dimensions whose output shape is indices[:-1] + data[b+k:].
const BATCHED_ND: &[Options] = &[onnx(12), onnx(13), openvino(5), openvino(8)];

const GATHER_ELEMENTS: &[Case] = &[
    Case {
        name: "ONNX GatherElements example 1 / test_gather_elements_0",
        data_shape: &[2, 2],
        data: &[1, 2, 3, 4],
        indices_shape: &[2, 2],
        indices: &[0, 0, 1, 0],
        attribute: 1,
        output_shape: &[2, 2],
        output: &[1, 1, 4, 3],
        versions: ALL_GE,
    },
    Case {
        name: "ONNX GatherElements example 2 / test_gather_elements_1 (indices smaller than data)",
        data_shape: &[3, 3],
        data: &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        indices_shape: &[2, 3],
        indices: &[1, 2, 0, 2, 0, 0],
        attribute: 0,
        output_shape: &[2, 3],
        output: &[4, 8, 3, 7, 2, 3],
        versions: ALL_GE,
    },
    Case {
        name: "ONNX test_gather_elements_negative_indices",
        data_shape: &[3, 3],
        data: &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        indices_shape: &[2, 3],
        indices: &[-1, -2, 0, -2, 0, 0],
        attribute: 0,
        output_shape: &[2, 3],
        output: &[7, 5, 3, 4, 2, 3],
        versions: ALL_GE,
    },
    Case {
        name: "OpenVINO GatherElements-6 example 1",
        data_shape: &[2, 2],
        data: &[1, 2, 3, 4],
        indices_shape: &[2, 2],
        indices: &[0, 1, 0, 0],
        attribute: 0,
        output_shape: &[2, 2],
        output: &[1, 4, 1, 2],
        versions: ALL_GE,
    },
    Case {
        name: "OpenVINO GatherElements-6 example 2 (indices larger than data along the axis)",
        data_shape: &[2, 2],
        data: &[1, 7, 4, 3],
        indices_shape: &[2, 3],
        indices: &[1, 1, 0, 1, 0, 1],
        attribute: 1,
        output_shape: &[2, 3],
        output: &[7, 7, 1, 3, 4, 3],
        versions: ALL_GE,
    },
    Case {
        name: "OpenVINO GatherElements-6 example 3 (indices smaller along the axis)",
        data_shape: &[3, 3],
        data: &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        indices_shape: &[2, 3],
        indices: &[1, 0, 1, 1, 2, 0],
        attribute: 0,
        output_shape: &[2, 3],
        output: &[4, 2, 6, 4, 8, 3],
        versions: OPENVINO_GE,
    },
    Case {
        name: "ONNX GatherElements example 1 with axis = -1",
        data_shape: &[2, 2],
        data: &[1, 2, 3, 4],
        indices_shape: &[2, 2],
        indices: &[0, 0, 1, 0],
        attribute: -1,
        output_shape: &[2, 2],
        output: &[1, 1, 4, 3],
        versions: ONNX_GE,
    },
];

const GATHER_ND: &[Case] = &[
    Case {
        name: "ONNX GatherND example 1 / test_gathernd_example_int32",
        data_shape: &[2, 2],
        data: &[0, 1, 2, 3],
        indices_shape: &[2, 2],
        indices: &[0, 0, 1, 1],
        attribute: 0,
        output_shape: &[2],
        output: &[0, 3],
        versions: ALL_ND,
    },
    Case {
        name: "ONNX GatherND example 2",
        data_shape: &[2, 2],
        data: &[0, 1, 2, 3],
        indices_shape: &[2, 1],
        indices: &[1, 0],
        attribute: 0,
        output_shape: &[2, 2],
        output: &[2, 3, 0, 1],
        versions: ALL_ND,
    },
    Case {
        name: "ONNX GatherND example 3",
        data_shape: &[2, 2, 2],
        data: &[0, 1, 2, 3, 4, 5, 6, 7],
        indices_shape: &[2, 2],
        indices: &[0, 1, 1, 0],
        attribute: 0,
        output_shape: &[2, 2],
        output: &[2, 3, 4, 5],
        versions: ALL_ND,
    },
    Case {
        name: "ONNX GatherND example 4 / test_gathernd_example_float32",
        data_shape: &[2, 2, 2],
        data: &[0, 1, 2, 3, 4, 5, 6, 7],
        indices_shape: &[2, 1, 2],
        indices: &[0, 1, 1, 0],
        attribute: 0,
        output_shape: &[2, 1, 2],
        output: &[2, 3, 4, 5],
        versions: ALL_ND,
    },
    Case {
        name: "ONNX GatherND example 5 / test_gathernd_example_int32_batch_dim1",
        data_shape: &[2, 2, 2],
        data: &[0, 1, 2, 3, 4, 5, 6, 7],
        indices_shape: &[2, 1],
        indices: &[1, 0],
        attribute: 1,
        output_shape: &[2, 2],
        output: &[2, 3, 4, 5],
        versions: BATCHED_ND,
    },
    Case {
        name: "ONNX GatherND example 1 with negative indices",
        data_shape: &[2, 2],
        data: &[0, 1, 2, 3],
        indices_shape: &[2, 2],
        indices: &[-2, -2, -1, -1],
        attribute: 0,
        output_shape: &[2],
        output: &[0, 3],
        versions: ALL_ND,
    },
];

fn to_i32(v: &[i64]) -> Vec<i32> {
    v.iter().map(|&x| x as i32).collect()
}

fn bytes<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: plain integers viewed as their bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
        .to_vec()
}

/// A byte vector copied into u64-aligned storage, so that every dtype's alignment holds.
fn aligned(bytes: &[u8]) -> Vec<u64> {
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    // SAFETY: the word buffer has at least bytes.len() bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), words.as_mut_ptr().cast::<u8>(), bytes.len())
    };
    words
}

fn as_bytes(words: &[u64], len: usize) -> &[u8] {
    // SAFETY: viewing initialized words as bytes.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), len) }
}

fn as_bytes_mut(words: &mut [u64], len: usize) -> &mut [u8] {
    // SAFETY: viewing initialized words as bytes.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), len) }
}

type Typed =
    fn(TensorRef<i32>, TensorRef<i64>, i64, TensorMut<i32>, &Options) -> gatherkit::Result<()>;
type ToVec =
    fn(TensorRef<i32>, TensorRef<i32>, i64, &Options) -> gatherkit::Result<(Vec<usize>, Vec<i32>)>;
type Bytes = fn(DynTensorRef, DynTensorRef, i64, DynTensorMut, &Options) -> gatherkit::Result<()>;

/// One operator's three entry points: typed, allocating (fed int32 indices), bytes.
struct Entry {
    typed: Typed,
    to_vec: ToVec,
    bytes: Bytes,
}

/// Each example under each of its versions, every failing pair reported.
fn check_examples(cases: &[Case], entry: Entry) {
    let runs = cases
        .iter()
        .flat_map(|case| case.versions.iter().map(move |options| (case, options)));
    test_each(
        runs,
        |(case, options)| format!("{} under {options:?}", case.name),
        |&(case, options)| {
            let mut out = vec![-99; case.output.len()];
            (entry.typed)(
                TensorRef::new(case.data_shape, case.data),
                TensorRef::new(case.indices_shape, case.indices),
                case.attribute,
                TensorMut::new(case.output_shape, &mut out),
                options,
            )
            .unwrap_or_else(|e| panic!("int64 indices: {e}"));
            assert_eq!(out, case.output, "int64 indices");

            let indices32 = to_i32(case.indices);
            let (shape, out) = (entry.to_vec)(
                TensorRef::new(case.data_shape, case.data),
                TensorRef::new(case.indices_shape, &indices32),
                case.attribute,
                options,
            )
            .unwrap_or_else(|e| panic!("int32: {e}"));
            assert_eq!(
                (shape.as_slice(), out.as_slice()),
                (case.output_shape, case.output),
                "int32"
            );

            let data = aligned(&bytes(case.data));
            let idx = aligned(&bytes(case.indices));
            let mut out = vec![0u64; case.output.len().div_ceil(2)];
            (entry.bytes)(
                DynTensorRef::new(
                    DType::Int32,
                    case.data_shape,
                    as_bytes(&data, case.data.len() * 4),
                ),
                DynTensorRef::new(
                    DType::Int64,
                    case.indices_shape,
                    as_bytes(&idx, case.indices.len() * 8),
                ),
                case.attribute,
                DynTensorMut::new(
                    DType::Int32,
                    case.output_shape,
                    as_bytes_mut(&mut out, case.output.len() * 4),
                ),
                options,
            )
            .unwrap_or_else(|e| panic!("bytes: {e}"));
            assert_eq!(
                as_bytes(&out, case.output.len() * 4),
                bytes(case.output),
                "bytes"
            );
        },
    );
}

#[test]
fn gather_elements_spec_examples() {
    check_examples(
        GATHER_ELEMENTS,
        Entry {
            typed: gather_elements,
            to_vec: gather_elements_to_vec,
            bytes: gather_elements_dyn,
        },
    );
}

#[test]
fn gather_nd_spec_examples() {
    check_examples(
        GATHER_ND,
        Entry {
            typed: gather_nd,
            to_vec: gather_nd_to_vec,
            bytes: gather_nd_dyn,
        },
    );
}

/// The OpenVINO GatherND summary's example: data [2,3,4,2], indices [2,3,3,2], b = 2 gives
/// [6,3] under GatherND-5 and [2,3,3] under GatherND-8, with the same elements.
#[test]
fn openvino_gather_nd_5_folds_batch_dimensions_and_8_does_not() {
    let data: Vec<i32> = (0..48).collect();
    // Each tuple (i, j) of batch (b0, b1) selects data[b0, b1, i, j].
    let mut indices = Vec::new();
    for n in 0..18i64 {
        indices.extend([n % 4, (n / 4) % 2]);
    }
    let expected: Vec<i32> = (0..18)
        .map(|n| {
            let (b0, b1) = (n / 9, (n / 3) % 3);
            let (i, j) = (n % 4, (n / 4) % 2);
            ((b0 * 3 + b1) * 4 + i) * 2 + j
        })
        .collect();
    test_each(
        [
            (5, vec![6, 3]),
            (7, vec![6, 3]),
            (8, vec![2, 3, 3]),
            (0, vec![2, 3, 3]),
        ],
        |(version, _)| format!("GatherND version {version}"),
        |(version, shape)| {
            let (got_shape, got) = gather_nd_to_vec(
                TensorRef::new(&[2, 3, 4, 2], &data),
                TensorRef::new(&[2, 3, 3, 2], &indices),
                2,
                &Options::openvino(*version),
            )
            .unwrap();
            assert_eq!(&got_shape, shape, "shape");
            assert_eq!(got, expected, "values");
        },
    );
}
