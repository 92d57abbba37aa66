//! Randomized comparison with the naive reference operators of `gatherkit-testkit`: coordinates
//! by division, one element at a time, no cleverness. Covers all sixteen dtypes, both index
//! types, ranks 1–6, every axis and batch_dims, both flavors and all versions, valid and invalid
//! inputs, several thread counts.

use gatherkit::{
    bf16, f16, gather_elements_dyn, gather_elements_to_vec, gather_nd_dyn, gather_nd_to_vec,
    Complex, DType, DynTensorMut, DynTensorRef, Element, Flavor, IndexElement, Options, Status,
    StringHandle, TensorDesc, TensorRef,
};
use gatherkit_testkit::{coords, count, reference, Rng};
use std::ffi::c_char;

/// The GatherND output shape a version describes its output with (the layout is the same for
/// every version): OpenVINO GatherND-5, which opsets 5 to 7 use, folds the batch dimensions.
fn nd_output_shape(
    version: (Flavor, i32),
    data: &[usize],
    indices: &[usize],
    b: usize,
) -> Vec<usize> {
    if version.0 == Flavor::OpenVino && (5..=7).contains(&version.1) {
        reference::gather_nd_folded_output_shape(data, indices, b)
    } else {
        reference::gather_nd_output_shape(data, indices, b)
    }
}

