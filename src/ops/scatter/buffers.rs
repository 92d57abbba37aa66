//! Step 9 for the scatters: four buffers (data, indices, updates, output), of which the output
//! may be `data` itself. Lengths and alignment as for the gathers ([`crate::ops::buffers`]); from
//! C, NULL and overlap too, where an output at exactly data's address is the in-place call.

use super::ScatterPlan;
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::scatter::Destination;
use crate::ops::buffers::{
    check_addresses, check_apart, check_tensor_alignment, check_tensor_lengths, view, view_mut,
};

/// A scatter's buffers as bytes.
pub(crate) struct ByteScatter<'a> {
    pub(crate) destination: Destination<'a, u8>,
    pub(crate) indices: &'a [u8],
    pub(crate) updates: &'a [u8],
}

/// Name, element count and dtype of data, indices, updates and output, in that order.
fn tensors<O>(plan: &ScatterPlan<O>) -> [(&'static str, usize, DType); 4] {
    [
        ("data", plan.data_len, plan.data_dtype),
        ("indices", plan.indices_len, plan.index_type.dtype()),
        ("updates", plan.updates_len, plan.data_dtype),
        ("output", plan.data_len, plan.data_dtype),
    ]
}

/// Typed buffers of `lengths` elements hold exactly their tensors' elements.
pub(crate) fn check_element_counts<O>(plan: &ScatterPlan<O>, lengths: [usize; 4]) -> Result<()> {
    check_tensor_lengths(&tensors(plan), &lengths, false)
}

/// Byte buffers: lengths, then alignment.
pub(crate) fn check_bytes<O>(plan: &ScatterPlan<O>, call: &ByteScatter<'_>) -> Result<()> {
    let (data, out) = match &call.destination {
        Destination::Copy { data, out } => (*data, (out.as_ptr() as usize, out.len())),
        Destination::InPlace(data) => (&data[..], (data.as_ptr() as usize, data.len())),
    };
    let lengths = [data.len(), call.indices.len(), call.updates.len(), out.1];
    check_tensor_lengths(&tensors(plan), &lengths, true)?;
    let addresses = [
        data.as_ptr() as usize,
        call.indices.as_ptr() as usize,
        call.updates.as_ptr() as usize,
        out.0,
    ];
    check_tensor_alignment(&tensors(plan), &addresses)
}

/// Step 9 for buffers given as addresses (data, indices, updates, output): NULL, alignment, then
/// overlap. An output at exactly data's address is the in-place call (`data` is then written);
/// any other overlap of the output with an input is `Overlap`.
///
/// Not inlined, so that its frame is not part of the C entry points' (calls have at most 4 KiB of
/// stack).
///
/// # Safety
/// Each non-NULL address points to at least its tensor's byte size (by `plan`), readable for the
/// inputs and writable for the output (and for data, when output and data are the same address),
/// valid for `'a`.
#[inline(never)]
pub(crate) unsafe fn view_addresses<'a, O>(
    plan: &ScatterPlan<O>,
    addresses: [usize; 4],
) -> Result<ByteScatter<'a>> {
    const NAMES: [&str; 4] = [
        "data->data",
        "indices->data",
        "updates->data",
        "output->data",
    ];
    let bytes = check_addresses(&NAMES, &tensors(plan), &addresses)?;
    let [data, indices, updates, out] = addresses;
    let in_place = bytes[3] > 0 && out == data;
    let out_range = (out, bytes[3]);
    if !in_place {
        let hint = " (an in-place call passes output->data equal to data->data)";
        check_apart(out_range, "data", (data, bytes[0]), hint)?;
    }
    check_apart(out_range, "indices", (indices, bytes[1]), "")?;
    check_apart(out_range, "updates", (updates, bytes[2]), "")?;
    // SAFETY: each view is either empty or a non-NULL, aligned range the caller guarantees valid
    // for 'a; the output range overlaps no input it is viewed beside (checked above): in place,
    // data is viewed only once, mutably, and overlaps neither indices nor updates.
    unsafe {
        let destination = if in_place {
            Destination::InPlace(view_bytes_mut(data, bytes[0]))
        } else {
            Destination::Copy {
                data: view(data, bytes[0]),
                out: view_mut(out, bytes[3]),
            }
        };
        Ok(ByteScatter {
            destination,
            indices: view(indices, bytes[1]),
            updates: view(updates, bytes[2]),
        })
    }
}

/// # Safety
/// `len` readable and writable, initialised bytes at `address` for `'a`, used by nothing else.
unsafe fn view_bytes_mut<'a>(address: usize, len: usize) -> &'a mut [u8] {
    match len {
        0 => &mut [],
        // SAFETY: the caller's contract.
        n => unsafe { std::slice::from_raw_parts_mut(address as *mut u8, n) },
    }
}
