//! ScatterElements and ScatterND (ONNX 11/13/16/18): every example of the ONNX spec texts and
//! backend node tests with their exact expected values (f32 results to the bit), through every
//! entry point (into an output, in place, into a new vector, on bytes) with both index types, in
//! every version that has the reduction; the error rows of the check order, with the exact
//! status and a message naming the argument, the value and what was allowed, and nothing written
//! on an error; randomized shapes, dtypes, reductions and duplicates against the testkit's
//! reference; and calls large enough to be split across threads and host pools, which must give
//! the same bits (float sums of duplicates included) and report the same first bad index.

#[cfg(target_os = "linux")]
#[path = "common/child.rs"]
mod child;
#[path = "common/hosts.rs"]
mod hosts;

use gatherkit::{
    bf16, f16, scatter_elements, scatter_elements_dyn, scatter_elements_in_place,
    scatter_elements_to_vec, scatter_nd, scatter_nd_dyn, scatter_nd_in_place, scatter_nd_to_vec,
    Complex, DType, DynTensorMut, DynTensorRef, Element, IndexElement, Options, Reduction, Result,
    ScatterElements, ScatterNd, ScatterVersion, Status, StringHandle, TensorDesc, TensorMut,
    TensorRef,
};
use gatherkit_testkit::scatter::{
    self as reference, Bf16, Bool, Combine, Reduce, ScatterError, Str, C128, C64, F16,
};
use gatherkit_testkit::{coords, count, test_each, Rng};
use hosts::{executors, task_counts};
use std::ffi::c_char;
use std::fmt::Debug;

fn onnx(opset: i32) -> Options {
    Options::onnx(opset)
}

/// Every opset, old to new and past the newest (0 is the newest), that has `reduction`.
fn opsets_with(reduction: Reduction) -> &'static [i32] {
    match reduction {
        Reduction::None => &[11, 12, 13, 15, 16, 17, 18, 0, 21],
        Reduction::Add | Reduction::Mul => &[16, 17, 18, 0, 21],
        Reduction::Max | Reduction::Min => &[18, 0, 21],
    }
}

/// The operator version an ONNX opset selects.
fn version_of(opset: i32) -> u32 {
    match opset {
        11 | 12 => 11,
        13..=15 => 13,
        16 | 17 => 16,
        _ => 18,
    }
}

/// The bytes of a slice of elements.
fn bytes_of<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: initialized elements without padding (gatherkit's element and index types, and
    // plain integers), viewed as bytes for as long as the slice is borrowed.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// The bytes of a slice of elements, for gatherkit to write.
fn bytes_of_mut<T: Element>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `bytes_of`, exclusively borrowed; gatherkit stores only values of the dtype
    // into them (copies of elements, or results of the dtype's arithmetic: a bool is 0 or 1), so
    // every `T` stays valid.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// Zeroed bytes aligned to 8 (enough for every dtype): `len` of them.
fn zeroed_words(len: usize) -> Vec<u64> {
    vec![0u64; len.div_ceil(8)]
}

fn words_as_bytes(words: &[u64], len: usize) -> &[u8] {
    &bytes_of(words)[..len]
}

fn words_as_bytes_mut(words: &mut [u64], len: usize) -> &mut [u8] {
    &mut bytes_of_mut(words)[..len]
}

/// The operator of a call: ScatterElements along an axis, or ScatterND.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Elements(i64),
    Nd,
}

/// The ways to call a scatter: the four free functions (into an output, in place, into a new
/// vector, on bytes) and a plan's in-place run on bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    Output,
    InPlace,
    ToVec,
    Dyn,
    PlanBytesInPlace,
}

const ENTRIES: [Entry; 5] = [
    Entry::Output,
    Entry::InPlace,
    Entry::ToVec,
    Entry::Dyn,
    Entry::PlanBytesInPlace,
];

/// One scatter call's inputs: (shape, elements) of data, indices and updates.
#[derive(Clone, Copy)]
struct Call<'a, T, I> {
    op: Op,
    data: (&'a [usize], &'a [T]),
    indices: (&'a [usize], &'a [I]),
    updates: (&'a [usize], &'a [T]),
    reduction: Reduction,
}

/// Runs `call` through `entry`. Returns the result and what the caller's buffer holds
/// afterwards: the output (filled with `sentinel` before the call) for `Output` and `Dyn`, the
/// data for the in-place entries, the new vector for `ToVec` (empty on an error).
fn run<T: Element, I: IndexElement>(
    call: &Call<'_, T, I>,
    entry: Entry,
    options: &Options,
    sentinel: T,
) -> (Result<()>, Vec<T>) {
    let data = TensorRef::new(call.data.0, call.data.1);
    let indices = TensorRef::new(call.indices.0, call.indices.1);
    let updates = TensorRef::new(call.updates.0, call.updates.1);
    let reduction = call.reduction;
    let index_dtype = I::INDEX_TYPE.dtype();
    match entry {
        Entry::Output => {
            let mut out = vec![sentinel; call.data.1.len()];
            let output = TensorMut::new(call.data.0, &mut out);
            let result = match call.op {
                Op::Elements(axis) => {
                    scatter_elements(data, indices, updates, axis, reduction, output, options)
                }
                Op::Nd => scatter_nd(data, indices, updates, reduction, output, options),
            };
            (result, out)
        }
        Entry::InPlace => {
            let mut buf = call.data.1.to_vec();
            let target = TensorMut::new(call.data.0, &mut buf);
            let result = match call.op {
                Op::Elements(axis) => {
                    scatter_elements_in_place(target, indices, updates, axis, reduction, options)
                }
                Op::Nd => scatter_nd_in_place(target, indices, updates, reduction, options),
            };
            (result, buf)
        }
        Entry::ToVec => {
            let result = match call.op {
                Op::Elements(axis) => {
                    scatter_elements_to_vec(data, indices, updates, axis, reduction, options)
                }
                Op::Nd => scatter_nd_to_vec(data, indices, updates, reduction, options),
            };
            match result {
                Ok((shape, out)) => {
                    assert_eq!(shape, call.data.0, "the output shape is data's");
                    (Ok(()), out)
                }
                Err(e) => (Err(e), Vec::new()),
            }
        }
        Entry::Dyn => {
            let mut out = vec![sentinel; call.data.1.len()];
            let d = DynTensorRef::new(T::DTYPE, call.data.0, bytes_of(call.data.1));
            let i = DynTensorRef::new(index_dtype, call.indices.0, bytes_of(call.indices.1));
            let u = DynTensorRef::new(T::DTYPE, call.updates.0, bytes_of(call.updates.1));
            let o = DynTensorMut::new(T::DTYPE, call.data.0, bytes_of_mut(&mut out));
            let result = match call.op {
                Op::Elements(axis) => scatter_elements_dyn(d, i, u, axis, reduction, o, options),
                Op::Nd => scatter_nd_dyn(d, i, u, reduction, o, options),
            };
            (result, out)
        }
        Entry::PlanBytesInPlace => {
            let mut buf = call.data.1.to_vec();
            let (d, u) = (data.desc(), updates.desc());
            let i = TensorDesc::new(index_dtype, call.indices.0);
            let (ib, ub) = (bytes_of(call.indices.1), bytes_of(call.updates.1));
            let bytes = bytes_of_mut(&mut buf);
            let result = match call.op {
                Op::Elements(axis) => ScatterElements::new(d, i, u, axis, reduction, options)
                    .and_then(|plan| plan.run_bytes_in_place(bytes, ib, ub)),
                Op::Nd => ScatterNd::new(d, i, u, reduction, options)
                    .and_then(|plan| plan.run_bytes_in_place(bytes, ib, ub)),
            };
            (result, buf)
        }
    }
}

/// What the caller's buffer must hold after a failed call through `entry`: nothing written.
fn untouched<T: Copy>(entry: Entry, data: &[T], sentinel: T) -> Vec<T> {
    match entry {
        Entry::Output | Entry::Dyn => vec![sentinel; data.len()],
        Entry::InPlace | Entry::PlanBytesInPlace => data.to_vec(),
        Entry::ToVec => Vec::new(),
    }
}

/// Element types of the exact examples, with a value an output holds before the call (so that
/// an element the scatter forgot to write shows).
trait Sentinel: Element + Debug {
    fn sentinel() -> Self;
}

macro_rules! sentinels {
    ($($t:ty => $v:expr;)*) => {$(
        impl Sentinel for $t {
            fn sentinel() -> $t {
                $v
            }
        }
    )*};
}

sentinels! {
    f32 => -12345.0;
    f64 => -12345.0;
    i8 => -99;
    u8 => 0xEE;
    i32 => -12345;
    i64 => -12345;
    bool => true;
    f16 => f16::from_f32(-999.0);
    bf16 => bf16::from_f32(-999.0);
    Complex<f32> => Complex::new(-999.0, -999.0);
    StringHandle => StringHandle(0xDEAD as *const c_char);
}

/// Scatters with every opset of `opsets`, 1, 2 and 3 threads, every entry and both index types,
/// and checks the result bit for bit against `expected`, reporting every combination that fails.
fn check<T: Sentinel>(
    opsets: &[i32],
    op: Op,
    data: (&[usize], &[T]),
    indices: (&[usize], &[i64]),
    updates: (&[usize], &[T]),
    reduction: Reduction,
    expected: &[T],
) {
    let idx32: Vec<i32> = indices
        .1
        .iter()
        .map(|&v| i32::try_from(v).unwrap())
        .collect();
    let rows = opsets.iter().flat_map(|&opset| {
        [1, 2, 3]
            .into_iter()
            .flat_map(move |threads| ENTRIES.map(|entry| (opset, threads, entry)))
    });
    test_each(
        rows,
        |row| format!("{op:?} {reduction:?} (opset, threads, entry) {row:?}"),
        |&(opset, threads, entry)| {
            let options = onnx(opset).with_threads(threads);
            let call64 = Call {
                op,
                data,
                indices,
                updates,
                reduction,
            };
            let call32 = Call {
                indices: (indices.0, &idx32[..]),
                op,
                data,
                updates,
                reduction,
            };
            for (which, (result, got)) in [
                ("int64", run(&call64, entry, &options, T::sentinel())),
                ("int32", run(&call32, entry, &options, T::sentinel())),
            ] {
                result.unwrap_or_else(|e| panic!("{which} indices: {}", e.message()));
                assert!(
                    bytes_of(&got) == bytes_of(expected),
                    "{which} indices: got {got:?}, expected {expected:?}"
                );
            }
        },
    );
}

/// ScatterElements with updates of the indices' shape.
#[allow(clippy::too_many_arguments)]
fn check_elements<T: Sentinel>(
    opsets: &[i32],
    data: (&[usize], &[T]),
    indices: (&[usize], &[i64]),
    updates: &[T],
    axis: i64,
    reduction: Reduction,
    expected: &[T],
) {
    check(
        opsets,
        Op::Elements(axis),
        data,
        indices,
        (indices.0, updates),
        reduction,
        expected,
    );
}

// ---------------------------------------------------------------------------------------------
// ScatterElements: the spec examples and backend node tests.

#[test]
fn scatter_elements_spec_examples() {
    // Example 1 (test_scatter_elements_without_axis, and Scatter-9's test_scatter_without_axis):
    // axis 0 by default, also spelled -2.
    let expected = [2.0f32, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2];
    for axis in [0, -2] {
        check_elements(
            opsets_with(Reduction::None),
            (&[3, 3], &[0.0f32; 9]),
            (&[2, 3], &[1, 0, 2, 0, 2, 1]),
            &[1.0, 1.1, 1.2, 2.0, 2.1, 2.2],
            axis,
            Reduction::None,
            &expected,
        );
    }
    // Example 2 (test_scatter_elements_with_axis, test_scatter_with_axis): axis 1, also -1.
    for axis in [1, -1] {
        check_elements(
            opsets_with(Reduction::None),
            (&[1, 5], &[1.0f32, 2.0, 3.0, 4.0, 5.0]),
            (&[1, 2], &[1, 3]),
            &[1.1, 2.1],
            axis,
            Reduction::None,
            &[1.0, 1.1, 3.0, 2.1, 5.0],
        );
    }
}

#[test]
fn scatter_elements_backend_node_tests() {
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    let row = |indices: &[i64], reduction, expected: &[f32]| {
        check_elements(
            opsets_with(reduction),
            (&[1, 5], &data),
            (&[1, 2], indices),
            &[1.1, 2.1],
            1,
            reduction,
            expected,
        );
    };
    // test_scatter_elements_with_negative_indices.
    row(&[1, -3], Reduction::None, &[1.0, 1.1, 2.1, 4.0, 5.0]);
    // test_scatter_elements_with_duplicate_indices: (2 + 1.1f) + 2.1f = 0x40A66666.
    let add = f32::from_bits(0x40A6_6666);
    row(&[1, 1], Reduction::Add, &[1.0, add, 3.0, 4.0, 5.0]);
    // test_scatter_elements_with_reduction_mul: (2 * 1.1f) * 2.1f = 0x4093D70A.
    let mul = f32::from_bits(0x4093_D70A);
    row(&[1, 1], Reduction::Mul, &[1.0, mul, 3.0, 4.0, 5.0]);
    // test_scatter_elements_with_reduction_max and _min.
    row(&[1, 1], Reduction::Max, &[1.0, 2.1, 3.0, 4.0, 5.0]);
    row(&[1, 1], Reduction::Min, &[1.0, 1.1, 3.0, 4.0, 5.0]);
    // The spec's values, read as f32 literals, are those bits.
    assert_eq!(
        (5.2f32.to_bits(), 4.62f32.to_bits()),
        (0x40A6_6666, 0x4093_D70A)
    );
    assert_eq!(
        (1.1f32.to_bits(), 2.1f32.to_bits()),
        (0x3F8C_CCCD, 0x4006_6666)
    );
}

