//! Gather (ONNX 1/11/13, OpenVINO 8): every example of the ONNX spec text and backend node tests
//! and of the OpenVINO spec (with their exact expected values), the error rows of the check
//! order, and randomized shapes against a direct implementation of the element rule, for every
//! element width, both index types and several thread counts.

#[path = "common/hosts.rs"]
mod hosts;

use gatherkit::{
    gather, gather_to_vec, DType, Element, Gather, GatherVersion, IndexElement, Options, Status,
    StringHandle, TensorDesc, TensorMut, TensorRef,
};
use gatherkit_testkit::{count, reference, test_each, Rng};
use hosts::executors;

fn onnx(opset: i32) -> Options {
    Options::onnx(opset)
}

fn ov() -> Options {
    Options::openvino(8)
}

/// Gathers with every version of `versions` (and 1, 2 and 3 threads) and checks shape and values,
/// reporting every version and thread count that fails.
fn check<T: Element + PartialEq + std::fmt::Debug, I: IndexElement>(
    versions: &[Options],
    data: (&[usize], &[T]),
    indices: (&[usize], &[I]),
    axis: i64,
    batch_dims: i64,
    expected: (&[usize], &[T]),
) {
    let runs = versions
        .iter()
        .flat_map(|options| [1, 2, 3].map(|threads| options.with_threads(threads)));
    test_each(
        runs,
        |options| format!("{options:?}"),
        |options| {
            let (shape, out) = gather_to_vec(
                TensorRef::new(data.0, data.1),
                TensorRef::new(indices.0, indices.1),
                axis,
                batch_dims,
                options,
            )
            .unwrap_or_else(|e| panic!("{}", e.message()));
            assert_eq!((shape.as_slice(), out.as_slice()), expected);
        },
    );
}

fn all_onnx() -> Vec<Options> {
    vec![
        onnx(1),
        onnx(10),
        onnx(11),
        onnx(12),
        onnx(13),
        onnx(0),
        ov(),
    ]
}

#[test]
fn onnx_spec_examples() {
    // Example 1, axis 0.
    let data = [1.0f32, 1.2, 2.3, 3.4, 4.5, 5.7];
    check(
        &all_onnx(),
        (&[3, 2], &data),
        (&[2, 2], &[0i64, 1, 1, 2]),
        0,
        0,
        (&[2, 2, 2], &[1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7]),
    );
    // Example 2, axis 1.
    let data = [1.0f32, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9];
    check(
        &all_onnx(),
        (&[3, 3], &data),
        (&[1, 2], &[0i32, 2]),
        1,
        0,
        (&[3, 1, 2], &[1.0, 1.9, 2.3, 3.9, 4.5, 5.9]),
    );
}

#[test]
fn onnx_gather_13_shape_table_and_extra_cases() {
    let data: Vec<i32> = (0..10).collect();
    // (P,Q) with a scalar index along 0 and 1; the data is [[0..4],[5..9]].
    check(
        &all_onnx(),
        (&[2, 5], &data),
        (&[], &[1i64]),
        0,
        0,
        (&[5], &[5, 6, 7, 8, 9]),
    );
    check(
        &all_onnx(),
        (&[2, 5], &data),
        (&[], &[1i64]),
        1,
        0,
        (&[2], &[1, 6]),
    );
    // indices [0] along axis -1.
    check(
        &all_onnx(),
        (&[2, 5], &data),
        (&[1], &[0i64]),
        -1,
        0,
        (&[2, 1], &[0, 5]),
    );
    // Empty indices [0, 3] along axis 1: an empty output of shape [2, 0, 3].
    check(
        &all_onnx(),
        (&[2, 5], &data),
        (&[0, 3], &[] as &[i64]),
        1,
        0,
        (&[2, 0, 3], &[]),
    );
    // (P,Q,R) with a scalar index along 1: out[p, r] = data[p, 1, r].
    let data: Vec<i32> = (0..24).collect();
    check(
        &all_onnx(),
        (&[2, 3, 4], &data),
        (&[], &[1i32]),
        1,
        0,
        (&[2, 4], &[4, 5, 6, 7, 16, 17, 18, 19]),
    );
}

