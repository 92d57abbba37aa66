//! Step 9 for the scatters: four buffers (data, indices, updates, output), of which the output
//! may be `data` itself. Lengths and alignment as for the gathers ([`crate::ops::buffers`]); from
//! C, NULL and overlap too, where an output at exactly data's address is the in-place call.

use super::ScatterPlan;
use crate::dtype::DType;
use crate::error::{Error, Result, Status};
use crate::kernels::scatter::Destination;
use crate::ops::buffers::{check_aligned, view, view_mut};

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
    check_counts(plan, lengths, false)
}

/// Byte buffers: lengths, then alignment.
pub(crate) fn check_bytes<O>(plan: &ScatterPlan<O>, call: &ByteScatter<'_>) -> Result<()> {
    let (data, out) = match &call.destination {
        Destination::Copy { data, out } => {
            (data.as_ptr() as usize, (out.as_ptr() as usize, out.len()))
        }
        Destination::InPlace(data) => {
            (data.as_ptr() as usize, (data.as_ptr() as usize, data.len()))
        }
    };
    let data_len = match &call.destination {
        Destination::Copy { data, .. } => data.len(),
        Destination::InPlace(data) => data.len(),
    };
    check_counts(
        plan,
        [data_len, call.indices.len(), call.updates.len(), out.1],
        true,
    )?;
    let addresses = [
        data,
        call.indices.as_ptr() as usize,
        call.updates.as_ptr() as usize,
        out.0,
    ];
    for ((what, elements, dtype), address) in tensors(plan).into_iter().zip(addresses) {
        if elements > 0 {
            check_aligned(what, address, dtype)?;
        }
    }
    Ok(())
}

fn check_counts<O>(plan: &ScatterPlan<O>, lengths: [usize; 4], in_bytes: bool) -> Result<()> {
    for ((what, elements, dtype), got) in tensors(plan).into_iter().zip(lengths) {
        // Cannot overflow: the plan checked every tensor's byte size against isize::MAX.
        let (expected, unit) = if in_bytes {
            (elements * dtype.size(), "bytes")
        } else {
            (elements, "elements")
        };
        if got != expected {
            return Err(Error::new(
                Status::InvalidArgument,
                format!("{what} buffer holds {got} {unit} but its shape needs {expected}"),
            ));
        }
    }
    Ok(())
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
    let tensors = tensors(plan);
    // Cannot overflow: the plan checked every tensor's byte size against isize::MAX.
    let bytes = tensors.map(|(_, elements, dtype)| elements * dtype.size());
    for ((name, address), len) in NAMES.into_iter().zip(addresses).zip(bytes) {
        if address == 0 && len > 0 {
            return Err(Error::new(
                Status::NullPointer,
                format!("{name} is NULL but the tensor has {len} bytes"),
            ));
        }
    }
    for (((name, address), len), (_, _, dtype)) in
        NAMES.into_iter().zip(addresses).zip(bytes).zip(tensors)
    {
        if len > 0 {
            check_aligned(name, address, dtype)?;
        }
    }
    let [data, indices, updates, out] = addresses;
    let in_place = bytes[3] > 0 && out == data;
    let out_range = (out, bytes[3]);
    let inputs = [
        ("data", (data, bytes[0])),
        ("indices", (indices, bytes[1])),
        ("updates", (updates, bytes[2])),
    ];
    for (what, input) in inputs {
        if in_place && what == "data" {
            continue;
        }
        let overlaps = out_range.1 > 0
            && input.1 > 0
            && out_range.0 < input.0 + input.1
            && input.0 < out_range.0 + out_range.1;
        if overlaps {
            let hint = if what == "data" {
                " (an in-place call passes output->data equal to data->data)"
            } else {
                ""
            };
            return Err(Error::new(
                Status::Overlap,
                format!(
                    "output bytes [{:#x}, {:#x}) overlap {what} bytes [{:#x}, {:#x}){hint}",
                    out_range.0,
                    out_range.0 + out_range.1,
                    input.0,
                    input.0 + input.1
                ),
            ));
        }
    }
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
