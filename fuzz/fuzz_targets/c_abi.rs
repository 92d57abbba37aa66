//! Fuzzes the C ABI with structurally valid and invalid calls decoded from the input.
//!
//! Oracles: a call never returns GK_STATUS_PANIC or an unknown status; on success the output
//! equals the naive reference of `gatherkit-testkit`, which must find every index value in
//! range; on a bad index value the reference finds one too, and the message names the first in
//! row-major order, with its value; on any other error nothing is written (the output, and an
//! input it aliases, keep their bytes); when the shape query fails, the operation fails with the
//! same status (the query covers the checks that come first).
//!
//! Every gather call is also made through its `gk_*_strided` function, with the same logical
//! tensors in layouts derived from the call and chosen by a hash of the input (NULL strides; the
//! elements copied backwards, read with negative strides from the last one; padded; transposed
//! (column-major); strides of mixed signs and padding; a stride-0 broadcast of every dimension
//! along which the values happen to be equal): the same status, the same message (but for the
//! addresses in it) and, on success, the same output bytes as the dense call; on an error
//! before the index values, nothing written.
//!
//! The scatters (`gk_scatter_elements`, `gk_scatter_nd`, copying or in place) the same way, with
//! `gatherkit_testkit::scatter` as the reference, in the dtype's own arithmetic: on success the
//! output (or in-place data) equals the reference's bit for bit (except that a NaN from an add or
//! mul may be any NaN), and a copying call leaves data as it was; on a bad index nothing is
//! written, not even in place.

#![no_main]

use gatherkit::ffi::*;
use gatherkit_fuzz::{capped_count, size_of_dtype, Call, Op, MAX_DATA_ELEMENTS};
use gatherkit_testkit::scatter::{
    self, Bf16, Bool, Combine, Reduce, ScatterError, Str, C128, C64, F16,
};
use gatherkit_testkit::{coords, reference};
use libfuzzer_sys::fuzz_target;
use std::ffi::CStr;

/// The bytes a descriptor claims, when every dimension is non-negative.
fn described_bytes(shape: &[i64], w: usize) -> Option<u128> {
    if shape.iter().any(|&d| d < 0) {
        return None;
    }
    if shape.contains(&0) {
        return Some(0);
    }
    shape
        .iter()
        .try_fold(w as u128, |a, &d| a.checked_mul(d as u128))
}

/// `ptr` when the buffer holds what the descriptor claims; NULL otherwise, so that a call that
/// gets as far as the data can only fail with NULL_POINTER, never read past a buffer.
fn honest<T>(ptr: *const T, shape: &[i64], w: usize, buffer_bytes: usize) -> *const T {
    match described_bytes(shape, w) {
        Some(n) if n <= buffer_bytes as u128 => ptr,
        _ => std::ptr::null(),
    }
}

/// The expected output of a call that got past every check but the index values (so its shapes
/// and attributes are valid), as bytes: the reference operators on `w`-byte elements.
/// `Err(p)`: the first out-of-range index value is at position `p`.
fn reference_output(
    call: &Call,
    w: usize,
    data: &[u8],
    dshape: &[usize],
    idx: &[i64],
    ishape: &[usize],
) -> Result<Vec<u8>, usize> {
    let elements: Vec<&[u8]> = data.chunks_exact(w).collect();
    let attr = call.attribute;
    let result = match call.op {
        Op::ScatterElements | Op::ScatterNd => unreachable!("the scatters have their own check"),
        Op::GatherElements => reference::gather_elements(&elements, dshape, idx, ishape, attr),
        Op::GatherNd => reference::gather_nd(&elements, dshape, idx, ishape, attr as usize),
        Op::Gather => {
            // Validated: a negative batch_dims counts from the indices' rank.
            let q = ishape.len() as i64;
            let b = if call.batch_dims < 0 {
                call.batch_dims + q
            } else {
                call.batch_dims
            };
            reference::gather(&elements, dshape, idx, ishape, attr, b as usize)
        }
    };
    result.map(|out| out.concat())
}

fuzz_target!(|bytes: &[u8]| check(&Call::decode(bytes), fnv1a(bytes)));