#[test]
fn onnx_backend_node_tests() {
    let data: Vec<f32> = (0..120).map(|x| x as f32 * 0.5 - 7.0).collect();
    let picked = [0usize, 1, 3];
    // test_gather_0: data[[0, 1, 3]] of [5, 4, 3, 2].
    let expected: Vec<f32> = picked
        .iter()
        .flat_map(|&i| data[i * 24..(i + 1) * 24].to_vec())
        .collect();
    check(
        &all_onnx(),
        (&[5, 4, 3, 2], &data),
        (&[3], &[0i64, 1, 3]),
        0,
        0,
        (&[3, 4, 3, 2], &expected),
    );
    // test_gather_1: data[:, [0, 1, 3]].
    let expected: Vec<f32> = (0..5)
        .flat_map(|p| {
            picked
                .iter()
                .flat_map(|&i| data[p * 24 + i * 6..p * 24 + (i + 1) * 6].to_vec())
                .collect::<Vec<_>>()
        })
        .collect();
    check(
        &all_onnx(),
        (&[5, 4, 3, 2], &data),
        (&[3], &[0i64, 1, 3]),
        1,
        0,
        (&[5, 3, 3, 2], &expected),
    );
    // test_gather_2d_indices.
    let data9 = &data[..9];
    let expected: Vec<f32> = (0..3)
        .flat_map(|i| [data9[i * 3], data9[i * 3 + 2]])
        .collect();
    check(
        &all_onnx(),
        (&[3, 3], data9),
        (&[1, 2], &[0i64, 2]),
        1,
        0,
        (&[3, 1, 2], &expected),
    );
    // test_gather_negative_indices: arange(10), [0, -9, -10] -> [0, 1, 0].
    let data: Vec<f32> = (0..10).map(|x| x as f32).collect();
    check(
        &all_onnx(),
        (&[10], &data),
        (&[3], &[0i64, -9, -10]),
        0,
        0,
        (&[3], &[0.0, 1.0, 0.0]),
    );
}

#[test]
fn strings_are_gathered_as_handles() {
    let (a, b, c) = (c"a".as_ptr(), c"b".as_ptr(), c"c".as_ptr());
    let data = [StringHandle(a), StringHandle(b), StringHandle(c)];
    check(
        &all_onnx(),
        (&[3], &data),
        (&[2], &[2i64, -3]),
        0,
        0,
        (&[2], &[StringHandle(c), StringHandle(a)]),
    );
}

#[test]
fn openvino_spec_examples() {
    let v = [ov()];
    // 1. b = 0, axis 0.
    check(
        &v,
        (&[5], &[1, 2, 3, 4, 5i32]),
        (&[3], &[0i64, 0, 4]),
        0,
        0,
        (&[3], &[1, 1, 5]),
    );
    // 2. b = 1, axis 1; 5. the same with b = -1.
    let data: Vec<i32> = (1..=10).collect();
    for b in [1, -1] {
        check(
            &v,
            (&[2, 5], &data),
            (&[2, 3], &[0i64, 0, 4, 4, 0, 0]),
            1,
            b,
            (&[2, 3], &[1, 1, 5, 10, 6, 6]),
        );
    }
    // 3. b = 2, axis 2.
    let data: Vec<i32> = (1..=20).collect();
    check(
        &v,
        (&[2, 2, 5], &data),
        (&[2, 2, 3], &[0i64, 0, 4, 4, 0, 0, 1, 2, 4, 4, 3, 2]),
        2,
        2,
        (&[2, 2, 3], &[1, 1, 5, 10, 6, 6, 12, 13, 15, 20, 19, 18]),
    );
    // 4. b = 1, axis 2.
    let data: Vec<i32> = (1..=40).collect();
    check(
        &v,
        (&[2, 1, 5, 4], &data),
        (&[2, 3], &[1i64, 2, 4, 4, 3, 2]),
        2,
        1,
        (
            &[2, 1, 3, 4],
            &[
                5, 6, 7, 8, 9, 10, 11, 12, 17, 18, 19, 20, 37, 38, 39, 40, 33, 34, 35, 36, 29, 30,
                31, 32,
            ],
        ),
    );
    // 6. negative indices.
    check(
        &v,
        (&[5], &[1, 2, 3, 4, 5i32]),
        (&[3], &[0i64, -2, -1]),
        0,
        0,
        (&[3], &[1, 4, 5]),
    );
    // Extra: b = M = 1 (one index per batch); b = -2 normalizes to 0; b = 1, axis 2 reusing the
    // batch's indices for every position between.
    let data: Vec<i32> = (1..=10).collect();
    check(
        &v,
        (&[2, 5], &data),
        (&[2], &[4i64, 1]),
        1,
        1,
        (&[2], &[5, 7]),
    );
    check(
        &v,
        (&[2, 5], &data),
        (&[2, 3], &[0i64, 0, 4, 4, 0, 0]),
        1,
        -2,
        (&[2, 2, 3], &[1, 1, 5, 5, 1, 1, 6, 6, 10, 10, 6, 6]),
    );
    let data: Vec<i32> = (0..24).collect();
    check(
        &v,
        (&[2, 3, 4], &data),
        (&[2, 2], &[0i64, 2, 1, 1]),
        2,
        1,
        (&[2, 3, 2], &[0, 2, 4, 6, 8, 10, 13, 13, 17, 17, 21, 21]),
    );
}