fn bytes_of<T>(v: &[T]) -> &[u8] {
    // SAFETY: element types have no padding; viewing them as bytes is fine.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

const VERSIONS_GE: &[(Flavor, i32)] = &[
    (Flavor::Onnx, 11),
    (Flavor::Onnx, 13),
    (Flavor::Onnx, 0),
    (Flavor::OpenVino, 6),
];
const VERSIONS_ND: &[(Flavor, i32)] = &[
    (Flavor::Onnx, 11),
    (Flavor::Onnx, 12),
    (Flavor::Onnx, 13),
    (Flavor::OpenVino, 5),
    (Flavor::OpenVino, 8),
];

/// bfloat16 exists from ONNX opset 13 (both operators) and in every OpenVINO version.
fn bfloat16_allowed(version: (Flavor, i32)) -> bool {
    match version {
        (Flavor::OpenVino, _) | (Flavor::Onnx, 0) => true,
        (Flavor::Onnx, v) => v >= 13,
    }
}

struct ElementsCase {
    data_shape: Vec<usize>,
    indices_shape: Vec<usize>,
    indices: Vec<i64>,
    axis: i64,
    version: (Flavor, i32),
    threads: usize,
}

fn random_elements_case(rng: &mut Rng) -> ElementsCase {
    let version = VERSIONS_GE[rng.below(VERSIONS_GE.len() as u64) as usize];
    let r = rng.range(1, 6) as usize;
    let max_dim = if r > 4 { 3 } else { 5 };
    let data_shape: Vec<usize> = (0..r)
        .map(|_| {
            if rng.chance(5) {
                0
            } else {
                rng.range(1, max_dim) as usize
            }
        })
        .collect();
    let axis = rng.range(-(r as i64), r as i64 - 1);
    let a = reference::resolve_index(axis, r).unwrap();
    let indices_shape: Vec<usize> = (0..r)
        .map(|d| {
            if d == a {
                rng.range(0, max_dim + 1) as usize
            } else if version.0 == Flavor::OpenVino {
                data_shape[d]
            } else {
                rng.range(0, data_shape[d] as i64) as usize
            }
        })
        .collect();
    let s = data_shape[a] as i64;
    // An empty axis makes every index invalid; draw small values then.
    let mut indices: Vec<i64> = (0..count(&indices_shape))
        .map(|_| {
            if s == 0 {
                rng.range(-2, 2)
            } else {
                rng.range(-s, s - 1)
            }
        })
        .collect();
    if !indices.is_empty() && rng.chance(15) {
        let p = rng.below(indices.len() as u64) as usize;
        indices[p] = if rng.chance(50) {
            s + rng.range(0, 3)
        } else {
            -s - 1 - rng.range(0, 3)
        };
    }
    let threads = [0, 1, 2, 3][rng.below(4) as usize];
    ElementsCase {
        data_shape,
        indices_shape,
        indices,
        axis,
        version,
        threads,
    }
}

struct NdCase {
    data_shape: Vec<usize>,
    indices_shape: Vec<usize>,
    indices: Vec<i64>,
    batch_dims: usize,
    version: (Flavor, i32),
    threads: usize,
}

fn random_nd_case(rng: &mut Rng) -> NdCase {
    let version = VERSIONS_ND[rng.below(VERSIONS_ND.len() as u64) as usize];
    let r = rng.range(1, 6) as usize;
    let q = rng.range(1, 6) as usize;
    let max_dim = if r > 4 { 3 } else { 4 };
    let data_shape: Vec<usize> = (0..r)
        .map(|_| {
            if rng.chance(5) {
                0
            } else {
                rng.range(1, max_dim) as usize
            }
        })
        .collect();
    let b = if version == (Flavor::Onnx, 11) {
        0
    } else {
        rng.range(0, r.min(q) as i64 - 1) as usize
    };
    let k = rng.range(1, (r - b) as i64) as usize;
    let mut indices_shape: Vec<usize> = data_shape[..b].to_vec();
    for _ in b..q - 1 {
        indices_shape.push(rng.range(0, 3) as usize);
    }
    indices_shape.push(k);
    let n = count(&indices_shape);
    let mut indices: Vec<i64> = (0..n)
        .map(|p| {
            let s = data_shape[b + p % k] as i64;
            if s == 0 {
                0
            } else {
                rng.range(-s, s - 1)
            }
        })
        .collect();
    if n > 0 && rng.chance(15) {
        let p = rng.below(n as u64) as usize;
        let s = data_shape[b + p % k] as i64;
        indices[p] = if rng.chance(50) {
            s + rng.range(0, 3)
        } else {
            -s - 1 - rng.range(0, 3)
        };
    }
    let threads = [0, 1, 2, 3][rng.below(4) as usize];
    NdCase {
        data_shape,
        indices_shape,
        indices,
        batch_dims: b,
        version,
        threads,
    }
}

fn options(version: (Flavor, i32), threads: usize) -> Options {
    Options {
        flavor: version.0,
        opset: version.1,
        num_threads: threads,
        parallel_for: None,
    }
}

/// Checks `got` against the reference result; for an error, the status and the reported
/// position of the first bad index.
fn compare<T: Copy>(
    ctx: &str,
    got: gatherkit::Result<(Vec<usize>, Vec<T>)>,
    expected: Result<Vec<T>, usize>,
    expected_shape: &[usize],
    position_text: impl Fn(usize) -> String,
) {
    match (got, expected) {
        (Ok((shape, out)), Ok(want)) => {
            assert_eq!(shape, expected_shape, "{ctx}: shape");
            assert_eq!(bytes_of(&out), bytes_of(&want), "{ctx}: values");
        }
        (Err(e), Err(p)) => {
            assert_eq!(e.status(), Status::IndexOutOfBounds, "{ctx}: {e}");
            let at = position_text(p);
            assert!(
                e.message().contains(&at),
                "{ctx}: {:?} should name {at}",
                e.message()
            );
        }
        (Ok(_), Err(p)) => panic!("{ctx}: expected a bad index at {p}, got success"),
        (Err(e), Ok(_)) => panic!("{ctx}: expected success, got {e}"),
    }
}

fn format_coords(c: &[usize]) -> String {
    let parts: Vec<String> = c.iter().map(|x| x.to_string()).collect();
    format!("indices[{}]", parts.join(", "))
}

fn run_elements<T: Element, I: IndexElement + TryFrom<i64>>(
    rng: &mut Rng,
    value: &impl Fn(u64) -> T,
    cases: usize,
) {
    for i in 0..cases {
        let case = random_elements_case(rng);
        if T::DTYPE == DType::Bfloat16 && !bfloat16_allowed(case.version) {
            continue;
        }
        let data: Vec<T> = (0..count(&case.data_shape))
            .map(|_| value(rng.next_u64()))
            .collect();
        let indices: Vec<I> = case
            .indices
            .iter()
            .map(|&v| I::try_from(v).ok().unwrap())
            .collect();
        let got = gather_elements_to_vec(
            TensorRef::new(&case.data_shape, &data),
            TensorRef::new(&case.indices_shape, &indices),
            case.axis,
            &options(case.version, case.threads),
        );
        let want = reference::gather_elements(
            &data,
            &case.data_shape,
            &case.indices,
            &case.indices_shape,
            case.axis,
        );
        let ctx = format!(
            "case {i} {} {}: data {:?} indices {:?} axis {} {:?} threads {}",
            T::DTYPE,
            I::INDEX_TYPE.dtype(),
            case.data_shape,
            case.indices_shape,
            case.axis,
            case.version,
            case.threads
        );
        compare(&ctx, got, want, &case.indices_shape, |p| {
            format_coords(&coords(p, &case.indices_shape)) + " ="
        });
    }
}

fn run_nd<T: Element, I: IndexElement + TryFrom<i64>>(
    rng: &mut Rng,
    value: &impl Fn(u64) -> T,
    cases: usize,
) {
    for i in 0..cases {
        let case = random_nd_case(rng);
        if T::DTYPE == DType::Bfloat16 && !bfloat16_allowed(case.version) {
            continue;
        }
        let data: Vec<T> = (0..count(&case.data_shape))
            .map(|_| value(rng.next_u64()))
            .collect();
        let indices: Vec<I> = case
            .indices
            .iter()
            .map(|&v| I::try_from(v).ok().unwrap())
            .collect();
        let got = gather_nd_to_vec(
            TensorRef::new(&case.data_shape, &data),
            TensorRef::new(&case.indices_shape, &indices),
            case.batch_dims as i64,
            &options(case.version, case.threads),
        );
        let want = reference::gather_nd(
            &data,
            &case.data_shape,
            &case.indices,
            &case.indices_shape,
            case.batch_dims,
        );
        let shape = nd_output_shape(
            case.version,
            &case.data_shape,
            &case.indices_shape,
            case.batch_dims,
        );
        let ctx = format!(
            "case {i} {} {}: data {:?} indices {:?} b {} {:?} threads {}",
            T::DTYPE,
            I::INDEX_TYPE.dtype(),
            case.data_shape,
            case.indices_shape,
            case.batch_dims,
            case.version,
            case.threads
        );
        compare(&ctx, got, want, &shape, |p| {
            format_coords(&coords(p, &case.indices_shape)) + ") ="
        });
    }
}

fn run_both<T: Element>(seed: u64, value: impl Fn(u64) -> T) {
    let mut rng = Rng::new(seed);
    run_elements::<T, i64>(&mut rng, &value, 300);
    run_elements::<T, i32>(&mut rng, &value, 300);
    run_nd::<T, i64>(&mut rng, &value, 300);
    run_nd::<T, i32>(&mut rng, &value, 300);
}

#[test]
fn every_dtype_matches_the_reference() {
    run_both::<f32>(1, |x| f32::from_bits(x as u32));
    run_both::<u8>(2, |x| x as u8);
    run_both::<i8>(3, |x| x as i8);
    run_both::<u16>(4, |x| x as u16);
    run_both::<i16>(5, |x| x as i16);
    run_both::<i32>(6, |x| x as i32);
    run_both::<i64>(7, |x| x as i64);
    // Handles are copied, never read, so any address will do.
    run_both::<StringHandle>(8, |x| StringHandle(x as usize as *const c_char));
    run_both::<bool>(9, |x| x & 1 == 1);
    run_both::<f16>(10, |x| f16::from_bits(x as u16));
    run_both::<f64>(11, f64::from_bits);
    run_both::<u32>(12, |x| x as u32);
    run_both::<u64>(13, |x| x);
    run_both::<Complex<f32>>(14, |x| {
        Complex::new(f32::from_bits(x as u32), f32::from_bits((x >> 32) as u32))
    });
    run_both::<Complex<f64>>(15, |x| {
        Complex::new(f64::from_bits(x), f64::from_bits(x.rotate_left(17)))
    });
    run_both::<bf16>(16, |x| bf16::from_bits(x as u16));
}

/// The byte API with dtypes chosen at run time agrees with the reference on byte patterns.
#[test]
fn byte_api_matches_the_reference_for_every_width() {
    let mut rng = Rng::new(99);
    for i in 0..2000 {
        let dtype = DType::ALL[rng.below(16) as usize];
        let w = dtype.size();
        let use_nd = rng.chance(50);
        let (data_shape, indices_shape, indices, attribute, version, threads) = if use_nd {
            let c = random_nd_case(&mut rng);
            (
                c.data_shape,
                c.indices_shape,
                c.indices,
                c.batch_dims as i64,
                c.version,
                c.threads,
            )
        } else {
            let c = random_elements_case(&mut rng);
            (
                c.data_shape,
                c.indices_shape,
                c.indices,
                c.axis,
                c.version,
                c.threads,
            )
        };
        if dtype == DType::Bfloat16 && !bfloat16_allowed(version) {
            continue;
        }
        // 16-byte words keep every dtype aligned; elements are byte chunks of the width.
        let n = count(&data_shape);
        let data_words: Vec<u128> = (0..(n * w).div_ceil(16))
            .map(|_| (rng.next_u64() as u128) << 64 | rng.next_u64() as u128)
            .collect();
        let data_bytes = &bytes_of(&data_words)[..n * w];
        let chunks: Vec<&[u8]> = data_bytes.chunks(w).collect();
        let (want, out_shape) = if use_nd {
            let b = attribute as usize;
            (
                reference::gather_nd(&chunks, &data_shape, &indices, &indices_shape, b),
                nd_output_shape(version, &data_shape, &indices_shape, b),
            )
        } else {
            (
                reference::gather_elements(
                    &chunks,
                    &data_shape,
                    &indices,
                    &indices_shape,
                    attribute,
                ),
                indices_shape.clone(),
            )
        };
        let out_len = count(&out_shape) * w;
        let mut out_words = vec![0u128; out_len.div_ceil(16)];
        // SAFETY: viewing initialized words as bytes.
        let out_bytes =
            unsafe { std::slice::from_raw_parts_mut(out_words.as_mut_ptr().cast::<u8>(), out_len) };
        let data_t = DynTensorRef::new(dtype, &data_shape, data_bytes);
        let idx_t = DynTensorRef::new(DType::Int64, &indices_shape, bytes_of(&indices));
        let out_t = DynTensorMut::new(dtype, &out_shape, out_bytes);
        let opts = options(version, threads);
        let got = if use_nd {
            gather_nd_dyn(data_t, idx_t, attribute, out_t, &opts)
        } else {
            gather_elements_dyn(data_t, idx_t, attribute, out_t, &opts)
        };
        let ctx = format!("case {i} {dtype} nd={use_nd} data {data_shape:?} indices {indices_shape:?} attr {attribute} {version:?}");
        match (got, want) {
            (Ok(()), Ok(want)) => assert_eq!(
                &bytes_of(&out_words)[..out_len],
                want.concat().as_slice(),
                "{ctx}"
            ),
            (Err(e), Err(_)) => assert_eq!(e.status(), Status::IndexOutOfBounds, "{ctx}"),
            (got, want) => panic!("{ctx}: got {got:?}, reference {:?}", want.map(|_| ())),
        }
    }
}

/// Large enough to be split across threads: every thread count gives the same bytes and, with
/// several bad indices spread over the chunks, the same (first) error.
#[test]
fn thread_counts_agree_bit_for_bit_and_report_the_same_first_error() {
    let mut rng = Rng::new(7);
    let data_shape = [256usize, 1024];
    let data: Vec<f32> = (0..count(&data_shape))
        .map(|_| f32::from_bits(rng.next_u64() as u32))
        .collect();
    for axis in [0i64, 1] {
        let s = data_shape[axis as usize] as i64;
        let mut indices: Vec<i64> = (0..data.len()).map(|_| rng.range(-s, s - 1)).collect();
        let mut first = None;
        for threads in [1, 2, 3, 4, 0] {
            let got = gather_elements_to_vec(
                TensorRef::new(&data_shape, &data),
                TensorRef::new(&data_shape, &indices),
                axis,
                &Options::default().with_threads(threads),
            )
            .unwrap();
            let want = reference::gather_elements(&data, &data_shape, &indices, &data_shape, axis)
                .unwrap();
            assert_eq!(
                bytes_of(&got.1),
                bytes_of(&want),
                "axis {axis}, {threads} threads"
            );
        }
        // Bad values late in the last chunk and early in the second half: the earlier one wins.
        let late = indices.len() - 3;
        let mid = indices.len() / 2 + 17;
        indices[late] = s;
        indices[mid] = -s - 1;
        for threads in [1, 2, 3, 4] {
            let e = gather_elements_to_vec(
                TensorRef::new(&data_shape, &data),
                TensorRef::new(&data_shape, &indices),
                axis,
                &Options::default().with_threads(threads),
            )
            .unwrap_err();
            let m = e.message().to_string();
            assert!(m.contains(&format_coords(&coords(mid, &data_shape))), "{m}");
            assert_eq!(first.get_or_insert(m.clone()), &m, "{threads} threads");
        }
    }

    // GatherND with many tuples, each a 64-element row.
    let data_shape = [4096usize, 64];
    let data: Vec<u32> = (0..count(&data_shape) as u32).collect();
    let mut indices: Vec<i32> = (0..65536).map(|_| rng.range(-4096, 4095) as i32).collect();
    let indices64: Vec<i64> = indices.iter().map(|&v| v as i64).collect();
    let want = reference::gather_nd(&data, &data_shape, &indices64, &[65536, 1], 0).unwrap();
    for threads in [1, 2, 3, 0] {
        let (_, got) = gather_nd_to_vec(
            TensorRef::new(&data_shape, &data),
            TensorRef::new(&[65536, 1], &indices),
            0,
            &Options::default().with_threads(threads),
        )
        .unwrap();
        assert!(
            got == want,
            "GatherND with {threads} threads differs from the reference"
        );
    }
    // Batched, with chunk boundaries inside batches (18000 tuples over 4 threads).
    let data_shape = [6usize, 1000, 32];
    let data: Vec<u32> = (0..count(&data_shape) as u32).collect();
    let batched: Vec<i64> = (0..18000).map(|_| rng.range(-1000, 999)).collect();
    let want = reference::gather_nd(&data, &data_shape, &batched, &[6, 3000, 1], 1).unwrap();
    for threads in [1, 2, 3, 4, 0] {
        let (_, got) = gather_nd_to_vec(
            TensorRef::new(&data_shape, &data),
            TensorRef::new(&[6, 3000, 1], &batched),
            1,
            &Options::default().with_threads(threads),
        )
        .unwrap();
        assert!(
            got == want,
            "batched GatherND with {threads} threads differs from the reference"
        );
    }

    let data_shape = [4096usize, 64];
    let data: Vec<u32> = (0..count(&data_shape) as u32).collect();
    indices[60000] = 4096;
    indices[40000] = -4097;
    for threads in [1, 2, 3] {
        let e = gather_nd_to_vec(
            TensorRef::new(&data_shape, &data),
            TensorRef::new(&[65536, 1], &indices),
            0,
            &Options::default().with_threads(threads),
        )
        .unwrap_err();
        assert!(
            e.message().contains("indices[40000, 0]) = -4097"),
            "{threads} threads: {}",
            e.message()
        );
    }
}

/// The rules of the specification tables, written out independently: the status a call must get
/// from its shapes and attributes alone (None: valid).
fn expected_plan_status(
    nd: bool,
    version: (Flavor, i32),
    data: &[usize],
    indices: &[usize],
    attr: i64,
) -> Option<Status> {
    let (r, q) = (data.len() as i64, indices.len() as i64);
    if nd {
        if r < 1 || q < 1 {
            return Some(Status::InvalidRank);
        }
        if attr < 0 || attr >= r.min(q) || (version == (Flavor::Onnx, 11) && attr != 0) {
            return Some(Status::InvalidAttribute);
        }
        let b = attr as usize;
        let k = indices[indices.len() - 1] as i64;
        if data[..b] != indices[..b] || k < 1 || k > r - attr {
            return Some(Status::ShapeMismatch);
        }
    } else {
        if r < 1 || q != r {
            return Some(Status::InvalidRank);
        }
        let Some(a) = reference::resolve_index(attr, data.len()) else {
            return Some(Status::InvalidAttribute);
        };
        let equal = version.0 == Flavor::OpenVino;
        let bad = (0..data.len()).any(|d| {
            d != a
                && if equal {
                    indices[d] != data[d]
                } else {
                    indices[d] > data[d]
                }
        });
        if bad {
            return Some(Status::ShapeMismatch);
        }
    }
    None
}

#[test]
fn random_shapes_and_attributes_get_the_status_the_rules_give() {
    let mut rng = Rng::new(2024);
    let mut invalid = 0;
    for i in 0..20000 {
        let nd = rng.chance(50);
        let versions = if nd { VERSIONS_ND } else { VERSIONS_GE };
        let version = versions[rng.below(versions.len() as u64) as usize];
        let r = rng.range(0, 4) as usize;
        let q = if rng.chance(70) {
            r.max(1)
        } else {
            rng.range(0, 4) as usize
        };
        let data: Vec<usize> = (0..r).map(|_| rng.range(0, 3) as usize).collect();
        let indices: Vec<usize> = (0..q)
            .map(|d| {
                if d < r && rng.chance(60) {
                    data[d]
                } else {
                    rng.range(0, 4) as usize
                }
            })
            .collect();
        let attr = rng.range(-4, 4);
        let want = expected_plan_status(nd, version, &data, &indices, attr);
        let opts = options(version, 1);
        let (dd, id) = (
            TensorDesc::new(DType::Float, &data),
            TensorDesc::new(DType::Int64, &indices),
        );
        let got = if nd {
            gatherkit::GatherNd::new(dd, id, attr, &opts)
                .err()
                .map(|e| e.status())
        } else {
            gatherkit::GatherElements::new(dd, id, attr, &opts)
                .err()
                .map(|e| e.status())
        };
        invalid += want.is_some() as usize;
        assert_eq!(
            got, want,
            "case {i}: nd={nd} {version:?} data {data:?} indices {indices:?} attr {attr}"
        );
    }
    assert!(
        invalid > 5000 && invalid < 19000,
        "the generator should mix valid and invalid calls ({invalid})"
    );
}