#[test]
fn scatter_elements_extra_cases_and_duplicates_in_row_major_order() {
    // Indices longer than the axis: duplicates, the last one wins.
    check_elements(
        opsets_with(Reduction::None),
        (&[1, 3], &[1i32, 2, 3]),
        (&[1, 5], &[0, 1, 1, 2, 0]),
        &[10, 20, 30, 40, 50],
        1,
        Reduction::None,
        &[50, 30, 40],
    );
    check_elements(
        opsets_with(Reduction::None),
        (&[2, 3], &[0i64; 6]),
        (&[2, 3], &[2, 2, 0, 1, 1, 1]),
        &[1, 2, 3, 4, 5, 6],
        1,
        Reduction::None,
        &[3, 0, 2, 0, 6, 0],
    );
    // Axis -2 with indices smaller than data.
    check_elements(
        opsets_with(Reduction::None),
        (&[2, 3], &[0i64; 6]),
        (&[1, 1], &[-1]),
        &[1],
        -2,
        Reduction::None,
        &[0, 0, 0, 1, 0, 0],
    );
    // -1 and s - 1 hit the same element: along axis 0 the duplicates are folded in increasing
    // position along the axis, also when spelled differently.
    check_elements(
        opsets_with(Reduction::Add),
        (&[3, 2], &[0i64, 0, 0, 0, 0, 0]),
        (&[3, 2], &[2, -3, -1, 0, 2, 0]),
        &[1, 10, 100, 1000, 10000, 100000],
        0,
        Reduction::Add,
        &[0, 101010, 0, 0, 10101, 0],
    );
    check_elements(
        opsets_with(Reduction::None),
        (&[3, 2], &[0i64, 0, 0, 0, 0, 0]),
        (&[3, 2], &[2, -3, -1, 0, 2, 0]),
        &[1, 10, 100, 1000, 10000, 100000],
        0,
        Reduction::None,
        &[0, 100000, 0, 0, 10000, 0],
    );
    // Empty indices leave data as it is, for every reduction.
    for reduction in Reduction::ALL {
        check_elements(
            opsets_with(reduction),
            (&[2, 2], &[1.5f32, 2.5, 3.5, 4.5]),
            (&[0, 2], &[]),
            &[],
            1,
            reduction,
            &[1.5, 2.5, 3.5, 4.5],
        );
    }
    // Rank 4, along an inner axis, with indices smaller than data off the axis.
    let data: Vec<i64> = (0..2 * 3 * 4 * 2).collect();
    let mut expected = data.clone();
    // indices shape [1, 2, 2, 1], axis 2: out[0, j, idx, 0] = upd.
    let idx = [3i64, -4, 1, 1];
    let upd = [100i64, 200, 300, 400];
    for (p, (&v, &u)) in idx.iter().zip(&upd).enumerate() {
        let j = p / 2;
        let at = j * 8 + (v.rem_euclid(4) as usize) * 2;
        expected[at] = u;
    }
    check_elements(
        opsets_with(Reduction::None),
        (&[2, 3, 4, 2], &data),
        (&[1, 2, 2, 1], &idx),
        &upd,
        2,
        Reduction::None,
        &expected,
    );
}

// ---------------------------------------------------------------------------------------------
// ScatterND: the spec examples and backend node tests.

/// ScatterND example 2's data and updates, shapes [4, 4, 4] and [2, 4, 4].
fn nd_example_2() -> (Vec<f32>, Vec<f32>) {
    let a = [
        1., 2., 3., 4., 5., 6., 7., 8., 8., 7., 6., 5., 4., 3., 2., 1.,
    ];
    let b = [
        8., 7., 6., 5., 4., 3., 2., 1., 1., 2., 3., 4., 5., 6., 7., 8.,
    ];
    let data = [a, a, b, b].concat();
    let updates = [5., 6., 7., 8., 1., 2., 3., 4.]
        .iter()
        .flat_map(|&v| [v; 4])
        .collect();
    (data, updates)
}

#[test]
fn scatter_nd_spec_examples() {
    // Example 1: k = r = 1.
    check(
        opsets_with(Reduction::None),
        Op::Nd,
        (&[8], &[1i64, 2, 3, 4, 5, 6, 7, 8]),
        (&[4, 1], &[4, 3, 1, 7]),
        (&[4], &[9, 10, 11, 12]),
        Reduction::None,
        &[1, 11, 3, 10, 9, 6, 7, 12],
    );
    // Example 2 (test_scatternd): k = 1 < r = 3, blocks 0 and 2 replaced.
    let (data, updates) = nd_example_2();
    let expected = [&updates[..16], &data[16..32], &updates[16..], &data[48..]].concat();
    check(
        opsets_with(Reduction::None),
        Op::Nd,
        (&[4, 4, 4], &data),
        (&[2, 1], &[0, 2]),
        (&[2, 4, 4], &updates),
        Reduction::None,
        &expected,
    );
}

#[test]
fn scatter_nd_backend_reduction_tests() {
    // test_scatternd_add, _multiply, _max, _min: both update blocks into block 0; blocks 1, 2
    // and 3 stay data's (the tests' comments show a wrong block 2).
    let (data, updates) = nd_example_2();
    let blocks: [(Reduction, [f32; 16]); 4] = [
        (
            Reduction::Add,
            [
                7., 8., 9., 10., 13., 14., 15., 16., 18., 17., 16., 15., 16., 15., 14., 13.,
            ],
        ),
        (
            Reduction::Mul,
            [
                5., 10., 15., 20., 60., 72., 84., 96., 168., 147., 126., 105., 128., 96., 64., 32.,
            ],
        ),
        (
            Reduction::Max,
            [
                5., 5., 5., 5., 6., 6., 7., 8., 8., 7., 7., 7., 8., 8., 8., 8.,
            ],
        ),
        (
            Reduction::Min,
            [
                1., 1., 1., 1., 2., 2., 2., 2., 3., 3., 3., 3., 4., 3., 2., 1.,
            ],
        ),
    ];
    for (reduction, block) in blocks {
        let expected = [&block[..], &data[16..]].concat();
        check(
            opsets_with(reduction),
            Op::Nd,
            (&[4, 4, 4], &data),
            (&[2, 1], &[0, 0]),
            (&[2, 4, 4], &updates),
            reduction,
            &expected,
        );
    }
    // test_scatternd_max_with_element_indices and _min_: k = r = 2.
    for (reduction, expected) in [
        (Reduction::Max, [5.0f32, 2.0, 3.0, 4.0]),
        (Reduction::Min, [1.0, 2.0, 3.0, 1.0]),
    ] {
        check(
            opsets_with(reduction),
            Op::Nd,
            (&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]),
            (&[2, 2], &[0, 0, 1, 1]),
            (&[2], &[5.0, 1.0]),
            reduction,
            &expected,
        );
    }
}

#[test]
fn scatter_nd_extra_cases() {
    let data = [0i64, 1, 2, 3, 4, 5];
    // Negative components, k = r.
    check(
        opsets_with(Reduction::None),
        Op::Nd,
        (&[2, 3], &data),
        (&[2, 2], &[1, -1, 0, 0]),
        (&[2], &[100, 200]),
        Reduction::None,
        &[200, 1, 2, 3, 4, 100],
    );
    // A negative row, k = 1 < r.
    check(
        opsets_with(Reduction::None),
        Op::Nd,
        (&[2, 3], &data),
        (&[1, 1], &[-1]),
        (&[1, 3], &[7, 8, 9]),
        Reduction::None,
        &[0, 1, 2, 7, 8, 9],
    );
    // k = 0: every empty tuple addresses the whole tensor.
    check(
        opsets_with(Reduction::None),
        Op::Nd,
        (&[2, 3], &data),
        (&[1, 0], &[]),
        (&[1, 2, 3], &[9; 6]),
        Reduction::None,
        &[9; 6],
    );
    let updates: Vec<i64> = [[9i64; 6], [1; 6]].concat();
    check(
        opsets_with(Reduction::Add),
        Op::Nd,
        (&[2, 3], &data),
        (&[2, 0], &[]),
        (&[2, 2, 3], &updates),
        Reduction::Add,
        &[10, 11, 12, 13, 14, 15],
    );
    // Duplicates with none: row-major order, the last one wins.
    let updates: Vec<i64> = (0..12).collect();
    check(
        opsets_with(Reduction::None),
        Op::Nd,
        (&[2, 3], &[0i64; 6]),
        (&[2, 2, 1], &[1, 0, 1, 1]),
        (&[2, 2, 3], &updates),
        Reduction::None,
        &[3, 4, 5, 9, 10, 11],
    );
    // With add, in row-major order of the tuples: the same element spelled 1 and -1.
    check(
        opsets_with(Reduction::Add),
        Op::Nd,
        (&[2, 3], &[0i64; 6]),
        (&[3, 1], &[1, -1, -2]),
        (&[3, 3], &[1, 2, 3, 10, 20, 30, 100, 200, 300]),
        Reduction::Add,
        &[100, 200, 300, 11, 22, 33],
    );
    // No tuples (indices [0, 1]): data unchanged, for every reduction.
    for reduction in Reduction::ALL {
        check(
            opsets_with(reduction),
            Op::Nd,
            (&[2, 3], &[1.5f32, 2.5, 3.5, 4.5, 5.5, 6.5]),
            (&[0, 1], &[]),
            (&[0, 3], &[]),
            reduction,
            &[1.5, 2.5, 3.5, 4.5, 5.5, 6.5],
        );
    }
    // Rank 4 data, k = 2, batch of 2 x 2 tuples: slices [3, 2].
    let data: Vec<i32> = (0..2 * 2 * 3 * 2).collect();
    let tuples = [1i64, 0, -1, -1, 0, 1, 0, 0];
    let updates: Vec<i32> = (100..100 + 4 * 6).collect();
    let mut expected = data.clone();
    for (t, tuple) in tuples.chunks(2).enumerate() {
        let at = (tuple[0].rem_euclid(2) * 12 + tuple[1].rem_euclid(2) * 6) as usize;
        expected[at..at + 6].copy_from_slice(&updates[t * 6..(t + 1) * 6]);
    }
    check(
        opsets_with(Reduction::None),
        Op::Nd,
        (&[2, 2, 3, 2], &data),
        (&[2, 2, 2], &tuples),
        (&[2, 2, 3, 2], &updates),
        Reduction::None,
        &expected,
    );
}

// ---------------------------------------------------------------------------------------------
// The reductions' arithmetic, in gatherkit's promised semantics, for both operators.

/// Checks a 1-D scatter of `updates` at `indices` into `data` with both operators (ScatterND
/// with one-component tuples).
fn check_1d<T: Sentinel>(
    data: &[T],
    indices: &[i64],
    updates: &[T],
    reduction: Reduction,
    expected: &[T],
) {
    let n = [data.len()];
    let m = [indices.len()];
    check_elements(
        opsets_with(reduction),
        (&n, data),
        (&m, indices),
        updates,
        0,
        reduction,
        expected,
    );
    check(
        opsets_with(reduction),
        Op::Nd,
        (&n, data),
        (&[indices.len(), 1], indices),
        (&m, updates),
        reduction,
        expected,
    );
}

#[test]
fn max_and_min_keep_the_existing_value_only_when_strictly_beyond_the_update() {
    // Two NaNs told apart by their bits: one already in data, one in the updates.
    let old = f32::from_bits(0x7FC0_0001);
    let new = f32::from_bits(0xFFC0_0002);
    // The spec's table, ONNX Runtime's column (the rule gatherkit follows): a NaN update lands
    // and an existing NaN is replaced.
    let data = [old, 1.0, old, 3.0];
    let updates = [1.0, new, new, 4.0];
    check_1d(
        &data,
        &[0, 1, 2, 3],
        &updates,
        Reduction::Max,
        &[1.0, new, new, 4.0],
    );
    check_1d(
        &data,
        &[0, 1, 2, 3],
        &updates,
        Reduction::Min,
        &[1.0, new, new, 3.0],
    );
    // Duplicates, applied in order: [5, NaN] for both, as ONNX Runtime gives.
    for reduction in [Reduction::Max, Reduction::Min] {
        check_1d(
            &[1.0f32, 1.0],
            &[0, 0, 1, 1],
            &[new, 5.0, 5.0, new],
            reduction,
            &[5.0, new],
        );
    }
    // A tie takes the update, signed zeros included.
    let data = [-0.0f32, 0.0, -0.0, 0.0];
    let updates = [0.0, -0.0, -0.0, 0.0];
    for reduction in [Reduction::Max, Reduction::Min] {
        check_1d(&data, &[0, 1, 2, 3], &updates, reduction, &updates);
    }
    // f64 and f16 the same way.
    let (old64, new64) = (f64::from_bits(0x7FF8_0000_0000_0001), -f64::NAN);
    check_1d(
        &[old64, 1.0, -0.0],
        &[0, 1, 2, 2],
        &[2.0, new64, 0.0, -1.0],
        Reduction::Max,
        &[2.0, new64, 0.0],
    );
    let h = f16::from_f32;
    let old16 = f16::from_bits(0x7E01);
    check_1d(
        &[old16, h(1.0), h(0.0)],
        &[0, 1, 2, 1],
        &[h(-3.0), h(-2.0), h(-0.0), h(0.5)],
        Reduction::Min,
        &[h(-3.0), h(-2.0), h(-0.0)],
    );
}