/// Index values of either index type (int32 rows check that its values are read as such).
#[derive(Clone, Copy, Debug)]
enum Indices {
    I64(&'static [usize], &'static [i64]),
    I32(&'static [usize], &'static [i32]),
}

/// One error row: name, data shape, indices, (axis, batch_dims), options, the status and
/// fragments its message must contain.
type ErrorRow = (
    &'static str,
    &'static [usize],
    Indices,
    (i64, i64),
    Options,
    Status,
    &'static [&'static str],
);

fn check_error(row: &ErrorRow) {
    match row.2 {
        Indices::I64(shape, values) => check_error_with(row, (shape, values)),
        Indices::I32(shape, values) => check_error_with(row, (shape, values)),
    }
}

fn check_error_with<I: IndexElement>(
    &(name, data_shape, _, (axis, batch_dims), options, status, fragments): &ErrorRow,
    indices: (&[usize], &[I]),
) {
    let data = vec![0f32; count(data_shape)];
    let e = gather_to_vec(
        TensorRef::new(data_shape, &data),
        TensorRef::new(indices.0, indices.1),
        axis,
        batch_dims,
        &options,
    )
    .expect_err(name);
    assert_eq!(e.status(), status, "{name}: {}", e.message());
    for f in fragments {
        assert!(
            e.message().contains(f),
            "{name}: {:?} lacks {f:?}",
            e.message()
        );
    }
}

#[test]
fn errors_name_argument_value_and_range() {
    use Status::*;
    let i2 = Indices::I64(&[2], &[0, 1]);
    let rows: [ErrorRow; 14] = [
        (
            "opset 0 is newest; ONNX opset below 1",
            &[3],
            i2,
            (0, 0),
            onnx(-1),
            UnsupportedVersion,
            &["Gather version -1"],
        ),
        (
            // OpenVINO has Gather-1 and Gather-7; gatherkit implements Gather-8 only.
            "OpenVINO before 8",
            &[3],
            i2,
            (0, 0),
            Options::openvino(7),
            UnsupportedVersion,
            &["OpenVINO Gather version 7 is not implemented; the first implemented is 8"],
        ),
        (
            "rank-0 data",
            &[],
            i2,
            (0, 0),
            onnx(13),
            InvalidRank,
            &["Gather-13: data has rank 0"],
        ),
        (
            "axis too large",
            &[3, 4],
            i2,
            (2, 0),
            onnx(13),
            InvalidAttribute,
            &["axis 2 is out of range [-2, 1] for rank 2"],
        ),
        (
            "axis too small",
            &[3, 4],
            i2,
            (-3, 0),
            onnx(11),
            InvalidAttribute,
            &["Gather-11: axis -3"],
        ),
        (
            "ONNX batch_dims",
            &[3, 4],
            i2,
            (1, 1),
            onnx(13),
            InvalidAttribute,
            &["batch_dims is 1", "must be 0"],
        ),
        (
            "batch_dims above axis",
            &[2, 4],
            i2,
            (0, 1),
            ov(),
            InvalidAttribute,
            &[
                "batch_dims 1 is out of range: it must be in [0, min(axis 0, indices rank 1)] = [0, 0]",
                "(or negative, counting back from the indices rank 1)",
            ],
        ),
        (
            "batch_dims below -q",
            &[2, 4],
            i2,
            (1, -2),
            ov(),
            InvalidAttribute,
            &["batch_dims -2 is out of range: a negative value counts back from the indices rank 1 (here to -1)"],
        ),
        (
            "batch dims differ",
            &[3, 4],
            Indices::I64(&[2], &[0, 1]),
            (1, 1),
            ov(),
            ShapeMismatch,
            &["batch dimension 0 differs: indices.shape[0] = 2 but data.shape[0] = 3"],
        ),
        (
            "out of range",
            &[3, 4],
            Indices::I64(&[2, 2], &[0, 1, 2, 3]),
            (0, 0),
            onnx(13),
            IndexOutOfBounds,
            &["Gather-13: indices[1, 1] = 3 is out of range; allowed is [-3, 2] for data.shape[0] = 3"],
        ),
        (
            "negative out of range",
            &[3, 4],
            Indices::I32(&[3], &[0, -5, 9]),
            (1, 0),
            onnx(1),
            IndexOutOfBounds,
            &["Gather-1: indices[1] = -5", "[-4, 3] for data.shape[1] = 4"],
        ),
        (
            "empty axis",
            &[0, 4],
            Indices::I64(&[1], &[0]),
            (0, 0),
            onnx(13),
            IndexOutOfBounds,
            &["data.shape[0] is 0, so no index is valid"],
        ),
        // The output is empty (a dimension before the axis is 0) but the index is still checked,
        // as ONNX Runtime checks every index before it copies.
        (
            "empty outer",
            &[0, 4],
            Indices::I64(&[1], &[7]),
            (1, 0),
            onnx(13),
            IndexOutOfBounds,
            &["indices[0] = 7"],
        ),
        (
            "OpenVINO errors instead of zero-filling",
            &[5],
            Indices::I64(&[3], &[3, 10, -20]),
            (0, 0),
            ov(),
            IndexOutOfBounds,
            &["Gather-8: indices[1] = 10"],
        ),
    ];
    test_each(rows, |row| row.0, check_error);
}