/// The input's FNV-1a hash: which strided layouts a gather call is repeated in.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn check(call: &Call, layout_seed: u64) {
    if call.op.is_scatter() {
        check_scatter(call);
        return;
    }
    let (data_shape, indices_shape, attribute, batch_dims) = (
        &call.data_shape,
        &call.indices_shape,
        call.attribute,
        call.batch_dims,
    );
    let w = size_of_dtype(call.data_dtype);
    let data_bytes = capped_count(data_shape, MAX_DATA_ELEMENTS).min(1 << 20) * w;
    let mut data_words = call.data_words.clone();
    let idx64 = &call.indices;
    let n_idx = idx64.len();
    let idx32: Vec<i32> = idx64.iter().map(|&v| v as i32).collect();
    let (idx_ptr, idx_values): (*const std::ffi::c_void, Vec<i64>) =
        if call.index_dtype == GK_DTYPE_INT32 {
            (
                idx32.as_ptr().cast(),
                idx32.iter().map(|&v| v as i64).collect(),
            )
        } else {
            (idx64.as_ptr().cast(), idx64.clone())
        };

    let data_ptr = honest(data_words.as_ptr().cast(), data_shape, w, data_bytes);
    let idx_w = if call.index_dtype == GK_DTYPE_INT32 {
        4
    } else {
        8
    };
    let idx_ptr = honest(idx_ptr, indices_shape, idx_w, n_idx * idx_w);
    let data_t = gk_tensor {
        dtype: call.data_dtype,
        rank: data_shape.len(),
        shape: data_shape.as_ptr(),
        data: data_ptr,
    };
    let idx_t = gk_tensor {
        dtype: call.index_dtype,
        rank: indices_shape.len(),
        shape: indices_shape.as_ptr(),
        data: idx_ptr,
    };
    let options = gk_options {
        flavor: call.flavor,
        version: call.version,
        num_threads: call.threads,
        ..Default::default()
    };

    // The output shape from the query, sometimes perturbed.
    let mut out_shape = [0i64; GK_MAX_RANK];
    let mut out_rank = 0usize;
    // SAFETY: valid descriptors and output slots.
    let query = unsafe {
        match call.op {
            Op::GatherElements => gk_gather_elements_output_shape(
                &data_t,
                &idx_t,
                attribute,
                &options,
                out_shape.as_mut_ptr(),
                GK_MAX_RANK,
                &mut out_rank,
            ),
            Op::GatherNd => gk_gather_nd_output_shape(
                &data_t,
                &idx_t,
                attribute,
                &options,
                out_shape.as_mut_ptr(),
                GK_MAX_RANK,
                &mut out_rank,
            ),
            Op::Gather => gk_gather_output_shape(
                &data_t,
                &idx_t,
                attribute,
                batch_dims,
                &options,
                out_shape.as_mut_ptr(),
                GK_MAX_RANK,
                &mut out_rank,
            ),
            Op::ScatterElements | Op::ScatterNd => {
                unreachable!("the scatters have their own check")
            }
        }
    };
    assert!((0..=11).contains(&query), "shape query returned {query}");
    if query != GK_STATUS_OK {
        out_rank = call.fallback_out_shape.len();
        out_shape[..out_rank].copy_from_slice(&call.fallback_out_shape);
    } else if let (Some(d), true) = (call.perturb_out_dim, out_rank > 0) {
        out_shape[d as usize % out_rank] += 1;
    }
    let out_elems = capped_count(&out_shape[..out_rank], 1 << 20);
    let out_bytes = out_elems.min(1 << 22) * w;
    let mut out_words = vec![0xA5A5_A5A5_A5A5_A5A5u64; out_bytes.div_ceil(8) + 1];
    let alias = call.alias;
    let before_data = data_words.clone();
    let out_ptr: *mut std::ffi::c_void = if alias {
        data_words.as_mut_ptr().cast()
    } else {
        out_words.as_mut_ptr().cast()
    };
    let out_capacity = if alias { data_bytes } else { out_bytes };
    let out_ptr = honest(
        out_ptr.cast_const(),
        &out_shape[..out_rank],
        w,
        out_capacity,
    )
    .cast_mut();
    let out_t = gk_tensor_mut {
        dtype: call.out_dtype,
        rank: out_rank,
        shape: out_shape.as_ptr(),
        data: out_ptr,
    };

    // SAFETY: every non-NULL data pointer has at least the bytes its descriptor claims (`honest`);
    // shapes hold `rank` values.
    let status = unsafe {
        match call.op {
            Op::GatherElements => gk_gather_elements(&data_t, &idx_t, attribute, &out_t, &options),
            Op::GatherNd => gk_gather_nd(&data_t, &idx_t, attribute, &out_t, &options),
            Op::Gather => gk_gather(&data_t, &idx_t, attribute, batch_dims, &out_t, &options),
            Op::ScatterElements | Op::ScatterNd => {
                unreachable!("the scatters have their own check")
            }
        }
    };
    assert!((0..=11).contains(&status), "operation returned {status}");
    let dense_message = last_error();
    // The query has no output descriptor; where the output's own steps 1-2 pass (known dtype
    // code; its shape is always non-negative here), the query's error is the operation's.
    if query != GK_STATUS_OK && (1..=16).contains(&call.out_dtype) {
        assert_eq!(status, query, "shape query and operation disagree");
    }
    if status == GK_STATUS_OK || status == GK_STATUS_INDEX_OUT_OF_BOUNDS {
        // Every check but the index values passed: the shapes and attributes are valid.
        // SAFETY: viewing the initialized words as bytes.
        let data =
            unsafe { std::slice::from_raw_parts(data_words.as_ptr().cast::<u8>(), data_bytes) };
        let dshape: Vec<usize> = data_shape.iter().map(|&d| d as usize).collect();
        let ishape: Vec<usize> = indices_shape.iter().map(|&d| d as usize).collect();
        let want = reference_output(call, w, data, &dshape, &idx_values, &ishape);
        if status == GK_STATUS_OK {
            assert!(
                !alias || out_bytes == 0 || data_bytes == 0,
                "aliased output accepted"
            );
            let want = want.unwrap_or_else(|p| {
                panic!(
                    "the call succeeded with index value {} (position {p}) out of range",
                    idx_values[p]
                )
            });
            // SAFETY: viewing the initialized words as bytes.
            let got =
                unsafe { std::slice::from_raw_parts(out_words.as_ptr().cast::<u8>(), out_bytes) };
            assert!(got == want.as_slice(), "output differs from the reference");
        } else {
            let p = want.expect_err("a bad index reported where the reference finds none");
            assert_names_first_bad_index(call, p, &ishape, &idx_values);
        }
    } else {
        assert!(
            out_words.iter().all(|&x| x == 0xA5A5_A5A5_A5A5_A5A5),
            "output written on error {status}"
        );
        assert!(data_words == before_data, "data changed on error {status}");
    }

    // The same call through gk_*_strided, the inputs in other layouts.
    let dense = Dense {
        status,
        message: dense_message,
        // SAFETY: viewing the initialized words as bytes.
        output: unsafe { std::slice::from_raw_parts(out_words.as_ptr().cast::<u8>(), out_bytes) },
    };
    let data_in = Input::new(call.data_dtype, data_shape, data_ptr, w);
    let idx_in = Input::new(call.index_dtype, indices_shape, idx_ptr, idx_w);
    let out = StridedOut {
        dtype: call.out_dtype,
        shape: &out_shape[..out_rank],
        dense_ptr: out_ptr,
        bytes: out_bytes,
        alias,
    };
    for (k, (data_layout, idx_layout)) in strided_layouts(layout_seed, &data_in, &idx_in)
        .into_iter()
        .enumerate()
    {
        check_strided(
            call,
            &options,
            &dense,
            (&data_in, data_layout),
            (&idx_in, idx_layout),
            &out,
            &mut data_words,
            layout_seed.rotate_left(21 * k as u32 + 7),
        );
    }
    assert!(data_words == before_data, "a strided call changed data");
}