#[test]
fn reductions_round_or_wrap_in_the_dtype() {
    // float16 2048 + 1 + 1 = 2048 (rounded after each step), bfloat16 256 + 1 + 1 = 256.
    let h = f16::from_f32;
    check_1d(
        &[h(2048.0)],
        &[0, 0],
        &[h(1.0), h(1.0)],
        Reduction::Add,
        &[h(2048.0)],
    );
    let b = bf16::from_f32;
    check_1d(
        &[b(256.0)],
        &[0, 0],
        &[b(1.0), b(1.0)],
        Reduction::Add,
        &[b(256.0)],
    );
    // ... and 1.5 * 1.5 * 1.5 = 3.375 exactly in both.
    check_1d(
        &[h(1.5)],
        &[0, 0],
        &[h(1.5), h(1.5)],
        Reduction::Mul,
        &[h(3.375)],
    );
    check_1d(
        &[b(1.5)],
        &[0, 0],
        &[b(1.5), b(1.5)],
        Reduction::Mul,
        &[b(3.375)],
    );
    // Integers wrap: int8 100 + 100 = -56, 100 * 100 = 16; uint8 200 + 100 = 44.
    check_1d(&[100i8], &[0], &[100], Reduction::Add, &[-56]);
    check_1d(&[100i8], &[0], &[100], Reduction::Mul, &[16]);
    check_1d(&[200u8], &[0], &[100], Reduction::Add, &[44]);
    check_1d(
        &[i64::MAX, -5],
        &[0, 1],
        &[1, 3],
        Reduction::Add,
        &[i64::MIN, -2],
    );
    check_1d(
        &[-5i64, -5],
        &[0, 1, 1],
        &[3, -7, -6],
        Reduction::Max,
        &[3, -5],
    );
    check_1d(
        &[-5i64, -5],
        &[0, 1, 1],
        &[3, -7, -6],
        Reduction::Min,
        &[-5, -7],
    );
    // bool: add and max are OR, mul and min are AND.
    let data = [false, true, false, true];
    let updates = [true, false, false, true];
    let idx = [0, 1, 2, 3];
    check_1d(
        &data,
        &idx,
        &updates,
        Reduction::Add,
        &[true, true, false, true],
    );
    check_1d(
        &data,
        &idx,
        &updates,
        Reduction::Max,
        &[true, true, false, true],
    );
    check_1d(
        &data,
        &idx,
        &updates,
        Reduction::Mul,
        &[false, false, false, true],
    );
    check_1d(
        &data,
        &idx,
        &updates,
        Reduction::Min,
        &[false, false, false, true],
    );
    // complex: add componentwise, mul (ar*br - ai*bi, ar*bi + ai*br).
    let c = Complex::new;
    check_1d(
        &[c(1.0f32, 2.0)],
        &[0],
        &[c(3.0, 4.0)],
        Reduction::Add,
        &[c(4.0, 6.0)],
    );
    check_1d(
        &[c(1.0f32, 2.0)],
        &[0],
        &[c(3.0, 4.0)],
        Reduction::Mul,
        &[c(-5.0, 10.0)],
    );
    // Strings are handles, copied: the last duplicate wins.
    let s = |n: usize| StringHandle(n as *const c_char);
    check_1d(
        &[s(1), s(2), s(3)],
        &[2, -3, 2],
        &[s(7), s(8), s(9)],
        Reduction::None,
        &[s(8), s(2), s(9)],
    );
}