#[test]
fn bfloat16_needs_gather_13_and_indices_must_be_integers() {
    let desc = |dtype| TensorDesc::new(dtype, &[2]);
    let e = Gather::new(desc(DType::Bfloat16), desc(DType::Int64), 0, 0, &onnx(12)).unwrap_err();
    assert_eq!(e.status(), Status::UnsupportedDtype);
    assert!(
        e.message()
            .contains("ONNX opset 12 (Gather-11) does not take data dtype bfloat16"),
        "{}",
        e.message()
    );
    for opts in [onnx(13), ov()] {
        assert!(Gather::new(desc(DType::Bfloat16), desc(DType::Int64), 0, 0, &opts).is_ok());
    }
    let e = Gather::new(desc(DType::Float), desc(DType::Int16), 0, 0, &onnx(13)).unwrap_err();
    assert_eq!(e.status(), Status::UnsupportedDtype);
    assert!(
        e.message().contains("indices dtype is int16"),
        "{}",
        e.message()
    );
    let plan = Gather::new(desc(DType::Float), desc(DType::Int32), -1, 0, &onnx(5)).unwrap();
    assert_eq!(
        (plan.version(), plan.axis(), plan.batch_dims()),
        (GatherVersion::Onnx1, 0, 0)
    );
}

#[test]
fn output_descriptor_must_match() {
    let data = [1.0f32, 2.0, 3.0];
    let mut out = [0f32; 3];
    let e = gather(
        TensorRef::new(&[3], &data),
        TensorRef::new(&[2], &[0i64, 1]),
        0,
        0,
        TensorMut::new(&[3], &mut out),
        &onnx(13),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::OutputMismatch);
    assert!(
        e.message().contains("Gather-13 output shape [2]"),
        "{}",
        e.message()
    );
}

/// Gather by its element rule (the testkit's reference), with the output shape.
fn reference_gather<T: Copy>(
    data: &[T],
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    axis: usize,
    b: usize,
) -> (Vec<usize>, Vec<T>) {
    let axis = axis as i64;
    let out = reference::gather(data, data_shape, indices, indices_shape, axis, b)
        .unwrap_or_else(|p| panic!("index value {} (position {p}) out of range", indices[p]));
    let shape = reference::gather_output_shape(data_shape, indices_shape, axis, b);
    (shape, out)
}