fn last_error() -> String {
    // SAFETY: the library's message for this thread's last call, a C string.
    unsafe { CStr::from_ptr(gk_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// What the dense call returned.
struct Dense<'a> {
    status: i32,
    message: String,
    output: &'a [u8],
}

/// A gather input as the dense call saw it: its pointer is NULL when the buffer does not hold
/// what the descriptor claims (`honest`), and `elements` is its element count when the shape is
/// valid and the pointer is not NULL.
struct Input<'a> {
    dtype: i32,
    shape: &'a [i64],
    ptr: *const std::ffi::c_void,
    width: usize,
    elements: Option<usize>,
    /// The dimensions (of size > 1) along which every element equals its neighbour: a stride of
    /// 0 there reads the same logical tensor.
    constant: Vec<usize>,
}

impl<'a> Input<'a> {
    fn new(dtype: i32, shape: &'a [i64], ptr: *const std::ffi::c_void, width: usize) -> Self {
        let elements = if ptr.is_null() || shape.iter().any(|&d| d < 0) {
            None
        } else if shape.contains(&0) {
            // Other dimensions may be huge (2^40): no element either way.
            Some(0)
        } else {
            // Honest: the buffer holds every element, so the count fits.
            shape
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d as usize))
        };
        let mut input = Input {
            dtype,
            shape,
            ptr,
            width,
            elements,
            constant: Vec::new(),
        };
        input.constant = input.constant_dims();
        input
    }

    /// The elements, row-major, as the dense call read them.
    fn bytes(&self) -> &[u8] {
        match self.elements {
            // SAFETY: an honest pointer holds the described bytes.
            Some(n) if n > 0 => unsafe {
                std::slice::from_raw_parts(self.ptr.cast::<u8>(), n * self.width)
            },
            _ => &[],
        }
    }

    /// See `constant`.
    fn constant_dims(&self) -> Vec<usize> {
        let Some(n) = self.elements.filter(|&n| n > 0) else {
            return Vec::new();
        };
        let bytes = self.bytes();
        let w = self.width;
        let rm = row_major(self.shape);
        (0..self.shape.len())
            .filter(|&d| {
                let (size, step) = (self.shape[d] as usize, rm[d] as usize);
                size > 1
                    && (0..n).all(|e| {
                        (e / step) % size == 0
                            || bytes[e * w..(e + 1) * w]
                                == bytes[(e - step) * w..(e - step + 1) * w]
                    })
            })
            .collect()
    }
}