#[test]
fn bool_bytes_other_than_0_and_1_are_true_and_reductions_give_0_or_1() {
    // On bytes (the C ABI's bool), any nonzero byte is true; reductions store 0 or 1, and none
    // copies the update's byte (and data's) unchanged. Checked against the reference, which
    // models exactly that, for both operators and both in-place and copying byte entries.
    let mut rng = Rng::new(5);
    for case in 0..200 {
        let n = 1 + rng.below(6) as usize;
        let m = rng.below(8) as usize;
        let data: Vec<u8> = (0..n).map(|_| rng.below(4) as u8).collect();
        let updates: Vec<u8> = (0..m).map(|_| rng.below(4) as u8).collect();
        let indices: Vec<i64> = (0..m).map(|_| rng.index(n)).collect();
        let reduction = Reduction::ALL[rng.below(5) as usize];
        let as_bools = |v: &[u8]| v.iter().map(|&b| Bool(b)).collect::<Vec<_>>();
        let want = reference::scatter_elements(
            &as_bools(&data),
            &[n],
            &indices,
            &[m],
            &as_bools(&updates),
            0,
            reduce_of(reduction),
        )
        .unwrap();
        let want: Vec<u8> = want.iter().map(|b| b.0).collect();
        for op in [Op::Elements(0), Op::Nd] {
            let indices_shape = match op {
                Op::Elements(_) => vec![m],
                Op::Nd => vec![m, 1],
            };
            let (data_shape, updates_shape) = ([n], [m]);
            let d = DynTensorRef::new(DType::Bool, &data_shape, &data);
            let i = DynTensorRef::new(DType::Int64, &indices_shape, bytes_of(&indices));
            let u = DynTensorRef::new(DType::Bool, &updates_shape, &updates);
            let mut out = vec![0xAAu8; n];
            let o = DynTensorMut::new(DType::Bool, &data_shape, &mut out);
            let options = Options::default();
            let result = match op {
                Op::Elements(axis) => scatter_elements_dyn(d, i, u, axis, reduction, o, &options),
                Op::Nd => scatter_nd_dyn(d, i, u, reduction, o, &options),
            };
            result.unwrap();
            let ctx = format!("case {case} {op:?} {reduction:?} data {data:?} indices {indices:?} updates {updates:?}");
            assert_eq!(out, want, "{ctx}");
            let mut in_place = data.clone();
            let (dd, id, ud) = (d.desc, i.desc, u.desc);
            let result = match op {
                Op::Elements(axis) => ScatterElements::new(dd, id, ud, axis, reduction, &options)
                    .and_then(|p| p.run_bytes_in_place(&mut in_place, i.bytes, &updates)),
                Op::Nd => ScatterNd::new(dd, id, ud, reduction, &options)
                    .and_then(|p| p.run_bytes_in_place(&mut in_place, i.bytes, &updates)),
            };
            result.unwrap();
            // In place, only the updated elements are written: the others keep their bytes.
            assert_eq!(in_place, want, "{ctx}, in place");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Plans, versions and reductions.

#[test]
fn opsets_select_versions_and_plans_report_what_they_validated() {
    let rows: [(i32, ScatterVersion); 10] = [
        (11, ScatterVersion::Onnx11),
        (12, ScatterVersion::Onnx11),
        (13, ScatterVersion::Onnx13),
        (15, ScatterVersion::Onnx13),
        (16, ScatterVersion::Onnx16),
        (17, ScatterVersion::Onnx16),
        (18, ScatterVersion::Onnx18),
        (19, ScatterVersion::Onnx18),
        (100, ScatterVersion::Onnx18),
        (0, ScatterVersion::Onnx18),
    ];
    test_each(
        rows,
        |row| format!("opset {}", row.0),
        |&(opset, version)| {
            let d = TensorDesc::new(DType::Float, &[2, 3]);
            let i = TensorDesc::new(DType::Int32, &[2, 2]);
            let u = TensorDesc::new(DType::Float, &[2, 2]);
            let plan = ScatterElements::new(d, i, u, -1, Reduction::None, &onnx(opset)).unwrap();
            assert_eq!(
                (
                    plan.version(),
                    plan.reduction(),
                    plan.axis(),
                    plan.output_shape()
                ),
                (version, Reduction::None, 1, &[2usize, 3][..])
            );
            assert_eq!(version.number(), version_of(opset));
            let i = TensorDesc::new(DType::Int64, &[2, 1]);
            let u = TensorDesc::new(DType::Float, &[2, 3]);
            let plan = ScatterNd::new(d, i, u, Reduction::None, &onnx(opset)).unwrap();
            assert_eq!(
                (plan.version(), plan.output_shape()),
                (version, &[2usize, 3][..])
            );
        },
    );
    for dtype in DType::ALL {
        assert_eq!(
            ScatterVersion::Onnx11.supports(dtype),
            dtype != DType::Bfloat16,
            "{dtype}"
        );
        assert!(ScatterVersion::Onnx13.supports(dtype), "{dtype}");
    }
}

#[test]
fn reductions_have_codes_names_versions_and_dtypes() {
    let names: Vec<_> = Reduction::ALL
        .iter()
        .map(|r| (r.code(), r.name()))
        .collect();
    assert_eq!(
        names,
        [(0, "none"), (1, "add"), (2, "mul"), (3, "max"), (4, "min")]
    );
    for r in Reduction::ALL {
        assert_eq!(Reduction::try_from(r.code()).unwrap(), r);
    }
    for bad in [-1, 5, i32::MAX] {
        let e = Reduction::try_from(bad).unwrap_err();
        assert_eq!(e.status(), Status::InvalidAttribute);
        assert!(
            e.message().contains(&format!("reduction is {bad}"))
                && e.message().contains("4 (GK_REDUCTION_MIN)"),
            "{}",
            e.message()
        );
    }
    assert_eq!(Reduction::default(), Reduction::None);
    for v in [
        ScatterVersion::Onnx11,
        ScatterVersion::Onnx13,
        ScatterVersion::Onnx16,
        ScatterVersion::Onnx18,
    ] {
        let has: Vec<bool> = Reduction::ALL.iter().map(|&r| v.has_reduction(r)).collect();
        let n = v.number();
        assert_eq!(has, [true, n >= 16, n >= 16, n >= 18, n >= 18], "{v:?}");
    }
    for dtype in DType::ALL {
        let defined: Vec<bool> = Reduction::ALL
            .iter()
            .map(|r| r.is_defined_for(dtype))
            .collect();
        let expected = match dtype {
            DType::String => [true, false, false, false, false],
            DType::Complex64 | DType::Complex128 => [true, true, true, false, false],
            _ => [true; 5],
        };
        assert_eq!(defined, expected, "{dtype}");
    }
}

#[test]
fn a_plan_runs_many_times_and_only_on_its_own_types() {
    let d = TensorDesc::new(DType::Float, &[1, 5]);
    let i = TensorDesc::new(DType::Int64, &[1, 2]);
    let u = TensorDesc::new(DType::Float, &[1, 2]);
    let plan = ScatterElements::new(d, i, u, 1, Reduction::Add, &onnx(16)).unwrap();
    plan.check_output(d).unwrap();
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    for (indices, expected) in [
        (
            [1i64, 1],
            [1.0f32, f32::from_bits(0x40A6_6666), 3.0, 4.0, 5.0],
        ),
        ([0, -1], [1.0 + 1.1, 2.0, 3.0, 4.0, 5.0 + 2.1]),
    ] {
        let mut out = [0f32; 5];
        plan.run(&data, &indices, &[1.1, 2.1], &mut out).unwrap();
        assert_eq!(out, expected);
        let mut uninit = [std::mem::MaybeUninit::<f32>::uninit(); 5];
        plan.run_uninit(&data, &indices, &[1.1, 2.1], &mut uninit)
            .unwrap();
        // SAFETY: run_uninit returned Ok, which initializes every element.
        let got = uninit.map(|v| unsafe { v.assume_init() });
        assert_eq!(got, expected);
        let mut in_place = data;
        plan.run_in_place(&mut in_place, &indices, &[1.1, 2.1])
            .unwrap();
        assert_eq!(in_place, expected);
    }
    let e = plan
        .run(&[1i32, 2, 3, 4, 5], &[1i64, 1], &[1, 2], &mut [0i32; 5])
        .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message()
            .contains("the plan was made for float data and int64 indices, not int32 and int64"),
        "{}",
        e.message()
    );
    let mut out = [7.0f32; 5];
    let e = plan
        .run(&data, &[1i32, 1], &[1.1, 2.1], &mut out)
        .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message().contains("not float and int32"),
        "{}",
        e.message()
    );
    assert_eq!(out, [7.0; 5]);
}

// ---------------------------------------------------------------------------------------------
// Errors: every step of the check order.

/// One validation error row: the operator (with its axis), the dtype and shape of data, indices
/// and updates, the reduction, the options, the status and fragments its message must contain.
struct ErrorRow {
    name: &'static str,
    op: Op,
    data: (DType, &'static [usize]),
    indices: (DType, &'static [usize]),
    updates: (DType, &'static [usize]),
    reduction: Reduction,
    options: Options,
    status: Status,
    fragments: &'static [&'static str],
}

/// The byte size of a tensor, when it is small enough to allocate for a test.
fn small_bytes(dtype: DType, shape: &[usize]) -> Option<usize> {
    let n = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))?
        .checked_mul(dtype.size())?;
    (n <= 1 << 20).then_some(n)
}

/// Checks a row through the plan constructor and, when the tensors are small enough to
/// allocate, through the `_dyn` entry with zeroed buffers (valid elements and index values of
/// every dtype) and an output of data's descriptor, which must stay unwritten.
fn check_error(row: &ErrorRow) {
    let name = row.name;
    let (d, i, u) = (
        TensorDesc::new(row.data.0, row.data.1),
        TensorDesc::new(row.indices.0, row.indices.1),
        TensorDesc::new(row.updates.0, row.updates.1),
    );
    let planned = match row.op {
        Op::Elements(axis) => {
            ScatterElements::new(d, i, u, axis, row.reduction, &row.options).map(|_| ())
        }
        Op::Nd => ScatterNd::new(d, i, u, row.reduction, &row.options).map(|_| ()),
    };
    let mut errors = vec![("plan", planned.expect_err(name))];
    let sizes = [
        small_bytes(row.data.0, row.data.1),
        small_bytes(row.indices.0, row.indices.1),
        small_bytes(row.updates.0, row.updates.1),
    ];
    if let [Some(dn), Some(inn), Some(un)] = sizes {
        let (dw, iw, uw) = (zeroed_words(dn), zeroed_words(inn), zeroed_words(un));
        let mut ow = vec![0xA5A5_A5A5_A5A5_A5A5u64; dn.div_ceil(8)];
        let dd = DynTensorRef::new(row.data.0, row.data.1, words_as_bytes(&dw, dn));
        let id = DynTensorRef::new(row.indices.0, row.indices.1, words_as_bytes(&iw, inn));
        let ud = DynTensorRef::new(row.updates.0, row.updates.1, words_as_bytes(&uw, un));
        let od = DynTensorMut::new(row.data.0, row.data.1, words_as_bytes_mut(&mut ow, dn));
        let result = match row.op {
            Op::Elements(axis) => {
                scatter_elements_dyn(dd, id, ud, axis, row.reduction, od, &row.options)
            }
            Op::Nd => scatter_nd_dyn(dd, id, ud, row.reduction, od, &row.options),
        };
        errors.push(("dyn", result.expect_err(name)));
        assert!(
            ow.iter().all(|&w| w == 0xA5A5_A5A5_A5A5_A5A5),
            "{name}: the output was written"
        );
    }
    for (entry, e) in errors {
        assert_eq!(e.status(), row.status, "{name} ({entry}): {}", e.message());
        for f in row.fragments {
            assert!(
                e.message().contains(f),
                "{name} ({entry}): {:?} lacks {f:?}",
                e.message()
            );
        }
    }
}

const F: DType = DType::Float;
const I64: DType = DType::Int64;
const I32: DType = DType::Int32;

/// A ScatterElements row with float data and int64 indices unless the row says otherwise.
#[allow(clippy::too_many_arguments)]
fn se_row(
    name: &'static str,
    data: (DType, &'static [usize]),
    indices: (DType, &'static [usize]),
    updates: (DType, &'static [usize]),
    axis: i64,
    reduction: Reduction,
    options: Options,
    status: Status,
    fragments: &'static [&'static str],
) -> ErrorRow {
    ErrorRow {
        name,
        op: Op::Elements(axis),
        data,
        indices,
        updates,
        reduction,
        options,
        status,
        fragments,
    }
}

#[allow(clippy::too_many_arguments)]
fn nd_row(
    name: &'static str,
    data: (DType, &'static [usize]),
    indices: (DType, &'static [usize]),
    updates: (DType, &'static [usize]),
    reduction: Reduction,
    options: Options,
    status: Status,
    fragments: &'static [&'static str],
) -> ErrorRow {
    ErrorRow {
        name,
        op: Op::Nd,
        data,
        indices,
        updates,
        reduction,
        options,
        status,
        fragments,
    }
}

#[test]
fn scatter_elements_errors_follow_the_check_order() {
    use Reduction::{Add, Max, Min, Mul, None as Plain};
    use Status::*;
    let huge: &'static [usize] = &[1 << 62, 2];
    let rows = [
        // 1. Version.
        se_row("opset 10", (F, &[3]), (I64, &[1]), (F, &[1]), 0, Plain, onnx(10), UnsupportedVersion,
            &["ONNX ScatterElements version 10 does not exist; the first is 11"]),
        se_row("opset -1", (F, &[3]), (I64, &[1]), (F, &[1]), 0, Plain, onnx(-1), UnsupportedVersion,
            &["ScatterElements version -1", "the first is 11"]),
        se_row("OpenVINO", (F, &[3]), (I64, &[1]), (F, &[1]), 0, Plain, Options::openvino(0), UnsupportedVersion,
            &["OpenVINO ScatterElementsUpdate is not implemented"]),
        se_row("version before dtypes", (DType::Bfloat16, &[3]), (F, &[1]), (I64, &[1]), 0, Plain, onnx(10),
            UnsupportedVersion, &["version 10"]),
        // 2. Dtypes: data against the version, updates against data, then indices.
        se_row("bfloat16 at opset 11", (DType::Bfloat16, &[3]), (I64, &[1]), (DType::Bfloat16, &[1]), 0, Plain,
            onnx(11), UnsupportedDtype,
            &["ONNX opset 11 (ScatterElements-11) does not take data dtype bfloat16; bfloat16 needs opset 13 or later (ScatterElements-13)"]),
        se_row("bfloat16 at opset 12, updates float", (DType::Bfloat16, &[3]), (I64, &[1]), (F, &[1]), 0,
            Plain, onnx(12), UnsupportedDtype, &["ONNX opset 12 (ScatterElements-11) does not take data dtype bfloat16"]),
        se_row("updates dtype", (F, &[3]), (I64, &[1]), (DType::Double, &[1]), 0, Plain, onnx(0),
            UnsupportedDtype,
            &["ScatterElements-18: updates dtype is double but data dtype is float; they must be equal"]),
        se_row("updates dtype before indices dtype", (DType::Int8, &[3]), (F, &[1]), (DType::Uint8, &[1]), 0,
            Plain, onnx(13), UnsupportedDtype, &["ScatterElements-13: updates dtype is uint8 but data dtype is int8"]),
        se_row("float indices", (F, &[3]), (F, &[1]), (F, &[1]), 0, Plain, onnx(16), UnsupportedDtype,
            &["ScatterElements-16: indices dtype is float; allowed are int32 and int64"]),
        se_row("int16 indices, before ranks", (F, &[]), (DType::Int16, &[1]), (F, &[1]), 0, Plain, onnx(0),
            UnsupportedDtype, &["indices dtype is int16"]),
        // 3. Ranks.
        se_row("rank-0 data", (F, &[]), (I64, &[]), (F, &[]), 0, Plain, onnx(0), InvalidRank,
            &["ScatterElements-18: data has rank 0; it must be at least 1"]),
        se_row("indices rank", (F, &[3, 3]), (I32, &[3]), (F, &[3]), 0, Plain, onnx(0), InvalidRank,
            &["ScatterElements-18: indices has rank 1 but data has rank 2; they must be equal"]),
        se_row("updates rank", (F, &[3, 3]), (I64, &[1, 3]), (F, &[1, 3, 1]), 0, Plain, onnx(0), InvalidRank,
            &["updates has rank 3 but data has rank 2"]),
        se_row("rank above 64", (F, &[1; 65]), (I64, &[1; 65]), (F, &[1; 65]), 0, Plain, onnx(0), InvalidRank,
            &["data has rank 65; gatherkit supports ranks up to 64"]),
        se_row("rank before axis", (F, &[3, 3]), (I64, &[3]), (F, &[3]), 5, Max, onnx(11), InvalidRank,
            &["indices has rank 1"]),
        // 4. Attributes: axis, then the reduction against the version, then against the dtype.
        se_row("axis too large", (F, &[3, 3]), (I64, &[1, 3]), (F, &[1, 3]), 2, Plain, onnx(0), InvalidAttribute,
            &["ScatterElements-18: axis 2 is out of range [-2, 1] for rank 2"]),
        se_row("axis too small", (F, &[3, 3]), (I64, &[1, 3]), (F, &[1, 3]), -3, Plain, onnx(11), InvalidAttribute,
            &["ScatterElements-11: axis -3 is out of range [-2, 1] for rank 2"]),
        se_row("axis before reduction", (F, &[3]), (I64, &[1]), (F, &[1]), 1, Max, onnx(11), InvalidAttribute,
            &["axis 1 is out of range [-1, 0] for rank 1"]),
        se_row("add at opset 13", (F, &[3]), (I64, &[1]), (F, &[1]), 0, Add, onnx(13), InvalidAttribute,
            &["ONNX opset 13 (ScatterElements-13) has no reduction add; it arrives in opset 16 (ScatterElements-16); allowed here: none"]),
        se_row("mul at opset 11", (F, &[3]), (I64, &[1]), (F, &[1]), 0, Mul, onnx(12), InvalidAttribute,
            &["ONNX opset 12 (ScatterElements-11) has no reduction mul", "allowed here: none"]),
        se_row("max at opset 16", (F, &[3]), (I64, &[1]), (F, &[1]), 0, Max, onnx(16), InvalidAttribute,
            &["ONNX opset 16 (ScatterElements-16) has no reduction max; it arrives in opset 18 (ScatterElements-18); allowed here: none, add, mul"]),
        se_row("min at opset 17", (F, &[3]), (I64, &[1]), (F, &[1]), 0, Min, onnx(17), InvalidAttribute,
            &["ONNX opset 17 (ScatterElements-16) has no reduction min"]),
        se_row("version of the reduction before its dtype", (DType::Complex64, &[3]), (I64, &[1]),
            (DType::Complex64, &[1]), 0, Max, onnx(16), InvalidAttribute, &["has no reduction max"]),
        se_row("string add", (DType::String, &[3]), (I64, &[1]), (DType::String, &[1]), 0, Add, onnx(0),
            UnsupportedDtype,
            &["ScatterElements-18: reduction add is not defined for string data", "allowed for string is none"]),
        se_row("string max", (DType::String, &[3]), (I32, &[1]), (DType::String, &[1]), 0, Max, onnx(0),
            UnsupportedDtype, &["reduction max is not defined for string data"]),
        se_row("complex64 max", (DType::Complex64, &[3]), (I64, &[1]), (DType::Complex64, &[1]), 0, Max,
            onnx(18), UnsupportedDtype,
            &["ScatterElements-18: reduction max is not defined for complex64 data", "allowed for complex are none, add and mul"]),
        se_row("complex128 min", (DType::Complex128, &[3]), (I64, &[1]), (DType::Complex128, &[1]), 0, Min,
            onnx(0), UnsupportedDtype, &["reduction min is not defined for complex128 data"]),
        se_row("reduction dtype before shapes", (DType::String, &[3]), (I64, &[1]), (DType::String, &[2]), 0,
            Mul, onnx(0), UnsupportedDtype, &["reduction mul is not defined for string data"]),
        // 5. Shapes.
        se_row("updates shape", (F, &[3, 3]), (I64, &[2, 3]), (F, &[2, 2]), 0, Plain, onnx(0), ShapeMismatch,
            &["ScatterElements-18: updates shape [2, 2] differs from indices shape [2, 3]; they must be equal"]),
        se_row("indices larger than data off the axis", (F, &[3, 3]), (I64, &[2, 4]), (F, &[2, 4]), 0, Plain,
            onnx(0), ShapeMismatch,
            &["ScatterElements-18: indices.shape[1] = 4 exceeds data.shape[1] = 3", "indices shape [2, 4], data shape [3, 3]"]),
        se_row("indices larger off a negative axis", (F, &[2, 3, 4]), (I64, &[3, 5, 4]), (F, &[3, 5, 4]), -2,
            Add, onnx(16), ShapeMismatch, &["indices.shape[0] = 3 exceeds data.shape[0] = 2"]),
        se_row("shapes before sizes", (F, huge), (I64, &[1, 3]), (F, &[1, 3]), 0, Plain, onnx(0), ShapeMismatch,
            &["indices.shape[1] = 3 exceeds data.shape[1] = 2"]),
        // 6. Sizes.
        se_row("data bytes", (F, huge), (I64, &[1, 1]), (F, &[1, 1]), 0, Plain, onnx(0), Overflow,
            &["data shape [4611686018427387904, 2] holds more than PTRDIFF_MAX bytes"]),
        se_row("indices bytes", (F, &[1, 1]), (I64, &[1 << 61, 1]), (F, &[1 << 61, 1]), 0, Plain, onnx(0),
            Overflow, &["indices shape [2305843009213693952, 1] holds more than PTRDIFF_MAX bytes"]),
    ];
    test_each(rows, |row| row.name, check_error);
}

#[test]
fn scatter_nd_errors_follow_the_check_order() {
    use Reduction::{Add, Max, Min, Mul, None as Plain};
    use Status::*;
    let rows = [
        nd_row("opset 10", (F, &[3]), (I64, &[1, 1]), (F, &[1]), Plain, onnx(10), UnsupportedVersion,
            &["ONNX ScatterND version 10 does not exist; the first is 11"]),
        nd_row("OpenVINO", (F, &[3]), (I64, &[1, 1]), (F, &[1]), Plain, Options::openvino(3), UnsupportedVersion,
            &["OpenVINO ScatterNDUpdate is not implemented"]),
        nd_row("bfloat16 at opset 12", (DType::Bfloat16, &[3]), (I64, &[1, 1]), (DType::Bfloat16, &[1]), Plain,
            onnx(12), UnsupportedDtype, &["ONNX opset 12 (ScatterND-11) does not take data dtype bfloat16; bfloat16 needs opset 13 or later (ScatterND-13)"]),
        nd_row("updates dtype", (I64, &[3]), (I64, &[1, 1]), (I32, &[1]), Plain, onnx(0), UnsupportedDtype,
            &["ScatterND-18: updates dtype is int32 but data dtype is int64; they must be equal"]),
        nd_row("double indices", (F, &[3]), (DType::Double, &[1, 1]), (F, &[1]), Plain, onnx(13), UnsupportedDtype,
            &["ScatterND-13: indices dtype is double; allowed are int32 and int64"]),
        nd_row("uint64 indices before ranks", (F, &[]), (DType::Uint64, &[]), (F, &[1]), Plain, onnx(0),
            UnsupportedDtype, &["indices dtype is uint64"]),
        nd_row("rank-0 data", (F, &[]), (I64, &[1, 0]), (F, &[1]), Plain, onnx(0), InvalidRank,
            &["ScatterND-18: data has rank 0; it must be at least 1"]),
        nd_row("rank-0 indices", (F, &[3]), (I64, &[]), (F, &[]), Plain, onnx(0), InvalidRank,
            &["ScatterND-18: indices has rank 0; it must be at least 1"]),
        nd_row("rank above 64", (F, &[2]), (I64, &[1; 65]), (F, &[1; 65]), Plain, onnx(0), InvalidRank,
            &["indices has rank 65; gatherkit supports ranks up to 64"]),
        nd_row("rank before reduction", (F, &[]), (I64, &[1, 0]), (F, &[1]), Max, onnx(13), InvalidRank,
            &["data has rank 0"]),
        nd_row("add at opset 13", (F, &[3]), (I64, &[1, 1]), (F, &[1]), Add, onnx(15), InvalidAttribute,
            &["ONNX opset 15 (ScatterND-13) has no reduction add; it arrives in opset 16 (ScatterND-16); allowed here: none"]),
        nd_row("max at opset 16", (F, &[3]), (I64, &[1, 1]), (F, &[1]), Max, onnx(16), InvalidAttribute,
            &["ONNX opset 16 (ScatterND-16) has no reduction max; it arrives in opset 18 (ScatterND-18); allowed here: none, add, mul"]),
        nd_row("reduction before shapes", (F, &[3]), (I64, &[1, 4]), (F, &[1]), Min, onnx(17), InvalidAttribute,
            &["ONNX opset 17 (ScatterND-16) has no reduction min"]),
        nd_row("string mul", (DType::String, &[3]), (I64, &[1, 1]), (DType::String, &[1]), Mul, onnx(0),
            UnsupportedDtype, &["ScatterND-18: reduction mul is not defined for string data"]),
        nd_row("complex64 min", (DType::Complex64, &[3]), (I32, &[1, 1]), (DType::Complex64, &[1]), Min,
            onnx(0), UnsupportedDtype, &["ScatterND-18: reduction min is not defined for complex64 data"]),
        nd_row("complex dtype before shapes", (DType::Complex128, &[3]), (I64, &[1, 4]),
            (DType::Complex128, &[1]), Max, onnx(0), UnsupportedDtype, &["not defined for complex128 data"]),
        nd_row("k > r", (F, &[3, 2]), (I64, &[2, 3]), (F, &[2]), Plain, onnx(0), ShapeMismatch,
            &["ScatterND-18: indices.shape[-1] = 3 must be in [0, 2] (the data rank)"]),
        nd_row("updates shape", (F, &[4, 3]), (I64, &[2, 1]), (F, &[2, 4]), Plain, onnx(0), ShapeMismatch,
            &["ScatterND-18: updates shape [2, 4] must be indices.shape[:-1] + data.shape[1:] = [2, 3] (indices shape [2, 1], data shape [4, 3])"]),
        nd_row("updates batch shape", (F, &[4, 3]), (I64, &[2, 2, 2]), (F, &[2, 3]), Add, onnx(16), ShapeMismatch,
            &["updates shape [2, 3] must be indices.shape[:-1] + data.shape[2:] = [2, 2]"]),
        nd_row("updates rank", (F, &[4, 3]), (I64, &[2, 1]), (F, &[2]), Plain, onnx(0), InvalidRank,
            &["updates shape [2] must be indices.shape[:-1] + data.shape[1:] = [2, 3]"]),
        nd_row("updates rank with k = 0", (F, &[4, 3]), (I64, &[2, 0]), (F, &[4, 3]), Plain, onnx(0), InvalidRank,
            &["updates shape [4, 3] must be indices.shape[:-1] + data.shape[0:] = [2, 4, 3]"]),
        nd_row("data bytes", (F, &[1 << 62, 2]), (I64, &[1, 1]), (F, &[1, 2]), Plain, onnx(0), Overflow,
            &["data shape [4611686018427387904, 2] holds more than PTRDIFF_MAX bytes"]),
        nd_row("updates bytes", (F, &[4, 1 << 40]), (I64, &[1 << 22, 1]), (F, &[1 << 22, 1 << 40]), Plain,
            onnx(0), Overflow, &["updates shape [4194304, 1099511627776] holds more than PTRDIFF_MAX bytes"]),
    ];
    test_each(rows, |row| row.name, check_error);
}

#[test]
fn output_descriptors_must_match_data() {
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let rows: [(&str, &[usize], &str); 3] = [
        (
            "rank",
            &[6],
            "output has rank 1 but ScatterElements-18 produces rank 2 (shape [2, 3])",
        ),
        (
            "shape",
            &[3, 2],
            "output shape [3, 2] differs from the ScatterElements-18 output shape [2, 3]",
        ),
        ("empty", &[2, 0], "output shape [2, 0] differs"),
    ];
    test_each(
        rows,
        |row| row.0,
        |&(_, shape, fragment)| {
            let mut out = [-1.0f32; 6];
            let e = scatter_elements(
                TensorRef::new(&[2, 3], &data),
                TensorRef::new(&[1, 1], &[0i64]),
                TensorRef::new(&[1, 1], &[9.0f32]),
                0,
                Reduction::None,
                TensorMut::new(shape, &mut out[..count(shape)]),
                &onnx(0),
            )
            .unwrap_err();
            assert_eq!(e.status(), Status::OutputMismatch);
            assert!(e.message().contains(fragment), "{}", e.message());
            assert_eq!(out, [-1.0; 6]);
        },
    );
    // ScatterND names its version; a dyn output of another dtype.
    let mut out = [-1i32; 6];
    let e = scatter_nd(
        TensorRef::new(&[2, 3], &[0i32; 6]),
        TensorRef::new(&[1, 1], &[1i64]),
        TensorRef::new(&[1, 3], &[1i32, 2, 3]),
        Reduction::Add,
        TensorMut::new(&[3, 2], &mut out),
        &onnx(16),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::OutputMismatch);
    assert!(
        e.message()
            .contains("output shape [3, 2] differs from the ScatterND-16 output shape [2, 3]"),
        "{}",
        e.message()
    );
    assert_eq!(out, [-1; 6]);
    let mut out = [0x5Au8; 24];
    let e = scatter_nd_dyn(
        DynTensorRef::new(DType::Int32, &[2, 3], bytes_of(&[0i32; 6])),
        DynTensorRef::new(DType::Int64, &[1, 1], bytes_of(&[1i64])),
        DynTensorRef::new(DType::Int32, &[1, 3], bytes_of(&[1i32, 2, 3])),
        Reduction::None,
        DynTensorMut::new(DType::Float, &[2, 3], &mut out),
        &onnx(0),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::OutputMismatch);
    assert!(
        e.message()
            .contains("output dtype is float but data dtype is int32; they must be equal"),
        "{}",
        e.message()
    );
    assert_eq!(out, [0x5A; 24]);
}

#[test]
fn wrong_buffer_lengths_and_misaligned_bytes_are_invalid_arguments_and_come_before_index_values() {
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let idx = [0i64, 1, 2];
    let upd = [7.0f32, 8.0, 9.0];
    // (name, data length, indices length, updates length, output length, the typed message,
    // the byte one); the bad index value 3 is tried too: the buffers are checked first.
    type Row = (
        &'static str,
        usize,
        usize,
        usize,
        usize,
        &'static str,
        &'static str,
    );
    let rows: [Row; 5] = [
        (
            "data",
            5,
            3,
            3,
            6,
            "data buffer holds 5 elements but its shape needs 6",
            "data buffer holds 20 bytes but its shape needs 24",
        ),
        (
            "indices",
            6,
            2,
            3,
            6,
            "indices buffer holds 2 elements but its shape needs 3",
            "indices buffer holds 16 bytes but its shape needs 24",
        ),
        (
            "updates",
            6,
            3,
            2,
            6,
            "updates buffer holds 2 elements but its shape needs 3",
            "updates buffer holds 8 bytes but its shape needs 12",
        ),
        (
            "output",
            6,
            3,
            3,
            7,
            "output buffer holds 7 elements but its shape needs 6",
            "output buffer holds 28 bytes but its shape needs 24",
        ),
        (
            "output short",
            6,
            3,
            3,
            0,
            "output buffer holds 0 elements but its shape needs 6",
            "output buffer holds 0 bytes but its shape needs 24",
        ),
    ];
    test_each(
        rows,
        |row| row.0,
        |&(_, dn, inn, un, on, fragment, byte_fragment)| {
            let bad_idx = [3i64, 3, 3];
            for indices in [&idx[..inn], &bad_idx[..inn]] {
                let mut out = vec![-1.0f32; on];
                let e = scatter_elements(
                    TensorRef::new(&[2, 3], &data[..dn]),
                    TensorRef::new(&[1, 3], indices),
                    TensorRef::new(&[1, 3], &upd[..un]),
                    1,
                    Reduction::None,
                    TensorMut::new(&[2, 3], &mut out),
                    &onnx(0),
                )
                .unwrap_err();
                assert_eq!(e.status(), Status::InvalidArgument, "{}", e.message());
                assert!(e.message().contains(fragment), "{}", e.message());
                assert!(out.iter().all(|&v| v == -1.0), "the output was written");
                // The same through bytes, with byte counts.
                let mut out = vec![-1.0f32; on];
                let e = scatter_elements_dyn(
                    DynTensorRef::new(F, &[2, 3], bytes_of(&data[..dn])),
                    DynTensorRef::new(I64, &[1, 3], bytes_of(indices)),
                    DynTensorRef::new(F, &[1, 3], bytes_of(&upd[..un])),
                    1,
                    Reduction::None,
                    DynTensorMut::new(F, &[2, 3], bytes_of_mut(&mut out)),
                    &onnx(0),
                )
                .unwrap_err();
                assert_eq!(e.status(), Status::InvalidArgument, "{}", e.message());
                assert!(e.message().contains(byte_fragment), "{}", e.message());
                assert!(out.iter().all(|&v| v == -1.0), "the output was written");
            }
        },
    );
    // In place: the data buffer is the output.
    let mut in_place = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    let e = scatter_nd_in_place(
        TensorMut::new(&[2, 3], &mut in_place),
        TensorRef::new(&[1, 1], &[9i32]),
        TensorRef::new(&[1, 3], &upd),
        Reduction::None,
        &onnx(0),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message()
            .contains("data buffer holds 5 elements but its shape needs 6"),
        "{}",
        e.message()
    );
    assert_eq!(in_place, [1.0, 2.0, 3.0, 4.0, 5.0]);
    // Misaligned bytes: the f64 data starts 4 bytes into a word.
    let words = [0u64; 8];
    let bytes = bytes_of(&words);
    let mut out = [0u64; 2];
    let e = scatter_elements_dyn(
        DynTensorRef::new(DType::Double, &[2], &bytes[4..20]),
        DynTensorRef::new(I64, &[1], &bytes[24..32]),
        DynTensorRef::new(DType::Double, &[1], &bytes[32..40]),
        0,
        Reduction::None,
        DynTensorMut::new(DType::Double, &[2], bytes_of_mut(&mut out)),
        &onnx(0),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message().contains("data pointer") && e.message().contains("is not aligned to 8 bytes"),
        "{}",
        e.message()
    );
    let mut misaligned = [0u64; 3];
    let e = ScatterNd::new(
        TensorDesc::new(DType::Double, &[2]),
        TensorDesc::new(I32, &[1, 1]),
        TensorDesc::new(DType::Double, &[1]),
        Reduction::Add,
        &onnx(0),
    )
    .unwrap()
    .run_bytes_in_place(
        &mut bytes_of_mut(&mut misaligned)[4..20],
        &bytes[0..4],
        &bytes[8..16],
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message().contains("not aligned to 8 bytes"),
        "{}",
        e.message()
    );
    assert_eq!(misaligned, [0; 3]);
}

/// A bad index value: operator, data shape, indices, opset and the exact message.
type BadIndexRow = (
    &'static str,
    Op,
    &'static [usize],
    (&'static [usize], &'static [i64]),
    i32,
    &'static str,
);

#[test]
fn the_first_bad_index_in_row_major_order_is_reported_and_nothing_is_written() {
    let rows: [BadIndexRow; 9] = [
        (
            "ScatterElements, several bad values",
            Op::Elements(1),
            &[2, 3],
            (&[2, 3], &[0, 1, 2, 5, -4, 7]),
            0,
            "ScatterElements-18: indices[1, 0] = 5 is out of range; allowed is [-3, 2] for data.shape[1] = 3",
        ),
        (
            "ScatterElements, a negative one first",
            Op::Elements(1),
            &[2, 3],
            (&[2, 3], &[0, -4, 2, 5, 3, 7]),
            11,
            "ScatterElements-11: indices[0, 1] = -4 is out of range; allowed is [-3, 2] for data.shape[1] = 3",
        ),
        (
            "ScatterElements along axis 0",
            Op::Elements(-2),
            &[2, 3],
            (&[3, 2], &[0, 1, -2, 1, 2, -3]),
            13,
            "ScatterElements-13: indices[2, 0] = 2 is out of range; allowed is [-2, 1] for data.shape[0] = 2",
        ),
        (
            "ScatterElements, empty axis",
            Op::Elements(0),
            &[0, 3],
            (&[1, 3], &[0, 0, 0]),
            16,
            "ScatterElements-16: indices[0, 0] = 0 is out of range; data.shape[0] is 0, so no index is valid",
        ),
        (
            "ScatterElements, i32 extremes",
            Op::Elements(0),
            &[4],
            (&[3], &[1, i32::MIN as i64, i32::MAX as i64]),
            0,
            "ScatterElements-18: indices[1] = -2147483648 is out of range; allowed is [-4, 3] for data.shape[0] = 4",
        ),
        (
            "ScatterND, the second component",
            Op::Nd,
            &[4, 5],
            (&[3, 2], &[1, 2, 3, 5, 9, 0]),
            0,
            "ScatterND-18: index tuple indices[1, :], component 1 (indices[1, 1]) = 5 is out of range; allowed is [-5, 4] for data.shape[1] = 5",
        ),
        (
            "ScatterND, the first component",
            Op::Nd,
            &[4, 5],
            (&[3, 2], &[1, 2, -5, 0, 9, 9]),
            17,
            "ScatterND-16: index tuple indices[1, :], component 0 (indices[1, 0]) = -5 is out of range; allowed is [-4, 3] for data.shape[0] = 4",
        ),
        (
            "ScatterND, batch of tuples",
            Op::Nd,
            &[2, 3],
            (&[2, 2, 1], &[0, 2, 1, -4]),
            12,
            "ScatterND-11: index tuple indices[0, 1, :], component 0 (indices[0, 1, 0]) = 2 is out of range; allowed is [-2, 1] for data.shape[0] = 2",
        ),
        (
            "ScatterND, empty slices still checked",
            Op::Nd,
            &[2, 0],
            (&[1, 1], &[2]),
            0,
            "ScatterND-18: index tuple indices[0, :], component 0 (indices[0, 0]) = 2 is out of range; allowed is [-2, 1] for data.shape[0] = 2",
        ),
    ];
    // Every reduction the row's opset has.
    let rows = rows.into_iter().flat_map(|row| {
        Reduction::ALL
            .into_iter()
            .filter(move |r| opsets_with(*r).contains(&row.4))
            .map(move |r| (row, r))
    });
    test_each(
        rows,
        |(row, r)| format!("{} {r:?}", row.0),
        |&((_, op, data_shape, indices, opset, message), reduction)| {
            let n = count(data_shape);
            let data: Vec<f32> = (0..n).map(|x| x as f32).collect();
            let updates_shape: Vec<usize> = match op {
                Op::Elements(_) => indices.0.to_vec(),
                Op::Nd => {
                    let (k, batch) = indices.0.split_last().unwrap();
                    [batch, &data_shape[*k..]].concat()
                }
            };
            let updates: Vec<f32> = (0..count(&updates_shape))
                .map(|x| 100.0 + x as f32)
                .collect();
            let idx32: Vec<i32> = indices.1.iter().map(|&v| v as i32).collect();
            for threads in [1, 2, 3] {
                let options = onnx(opset).with_threads(threads);
                for entry in ENTRIES {
                    let call64 = Call {
                        op,
                        data: (data_shape, &data[..]),
                        indices,
                        updates: (&updates_shape, &updates[..]),
                        reduction,
                    };
                    let call32 = Call {
                        op,
                        data: call64.data,
                        indices: (indices.0, &idx32[..]),
                        updates: call64.updates,
                        reduction,
                    };
                    for (which, (result, got)) in [
                        ("int64", run(&call64, entry, &options, -1.0)),
                        ("int32", run(&call32, entry, &options, -1.0)),
                    ] {
                        let ctx = format!("{which}, {entry:?}, {threads} threads");
                        let e = result.expect_err(&ctx);
                        assert_eq!(
                            e.status(),
                            Status::IndexOutOfBounds,
                            "{ctx}: {}",
                            e.message()
                        );
                        assert!(e.message().contains(message), "{ctx}: {:?}", e.message());
                        assert!(
                            bytes_of(&got) == bytes_of(&untouched(entry, &data, -1.0)),
                            "{ctx}: written: {got:?}"
                        );
                    }
                }
            }
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Randomized comparison with the testkit's reference.

/// A testkit element type and the gatherkit type it stands for.
trait Kind: Combine + Debug + 'static {
    type G: Element + Debug;
    fn to_g(self) -> Self::G;
    fn from_g(g: Self::G) -> Self;
    /// A value to scatter: small ones (which collide and wrap) and special ones (NaN, ±0, ±inf)
    /// more often than chance would give them.
    fn draw(rng: &mut Rng) -> Self;
    /// The same bits, except that any two NaNs are the same.
    fn same(a: Self, b: Self) -> bool;
}

macro_rules! integer_kinds {
    ($($t:ty),*) => {$(
        impl Kind for $t {
            type G = $t;
            fn to_g(self) -> $t {
                self
            }
            fn from_g(g: $t) -> $t {
                g
            }
            fn draw(rng: &mut Rng) -> $t {
                if rng.chance(30) {
                    rng.next_u64() as $t
                } else {
                    rng.range(-3, 3) as $t
                }
            }
            fn same(a: $t, b: $t) -> bool {
                a == b
            }
        }
    )*};
}

integer_kinds!(i8, u8, i16, u16, i32, u32, i64, u64);

const FLOATS: [f64; 15] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1.1,
    2.1,
    -2.5,
    3.0,
    7.0,
    1e30,
    -1e-30,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

fn draw_float(rng: &mut Rng) -> f64 {
    FLOATS[rng.below(FLOATS.len() as u64) as usize]
}

fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn same_f64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

impl Kind for f32 {
    type G = f32;
    fn to_g(self) -> f32 {
        self
    }
    fn from_g(g: f32) -> f32 {
        g
    }
    fn draw(rng: &mut Rng) -> f32 {
        if rng.chance(20) {
            f32::from_bits(rng.next_u64() as u32)
        } else {
            draw_float(rng) as f32
        }
    }
    fn same(a: f32, b: f32) -> bool {
        same_f32(a, b)
    }
}

impl Kind for f64 {
    type G = f64;
    fn to_g(self) -> f64 {
        self
    }
    fn from_g(g: f64) -> f64 {
        g
    }
    fn draw(rng: &mut Rng) -> f64 {
        if rng.chance(20) {
            f64::from_bits(rng.next_u64())
        } else {
            draw_float(rng)
        }
    }
    fn same(a: f64, b: f64) -> bool {
        same_f64(a, b)
    }
}

macro_rules! half_kinds {
    ($($t:ident => $g:ty;)*) => {$(
        impl Kind for $t {
            type G = $g;
            fn to_g(self) -> $g {
                <$g>::from_bits(self.0)
            }
            fn from_g(g: $g) -> $t {
                $t(g.to_bits())
            }
            fn draw(rng: &mut Rng) -> $t {
                if rng.chance(20) {
                    $t(rng.next_u64() as u16)
                } else {
                    $t::from_f64(draw_float(rng))
                }
            }
            fn same(a: $t, b: $t) -> bool {
                a.0 == b.0 || (a.to_f64().is_nan() && b.to_f64().is_nan())
            }
        }
    )*};
}

half_kinds! {
    F16 => f16;
    Bf16 => bf16;
}

impl Kind for C64 {
    type G = Complex<f32>;
    fn to_g(self) -> Complex<f32> {
        Complex::new(self.0, self.1)
    }
    fn from_g(g: Complex<f32>) -> C64 {
        C64(g.re, g.im)
    }
    fn draw(rng: &mut Rng) -> C64 {
        C64(f32::draw(rng), f32::draw(rng))
    }
    fn same(a: C64, b: C64) -> bool {
        same_f32(a.0, b.0) && same_f32(a.1, b.1)
    }
}

impl Kind for C128 {
    type G = Complex<f64>;
    fn to_g(self) -> Complex<f64> {
        Complex::new(self.0, self.1)
    }
    fn from_g(g: Complex<f64>) -> C128 {
        C128(g.re, g.im)
    }
    fn draw(rng: &mut Rng) -> C128 {
        C128(f64::draw(rng), f64::draw(rng))
    }
    fn same(a: C128, b: C128) -> bool {
        same_f64(a.0, b.0) && same_f64(a.1, b.1)
    }
}

impl Kind for Bool {
    type G = bool;
    fn to_g(self) -> bool {
        self.0 != 0
    }
    fn from_g(g: bool) -> Bool {
        Bool(u8::from(g))
    }
    fn draw(rng: &mut Rng) -> Bool {
        Bool(rng.below(2) as u8)
    }
    fn same(a: Bool, b: Bool) -> bool {
        a == b
    }
}

impl Kind for Str {
    type G = StringHandle;
    fn to_g(self) -> StringHandle {
        // A handle gatherkit copies and never reads: any address will do.
        StringHandle(self.0 as *const c_char)
    }
    fn from_g(g: StringHandle) -> Str {
        Str(g.0 as usize)
    }
    fn draw(rng: &mut Rng) -> Str {
        Str(1 + rng.below(1000) as usize)
    }
    fn same(a: Str, b: Str) -> bool {
        a == b
    }
}

fn reduce_of(reduction: Reduction) -> Reduce {
    match reduction {
        Reduction::None => Reduce::None,
        Reduction::Add => Reduce::Add,
        Reduction::Mul => Reduce::Mul,
        Reduction::Max => Reduce::Max,
        Reduction::Min => Reduce::Min,
    }
}

/// The message of the bad index value at row-major position `p` of `indices`: ScatterElements
/// names the position and the axis; ScatterND, as GatherND, the tuple, the component and the
/// data dimension it addresses.
fn bad_index_message(
    op: Op,
    opset: i32,
    data_shape: &[usize],
    indices: (&[usize], &[i64]),
    p: usize,
) -> String {
    let at = coords(p, indices.0);
    let (name, dim) = match op {
        Op::Elements(axis) => (
            "ScatterElements",
            axis.rem_euclid(data_shape.len() as i64) as usize,
        ),
        Op::Nd => ("ScatterND", at[at.len() - 1]),
    };
    let size = data_shape[dim];
    let allowed = if size == 0 {
        format!("data.shape[{dim}] is 0, so no index is valid")
    } else {
        format!(
            "allowed is [-{size}, {}] for data.shape[{dim}] = {size}",
            size - 1
        )
    };
    let (version, value) = (version_of(opset), indices.1[p]);
    match op {
        Op::Elements(_) => {
            format!("{name}-{version}: indices{at:?} = {value} is out of range; {allowed}")
        }
        Op::Nd => {
            let tuple: Vec<String> = at[..at.len() - 1]
                .iter()
                .map(|c| c.to_string())
                .chain([":".to_string()])
                .collect();
            format!(
                "{name}-{version}: index tuple indices[{}], component {dim} (indices{at:?}) = {value} is out of range; {allowed}",
                tuple.join(", ")
            )
        }
    }
}

/// Runs a call through every entry, both index types and `executors`, and compares each result
/// with the reference's `want` (elementwise with [`Kind::same`]); on an error, the status, the
/// message of a bad index and that nothing was written.
#[allow(clippy::too_many_arguments)]
fn compare<T: Kind + Copy>(
    ctx: &str,
    op: Op,
    opset: i32,
    data: (&[usize], &[T]),
    indices: (&[usize], &[i64]),
    updates: (&[usize], &[T]),
    reduction: Reduction,
    want: &std::result::Result<Vec<T>, ScatterError>,
    sentinel: T,
    entries: &[Entry],
    executors: &[(String, Options)],
) {
    let data_g: Vec<T::G> = data.1.iter().map(|&v| v.to_g()).collect();
    let updates_g: Vec<T::G> = updates.1.iter().map(|&v| v.to_g()).collect();
    let idx32: Vec<i32> = indices.1.iter().map(|&v| v as i32).collect();
    let sentinel_g = sentinel.to_g();
    let call64 = Call {
        op,
        data: (data.0, &data_g[..]),
        indices,
        updates: (updates.0, &updates_g[..]),
        reduction,
    };
    let call32 = Call {
        op,
        data: call64.data,
        indices: (indices.0, &idx32[..]),
        updates: call64.updates,
        reduction,
    };
    for (label, executor) in executors {
        let options = Options {
            flavor: gatherkit::Flavor::Onnx,
            opset,
            ..*executor
        };
        for &entry in entries {
            for (which, (result, got)) in [
                ("int64", run(&call64, entry, &options, sentinel_g)),
                ("int32", run(&call32, entry, &options, sentinel_g)),
            ] {
                let ctx = format!("{ctx}, {which} indices, {entry:?}, {label}");
                let got: Vec<T> = got.into_iter().map(T::from_g).collect();
                match (result, want) {
                    (Ok(()), Ok(want)) => {
                        let first_difference = (0..want.len().max(got.len())).find(|&p| {
                            match (got.get(p), want.get(p)) {
                                (Some(&a), Some(&b)) => !T::same(a, b),
                                _ => true,
                            }
                        });
                        if let Some(p) = first_difference {
                            panic!(
                                "{ctx}: element {p} of {}: got {:?}, reference {:?}",
                                want.len(),
                                got.get(p),
                                want.get(p)
                            );
                        }
                    }
                    (Err(e), Err(ScatterError::BadIndex(p))) => {
                        assert_eq!(
                            e.status(),
                            Status::IndexOutOfBounds,
                            "{ctx}: {}",
                            e.message()
                        );
                        let message = bad_index_message(op, opset, data.0, indices, *p);
                        assert_eq!(e.message(), message, "{ctx}");
                        let untouched: Vec<T> = untouched(entry, &data_g, sentinel_g)
                            .into_iter()
                            .map(T::from_g)
                            .collect();
                        let same = got.len() == untouched.len()
                            && got.iter().zip(&untouched).all(|(&a, &b)| T::same(a, b));
                        assert!(same, "{ctx}: written on an error");
                    }
                    (Err(e), Err(ScatterError::Undefined)) => {
                        assert_eq!(
                            e.status(),
                            Status::UnsupportedDtype,
                            "{ctx}: {}",
                            e.message()
                        );
                        assert!(
                            e.message().contains("is not defined for"),
                            "{ctx}: {}",
                            e.message()
                        );
                    }
                    (got, want) => panic!(
                        "{ctx}: got {:?}, reference {:?}",
                        got.map_err(|e| e.message().to_owned()),
                        want.as_ref().map(|_| "Ok")
                    ),
                }
            }
        }
    }
}

/// A random opset that has `reduction` (and bfloat16, for bfloat16 data).
fn draw_opset(rng: &mut Rng, reduction: Reduction, dtype: DType) -> i32 {
    let choices = opsets_with(reduction);
    loop {
        let opset = choices[rng.below(choices.len() as u64) as usize];
        if dtype != DType::Bfloat16 || version_of(opset) >= 13 {
            return opset;
        }
    }
}

/// A dimension of 1 to 4, now and then 0.
fn draw_dim(rng: &mut Rng) -> usize {
    if rng.chance(4) {
        0
    } else {
        1 + rng.below(4) as usize
    }
}

/// Replaces a few index values (one in ten calls) by out-of-range ones; `size_of(p)` is the
/// dimension position `p` indexes.
fn plant_bad_indices(rng: &mut Rng, indices: &mut [i64], size_of: impl Fn(usize) -> usize) {
    if indices.is_empty() || !rng.chance(10) {
        return;
    }
    for _ in 0..1 + rng.below(3) {
        let p = rng.below(indices.len() as u64) as usize;
        let s = size_of(p) as i64;
        indices[p] = if rng.chance(50) {
            s + rng.below(3) as i64
        } else {
            -s - 1 - rng.below(3) as i64
        };
    }
}

fn small_executors() -> Vec<(String, Options)> {
    vec![
        ("1 thread".to_string(), Options::default().with_threads(1)),
        ("3 threads".to_string(), Options::default().with_threads(3)),
    ]
}

fn random_elements<T: Kind + Copy>(seed: u64) {
    let mut rng = Rng::new(seed);
    let r = 1 + rng.below(4) as usize;
    let data_shape: Vec<usize> = (0..r).map(|_| draw_dim(&mut rng)).collect();
    let axis = rng.below(r as u64) as usize;
    let indices_shape: Vec<usize> = (0..r)
        .map(|d| {
            if d == axis {
                // Longer than the axis now and then: duplicates.
                if rng.chance(5) {
                    0
                } else {
                    1 + rng.below(2 * data_shape[d] as u64 + 3) as usize
                }
            } else if rng.chance(70) {
                data_shape[d]
            } else {
                rng.below(data_shape[d] as u64 + 1) as usize
            }
        })
        .collect();
    let s = data_shape[axis];
    let mut indices: Vec<i64> = (0..count(&indices_shape))
        .map(|_| if s > 0 { rng.index(s) } else { 0 })
        .collect();
    plant_bad_indices(&mut rng, &mut indices, |_| s);
    let data: Vec<T> = (0..count(&data_shape)).map(|_| T::draw(&mut rng)).collect();
    let updates: Vec<T> = (0..indices.len()).map(|_| T::draw(&mut rng)).collect();
    let reduction = Reduction::ALL[rng.below(5) as usize];
    let opset = draw_opset(&mut rng, reduction, T::G::DTYPE);
    let axis_arg = if rng.chance(50) {
        axis as i64
    } else {
        axis as i64 - r as i64
    };
    let want = reference::scatter_elements(
        &data,
        &data_shape,
        &indices,
        &indices_shape,
        &updates,
        axis_arg,
        reduce_of(reduction),
    );
    let ctx = format!(
        "{} seed {seed}: data {data_shape:?} indices {indices_shape:?} axis {axis_arg} {reduction:?} opset {opset}",
        T::G::DTYPE
    );
    compare(
        &ctx,
        Op::Elements(axis_arg),
        opset,
        (&data_shape, &data),
        (&indices_shape, &indices),
        (&indices_shape, &updates),
        reduction,
        &want,
        T::draw(&mut rng),
        &ENTRIES,
        &small_executors(),
    );
}

fn random_nd<T: Kind + Copy>(seed: u64) {
    let mut rng = Rng::new(seed);
    let r = 1 + rng.below(4) as usize;
    let data_shape: Vec<usize> = (0..r).map(|_| draw_dim(&mut rng)).collect();
    let k = rng.below(r as u64 + 1) as usize;
    random_nd_of::<T>(&mut rng, seed, &data_shape, k);
}

/// A random ScatterND case with tuples of `k` components into data `data_shape`: batch
/// dimensions, index values (a few bad), data, updates, reduction and opset drawn from `rng`;
/// against the reference.
fn random_nd_of<T: Kind + Copy>(rng: &mut Rng, seed: u64, data_shape: &[usize], k: usize) {
    let batch: Vec<usize> = (0..rng.below(3))
        .map(|_| {
            if rng.chance(5) {
                0
            } else {
                1 + rng.below(4) as usize
            }
        })
        .collect();
    let indices_shape = [&batch[..], &[k]].concat();
    let updates_shape = [&batch[..], &data_shape[k..]].concat();
    let mut indices: Vec<i64> = (0..count(&indices_shape))
        .map(|p| {
            let s = data_shape[p % k];
            if s > 0 {
                rng.index(s)
            } else {
                0
            }
        })
        .collect();
    plant_bad_indices(rng, &mut indices, |p| data_shape[p % k]);
    let data: Vec<T> = (0..count(data_shape)).map(|_| T::draw(rng)).collect();
    let updates: Vec<T> = (0..count(&updates_shape)).map(|_| T::draw(rng)).collect();
    let reduction = Reduction::ALL[rng.below(5) as usize];
    let opset = draw_opset(rng, reduction, T::G::DTYPE);
    let want = reference::scatter_nd(
        &data,
        data_shape,
        &indices,
        &indices_shape,
        &updates,
        reduce_of(reduction),
    );
    let ctx = format!(
        "{} seed {seed}: data {data_shape:?} indices {indices_shape:?} {reduction:?} opset {opset}",
        T::G::DTYPE
    );
    compare(
        &ctx,
        Op::Nd,
        opset,
        (data_shape, &data),
        (&indices_shape, &indices),
        (&updates_shape, &updates),
        reduction,
        &want,
        T::draw(rng),
        &ENTRIES,
        &small_executors(),
    );
}

/// ScatterND with tuples of 5 and 6 components (data of rank 5 or 6), past the tuple lengths
/// the offsets loop compiles in (1-4), against the reference for each dtype kind.
#[test]
fn random_long_tuples_match_the_reference() {
    fn long<T: Kind + Copy>(seeds: std::ops::Range<u64>) {
        test_each(
            seeds,
            |seed| format!("{} seed {seed}", T::G::DTYPE),
            |&seed| {
                let mut rng = Rng::new(seed);
                let r = 5 + rng.below(2) as usize;
                let data_shape: Vec<usize> = (0..r).map(|_| draw_dim(&mut rng)).collect();
                let k = 5 + rng.below(r as u64 - 4) as usize;
                random_nd_of::<T>(&mut rng, seed, &data_shape, k);
            },
        );
    }
    long::<f32>(0..60);
    long::<i64>(0..60);
    long::<u8>(0..60);
}

/// Both operators on `seeds` random cases of one dtype.
fn random_cases<T: Kind + Copy>(seeds: std::ops::Range<u64>) {
    test_each(
        seeds,
        |seed| format!("{} seed {seed}", T::G::DTYPE),
        |&seed| {
            random_elements::<T>(seed);
            random_nd::<T>(seed);
        },
    );
}

#[test]
fn random_floats_match_the_reference() {
    random_cases::<f32>(0..150);
    random_cases::<f64>(0..100);
    random_cases::<F16>(0..150);
    random_cases::<Bf16>(0..150);
}

#[test]
fn random_integers_match_the_reference() {
    random_cases::<i8>(0..100);
    random_cases::<u8>(0..100);
    random_cases::<i16>(0..60);
    random_cases::<u16>(0..60);
    random_cases::<i32>(0..100);
    random_cases::<u32>(0..60);
    random_cases::<i64>(0..100);
    random_cases::<u64>(0..60);
}

#[test]
fn random_bools_complexes_and_strings_match_the_reference() {
    random_cases::<Bool>(0..100);
    random_cases::<C64>(0..100);
    random_cases::<C128>(0..100);
    random_cases::<Str>(0..100);
}

// ---------------------------------------------------------------------------------------------
// Large calls: split among tasks, the same bits whatever the executor.

/// Every executor to compare: 1, 2, 3 and 8 threads and the two host pools.
fn big_executors() -> Vec<(String, Options)> {
    executors(&[1, 2, 3, 8])
}

/// `n` data values for the large tests: sevenths from -1000/7 to 1000/7.
fn random_data(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| rng.range(-1000, 1000) as f32 / 7.0)
        .collect()
}

/// `n` updates near 1, so that products of many of them stay finite.
fn updates_near_one(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| 1.0 + rng.range(-500, 500) as f32 / 4093.0)
        .collect()
}

/// The big entries (`ToVec` and `Output` copy, the two in-place ones update data, `Dyn` on
/// bytes).
const BIG_ENTRIES: [Entry; 4] = [Entry::Output, Entry::InPlace, Entry::ToVec, Entry::Dyn];

/// Checks that a large call is split: through the counting host, the last parallel-for (the
/// apply phase, after the index check) has several tasks.
fn assert_split<T: Element, I: IndexElement>(call: &Call<'_, T, I>, sentinel: T) {
    let counts = task_counts(|options| {
        let (result, _) = run(call, Entry::Output, options, sentinel);
        result.unwrap();
    });
    assert!(
        counts.last().is_some_and(|&n| n >= 2),
        "the call was not split among tasks: parallel-fors of {counts:?} tasks"
    );
}

/// `compare` of a ScatterElements f32 call with the reference, for each of `reductions`; then,
/// with `split`, that the call is split among tasks (`assert_split`).
#[allow(clippy::too_many_arguments)]
fn compare_elements_with_the_reference(
    ctx: &str,
    axis: i64,
    data: (&[usize], &[f32]),
    indices: (&[usize], &[i64]),
    updates: &[f32],
    reductions: &[Reduction],
    entries: &[Entry],
    executors: &[(String, Options)],
    split: Reduction,
) {
    for &reduction in reductions {
        let want = reference::scatter_elements(
            data.1,
            data.0,
            indices.1,
            indices.0,
            updates,
            axis,
            reduce_of(reduction),
        );
        compare(
            &format!("{ctx} {reduction:?}"),
            Op::Elements(axis),
            0,
            data,
            indices,
            (indices.0, updates),
            reduction,
            &want,
            -7777.0,
            entries,
            executors,
        );
    }
    assert_split(
        &Call {
            op: Op::Elements(axis),
            data,
            indices,
            updates: (indices.0, updates),
            reduction: split,
        },
        0.0,
    );
}

#[test]
fn large_scatter_elements_give_the_same_bits_on_every_executor() {
    // data [1024, 1024] f32; indices and updates [1024, 600], values in [-8, 7]: along axis 0,
    // each column's 1024 updates land on 16 rows; along axis 1, each row's 600 on 16 columns.
    let mut rng = Rng::new(11);
    let data_shape = [1024usize, 1024];
    let indices_shape = [1024usize, 600];
    let data = random_data(&mut rng, 1 << 20);
    let updates = updates_near_one(&mut rng, count(&indices_shape));
    let indices: Vec<i64> = (0..updates.len()).map(|_| rng.range(-8, 7)).collect();
    let executors = big_executors();
    for axis in [0i64, 1] {
        compare_elements_with_the_reference(
            &format!("axis {axis}"),
            axis,
            (&data_shape, &data),
            (&indices_shape, &indices),
            &updates,
            &Reduction::ALL,
            &BIG_ENTRIES,
            &executors,
            Reduction::Add,
        );
    }
}

#[test]
fn large_scatter_elements_one_position_along_the_axis_split_every_position_apart() {
    // data [2^18, 8] f32, indices and updates [2^18, 1] along axis 1: no two positions share a
    // target, so the updates split among tasks by positions (the kernel's traversal is one row).
    let mut rng = Rng::new(17);
    let data_shape = [1usize << 18, 8];
    let indices_shape = [1usize << 18, 1];
    let data = random_data(&mut rng, count(&data_shape));
    let updates: Vec<f32> = (0..count(&indices_shape))
        .map(|_| rng.range(-500, 500) as f32 / 3.0)
        .collect();
    let indices: Vec<i64> = (0..updates.len()).map(|_| rng.range(-8, 7)).collect();
    let executors = big_executors();
    for reduction in [Reduction::None, Reduction::Mul] {
        let want = reference::scatter_elements(
            &data,
            &data_shape,
            &indices,
            &indices_shape,
            &updates,
            1,
            reduce_of(reduction),
        );
        compare(
            &format!("one position along the axis, {reduction:?}"),
            Op::Elements(1),
            0,
            (&data_shape, &data),
            (&indices_shape, &indices),
            (&indices_shape, &updates),
            reduction,
            &want,
            -7777.0,
            &BIG_ENTRIES,
            &executors,
        );
    }
    // The phases' parallel-fors: the offsets, the copy of data, then the updates, which must
    // be split too (they ran on one task when the traversal's one row was one disjoint set).
    let call = Call {
        op: Op::Elements(1),
        data: (&data_shape, &data),
        indices: (&indices_shape, &indices),
        updates: (&indices_shape, &updates),
        reduction: Reduction::Add,
    };
    let counts = task_counts(|options| {
        let (result, _) = run(&call, Entry::Output, options, 0.0);
        result.unwrap();
    });
    assert!(
        counts.len() == 3 && counts[2] >= 2,
        "the updates were not split among tasks: parallel-fors of {counts:?} tasks"
    );
}

#[test]
fn large_rank_3_scatter_elements_along_every_axis_give_the_same_bits_on_every_executor() {
    // data [16, 256, 128] f32 (2 MiB); along each axis, indices smaller than data off the axis
    // (so dimensions do not merge) and longer along it (duplicates), values in [-6, 5].
    let mut rng = Rng::new(15);
    let data_shape = [16usize, 256, 128];
    let data = random_data(&mut rng, count(&data_shape));
    let executors = big_executors();
    for (axis, indices_shape) in [
        (0i64, [40usize, 200, 100]),
        (1, [12, 400, 100]),
        (-1, [12, 200, 300]),
    ] {
        let n = count(&indices_shape);
        let indices: Vec<i64> = (0..n).map(|_| rng.range(-6, 5)).collect();
        let updates: Vec<f32> = (0..n)
            .map(|_| rng.range(-500, 500) as f32 / 4093.0)
            .collect();
        compare_elements_with_the_reference(
            &format!("axis {axis}"),
            axis,
            (&data_shape, &data),
            (&indices_shape, &indices),
            &updates,
            &[Reduction::None, Reduction::Add],
            &[Entry::Output, Entry::InPlace],
            &executors,
            Reduction::Add,
        );
    }
}

#[test]
fn scatter_elements_along_the_first_axis_split_by_columns_give_the_same_bits_on_every_executor() {
    // Along axis 0 with size-1 dimensions between (data [38, 63, 1, 105], indices [73, 26, 1,
    // 102]): every position after the axis is a column, 2652 of them, handed out 64 f32 at a
    // time (the last set partial). Along axis 1 of [1, 40000, 17] with indices [1, 20000, 14]:
    // 14 columns, 56 bytes a row, applied by one task after a split copy.
    let mut rng = Rng::new(19);
    let executors = big_executors();
    for (data_shape, indices_shape, axis) in [
        (vec![38usize, 63, 1, 105], vec![73usize, 26, 1, 102], 0i64),
        (vec![1, 40000, 17], vec![1, 20000, 14], 1),
    ] {
        let size = data_shape[axis as usize] as i64;
        let data = random_data(&mut rng, count(&data_shape));
        let n = count(&indices_shape);
        let indices: Vec<i64> = (0..n).map(|_| rng.range(-size, size - 1)).collect();
        let updates = updates_near_one(&mut rng, n);
        compare_elements_with_the_reference(
            &format!("{data_shape:?} along {axis}"),
            axis,
            (&data_shape, &data),
            (&indices_shape, &indices),
            &updates,
            &Reduction::ALL,
            &BIG_ENTRIES,
            &executors,
            Reduction::Max,
        );
    }
}

#[test]
fn large_scatter_nd_gives_the_same_bits_on_every_executor() {
    // data [4096, 256] f32; 20000 row tuples drawn from 100 rows (both spellings), each a
    // 256-element slice: every row gets about 200 updates.
    let mut rng = Rng::new(12);
    let data_shape = [4096usize, 256];
    let rows: Vec<i64> = (0..100).map(|_| rng.index(4096)).collect();
    let indices: Vec<i64> = (0..20000).map(|_| rows[rng.below(100) as usize]).collect();
    let indices_shape = [20000usize, 1];
    let updates_shape = [20000usize, 256];
    let data = random_data(&mut rng, count(&data_shape));
    let updates = updates_near_one(&mut rng, count(&updates_shape));
    let executors = big_executors();
    for reduction in Reduction::ALL {
        let want = reference::scatter_nd(
            &data,
            &data_shape,
            &indices,
            &indices_shape,
            &updates,
            reduce_of(reduction),
        );
        compare(
            &format!("{reduction:?}"),
            Op::Nd,
            0,
            (&data_shape, &data),
            (&indices_shape, &indices),
            (&updates_shape, &updates),
            reduction,
            &want,
            -7777.0,
            &BIG_ENTRIES,
            &executors,
        );
    }
    assert_split(
        &Call {
            op: Op::Nd,
            data: (&data_shape, &data),
            indices: (&indices_shape, &indices),
            updates: (&updates_shape, &updates),
            reduction: Reduction::Add,
        },
        0.0,
    );
}

#[test]
fn a_large_histogram_gives_the_same_float_sums_on_every_executor() {
    // data [65536] f32 and 2^20 updates of fractions that round differently in another order,
    // with both operators (ScatterND with one-component tuples), skewed towards low bins.
    let mut rng = Rng::new(13);
    let n = 1usize << 16;
    let m = 1usize << 20;
    let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.1).collect();
    let indices: Vec<i64> = (0..m)
        .map(|_| {
            let bin = if rng.chance(50) {
                rng.below(256)
            } else {
                rng.below(n as u64)
            };
            if rng.chance(50) {
                bin as i64
            } else {
                bin as i64 - n as i64
            }
        })
        .collect();
    let updates: Vec<f32> = (0..m).map(|_| rng.range(1, 1000) as f32 * 0.01).collect();
    let executors = big_executors();
    for reduction in [Reduction::Add, Reduction::Max] {
        let want = reference::scatter_elements(
            &data,
            &[n],
            &indices,
            &[m],
            &updates,
            0,
            reduce_of(reduction),
        );
        for (op, indices_shape) in [(Op::Elements(0), vec![m]), (Op::Nd, vec![m, 1])] {
            compare(
                &format!("{op:?} {reduction:?}"),
                op,
                0,
                (&[n], &data),
                (&indices_shape, &indices),
                (&[m], &updates),
                reduction,
                &want,
                -7777.0,
                &BIG_ENTRIES,
                &executors,
            );
            assert_split(
                &Call {
                    op,
                    data: (&[n], &data),
                    indices: (&indices_shape, &indices),
                    updates: (&[m], &updates),
                    reduction,
                },
                0.0,
            );
        }
    }
}

#[test]
fn large_calls_report_the_first_bad_index_whatever_the_split_and_write_nothing() {
    let mut rng = Rng::new(14);
    let data_shape = [1024usize, 1024];
    let indices_shape = [1024usize, 600];
    let data: Vec<f32> = (0..1 << 20).map(|x| x as f32).collect();
    let updates: Vec<f32> = (0..count(&indices_shape)).map(|x| -(x as f32)).collect();
    let mut indices: Vec<i64> = (0..updates.len()).map(|_| rng.index(1024)).collect();
    // Bad values late, in the middle and near the end: the middle one, in row-major order first
    // of those the tasks see, is the one reported whichever task finds its own first.
    let (p1, p2, p3) = (300_000usize, 450_000, 614_000);
    indices[p3] = -1025;
    indices[p2] = 4096;
    indices[p1] = 1024;
    let nd_shape = [614_400usize, 1];
    // (k, data shape, index values, the first bad value's position): 200000 tuples of 3 into
    // [16, 16, 16], 120000 of 5 into [4, 4, 4, 4, 4], bad values planted as above.
    let tuple_cases: Vec<(usize, Vec<usize>, Vec<i64>, usize)> = [(3usize, 16usize), (5, 4)]
        .into_iter()
        .map(|(k, dim)| {
            let mut values: Vec<i64> = (0..600_000).map(|_| rng.index(dim)).collect();
            let (q1, q2, q3) = (300_001, 450_002, 599_998);
            values[q3] = -(dim as i64) - 1;
            values[q2] = 4 * dim as i64;
            values[q1] = dim as i64;
            (k, vec![dim; k], values, q1)
        })
        .collect();
    for (label, options) in big_executors() {
        for axis in [0i64, 1] {
            for entry in BIG_ENTRIES {
                let call = Call {
                    op: Op::Elements(axis),
                    data: (&data_shape, &data),
                    indices: (&indices_shape, &indices),
                    updates: (&indices_shape, &updates),
                    reduction: Reduction::Add,
                };
                let (result, got) = run(&call, entry, &options, -0.5);
                let e = result.expect_err(&label);
                let at = coords(p1, &indices_shape);
                let expected = format!(
                    "ScatterElements-18: indices[{}, {}] = 1024 is out of range; allowed is [-1024, 1023] for data.shape[{axis}] = 1024",
                    at[0], at[1]
                );
                assert_eq!(e.status(), Status::IndexOutOfBounds);
                assert_eq!(e.message(), expected, "{label}, {entry:?}");
                assert!(
                    bytes_of(&got) == bytes_of(&untouched(entry, &data, -0.5)),
                    "{label}, {entry:?}, axis {axis}: written on an error"
                );
            }
        }
        // ScatterND with tuples of 3 and of 5 components (the offsets pass's loop with the tuple
        // length compiled in, and its general loop): the first bad value in row-major order.
        for (k, shape, values, bad_at) in &tuple_cases {
            let tuples = values.len() / k;
            let tuple_data: Vec<f32> = (0..count(shape)).map(|x| x as f32).collect();
            let tuple_updates: Vec<f32> = (0..tuples).map(|x| -(x as f32)).collect();
            for entry in BIG_ENTRIES {
                let call = Call {
                    op: Op::Nd,
                    data: (shape, &tuple_data),
                    indices: (&[tuples, *k], values),
                    updates: (&[tuples], &tuple_updates),
                    reduction: Reduction::Add,
                };
                let (result, got) = run(&call, entry, &options, -0.5);
                let e = result.expect_err(&label);
                let (t, c, dim) = (bad_at / k, bad_at % k, shape[0]);
                assert_eq!(
                    e.message(),
                    format!(
                        "ScatterND-18: index tuple indices[{t}, :], component {c} (indices[{t}, {c}]) = {dim} is out of range; allowed is [-{dim}, {}] for data.shape[{c}] = {dim}",
                        dim - 1
                    ),
                    "{label}, {entry:?}, k {k}"
                );
                assert!(
                    bytes_of(&got) == bytes_of(&untouched(entry, &tuple_data, -0.5)),
                    "{label}, {entry:?}, k {k}: written on an error"
                );
            }
        }
        // ScatterND: the same values as 614400 one-component tuples into data [1024].
        let nd_data: Vec<f32> = (0..1024).map(|x| x as f32).collect();
        for entry in BIG_ENTRIES {
            let call = Call {
                op: Op::Nd,
                data: (&[1024], &nd_data),
                indices: (&nd_shape, &indices),
                updates: (&[614_400], &updates),
                reduction: Reduction::Max,
            };
            let (result, got) = run(&call, entry, &options, -0.5);
            let e = result.expect_err(&label);
            assert_eq!(
                e.message(),
                format!(
                    "ScatterND-18: index tuple indices[{p1}, :], component 0 (indices[{p1}, 0]) = 1024 is out of range; allowed is [-1024, 1023] for data.shape[0] = 1024"
                ),
                "{label}, {entry:?}"
            );
            assert!(
                bytes_of(&got) == bytes_of(&untouched(entry, &nd_data, -0.5)),
                "{label}, {entry:?}: written on an error"
            );
        }
    }
}

/// An output without elements: nothing is allocated per tuple (ScatterND with k = 0 names no
/// buffer that bounds the tuple count: 2^40 and 2^62 tuples are empty calls, not an abort or a
/// capacity panic), and index values are checked without forming offsets, whose strides
/// saturate beside a zero-size dimension (they overflowed in builds with overflow checks).
#[test]
fn outputs_without_elements_only_check_index_values() {
    let options = Options::default();
    for tuples in [1usize << 40, 1 << 62] {
        let (shape, out) = gatherkit::scatter_nd_to_vec(
            TensorRef::new(&[0], &[] as &[f32]),
            TensorRef::new(&[tuples, 0], &[] as &[i64]),
            TensorRef::new(&[tuples, 0], &[] as &[f32]),
            Reduction::Add,
            &options,
        )
        .unwrap_or_else(|e| panic!("{tuples} tuples: {}", e.message()));
        assert_eq!((shape, out.len()), (vec![0], 0));
    }
    let huge = 1usize << 32;
    let data_shape = [0, huge, huge, huge];
    let err = gatherkit::scatter_nd_to_vec(
        TensorRef::new(&data_shape, &[] as &[f32]),
        TensorRef::new(&[1, 4], &[0i64, 2, 0, 0]),
        TensorRef::new(&[1], &[1f32]),
        Reduction::None,
        &options,
    )
    .unwrap_err();
    assert_eq!(err.status(), Status::IndexOutOfBounds, "{}", err.message());
    assert!(
        err.message()
            .contains("(indices[0, 0]) = 0 is out of range; data.shape[0] is 0"),
        "{}",
        err.message()
    );
    let err = gatherkit::scatter_elements_to_vec(
        TensorRef::new(&data_shape, &[] as &[f32]),
        TensorRef::new(&[1, 3, 1, 1], &[0i64; 3]),
        TensorRef::new(&[1, 3, 1, 1], &[1f32; 3]),
        0,
        Reduction::None,
        &options,
    )
    .unwrap_err();
    assert_eq!(err.status(), Status::IndexOutOfBounds, "{}", err.message());
    assert!(
        err.message()
            .contains("indices[0, 0, 0, 0] = 0 is out of range; data.shape[0] is 0"),
        "{}",
        err.message()
    );
    // A valid call into an empty output: every component in range, nothing to write.
    let (_, out) = gatherkit::scatter_nd_to_vec(
        TensorRef::new(&[3, 0], &[] as &[f32]),
        TensorRef::new(&[2, 1], &[2i64, -3]),
        TensorRef::new(&[2, 0], &[] as &[f32]),
        Reduction::Mul,
        &options,
    )
    .unwrap();
    assert!(out.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Memory the call needs for itself.

/// Lowers the process's address-space limit to what it maps now plus `headroom` bytes.
#[cfg(target_os = "linux")]
fn limit_address_space(headroom: u64) {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().next().unwrap().parse().unwrap();
    // SAFETY: plain system calls on a local struct.
    unsafe {
        let page = libc::sysconf(libc::_SC_PAGESIZE) as u64;
        let mut limit = std::mem::zeroed::<libc::rlimit>();
        assert_eq!(libc::getrlimit(libc::RLIMIT_AS, &mut limit), 0);
        limit.rlim_cur = pages * page + headroom;
        assert_eq!(libc::setrlimit(libc::RLIMIT_AS, &limit), 0);
    }
}

/// A scatter resolves its targets into a buffer of its own, sized by its inputs (4 bytes per index
/// value or tuple). Where that buffer cannot be allocated, the call returns
/// `Status::OutOfMemory` and writes nothing, instead of the allocator's failure handler aborting
/// the process.
#[cfg(target_os = "linux")]
#[test]
fn a_scatter_whose_targets_cannot_be_allocated_reports_out_of_memory() {
    child::in_child(
        "a_scatter_whose_targets_cannot_be_allocated_reports_out_of_memory",
        || {
            // Zeroed vectors come from `calloc`: address space, but no memory until touched. Every
            // index value 0 is valid, so only the targets' buffer can fail.
            let values = 64 << 20;
            let element_indices = vec![0i32; values];
            let tuple_indices = vec![0i64; values / 2];
            let updates = vec![0u8; values];
            let options = Options::default().with_threads(1);
            limit_address_space(32 << 20);

            let mut data = [7u8];
            let err = scatter_elements_in_place(
                TensorMut::new(&[1], &mut data),
                TensorRef::new(&[values], &element_indices),
                TensorRef::new(&[values], &updates),
                0,
                Reduction::None,
                &options,
            )
            .unwrap_err();
            assert_eq!(err.status(), Status::OutOfMemory);
            assert_eq!(
                err.message(),
                format!(
                    "ScatterElements-18: could not allocate the {} bytes that resolve its {values} \
                     targets (a 4-byte offset per index value or tuple) before applying them; \
                     nothing was written",
                    4 * values
                )
            );
            assert_eq!(data, [7]);

            let mut out = [9u8];
            let err = scatter_nd(
                TensorRef::new(&[1], &[7u8]),
                TensorRef::new(&[values / 2, 1], &tuple_indices),
                TensorRef::new(&[values / 2], &updates[..values / 2]),
                Reduction::Max,
                TensorMut::new(&[1], &mut out),
                &options,
            )
            .unwrap_err();
            assert_eq!(err.status(), Status::OutOfMemory);
            assert!(err.message().starts_with(&format!(
                "ScatterND-18: could not allocate the {} bytes",
                2 * values
            )));
            assert_eq!(out, [9]);

            // A scatter whose targets fit still runs under the same limit.
            scatter_nd(
                TensorRef::new(&[1], &[7u8]),
                TensorRef::new(&[1024, 1], &tuple_indices[..1024]),
                TensorRef::new(&[1024], &updates[..1024]),
                Reduction::Max,
                TensorMut::new(&[1], &mut out),
                &options,
            )
            .unwrap();
            assert_eq!(out, [7]);
        },
    );
}
