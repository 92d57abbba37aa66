//! Invariants that must hold for any input (proptest generates the shapes, attributes and seeds):
//!
//! - identity indices return the data, for GatherElements along any axis and for GatherND with
//!   any batch_dims and tuple length;
//! - GatherND with full index tuples equals GatherElements on the flattened data with the tuples'
//!   flat offsets;
//! - the result, and the error, are the same for every `num_threads`;
//! - through the C ABI, a failing call never writes outside its output buffer (and a call failing
//!   validation writes nothing at all), and never changes its inputs.

use gatherkit::ffi::{
    gk_gather_elements, gk_gather_nd, gk_options, gk_tensor, gk_tensor_mut, GK_DTYPE_INT32,
    GK_DTYPE_INT64, GK_STATUS_INDEX_OUT_OF_BOUNDS, GK_STATUS_OK,
};
use gatherkit::{
    gather_elements_to_vec, gather_nd_to_vec, Complex, Element, IndexElement, Options, TensorRef,
};
use gatherkit_testkit::{coords, count, flat, reference};
use proptest::prelude::*;

/// A data shape of rank 1..=max_rank with dimensions 0..=max_dim (zero-size tensors included).
fn shape(max_rank: usize, max_dim: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..=max_dim, 1..=max_rank)
}

/// `v`, or its negative spelling `v - size` when `negative` (both address the same element).
fn spell(v: usize, size: usize, negative: bool) -> i64 {
    if negative {
        v as i64 - size as i64
    } else {
        v as i64
    }
}