/// How a strided call lays out an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// The dense buffer, strides NULL.
    NullStrides,
    /// The elements copied backwards; negative row-major strides from the last one.
    Reversed,
    /// Every stride larger than row-major, the elements copied to their places.
    Padded,
    /// Column-major (the transpose's row-major), the elements copied.
    Transposed,
    /// Padded strides with signs from the seed; element [0, ...] where the signs put it.
    Mixed,
    /// The dense buffer with stride 0 along every dimension whose values are constant (when
    /// none is, `Mixed`).
    Broadcast,
}

const LAYOUTS: [Layout; 5] = [
    Layout::Reversed,
    Layout::Padded,
    Layout::Transposed,
    Layout::Mixed,
    Layout::Broadcast,
];

/// The (data, indices) layouts of the strided calls: NULL strides, then two pairs from the seed;
/// the indices broadcast in the first when they can be, data mostly in the second.
fn strided_layouts(seed: u64, data: &Input, indices: &Input) -> Vec<(Layout, Layout)> {
    let pick = |shift: u32| LAYOUTS[((seed >> shift) % LAYOUTS.len() as u64) as usize];
    let idx_first = if indices.constant.is_empty() {
        pick(8)
    } else {
        Layout::Broadcast
    };
    let data_second = if !data.constant.is_empty() && seed >> 32 & 3 != 0 {
        Layout::Broadcast
    } else {
        pick(16)
    };
    vec![
        (Layout::NullStrides, Layout::NullStrides),
        (pick(0), idx_first),
        (data_second, pick(24)),
    ]
}

/// An input in a layout: its strides (None: NULL), element [0, ...]'s address, and the buffer
/// that holds it (a copy, or None for the dense buffer).
struct View {
    strides: Option<Vec<i64>>,
    ptr: *const std::ffi::c_void,
    copy: Option<Vec<u64>>,
}

/// Row-major strides of `shape` (wrapping: only used where the shape is valid).
fn row_major(shape: &[i64]) -> Vec<i64> {
    let mut out = vec![0i64; shape.len()];
    let mut step = 1i64;
    for (s, &n) in out.iter_mut().zip(shape).rev() {
        *s = step;
        step = step.wrapping_mul(n.max(0));
    }
    out
}

/// At most this many bytes in a padded copy (a larger one falls back to `Reversed`).
const MAX_COPY_BYTES: usize = 8 << 20;

fn view(input: &Input, layout: Layout, seed: u64) -> View {
    let shape = input.shape;
    let rank = shape.len();
    let rm = row_major(shape);
    // Strides and where element [0, ...] is, in elements from the lowest one.
    let (strides, origin): (Vec<i64>, i64) = match layout {
        Layout::NullStrides => {
            return View {
                strides: None,
                ptr: input.ptr,
                copy: None,
            }
        }
        Layout::Broadcast => {
            if input.constant.is_empty() {
                return view(input, Layout::Mixed, seed);
            }
            let mut strides = rm.clone();
            for &d in &input.constant {
                strides[d] = 0;
            }
            return View {
                strides: Some(strides),
                ptr: input.ptr,
                copy: None,
            };
        }
        Layout::Reversed => {
            let n: i64 = shape.iter().map(|&d| d.max(0)).fold(1, i64::wrapping_mul);
            (rm.iter().map(|&s| -s).collect(), n.wrapping_sub(1))
        }
        Layout::Transposed => {
            let mut strides = vec![0i64; rank];
            let mut step = 1i64;
            for (s, &n) in strides.iter_mut().zip(shape) {
                *s = step;
                step = step.wrapping_mul(n.max(0));
            }
            (strides, 0)
        }
        Layout::Padded | Layout::Mixed => {
            let mut strides = vec![0i64; rank];
            let mut step = 2 + (seed & 1) as i64;
            for (k, (s, &n)) in strides.iter_mut().zip(shape).enumerate().rev() {
                *s = step;
                let extra = ((seed >> (2 * k % 60)) & 3) as i64;
                step = step.wrapping_mul(n.max(0)).wrapping_add(extra);
            }
            let mut origin = 0i64;
            if layout == Layout::Mixed {
                // Negative where the seed's bit is set; then element [0, ...] is at the far end
                // of those dimensions.
                for (k, (s, &n)) in strides.iter_mut().zip(shape).enumerate() {
                    if (seed >> (40 + k % 24)) & 1 == 1 {
                        origin = origin.wrapping_add((n.max(1) - 1).wrapping_mul(*s));
                        *s = -*s;
                    }
                }
            }
            (strides, origin)
        }
    };
    let Some(n) = input.elements.filter(|&n| n > 0) else {
        // Nothing is read (no elements, or a NULL pointer the call refuses): the strides go with
        // the same pointer.
        return View {
            strides: Some(strides),
            ptr: input.ptr,
            copy: None,
        };
    };
    // Offsets of the highest element from the lowest, in elements.
    let span: i64 = strides
        .iter()
        .zip(shape)
        .map(|(&s, &d)| (d - 1) * s.abs())
        .sum::<i64>()
        + 1;
    let w = input.width;
    if span as usize * w > MAX_COPY_BYTES.max(n * w) {
        return view(input, Layout::Reversed, seed);
    }
    let mut copy = vec![0xEEEE_EEEE_EEEE_EEEEu64; (span as usize * w).div_ceil(8) + 1];
    let bytes = input.bytes();
    {
        // SAFETY: viewing the words as bytes, within the vector.
        let dst = unsafe {
            std::slice::from_raw_parts_mut(copy.as_mut_ptr().cast::<u8>(), copy.len() * 8)
        };
        let mut coords = vec![0i64; rank];
        for e in 0..n {
            let at = origin
                + coords
                    .iter()
                    .zip(&strides)
                    .map(|(&c, &s)| c * s)
                    .sum::<i64>();
            let at = at as usize * w;
            dst[at..at + w].copy_from_slice(&bytes[e * w..(e + 1) * w]);
            for k in (0..rank).rev() {
                coords[k] += 1;
                if coords[k] < shape[k] {
                    break;
                }
                coords[k] = 0;
            }
        }
    }
    // SAFETY: origin is an element of the copy.
    let ptr = unsafe { copy.as_ptr().cast::<u8>().add(origin as usize * w) }.cast();
    View {
        strides: Some(strides),
        ptr,
        copy: Some(copy),
    }
}