fn random_case<T: Element + PartialEq + std::fmt::Debug, I: IndexElement + TryFrom<i64>>(
    seed: u64,
    value: impl Fn(u64) -> T,
) where
    <I as TryFrom<i64>>::Error: std::fmt::Debug,
{
    let mut rng = Rng::new(seed);
    let r = 1 + rng.below(4) as usize;
    let mut data_shape: Vec<usize> = (0..r).map(|_| 1 + rng.below(6) as usize).collect();
    let axis = rng.below(r as u64) as usize;
    let openvino = rng.below(3) == 0;
    let b = if openvino {
        rng.below(axis as u64 + 1) as usize
    } else {
        0
    };
    let extra = rng.below(3);
    let mut indices_shape: Vec<usize> = data_shape[..b].to_vec();
    indices_shape.extend((0..extra).map(|_| 1 + rng.below(5) as usize));
    if rng.below(8) == 0 {
        // A large slice now and then: the copy loops past the compile-time lengths.
        data_shape[r - 1] = 300 + rng.below(100) as usize;
    }
    let data: Vec<T> = (0..count(&data_shape) as u64).map(&value).collect();
    let idx64: Vec<i64> = (0..count(&indices_shape))
        .map(|_| rng.index(data_shape[axis]))
        .collect();
    let idx: Vec<I> = idx64.iter().map(|&v| I::try_from(v).unwrap()).collect();
    let (shape, expected) = reference_gather(&data, &data_shape, &idx64, &indices_shape, axis, b);
    let options = if openvino { ov() } else { onnx(0) };
    for (threads, options) in executors(&[1, 2, 4]).into_iter().map(|(t, o)| {
        (
            t,
            Options {
                flavor: options.flavor,
                opset: options.opset,
                ..o
            },
        )
    }) {
        let axis_arg = if rng.below(2) == 0 {
            axis as i64
        } else {
            axis as i64 - r as i64
        };
        let (got_shape, got) = gather_to_vec(
            TensorRef::new(&data_shape, &data),
            TensorRef::new(&indices_shape, &idx),
            axis_arg,
            b as i64,
            &options,
        )
        .unwrap_or_else(|e| panic!("seed {seed}, {threads} threads: {}", e.message()));
        assert_eq!(got_shape, shape, "seed {seed}");
        assert!(got == expected, "seed {seed}, {threads} threads: data {data_shape:?} indices {indices_shape:?} axis {axis} b {b}");
    }
}

#[test]
fn random_shapes_match_the_element_rule_for_every_width_and_index_type() {
    for seed in 0..150 {
        random_case::<u8, i64>(seed, |x| x as u8);
        random_case::<u16, i32>(seed, |x| x as u16);
        random_case::<f32, i64>(seed, |x| x as f32);
        random_case::<f64, i32>(seed, |x| x as f64);
        random_case::<gatherkit::Complex<f64>, i64>(seed, |x| {
            gatherkit::Complex::new(x as f64, -(x as f64))
        });
    }
}

#[test]
fn large_gathers_split_across_threads_give_the_same_bits_and_the_same_first_error() {
    // Embedding-like: [5000, 96] f32 along axis 0 with [64, 100] indices; and along axis 1 of
    // [16, 4096, 16] with 1024 indices (every outer position reuses them).
    let mut rng = Rng::new(7);
    for (data_shape, axis, n_idx) in [
        (vec![5000usize, 96], 0usize, 6400usize),
        (vec![16, 4096, 16], 1, 1024),
    ] {
        let data: Vec<f32> = (0..count(&data_shape)).map(|x| x as f32).collect();
        let s = data_shape[axis];
        let mut idx: Vec<i64> = (0..n_idx).map(|_| rng.below(s as u64) as i64).collect();
        let (shape, expected) = reference_gather(&data, &data_shape, &idx, &[n_idx], axis, 0);
        for (threads, options) in executors(&[1, 2, 3, 8]) {
            let (got_shape, got) = gather_to_vec(
                TensorRef::new(&data_shape, &data),
                TensorRef::new(&[n_idx], &idx),
                axis as i64,
                0,
                &options,
            )
            .unwrap();
            assert_eq!(got_shape, shape);
            assert!(got == expected, "{threads} threads");
        }
        // Two bad indices: the first in row-major order is reported whatever the split.
        idx[n_idx / 2] = s as i64;
        idx[n_idx - 1] = -(s as i64) - 1;
        for (threads, options) in executors(&[1, 2, 3, 8]) {
            let e = gather_to_vec(
                TensorRef::new(&data_shape, &data),
                TensorRef::new(&[n_idx], &idx),
                axis as i64,
                0,
                &options,
            )
            .unwrap_err();
            assert!(
                e.message()
                    .contains(&format!("indices[{}] = {s}", n_idx / 2)),
                "{threads} threads: {}",
                e.message()
            );
        }
    }
}

#[test]
fn an_empty_output_costs_no_more_than_checking_its_indices() {
    // A zero-size dimension after the axis: the output [2^40, 2, 0] has no elements, and only
    // the two index values need checking. A kernel that walks every outer position before the
    // axis (checking the same two values 2^40 times) never returns; the call runs on a thread of
    // its own so that this test fails instead of hanging the suite.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let data: [f32; 0] = [];
        let result = gather_to_vec(
            TensorRef::new(&[1 << 40, 3, 0], &data),
            TensorRef::new(&[2], &[2i64, -3]),
            1,
            0,
            &onnx(13),
        );
        let _ = tx.send(result.map(|(shape, out)| (shape, out.len())));
    });
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("an empty Gather still running after 10 s");
    assert_eq!(result.unwrap(), (vec![1 << 40, 2, 0], 0));
}
