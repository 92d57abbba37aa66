//! Fuzzes the C ABI with structurally valid and invalid calls decoded from the input.
//!
//! Oracles: a call never returns GK_STATUS_PANIC or an unknown status; on success the output
//! equals the naive reference of `gatherkit-testkit`, which must find every index value in
//! range; on a bad index value the reference finds one too, and the message names the first in
//! row-major order, with its value; on any other error nothing is written (the output, and an
//! input it aliases, keep their bytes); when the shape query fails, the operation fails with the
//! same status (the query covers the checks that come first).

#![no_main]

use gatherkit::ffi::*;
use gatherkit_fuzz::{capped_count, size_of_dtype, Call, Op, MAX_DATA_ELEMENTS};
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

fuzz_target!(|bytes: &[u8]| check(&Call::decode(bytes)));

fn check(call: &Call) {
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
        }
    };
    assert!((0..=11).contains(&status), "operation returned {status}");
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
            // SAFETY: the library's message for this thread's last call, a C string.
            let message = unsafe { CStr::from_ptr(gk_last_error_message()) };
            let message = message.to_string_lossy();
            let at: Vec<String> = coords(p, &ishape).iter().map(|c| c.to_string()).collect();
            let at = format!("indices[{}]", at.join(", "));
            // GatherND names the component inside its tuple: "(indices[1, 0]) = -3".
            let at = if call.op == Op::GatherNd {
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
    } else {
        assert!(
            out_words.iter().all(|&x| x == 0xA5A5_A5A5_A5A5_A5A5),
            "output written on error {status}"
        );
        assert!(data_words == before_data, "data changed on error {status}");
    }
}