/// The dense call's output descriptor, for the strided calls.
struct StridedOut<'a> {
    dtype: i32,
    shape: &'a [i64],
    /// The dense call's output pointer (NULL when dishonest; data's buffer when aliased).
    dense_ptr: *mut std::ffi::c_void,
    bytes: usize,
    alias: bool,
}

/// A message with its addresses blanked (the strided call's buffers are other ones).
fn comparable(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("0x") {
        out.push_str(&rest[..at + 2]);
        let hex = rest[at + 2..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(rest.len() - at - 2);
        out.push('_');
        rest = &rest[at + 2 + hex..];
    }
    out.push_str(rest);
    out
}

/// The call again through gk_*_strided with each input in its layout (padding and signs from
/// `seed`): the dense call's status, message and output.
#[allow(clippy::too_many_arguments)]
fn check_strided(
    call: &Call,
    options: &gk_options,
    dense: &Dense,
    (data, data_layout): (&Input, Layout),
    (indices, idx_layout): (&Input, Layout),
    out: &StridedOut,
    data_words: &mut [u64],
    seed: u64,
) {
    let data_view = view(data, data_layout, seed);
    let idx_view = view(indices, idx_layout, seed.rotate_left(29));
    let before_copies = (data_view.copy.clone(), idx_view.copy.clone());
    let tensor = |input: &Input, v: &View| gk_strided_tensor {
        struct_size: std::mem::size_of::<gk_strided_tensor>(),
        dtype: input.dtype,
        rank: input.shape.len(),
        shape: input.shape.as_ptr(),
        strides: v.strides.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
        data: v.ptr,
    };
    let data_t = tensor(data, &data_view);
    let idx_t = tensor(indices, &idx_view);
    let mut out_words = vec![0xA5A5_A5A5_A5A5_A5A5u64; out.bytes.div_ceil(8) + 1];
    // Aliased: the output starts where data's buffer does, as in the dense call.
    let out_ptr: *mut std::ffi::c_void = if out.dense_ptr.is_null() {
        std::ptr::null_mut()
    } else if out.alias {
        match &data_view.copy {
            Some(copy) => copy.as_ptr().cast_mut().cast(),
            None => data_words.as_mut_ptr().cast(),
        }
    } else {
        out_words.as_mut_ptr().cast()
    };
    let out_t = gk_tensor_mut {
        dtype: out.dtype,
        rank: out.shape.len(),
        shape: out.shape.as_ptr(),
        data: out_ptr,
    };
    let (attribute, batch_dims) = (call.attribute, call.batch_dims);
    // SAFETY: every non-NULL pointer is element [0, ...] of a buffer holding every element its
    // view reaches (a copy made for the layout, or the dense buffer the dense call read);
    // shapes and strides hold `rank` values; the output as in the dense call.
    let status = unsafe {
        match call.op {
            Op::GatherElements => {
                gk_gather_elements_strided(&data_t, &idx_t, attribute, &out_t, options)
            }
            Op::GatherNd => gk_gather_nd_strided(&data_t, &idx_t, attribute, &out_t, options),
            Op::Gather => {
                gk_gather_strided(&data_t, &idx_t, attribute, batch_dims, &out_t, options)
            }
            Op::ScatterElements | Op::ScatterNd => unreachable!("gathers only"),
        }
    };
    let message = last_error();
    let what = format!("strided layouts (data {data_layout:?}, indices {idx_layout:?})");
    assert!(
        status == dense.status && comparable(&message) == comparable(&dense.message),
        "{what}: status {status} {message:?}, the dense call {} {:?}",
        dense.status,
        dense.message
    );
    // SAFETY: viewing the initialized words as bytes.
    let got = unsafe { std::slice::from_raw_parts(out_words.as_ptr().cast::<u8>(), out.bytes) };
    if status == GK_STATUS_OK {
        assert!(
            got == dense.output,
            "{what}: output differs from the dense call's"
        );
    } else if status != GK_STATUS_INDEX_OUT_OF_BOUNDS {
        assert!(
            out_words.iter().all(|&x| x == 0xA5A5_A5A5_A5A5_A5A5),
            "{what}: output written on error {status}"
        );
    }
    assert!(
        (data_view.copy, idx_view.copy) == before_copies,
        "{what}: an input changed"
    );
}

/// An element type of the scatter reference, read from and written to the C ABI's bytes.
trait Elem: Combine {
    fn read(bytes: &[u8]) -> Self;
    fn write(self, out: &mut Vec<u8>);
}

macro_rules! plain_elems {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn read(bytes: &[u8]) -> Self {
                <$t>::from_ne_bytes(bytes.try_into().unwrap())
            }
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_ne_bytes());
            }
        }
    )*};
}

