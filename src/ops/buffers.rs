//! Step 9 of the check order, once for every entry point: the buffers a plan runs on hold exactly
//! its tensors' bytes, are aligned for their dtypes, and (from C, where only addresses arrive)
//! are not NULL and do not overlap. Byte sizes come from the plan, which checked that they fit.

use super::plan::Plan;
use crate::dtype::DType;
use crate::error::{Error, Result, Status};
use std::mem::MaybeUninit;

/// The three buffers of a call, as bytes.
pub(crate) struct ByteBuffers<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) indices: &'a [u8],
    pub(crate) output: &'a mut [MaybeUninit<u8>],
}

/// Name, element count and dtype of data, indices and output, in that order.
fn tensors<O>(plan: &Plan<O>) -> [(&'static str, usize, DType); 3] {
    [
        ("data", plan.data_len, plan.data_dtype),
        ("indices", plan.indices_len, plan.index_type.dtype()),
        ("output", plan.output_len, plan.data_dtype),
    ]
}

/// Each buffer holds exactly its tensor's bytes (`InvalidArgument` otherwise).
pub(crate) fn check_lengths<O>(plan: &Plan<O>, buffers: &ByteBuffers<'_>) -> Result<()> {
    let lengths = [
        buffers.data.len(),
        buffers.indices.len(),
        buffers.output.len(),
    ];
    check_counts(plan, lengths, true)
}

/// Typed buffers of `lengths` elements (data, indices, output) hold exactly their tensors'
/// elements (`InvalidArgument` otherwise).
pub(crate) fn check_element_counts<O>(plan: &Plan<O>, lengths: [usize; 3]) -> Result<()> {
    check_counts(plan, lengths, false)
}

fn check_counts<O>(plan: &Plan<O>, lengths: [usize; 3], in_bytes: bool) -> Result<()> {
    check_tensor_lengths(&tensors(plan), &lengths, in_bytes)
}

/// Each buffer (of `lengths`, in bytes or elements) holds exactly its tensor's (name, element
/// count, dtype) size; `InvalidArgument` names the first that does not. For every operator.
pub(crate) fn check_tensor_lengths(
    tensors: &[(&'static str, usize, DType)],
    lengths: &[usize],
    in_bytes: bool,
) -> Result<()> {
    for (&(what, elements, dtype), &got) in tensors.iter().zip(lengths) {
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

/// Each non-empty buffer starts at an address aligned for its dtype (`InvalidArgument`).
pub(crate) fn check_alignment<O>(plan: &Plan<O>, buffers: &ByteBuffers<'_>) -> Result<()> {
    let addresses = [
        buffers.data.as_ptr() as usize,
        buffers.indices.as_ptr() as usize,
        buffers.output.as_ptr() as usize,
    ];
    check_tensor_alignment(&tensors(plan), &addresses)
}

/// Each non-empty tensor's address is aligned for its dtype (`InvalidArgument`).
pub(crate) fn check_tensor_alignment(
    tensors: &[(&'static str, usize, DType)],
    addresses: &[usize],
) -> Result<()> {
    for (&(what, elements, dtype), &address) in tensors.iter().zip(addresses) {
        if elements > 0 {
            check_aligned(what, address, dtype)?;
        }
    }
    Ok(())
}

pub(crate) fn check_aligned(what: &str, address: usize, dtype: DType) -> Result<()> {
    // Cannot divide by zero: every dtype's alignment is 1, 2, 4 or 8.
    if address % dtype.alignment() != 0 {
        return Err(Error::new(
            Status::InvalidArgument,
            format!(
                "{what} pointer {address:#x} is not aligned to {} bytes as {dtype} elements need",
                dtype.alignment()
            ),
        ));
    }
    Ok(())
}

/// Step 9 for buffers given as addresses (`data`, `indices`, `output`; named `"data->data"` and
/// so on in messages): a NULL address of a tensor with elements is `NullPointer`, a misaligned
/// one `InvalidArgument`, output bytes overlapping input bytes `Overlap`. Then views them.
///
/// Not inlined, so that its frame is not part of the C entry points' (calls have at most 4 KiB of
/// stack).
///
/// # Safety
/// Each non-NULL address points to at least its tensor's byte size (by `plan`), readable for data
/// and indices and writable for the output, valid for `'a`.
#[inline(never)]
pub(crate) unsafe fn view_addresses<'a, O>(
    plan: &Plan<O>,
    addresses: [usize; 3],
) -> Result<ByteBuffers<'a>> {
    const NAMES: [&str; 3] = ["data->data", "indices->data", "output->data"];
    let bytes = check_addresses(&NAMES, &tensors(plan), &addresses)?;
    let out = (addresses[2], bytes[2]);
    check_apart(out, "data", (addresses[0], bytes[0]), "")?;
    check_apart(out, "indices", (addresses[1], bytes[1]), "")?;
    // SAFETY: each view is either empty or a non-NULL, aligned range the caller guarantees valid
    // for 'a, and the output range overlaps neither input range (checked above), so the `&mut`
    // is unique.
    unsafe {
        Ok(ByteBuffers {
            data: view(addresses[0], bytes[0]),
            indices: view(addresses[1], bytes[1]),
            output: view_mut(addresses[2], bytes[2]),
        })
    }
}

/// Step 9's NULL and alignment checks for C addresses (`names[i]` for messages, e.g.
/// `"data->data"`): a NULL address of a tensor with bytes is `NullPointer`, a misaligned one
/// `InvalidArgument`. Returns each tensor's byte size.
pub(crate) fn check_addresses<const N: usize>(
    names: &[&str; N],
    tensors: &[(&'static str, usize, DType); N],
    addresses: &[usize; N],
) -> Result<[usize; N]> {
    // Cannot overflow: the plan checked every tensor's byte size against isize::MAX.
    let bytes = tensors.map(|(_, elements, dtype)| elements * dtype.size());
    for ((name, &address), &len) in names.iter().zip(addresses).zip(&bytes) {
        if address == 0 && len > 0 {
            return Err(Error::new(
                Status::NullPointer,
                format!("{name} is NULL but the tensor has {len} bytes"),
            ));
        }
    }
    for (((name, &address), &len), &(_, _, dtype)) in
        names.iter().zip(addresses).zip(&bytes).zip(tensors)
    {
        if len > 0 {
            check_aligned(name, address, dtype)?;
        }
    }
    Ok(bytes)
}

/// `Overlap` when the output's bytes `(address, len)` overlap `what`'s; `hint` ends the message.
pub(crate) fn check_apart(
    out: (usize, usize),
    what: &str,
    input: (usize, usize),
    hint: &str,
) -> Result<()> {
    if out.1 > 0 && input.1 > 0 && out.0 < input.0 + input.1 && input.0 < out.0 + out.1 {
        return Err(Error::new(
            Status::Overlap,
            format!(
                "output bytes [{:#x}, {:#x}) overlap {what} bytes [{:#x}, {:#x}){hint}",
                out.0,
                out.0 + out.1,
                input.0,
                input.0 + input.1
            ),
        ));
    }
    Ok(())
}

/// # Safety
/// As for [`view_addresses`]: `len` readable bytes at `address` for `'a` when `len > 0`.
pub(crate) unsafe fn view<'a>(address: usize, len: usize) -> &'a [u8] {
    match len {
        0 => &[],
        // SAFETY: the caller's contract.
        n => unsafe { std::slice::from_raw_parts(address as *const u8, n) },
    }
}

/// # Safety
/// As for [`view_addresses`]: `len` writable bytes at `address` for `'a`, used by nothing else.
pub(crate) unsafe fn view_mut<'a>(address: usize, len: usize) -> &'a mut [MaybeUninit<u8>] {
    match len {
        0 => &mut [],
        // SAFETY: the caller's contract; the output may be uninitialized, hence `MaybeUninit`.
        n => unsafe { std::slice::from_raw_parts_mut(address as *mut MaybeUninit<u8>, n) },
    }
}
