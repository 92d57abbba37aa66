//! Every error row of the specification tables, by exact status and by what the message names,
//! through the safe Rust API.

use gatherkit::{
    gather_elements, gather_elements_dyn, gather_nd, gather_nd_to_vec, DType, DynTensorMut,
    DynTensorRef, Flavor, GatherElements, GatherNd, Options, Status, TensorDesc, TensorMut,
    TensorRef,
};
use gatherkit_testkit::test_each;

#[derive(Clone, Copy, Debug)]
enum Op {
    Elements,
    Nd,
}

struct Case {
    name: &'static str,
    op: Op,
    data: (DType, &'static [usize]),
    indices: (DType, &'static [usize]),
    attribute: i64,
    options: Options,
    /// None: the plan is valid.
    status: Option<Status>,
    message_has: &'static [&'static str],
}

const ONNX: Options = Options {
    flavor: Flavor::Onnx,
    opset: 0,
    num_threads: 0,
    parallel_for: None,
};
const fn onnx(version: i32) -> Options {
    Options {
        flavor: Flavor::Onnx,
        opset: version,
        num_threads: 0,
        parallel_for: None,
    }
}
const fn ov(version: i32) -> Options {
    Options {
        flavor: Flavor::OpenVino,
        opset: version,
        num_threads: 0,
        parallel_for: None,
    }
}
const F: DType = DType::Float;
const I64: DType = DType::Int64;
const I32: DType = DType::Int32;
const BIG: usize = 1 << 62;

const PLAN_CASES: &[Case] = &[
    // Versions.
    Case {
        name: "ONNX GatherElements-10 does not exist",
        op: Op::Elements,
        data: (F, &[2]),
        indices: (I64, &[2]),
        attribute: 0,
        options: onnx(10),
        status: Some(Status::UnsupportedVersion),
        message_has: &["version 10", "first is 11"],
    },
    Case {
        name: "negative version",
        op: Op::Elements,
        data: (F, &[2]),
        indices: (I64, &[2]),
        attribute: 0,
        options: onnx(-1),
        status: Some(Status::UnsupportedVersion),
        message_has: &["version -1"],
    },
    Case {
        name: "OpenVINO GatherElements-5 is not implemented",
        op: Op::Elements,
        data: (F, &[2]),
        indices: (I64, &[2]),
        attribute: 0,
        options: ov(5),
        status: Some(Status::UnsupportedVersion),
        message_has: &[
            "OpenVINO GatherElements version 5 is not implemented",
            "first implemented is 6",
        ],
    },
    Case {
        name: "OpenVINO GatherElements newer than 6 is 6",
        op: Op::Elements,
        data: (F, &[2]),
        indices: (I64, &[2]),
        attribute: 0,
        options: ov(9),
        status: None,
        message_has: &[],
    },
    Case {
        name: "ONNX GatherND-10 does not exist",
        op: Op::Nd,
        data: (F, &[2]),
        indices: (I64, &[1]),
        attribute: 0,
        options: onnx(10),
        status: Some(Status::UnsupportedVersion),
        message_has: &["GatherND version 10"],
    },
    Case {
        name: "OpenVINO GatherND-4 is not implemented",
        op: Op::Nd,
        data: (F, &[2]),
        indices: (I64, &[1]),
        attribute: 0,
        options: ov(4),
        status: Some(Status::UnsupportedVersion),
        message_has: &[
            "OpenVINO GatherND version 4 is not implemented",
            "first implemented is 5",
        ],
    },
    // Dtypes.
    Case {
        name: "bfloat16 before GatherElements-13 (opset 11)",
        op: Op::Elements,
        data: (DType::Bfloat16, &[2]),
        indices: (I64, &[2]),
        attribute: 0,
        options: onnx(11),
        status: Some(Status::UnsupportedDtype),
        message_has: &["GatherElements-11", "bfloat16"],
    },
    Case {
        name: "bfloat16 before GatherElements-13 (opset 12)",
        op: Op::Elements,
        data: (DType::Bfloat16, &[2]),
        indices: (I64, &[2]),
        attribute: 0,
        options: onnx(12),
        status: Some(Status::UnsupportedDtype),
        message_has: &["bfloat16"],
    },
    Case {
        name: "bfloat16 in GatherElements-13",
        op: Op::Elements,
        data: (DType::Bfloat16, &[2]),
        indices: (I64, &[2]),
        attribute: 0,
        options: onnx(13),
        status: None,
        message_has: &[],
    },
    Case {
        name: "bfloat16 in OpenVINO GatherElements-6",
        op: Op::Elements,
        data: (DType::Bfloat16, &[2]),
        indices: (I64, &[2]),
        attribute: 0,
        options: ov(6),
        status: None,
        message_has: &[],
    },
    Case {
        name: "bfloat16 in GatherND-12",
        op: Op::Nd,
        data: (DType::Bfloat16, &[2]),
        indices: (I64, &[1]),
        attribute: 0,
        options: onnx(12),
        status: Some(Status::UnsupportedDtype),
        message_has: &["GatherND-12", "bfloat16"],
    },
    Case {
        name: "bfloat16 in GatherND-11",
        op: Op::Nd,
        data: (DType::Bfloat16, &[2]),
        indices: (I64, &[1]),
        attribute: 0,
        options: onnx(11),
        status: Some(Status::UnsupportedDtype),
        message_has: &["GatherND-11"],
    },
    Case {
        name: "bfloat16 in GatherND-13",
        op: Op::Nd,
        data: (DType::Bfloat16, &[2]),
        indices: (I64, &[1]),
        attribute: 0,
        options: onnx(13),
        status: None,
        message_has: &[],
    },
    Case {
        name: "bfloat16 in GatherND-5",
        op: Op::Nd,
        data: (DType::Bfloat16, &[2]),
        indices: (I64, &[1]),
        attribute: 0,
        options: ov(5),
        status: None,
        message_has: &[],
    },
    Case {
        name: "float indices for GatherElements",
        op: Op::Elements,
        data: (F, &[2]),
        indices: (F, &[2]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::UnsupportedDtype),
        message_has: &["indices dtype is float", "int32 and int64"],
    },
    Case {
        name: "uint64 indices for GatherND",
        op: Op::Nd,
        data: (F, &[2]),
        indices: (DType::Uint64, &[1]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::UnsupportedDtype),
        message_has: &["uint64"],
    },
    Case {
        name: "int32 indices for ONNX GatherND (extension)",
        op: Op::Nd,
        data: (F, &[2]),
        indices: (I32, &[1]),
        attribute: 0,
        options: ONNX,
        status: None,
        message_has: &[],
    },
    Case {
        name: "version is checked before dtypes",
        op: Op::Elements,
        data: (DType::Bfloat16, &[2]),
        indices: (F, &[2]),
        attribute: 0,
        options: onnx(3),
        status: Some(Status::UnsupportedVersion),
        message_has: &[],
    },
    // Ranks.
    Case {
        name: "GatherElements data of rank 0",
        op: Op::Elements,
        data: (F, &[]),
        indices: (I64, &[]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::InvalidRank),
        message_has: &["rank 0"],
    },
    Case {
        name: "GatherElements ranks differ",
        op: Op::Elements,
        data: (F, &[2, 2]),
        indices: (I64, &[2]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::InvalidRank),
        message_has: &["indices has rank 1", "data has rank 2"],
    },
    Case {
        name: "GatherND data of rank 0",
        op: Op::Nd,
        data: (F, &[]),
        indices: (I64, &[1]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::InvalidRank),
        message_has: &["data has rank 0"],
    },
    Case {
        name: "GatherND indices of rank 0",
        op: Op::Nd,
        data: (F, &[2]),
        indices: (I64, &[]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::InvalidRank),
        message_has: &["indices has rank 0"],
    },
    Case {
        name: "rank above MAX_RANK",
        op: Op::Elements,
        data: (F, &[1; 65]),
        indices: (I64, &[1; 65]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::InvalidRank),
        message_has: &["rank 65", "64"],
    },
    Case {
        name: "dtype is checked before rank",
        op: Op::Elements,
        data: (F, &[]),
        indices: (DType::Bool, &[2]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::UnsupportedDtype),
        message_has: &[],
    },
    // Attributes.
    Case {
        name: "axis = r",
        op: Op::Elements,
        data: (F, &[2, 2]),
        indices: (I64, &[2, 2]),
        attribute: 2,
        options: ONNX,
        status: Some(Status::InvalidAttribute),
        message_has: &["axis 2", "[-2, 1]"],
    },
    Case {
        name: "axis = -r - 1",
        op: Op::Elements,
        data: (F, &[2, 2]),
        indices: (I64, &[2, 2]),
        attribute: -3,
        options: ONNX,
        status: Some(Status::InvalidAttribute),
        message_has: &["axis -3"],
    },
    Case {
        name: "axis = -r",
        op: Op::Elements,
        data: (F, &[2, 2]),
        indices: (I64, &[2, 2]),
        attribute: -2,
        options: ONNX,
        status: None,
        message_has: &[],
    },
    Case {
        name: "rank is checked before axis",
        op: Op::Elements,
        data: (F, &[2, 2]),
        indices: (I64, &[2]),
        attribute: 7,
        options: ONNX,
        status: Some(Status::InvalidRank),
        message_has: &[],
    },
    Case {
        name: "batch_dims < 0",
        op: Op::Nd,
        data: (F, &[2, 2]),
        indices: (I64, &[2, 1]),
        attribute: -1,
        options: ONNX,
        status: Some(Status::InvalidAttribute),
        message_has: &["batch_dims -1", "[0, 1]"],
    },
    Case {
        name: "batch_dims = min(q, r)",
        op: Op::Nd,
        data: (F, &[2, 2, 2]),
        indices: (I64, &[2, 1]),
        attribute: 2,
        options: ONNX,
        status: Some(Status::InvalidAttribute),
        message_has: &["batch_dims 2"],
    },
    Case {
        name: "batch_dims in GatherND-11",
        op: Op::Nd,
        data: (F, &[2, 2, 2]),
        indices: (I64, &[2, 1]),
        attribute: 1,
        options: onnx(11),
        status: Some(Status::InvalidAttribute),
        message_has: &["GatherND-11", "must be 0"],
    },
    Case {
        name: "batch_dims in GatherND-12",
        op: Op::Nd,
        data: (F, &[2, 2, 2]),
        indices: (I64, &[2, 1]),
        attribute: 1,
        options: onnx(12),
        status: None,
        message_has: &[],
    },
    // Shapes.
    Case {
        name: "ONNX: indices larger than data off the axis",
        op: Op::Elements,
        data: (F, &[2, 3]),
        indices: (I64, &[3, 3]),
        attribute: 1,
        options: ONNX,
        status: Some(Status::ShapeMismatch),
        message_has: &["indices.shape[0] = 3", "data.shape[0] = 2"],
    },
    Case {
        name: "ONNX: indices smaller off the axis, larger along it",
        op: Op::Elements,
        data: (F, &[2, 3]),
        indices: (I64, &[1, 7]),
        attribute: 1,
        options: ONNX,
        status: None,
        message_has: &[],
    },
    Case {
        name: "OpenVINO: indices smaller than data off the axis",
        op: Op::Elements,
        data: (F, &[2, 3]),
        indices: (I64, &[1, 3]),
        attribute: 1,
        options: ov(6),
        status: Some(Status::ShapeMismatch),
        message_has: &["must equal"],
    },
    Case {
        name: "OpenVINO: any size along the axis",
        op: Op::Elements,
        data: (F, &[2, 3]),
        indices: (I64, &[2, 9]),
        attribute: 1,
        options: ov(6),
        status: None,
        message_has: &[],
    },
    Case {
        name: "axis is checked before shapes",
        op: Op::Elements,
        data: (F, &[2, 3]),
        indices: (I64, &[3, 3]),
        attribute: 5,
        options: ONNX,
        status: Some(Status::InvalidAttribute),
        message_has: &[],
    },
    Case {
        name: "GatherND batch dimensions differ",
        op: Op::Nd,
        data: (F, &[2, 3, 4]),
        indices: (I64, &[3, 1]),
        attribute: 1,
        options: ONNX,
        status: Some(Status::ShapeMismatch),
        message_has: &[
            "batch dimension 0",
            "indices.shape[0] = 3",
            "data.shape[0] = 2",
        ],
    },
    Case {
        name: "GatherND batch dimensions never broadcast",
        op: Op::Nd,
        data: (F, &[2, 3, 4]),
        indices: (I64, &[1, 1]),
        attribute: 1,
        options: ONNX,
        status: Some(Status::ShapeMismatch),
        message_has: &["batch dimension 0"],
    },
    Case {
        name: "GatherND k = 0",
        op: Op::Nd,
        data: (F, &[2, 3]),
        indices: (I64, &[4, 0]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::ShapeMismatch),
        message_has: &["indices.shape[-1] = 0", "[1, 2]"],
    },
    Case {
        name: "GatherND k > r - b",
        op: Op::Nd,
        data: (F, &[2, 3, 4]),
        indices: (I64, &[2, 3]),
        attribute: 1,
        options: ONNX,
        status: Some(Status::ShapeMismatch),
        message_has: &["indices.shape[-1] = 3", "[1, 2]"],
    },
    Case {
        name: "GatherND k = r - b",
        op: Op::Nd,
        data: (F, &[2, 3, 4]),
        indices: (I64, &[2, 2]),
        attribute: 1,
        options: ONNX,
        status: None,
        message_has: &[],
    },
    // Sizes.
    Case {
        name: "data beyond isize::MAX bytes",
        op: Op::Elements,
        data: (DType::Double, &[BIG, 2]),
        indices: (I64, &[1, 1]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::Overflow),
        message_has: &["data shape"],
    },
    Case {
        name: "indices beyond isize::MAX bytes",
        op: Op::Elements,
        data: (DType::Uint8, &[1, BIG]),
        indices: (I64, &[BIG, 1]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::Overflow),
        message_has: &["indices shape"],
    },
    Case {
        name: "a zero dimension never overflows",
        op: Op::Elements,
        data: (DType::Double, &[BIG, BIG, 0]),
        indices: (I64, &[BIG, BIG, 0]),
        attribute: 0,
        options: ONNX,
        status: None,
        message_has: &[],
    },
    Case {
        name: "GatherND output beyond isize::MAX bytes",
        op: Op::Nd,
        data: (DType::Uint8, &[2, BIG / 2]),
        indices: (I64, &[4, 1]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::Overflow),
        message_has: &["output shape"],
    },
    Case {
        name: "shapes are checked before sizes",
        op: Op::Elements,
        data: (DType::Double, &[BIG, 2]),
        indices: (I64, &[1, 3]),
        attribute: 0,
        options: ONNX,
        status: Some(Status::ShapeMismatch),
        message_has: &[],
    },
];

#[test]
fn plan_validation_rows() {
    test_each(
        PLAN_CASES,
        |case| case.name,
        |case| {
            let data = TensorDesc::new(case.data.0, case.data.1);
            let indices = TensorDesc::new(case.indices.0, case.indices.1);
            let result = match case.op {
                Op::Elements => {
                    GatherElements::new(data, indices, case.attribute, &case.options).map(|_| ())
                }
                Op::Nd => GatherNd::new(data, indices, case.attribute, &case.options).map(|_| ()),
            };
            match (case.status, result) {
                (None, Ok(())) => {}
                (None, Err(e)) => panic!("expected success, got {:?}: {e}", e.status()),
                (Some(s), Ok(())) => panic!("expected {s:?}, got success"),
                (Some(s), Err(e)) => {
                    assert_eq!(e.status(), s, "{e}");
                    for fragment in case.message_has {
                        assert!(
                            e.message().contains(fragment),
                            "{:?} lacks {fragment:?}",
                            e.message()
                        );
                    }
                }
            }
        },
    );
}

#[test]
fn gather_elements_index_out_of_range_names_position_value_and_range() {
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    test_each(
        [(3i64, "indices[1, 0]"), (-4, "indices[1, 0]")],
        |(bad, _)| format!("index value {bad}"),
        |&(bad, position)| {
            let indices = [0i64, 1, bad, 2];
            let mut out = [0.0f32; 4];
            let e = gather_elements(
                TensorRef::new(&[3, 2], &data),
                TensorRef::new(&[2, 2], &indices),
                0,
                TensorMut::new(&[2, 2], &mut out),
                &Options::default(),
            )
            .unwrap_err();
            assert_eq!(e.status(), Status::IndexOutOfBounds);
            let m = e.message();
            assert!(m.contains("GatherElements-13"), "{m}");
            assert!(m.contains(position), "{m}");
            assert!(m.contains(&format!("= {bad}")), "{m}");
            assert!(
                m.contains("[-3, 2]") && m.contains("data.shape[0] = 3"),
                "{m}"
            );
        },
    );
}

#[test]
fn the_first_bad_index_in_row_major_order_is_reported() {
    let data = [0u8; 4];
    let indices = [0i32, 9, -9, 7];
    let e = gather_elements(
        TensorRef::new(&[2, 2], &data),
        TensorRef::new(&[2, 2], &indices),
        1,
        TensorMut::new(&[2, 2], &mut [0u8; 4]),
        &Options::default(),
    )
    .unwrap_err();
    assert!(e.message().contains("indices[0, 1] = 9"), "{}", e.message());
}

#[test]
fn gather_elements_extreme_index_values_are_rejected() {
    test_each(
        [i64::MIN, i64::MAX, i64::MIN + 1],
        |bad| format!("index value {bad}"),
        |&bad| {
            let e = gather_elements(
                TensorRef::new(&[3], &[1u16, 2, 3]),
                TensorRef::new(&[1], &[bad]),
                0,
                TensorMut::new(&[1], &mut [0u16]),
                &Options::default(),
            )
            .unwrap_err();
            assert_eq!(e.status(), Status::IndexOutOfBounds);
            assert!(e.message().contains(&bad.to_string()), "{}", e.message());
        },
    );
}

#[test]
fn gather_elements_empty_indices_succeed_and_a_zero_size_axis_rejects_any_index() {
    let mut out: [f64; 0] = [];
    gather_elements(
        TensorRef::new(&[0, 3], &[] as &[f64]),
        TensorRef::new(&[0, 3], &[] as &[i64]),
        0,
        TensorMut::new(&[0, 3], &mut out),
        &Options::default(),
    )
    .unwrap();
    // Empty indices along a non-empty axis: fine, nothing written.
    gather_elements(
        TensorRef::new(&[2, 3], &[1.0f64; 6]),
        TensorRef::new(&[2, 0], &[] as &[i64]),
        1,
        TensorMut::new(&[2, 0], &mut out),
        &Options::default(),
    )
    .unwrap();
    let e = gather_elements(
        TensorRef::new(&[2, 0], &[] as &[f64]),
        TensorRef::new(&[2, 1], &[0i64, 0]),
        1,
        TensorMut::new(&[2, 1], &mut [7.0f64; 2]),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::IndexOutOfBounds);
    assert!(
        e.message().contains("indices[0, 0] = 0") && e.message().contains("data.shape[1] is 0"),
        "{}",
        e.message()
    );
}

#[test]
fn gather_nd_index_out_of_range_names_tuple_component_value_and_range() {
    let data: Vec<i16> = (0..24).collect();
    // data [2, 3, 4], b = 1: tuples index dim 1 (size 3) and dim 2 (size 4).
    let indices = [0i64, 1, 2, 3, /* batch 1 */ 1, 1, 2, 4];
    let e = gather_nd_to_vec(
        TensorRef::new(&[2, 3, 4], &data),
        TensorRef::new(&[2, 2, 2], &indices),
        1,
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::IndexOutOfBounds);
    let m = e.message();
    assert!(m.contains("GatherND-13"), "{m}");
    assert!(m.contains("indices[1, 1, :]"), "{m}");
    assert!(m.contains("component 1"), "{m}");
    assert!(m.contains("indices[1, 1, 1]) = 4"), "{m}");
    assert!(
        m.contains("[-4, 3]") && m.contains("data.shape[2] = 4"),
        "{m}"
    );
}

#[test]
fn gather_nd_checks_indices_even_when_slices_are_empty() {
    // data [3, 0]: each tuple picks an empty row, so the output [2, 0] has no elements.
    let data: [u32; 0] = [];
    let mut out: [u32; 0] = [];
    let ok = gather_nd(
        TensorRef::new(&[3, 0], &data),
        TensorRef::new(&[2, 1], &[2i64, -3]),
        0,
        TensorMut::new(&[2, 0], &mut out),
        &Options::default(),
    );
    assert_eq!(ok, Ok(()));
    let e = gather_nd(
        TensorRef::new(&[3, 0], &data),
        TensorRef::new(&[2, 1], &[2i64, 3]),
        0,
        TensorMut::new(&[2, 0], &mut out),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::IndexOutOfBounds);
    assert!(
        e.message().contains("indices[1, 0]) = 3"),
        "{}",
        e.message()
    );
    // A zero-size indexed dimension: no index is valid.
    let e = gather_nd_to_vec(
        TensorRef::new(&[0, 2], &data),
        TensorRef::new(&[1, 1], &[0i32]),
        0,
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::IndexOutOfBounds);
    assert!(
        e.message().contains("data.shape[0] is 0"),
        "{}",
        e.message()
    );
}

#[test]
fn output_descriptor_mismatches_are_reported_and_leave_the_output_untouched() {
    let data = [1i32, 2, 3, 4];
    let indices = [0i64, 1, 1, 0];
    let mut out = [77i32; 4];
    test_each(
        [
            (&[4][..], "rank 1"),
            (&[2, 3][..], "[2, 3]"),
            (&[2, 2, 1][..], "rank 3"),
        ],
        |(shape, _)| format!("output shape {shape:?}"),
        |&(shape, fragment)| {
            let e = gather_elements(
                TensorRef::new(&[2, 2], &data),
                TensorRef::new(&[2, 2], &indices),
                0,
                TensorMut::new(shape, &mut out),
                &Options::default(),
            )
            .unwrap_err();
            assert_eq!(e.status(), Status::OutputMismatch);
            assert!(e.message().contains(fragment), "{}", e.message());
        },
    );
    let mut wrong = [0u8; 16];
    let data_bytes: Vec<u8> = data.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let index_bytes: Vec<u8> = indices.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let e = gather_elements_dyn(
        DynTensorRef::new(DType::Int32, &[2, 2], &data_bytes),
        DynTensorRef::new(DType::Int64, &[2, 2], &index_bytes),
        0,
        DynTensorMut::new(DType::Float, &[2, 2], &mut wrong),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::OutputMismatch);
    assert!(
        e.message()
            .contains("output dtype is float but data dtype is int32"),
        "{}",
        e.message()
    );
    assert_eq!(out, [77; 4]);
    assert_eq!(wrong, [0; 16]);

    // GatherND: the expected shape is named.
    let e = gather_nd(
        TensorRef::new(&[2, 2], &data),
        TensorRef::new(&[2, 2], &indices),
        0,
        TensorMut::new(&[2, 2], &mut out),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::OutputMismatch);
    assert!(
        e.message().contains("produces rank 1 (shape [2])"),
        "{}",
        e.message()
    );
    assert_eq!(out, [77; 4]);
}

#[test]
fn wrong_buffer_lengths_and_misalignment_are_invalid_arguments() {
    let data = [1i32, 2, 3];
    let mut out = [0i32; 2];
    let e = gather_elements(
        TensorRef::new(&[2, 2], &data),
        TensorRef::new(&[1, 2], &[0i64, 1]),
        0,
        TensorMut::new(&[1, 2], &mut out),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message()
            .contains("data buffer holds 3 elements but its shape needs 4"),
        "{}",
        e.message()
    );

    let words = [0u64; 4];
    // SAFETY: viewing initialized words as bytes.
    let bytes = unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), 32) };
    let mut out = [0u8; 8];
    let e = gather_elements_dyn(
        DynTensorRef::new(DType::Double, &[2], &bytes[4..20]),
        DynTensorRef::new(DType::Int64, &[1], &bytes[24..32]),
        0,
        DynTensorMut::new(DType::Double, &[1], &mut out[..]),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message().contains("not aligned to 8 bytes"),
        "{}",
        e.message()
    );
}

#[test]
fn a_plan_run_with_other_types_than_planned_is_rejected() {
    let plan = GatherElements::new(
        TensorDesc::new(DType::Float, &[2]),
        TensorDesc::new(DType::Int64, &[2]),
        0,
        &Options::default(),
    )
    .unwrap();
    let e = plan
        .run(&[1u32, 2], &[0i64, 1], &mut [0u32; 2])
        .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    let e = plan
        .run(&[1.0f32, 2.0], &[0i32, 1], &mut [0.0f32; 2])
        .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    let mut out = [0.0f32; 2];
    plan.run(&[1.0f32, 2.0], &[1i64, 0], &mut out).unwrap();
    assert_eq!(out, [2.0, 1.0]);
}