plain_elems!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);

macro_rules! wrapped_elems {
    ($($t:ident($inner:ty)),*) => {$(
        impl Elem for $t {
            fn read(bytes: &[u8]) -> Self {
                $t(<$inner>::from_ne_bytes(bytes.try_into().unwrap()))
            }
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.0.to_ne_bytes());
            }
        }
    )*};
}

wrapped_elems!(Bool(u8), F16(u16), Bf16(u16), Str(usize));

macro_rules! complex_elems {
    ($($t:ident($part:ty, $w:expr)),*) => {$(
        impl Elem for $t {
            fn read(bytes: &[u8]) -> Self {
                let (re, im) = bytes.split_at($w);
                $t(
                    <$part>::from_ne_bytes(re.try_into().unwrap()),
                    <$part>::from_ne_bytes(im.try_into().unwrap()),
                )
            }
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.0.to_ne_bytes());
                out.extend_from_slice(&self.1.to_ne_bytes());
            }
        }
    )*};
}

complex_elems!(C64(f32, 4), C128(f64, 8));

/// The reference scatter on `T` elements, as bytes.
#[allow(clippy::too_many_arguments)]
fn scatter_as<T: Elem>(
    call: &Call,
    w: usize,
    data: &[u8],
    dshape: &[usize],
    idx: &[i64],
    ishape: &[usize],
    updates: &[u8],
    reduce: Reduce,
) -> Result<Vec<u8>, ScatterError> {
    let read = |bytes: &[u8]| bytes.chunks_exact(w).map(T::read).collect::<Vec<T>>();
    let (data, updates) = (read(data), read(updates));
    let out = match call.op {
        Op::ScatterElements => {
            scatter::scatter_elements(&data, dshape, idx, ishape, &updates, call.attribute, reduce)
        }
        _ => scatter::scatter_nd(&data, dshape, idx, ishape, &updates, reduce),
    }?;
    let mut bytes = Vec::with_capacity(out.len() * w);
    for v in out {
        v.write(&mut bytes);
    }
    Ok(bytes)
}

/// The last error message names index position `p` (row-major in `ishape`) and its value, as
/// the reference's first bad index. GatherND and ScatterND name the component inside its
/// tuple: "(indices[1, 0]) = -3".
fn assert_names_first_bad_index(call: &Call, p: usize, ishape: &[usize], idx_values: &[i64]) {
    // SAFETY: the library's message for this thread's last call, a C string.
    let message = unsafe { CStr::from_ptr(gk_last_error_message()) };
    let message = message.to_string_lossy();
    let at: Vec<String> = coords(p, ishape).iter().map(|c| c.to_string()).collect();
    let at = format!("indices[{}]", at.join(", "));
    let at = if matches!(call.op, Op::GatherNd | Op::ScatterNd) {
        format!("({at})")
    } else {
        at
    };
    let named = format!("{at} = {} is out of range", idx_values[p]);
    assert!(
        message.contains(&named),
        "{message:?} does not name the first bad index ({named})"
    );
}