/// Deterministic distinct-ish values, so that a misplaced element shows.
fn values<T>(n: usize, seed: u64, make: impl Fn(u64) -> T) -> Vec<T> {
    (0..n as u64)
        .map(|i| make((i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed))
        .collect()
}

fn versions_ge() -> impl Strategy<Value = Options> {
    prop_oneof![
        Just(Options::onnx(11)),
        Just(Options::onnx(13)),
        Just(Options::openvino(6)),
    ]
}

/// The GatherND versions whose output shape is indices[:-1] + data[b+k:] for any batch_dims.
fn versions_nd_batched() -> impl Strategy<Value = Options> {
    prop_oneof![
        Just(Options::onnx(12)),
        Just(Options::onnx(13)),
        Just(Options::openvino(8)),
    ]
}

fn identity_elements<T: Element + PartialEq + std::fmt::Debug, I: IndexElement>(
    data_shape: &[usize],
    axis: i64,
    negative_mask: u64,
    options: &Options,
    to_index: impl Fn(i64) -> I,
    data: Vec<T>,
) -> Result<(), TestCaseError> {
    let a = reference::resolve_index(axis, data_shape.len()).unwrap();
    let indices: Vec<I> = (0..data.len())
        .map(|p| {
            let along = coords(p, data_shape)[a];
            to_index(spell(
                along,
                data_shape[a],
                negative_mask >> (p % 64) & 1 == 1,
            ))
        })
        .collect();
    let (out_shape, out) = gather_elements_to_vec(
        TensorRef::new(data_shape, &data),
        TensorRef::new(data_shape, &indices),
        axis,
        options,
    )
    .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(out_shape.as_slice(), data_shape);
    prop_assert_eq!(out, data);
    Ok(())
}

fn identity_nd<T: Element + PartialEq + std::fmt::Debug, I: IndexElement>(
    data_shape: &[usize],
    batch_dims: usize,
    tuple_len: usize,
    negative_mask: u64,
    options: &Options,
    to_index: impl Fn(i64) -> I,
    data: Vec<T>,
) -> Result<(), TestCaseError> {
    // One tuple per element of data[:b+k]; tuple c' picks data[c, c', :], which is itself.
    let lead = &data_shape[..batch_dims + tuple_len];
    let mut indices_shape = lead.to_vec();
    indices_shape.push(tuple_len);
    let mut indices = Vec::new();
    for p in 0..count(lead) {
        let c = coords(p, lead);
        for j in 0..tuple_len {
            let d = batch_dims + j;
            let negative = negative_mask >> ((p * tuple_len + j) % 64) & 1 == 1;
            indices.push(to_index(spell(c[d], data_shape[d], negative)));
        }
    }
    let (out_shape, out) = gather_nd_to_vec(
        TensorRef::new(data_shape, &data),
        TensorRef::new(&indices_shape, &indices),
        batch_dims as i64,
        options,
    )
    .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(out_shape.as_slice(), data_shape);
    prop_assert_eq!(out, data);
    Ok(())
}

/// The element widths 1, 2, 4, 8 and 16 bytes, with either index type.
macro_rules! for_every_width {
    ($check:ident, $seed:expr, $n:expr, $i32:expr, ($($arg:expr),*)) => {{
        let (seed, n) = ($seed, $n);
        if $i32 {
            $check($($arg,)* |v| v as i32, values(n, seed, |x| x as u8))?;
            $check($($arg,)* |v| v as i32, values(n, seed, |x| x as u16))?;
            $check($($arg,)* |v| v as i32, values(n, seed, |x| x as u32))?;
            $check($($arg,)* |v| v as i32, values(n, seed, |x| x))?;
            $check($($arg,)* |v| v as i32, values(n, seed, |x| Complex::new(x as f64, -(x as f64))))?;
        } else {
            $check($($arg,)* |v| v, values(n, seed, |x| x as u8))?;
            $check($($arg,)* |v| v, values(n, seed, |x| x as u16))?;
            $check($($arg,)* |v| v, values(n, seed, |x| x as u32))?;
            $check($($arg,)* |v| v, values(n, seed, |x| x))?;
            $check($($arg,)* |v| v, values(n, seed, |x| Complex::new(x as f64, -(x as f64))))?;
        }
    }};
}

proptest! {
    #[test]
    fn identity_indices_return_the_data_gather_elements(
        (data_shape, axis) in shape(5, 6).prop_flat_map(|s| {
            let r = s.len() as i64;
            (Just(s), -r..r)
        }),
        negative_mask in any::<u64>(),
        seed in any::<u64>(),
        use_i32 in any::<bool>(),
        options in versions_ge(),
    ) {
        let n = count(&data_shape);
        for_every_width!(identity_elements, seed, n, use_i32, (&data_shape, axis, negative_mask, &options));
    }

    #[test]
    fn identity_indices_return_the_data_gather_nd(
        (data_shape, batch_dims, tuple_len) in shape(5, 5).prop_flat_map(|s| {
            let r = s.len();
            (Just(s), 0..r)
        }).prop_flat_map(|(s, b)| {
            let r = s.len();
            (Just(s), Just(b), 1..=r - b)
        }),
        negative_mask in any::<u64>(),
        seed in any::<u64>(),
        use_i32 in any::<bool>(),
        options in versions_nd_batched(),
    ) {
        let n = count(&data_shape);
        for_every_width!(identity_nd, seed, n, use_i32, (&data_shape, batch_dims, tuple_len, negative_mask, &options));
    }

    #[test]
    fn gather_nd_with_full_tuples_equals_gather_elements_on_flattened_data(
        data_shape in prop::collection::vec(1usize..=7, 1..=5),
        tuples in prop::collection::vec((any::<u64>(), any::<u64>()), 0..200),
        seed in any::<u64>(),
    ) {
        let r = data_shape.len();
        let n = count(&data_shape);
        let data = values(n, seed, |x| x as u32);
        let mut nd_indices = Vec::new();
        let mut flat_indices = Vec::new();
        for &(pick, signs) in &tuples {
            let c = coords(pick as usize % n, &data_shape);
            for (d, &x) in c.iter().enumerate() {
                nd_indices.push(spell(x, data_shape[d], signs >> d & 1 == 1));
            }
            // The flattened form, also spelled either way.
            flat_indices.push(spell(flat(&c, &data_shape), n, signs >> 63 == 1));
        }
        let m = tuples.len();
        let (nd_shape, nd_out) = gather_nd_to_vec(
            TensorRef::new(&data_shape, &data),
            TensorRef::new(&[m, r], &nd_indices),
            0,
            &Options::default(),
        ).unwrap();
        let (ge_shape, ge_out) = gather_elements_to_vec(
            TensorRef::new(&[n], &data),
            TensorRef::new(&[m], &flat_indices),
            0,
            &Options::default(),
        ).unwrap();
        prop_assert_eq!(nd_shape, ge_shape);
        prop_assert_eq!(nd_out, ge_out);
    }
}

/// Runs `op` under several thread counts; all must give the same result (bitwise, or the same
/// error status and message).
fn same_for_every_thread_count<T: PartialEq + std::fmt::Debug>(
    op: impl Fn(&Options) -> gatherkit::Result<(Vec<usize>, Vec<T>)>,
) -> Result<(), TestCaseError> {
    let reference = op(&Options::default().with_threads(1));
    for threads in [2, 3, 4, 0] {
        let got = op(&Options::default().with_threads(threads));
        match (&reference, &got) {
            (Ok(a), Ok(b)) => prop_assert!(a == b, "{} threads differ from 1", threads),
            (Err(a), Err(b)) => {
                prop_assert_eq!(a.status(), b.status());
                prop_assert_eq!(a.message(), b.message(), "{} threads", threads);
            }
            _ => prop_assert!(
                false,
                "{} threads: {:?} vs 1 thread: {:?}",
                threads,
                got.as_ref().err(),
                reference.as_ref().err()
            ),
        }
    }
    Ok(())
}

proptest! {
    // Each case moves a few MiB (enough to be split across threads): fewer cases.
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn gather_elements_is_the_same_for_every_thread_count(
        (rows, axis_size, cols) in (1usize..=16, 1usize..=512, 1usize..=512),
        positions in 1usize..=512,
        axis in 0i64..3,
        bad_at in prop::option::of(any::<u64>()),
        seed in any::<u64>(),
    ) {
        // [rows, axis_size, cols] data with the gather along any of its axes: up to 4 Mi elements.
        let data_shape = [rows, axis_size, cols];
        let mut indices_shape = data_shape;
        indices_shape[axis as usize] = positions;
        let size = data_shape[axis as usize];
        let data = values(count(&data_shape), seed, |x| x as u32);
        let mut indices: Vec<i32> = values(count(&indices_shape), seed ^ 1, |x| {
            (x % (2 * size as u64)) as i32 - size as i32
        });
        if let Some(at) = bad_at {
            let at = at as usize % indices.len();
            indices[at] = size as i32;
        }
        same_for_every_thread_count(|options| gather_elements_to_vec(
            TensorRef::new(&data_shape, &data),
            TensorRef::new(&indices_shape, &indices),
            axis,
            options,
        ))?;
    }

    #[test]
    fn gather_nd_is_the_same_for_every_thread_count(
        rows in 1usize..=5000,
        slice in prop_oneof![Just(1usize), Just(3), Just(4), Just(16), Just(64), Just(300)],
        tuples in 1usize..=12000,
        bad_at in prop::option::of(any::<u64>()),
        seed in any::<u64>(),
    ) {
        let data = values(rows * slice, seed, |x| x);
        let mut indices: Vec<i64> = values(tuples, seed ^ 1, |x| {
            (x % (2 * rows as u64)) as i64 - rows as i64
        });
        if let Some(at) = bad_at {
            let at = at as usize % indices.len();
            indices[at] = -(rows as i64) - 1;
        }
        same_for_every_thread_count(|options| gather_nd_to_vec(
            TensorRef::new(&[rows, slice], &data),
            TensorRef::new(&[tuples, 1], &indices),
            0,
            options,
        ))?;
    }
}

/// How a generated C call goes wrong.
#[derive(Clone, Copy, Debug)]
enum Fault {
    None,
    BadIndex,
    WrongOutputShape,
    BadAttribute,
}

const CANARY: u8 = 0xA5;

proptest! {
    #[test]
    fn a_failing_c_call_never_writes_outside_its_output(
        nd in any::<bool>(),
        data_shape in prop::collection::vec(1usize..=9, 1..=4),
        positions in 0usize..=9,
        width_log2 in 0u32..=4,
        use_i32 in any::<bool>(),
        fault in prop_oneof![Just(Fault::None), Just(Fault::BadIndex), Just(Fault::WrongOutputShape), Just(Fault::BadAttribute)],
        bad_value in prop_oneof![Just(i64::MIN), Just(i64::MAX), -100i64..100],
        threads in 0usize..=3,
        seed in any::<u64>(),
    ) {
        let w = 1usize << width_log2;
        let dtype = [2, 4, 6, 7, 15][width_log2 as usize];
        let r = data_shape.len();
        let n = count(&data_shape);
        // GatherElements along the last axis; GatherND with 1-component tuples into dimension 0.
        let (indices_shape, mut out_shape, range) = if nd {
            (vec![positions, 1], [&[positions][..], &data_shape[1..]].concat(), data_shape[0])
        } else {
            let mut s = data_shape.clone();
            s[r - 1] = positions;
            (s.clone(), s, data_shape[r - 1])
        };
        let m = count(&indices_shape);
        let mut idx: Vec<i64> = values(m, seed, |x| (x % (2 * range as u64)) as i64 - range as i64);
        if let (Fault::BadIndex, true) = (fault, m > 0) {
            let at = seed as usize % m;
            // A value outside [-range, range - 1], whatever bad_value is.
            idx[at] = if (-(range as i64)..range as i64).contains(&bad_value) { range as i64 } else { bad_value };
        }
        if let Fault::WrongOutputShape = fault {
            out_shape[0] += 1;
        }
        let attribute = match (nd, fault) {
            // batch_dims must be below the rank of both tensors (indices have rank 2).
            (true, Fault::BadAttribute) => r as i64 + 1,
            (true, _) => 0,
            (false, Fault::BadAttribute) => -(r as i64) - 1,
            (false, _) => r as i64 - 1,
        };

        let data_words: Vec<u64> = values((n * w).div_ceil(8), seed ^ 7, |x| x);
        let idx32: Vec<i32> = idx.iter().map(|&v| v as i32).collect();
        let to_i32_exact = idx.iter().all(|&v| v == v as i32 as i64);
        let use_i32 = use_i32 && to_i32_exact;
        // The output sits between canary bytes, 64 of them on each side, 16-byte aligned.
        let out_bytes = count(&out_shape) * w;
        let mut out_words = vec![u128::from_ne_bytes([CANARY; 16]); (out_bytes + 128).div_ceil(16)];
        let data_before = data_words.clone();
        let dshape: Vec<i64> = data_shape.iter().map(|&d| d as i64).collect();
        let ishape: Vec<i64> = indices_shape.iter().map(|&d| d as i64).collect();
        let oshape: Vec<i64> = out_shape.iter().map(|&d| d as i64).collect();
        let data_t = gk_tensor { dtype, rank: r, shape: dshape.as_ptr(), data: data_words.as_ptr().cast() };
        let idx_t = gk_tensor {
            dtype: if use_i32 { GK_DTYPE_INT32 } else { GK_DTYPE_INT64 },
            rank: ishape.len(),
            shape: ishape.as_ptr(),
            data: if use_i32 { idx32.as_ptr().cast() } else { idx.as_ptr().cast() },
        };
        // SAFETY: 64 bytes into a buffer of out_bytes + 128 bytes.
        let out_ptr = unsafe { out_words.as_mut_ptr().cast::<u8>().add(64) };
        let out_t = gk_tensor_mut { dtype, rank: oshape.len(), shape: oshape.as_ptr(), data: out_ptr.cast() };
        let options = gk_options { num_threads: threads, ..Default::default() };
        // SAFETY: descriptors match their buffers (the output buffer is as large as out_shape).
        let status = unsafe {
            if nd {
                gk_gather_nd(&data_t, &idx_t, attribute, &out_t, &options)
            } else {
                gk_gather_elements(&data_t, &idx_t, attribute, &out_t, &options)
            }
        };
        // SAFETY: the initialized words as bytes.
        let all = unsafe { std::slice::from_raw_parts(out_words.as_ptr().cast::<u8>(), out_words.len() * 16) };
        prop_assert!(all[..64].iter().all(|&b| b == CANARY), "wrote before the output");
        prop_assert!(all[64 + out_bytes..].iter().all(|&b| b == CANARY), "wrote after the output");
        prop_assert!(data_words == data_before, "data changed");
        let expect_ok = matches!(fault, Fault::None) || (matches!(fault, Fault::BadIndex) && m == 0);
        if expect_ok {
            prop_assert_eq!(status, GK_STATUS_OK);
        } else {
            prop_assert_ne!(status, GK_STATUS_OK);
            if status != GK_STATUS_INDEX_OUT_OF_BOUNDS {
                prop_assert!(all.iter().all(|&b| b == CANARY), "status {} wrote output", status);
            } else {
                prop_assert!(matches!(fault, Fault::BadIndex));
            }
        }
    }
}