/// The reference scatter for the call's dtype (valid shapes, attributes and dtype).
fn reference_scatter(
    call: &Call,
    data: &[u8],
    dshape: &[usize],
    idx: &[i64],
    ishape: &[usize],
    updates: &[u8],
) -> Result<Vec<u8>, ScatterError> {
    let reduce = match call.reduction {
        GK_REDUCTION_NONE => Reduce::None,
        GK_REDUCTION_ADD => Reduce::Add,
        GK_REDUCTION_MUL => Reduce::Mul,
        GK_REDUCTION_MAX => Reduce::Max,
        GK_REDUCTION_MIN => Reduce::Min,
        r => panic!("reduction code {r} was accepted"),
    };
    let w = size_of_dtype(call.data_dtype);
    macro_rules! by_dtype {
        ($($code:ident => $t:ty),*) => {
            match call.data_dtype {
                $($code => scatter_as::<$t>(call, w, data, dshape, idx, ishape, updates, reduce),)*
                d => panic!("dtype code {d} was accepted"),
            }
        };
    }
    by_dtype!(
        GK_DTYPE_FLOAT => f32, GK_DTYPE_UINT8 => u8, GK_DTYPE_INT8 => i8, GK_DTYPE_UINT16 => u16,
        GK_DTYPE_INT16 => i16, GK_DTYPE_INT32 => i32, GK_DTYPE_INT64 => i64,
        GK_DTYPE_STRING => Str, GK_DTYPE_BOOL => Bool, GK_DTYPE_FLOAT16 => F16,
        GK_DTYPE_DOUBLE => f64, GK_DTYPE_UINT32 => u32, GK_DTYPE_UINT64 => u64,
        GK_DTYPE_COMPLEX64 => C64, GK_DTYPE_COMPLEX128 => C128, GK_DTYPE_BFLOAT16 => Bf16
    )
}

/// Whether every floating-point part of the element `bytes` is a NaN (`None`: the dtype has no
/// NaN).
fn all_nan(dtype: i32, bytes: &[u8]) -> Option<bool> {
    let f16_nan = |b: &[u8], exponent: u16, fraction: u16| {
        let v = u16::from_ne_bytes(b.try_into().unwrap());
        v & exponent == exponent && v & fraction != 0
    };
    Some(match dtype {
        GK_DTYPE_FLOAT | GK_DTYPE_COMPLEX64 => bytes
            .chunks_exact(4)
            .all(|b| f32::from_ne_bytes(b.try_into().unwrap()).is_nan()),
        GK_DTYPE_DOUBLE | GK_DTYPE_COMPLEX128 => bytes
            .chunks_exact(8)
            .all(|b| f64::from_ne_bytes(b.try_into().unwrap()).is_nan()),
        GK_DTYPE_FLOAT16 => f16_nan(bytes, 0x7C00, 0x03FF),
        GK_DTYPE_BFLOAT16 => f16_nan(bytes, 0x7F80, 0x007F),
        _ => return None,
    })
}

/// `got == want`, elementwise; with add and mul, a NaN part may be any NaN (the payload of an
/// arithmetic NaN is not specified). Complex parts are compared one at a time.
fn same_output(dtype: i32, reduction: i32, got: &[u8], want: &[u8]) -> bool {
    if got.len() != want.len() {
        return false;
    }
    if !matches!(reduction, GK_REDUCTION_ADD | GK_REDUCTION_MUL) {
        return got == want;
    }
    let part = match dtype {
        GK_DTYPE_COMPLEX64 => 4,
        GK_DTYPE_COMPLEX128 => 8,
        _ => size_of_dtype(dtype),
    };
    got.chunks_exact(part)
        .zip(want.chunks_exact(part))
        .all(|(g, w)| {
            g == w || (all_nan(dtype, g) == Some(true) && all_nan(dtype, w) == Some(true))
        })
}

fn check_scatter(call: &Call) {
    let (data_shape, indices_shape, updates_shape) =
        (&call.data_shape, &call.indices_shape, &call.updates_shape);
    let w = size_of_dtype(call.data_dtype);
    let data_bytes = capped_count(data_shape, MAX_DATA_ELEMENTS).min(1 << 20) * w;
    let updates_bytes = capped_count(updates_shape, MAX_DATA_ELEMENTS).min(1 << 20) * w;
    let mut data_words = call.data_words.clone();
    let idx64 = &call.indices;
    let n_idx = idx64.len();
    let idx32: Vec<i32> = idx64.iter().map(|&v| v as i32).collect();
    let (idx_ptr, idx_values): (*const std::ffi::c_void, Vec<i64>) =
        if call.index_dtype == GK_DTYPE_INT32 {
            (
                idx32.as_ptr().cast(),
                idx32.iter().map(|&v| v as i64).collect(),
            )
        } else {
            (idx64.as_ptr().cast(), idx64.clone())
        };
    let idx_w = if call.index_dtype == GK_DTYPE_INT32 {
        4
    } else {
        8
    };
    let data_ptr = honest(data_words.as_ptr().cast(), data_shape, w, data_bytes);
    let idx_ptr = honest(idx_ptr, indices_shape, idx_w, n_idx * idx_w);
    let upd_ptr = honest(
        call.updates_words.as_ptr().cast(),
        updates_shape,
        w,
        updates_bytes,
    );
    let tensor = |dtype, shape: &[i64], data| gk_tensor {
        dtype,
        rank: shape.len(),
        shape: shape.as_ptr(),
        data,
    };
    let data_t = tensor(call.data_dtype, data_shape, data_ptr);
    let idx_t = tensor(call.index_dtype, indices_shape, idx_ptr);
    let upd_t = tensor(call.data_dtype, updates_shape, upd_ptr);
    let options = gk_options {
        flavor: call.flavor,
        version: call.version,
        num_threads: call.threads,
        ..Default::default()
    };

    // The output has data's shape, sometimes with one dimension enlarged.
    let mut out_shape = data_shape.clone();
    if let (Some(d), false) = (call.perturb_out_dim, out_shape.is_empty()) {
        let at = d as usize % out_shape.len();
        out_shape[at] = out_shape[at].saturating_add(1);
    }
    let out_elems = capped_count(&out_shape, 1 << 20);
    let out_bytes = out_elems.min(1 << 22) * w;
    let mut out_words = vec![0xA5A5_A5A5_A5A5_A5A5u64; out_bytes.div_ceil(8) + 1];
    let in_place = call.alias;
    let before_data = data_words.clone();
    let out_ptr: *mut std::ffi::c_void = if in_place {
        data_words.as_mut_ptr().cast()
    } else {
        out_words.as_mut_ptr().cast()
    };
    let out_capacity = if in_place { data_bytes } else { out_bytes };
    let out_ptr = honest(out_ptr.cast_const(), &out_shape, w, out_capacity).cast_mut();
    let out_t = gk_tensor_mut {
        dtype: call.out_dtype,
        rank: out_shape.len(),
        shape: out_shape.as_ptr(),
        data: out_ptr,
    };

    // SAFETY: every non-NULL data pointer has at least the bytes its descriptor claims (`honest`);
    // shapes hold `rank` values; an in-place output is data's own buffer.
    let status = unsafe {
        match call.op {
            Op::ScatterElements => gk_scatter_elements(
                &data_t,
                &idx_t,
                &upd_t,
                call.attribute,
                call.reduction,
                &out_t,
                &options,
            ),
            _ => gk_scatter_nd(&data_t, &idx_t, &upd_t, call.reduction, &out_t, &options),
        }
    };
    assert!((0..=11).contains(&status), "operation returned {status}");
    // SAFETY: viewing the initialized words as bytes.
    let as_bytes = |words: &[u64], n: usize| unsafe {
        std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), n)
    };
    let untouched_out = out_words.iter().all(|&x| x == 0xA5A5_A5A5_A5A5_A5A5);
    if status == GK_STATUS_OK || status == GK_STATUS_INDEX_OUT_OF_BOUNDS {
        // Every check but the index values passed: shapes, dtypes, reduction and output are
        // valid, and every buffer holds its tensor.
        let data = as_bytes(&before_data, data_bytes);
        let updates = as_bytes(&call.updates_words, updates_bytes);
        let dshape: Vec<usize> = data_shape.iter().map(|&d| d as usize).collect();
        let ishape: Vec<usize> = indices_shape.iter().map(|&d| d as usize).collect();
        let want = reference_scatter(call, data, &dshape, &idx_values, &ishape, updates);
        if status == GK_STATUS_OK {
            let want = match want {
                Ok(out) => out,
                Err(ScatterError::BadIndex(p)) => panic!(
                    "the call succeeded with index value {} (position {p}) out of range",
                    idx_values[p]
                ),
                Err(ScatterError::Undefined) => {
                    panic!(
                        "the call succeeded with reduction {} undefined for the dtype",
                        call.reduction
                    )
                }
            };
            let got = if in_place {
                as_bytes(&data_words, data_bytes)
            } else {
                assert!(data_words == before_data, "a copying call changed data");
                as_bytes(&out_words, out_bytes)
            };
            assert!(
                same_output(call.data_dtype, call.reduction, got, &want),
                "output differs from the reference (in place: {in_place})"
            );
        } else {
            let p = match want {
                Err(ScatterError::BadIndex(p)) => p,
                other => panic!("a bad index reported where the reference finds none ({other:?})"),
            };
            assert_names_first_bad_index(call, p, &ishape, &idx_values);
            assert!(untouched_out, "output written on a bad index");
            assert!(
                data_words == before_data,
                "data changed on a bad index (in place: {in_place})"
            );
        }
    } else {
        assert!(untouched_out, "output written on error {status}");
        assert!(data_words == before_data, "data changed on error {status}");
    }
}
