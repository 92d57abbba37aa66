//! Reading C tensor descriptors and options (check steps 1–2): each field is read from C memory
//! once and converted once. Step 9 (the data pointers) is `ops::buffers`, fed by the plan.

use super::{gk_options, gk_strided_tensor, gk_tensor, gk_tensor_mut, GK_FLAVOR_ONNX};
use crate::dtype::DType;
use crate::error::{Error, Result, Status};
use crate::options::{Flavor, Options};
use crate::shape::{check_rank_limit, Dims};
use crate::tensor::TensorDesc;
use crate::threads::ParallelFor;

/// A descriptor copied out of C memory, with its dtype and shape validated.
pub(crate) struct Descriptor {
    pub(crate) dtype: DType,
    pub(crate) shape: Dims,
    /// The data address; only compared and checked until step 9 is passed.
    pub(crate) address: usize,
}

impl Descriptor {
    pub(crate) fn desc(&self) -> TensorDesc<'_> {
        TensorDesc::new(self.dtype, self.shape.as_slice())
    }
}

/// The fields every descriptor has, read from either struct.
#[derive(Clone, Copy)]
pub(crate) struct RawDescriptor {
    what: &'static str,
    dtype: i32,
    rank: usize,
    shape: *const i64,
    address: usize,
}

/// Step 1 for one input struct pointer: NULL is `NullPointer`. Copies the struct's fields.
///
/// # Safety
/// `ptr` is NULL or points to a readable `gk_tensor`.
pub(crate) unsafe fn read_tensor(
    what: &'static str,
    ptr: *const gk_tensor,
) -> Result<RawDescriptor> {
    // SAFETY: the caller's contract; NULL is handled by `as_ref`.
    let t = unsafe { ptr.as_ref() }.ok_or_else(|| null(what))?;
    Ok(RawDescriptor::new(
        what,
        t.dtype,
        t.rank,
        t.shape,
        t.data as usize,
    ))
}

/// As [`read_tensor`], for the output struct.
///
/// # Safety
/// `ptr` is NULL or points to a readable `gk_tensor_mut`.
pub(crate) unsafe fn read_tensor_mut(
    what: &'static str,
    ptr: *const gk_tensor_mut,
) -> Result<RawDescriptor> {
    // SAFETY: the caller's contract; NULL is handled by `as_ref`.
    let t = unsafe { ptr.as_ref() }.ok_or_else(|| null(what))?;
    Ok(RawDescriptor::new(
        what,
        t.dtype,
        t.rank,
        t.shape,
        t.data as usize,
    ))
}

/// The sizes `gk_strided_tensor` has had (0.2.0's first struct).
const STRIDED_TENSOR_SIZES: [usize; 1] = [std::mem::size_of::<gk_strided_tensor>()];

/// Step 1 for one strided input: NULL is `NullPointer`; an unknown `struct_size` is
/// `InvalidArgument`. Copies the struct's fields; the strides pointer is read with the shape.
///
/// # Safety
/// `ptr` is NULL or points to a readable `gk_strided_tensor` of its `struct_size`.
pub(crate) unsafe fn read_strided_tensor(
    what: &'static str,
    ptr: *const gk_strided_tensor,
) -> Result<(RawDescriptor, *const i64)> {
    if ptr.is_null() {
        return Err(null(what));
    }
    // SAFETY: every version of the struct starts with `struct_size` (contract: readable).
    let size = unsafe { ptr.cast::<usize>().read_unaligned() };
    if !STRIDED_TENSOR_SIZES.contains(&size) {
        let known = STRIDED_TENSOR_SIZES.map(|s| s.to_string()).join(", ");
        return Err(Error::new(
            Status::InvalidArgument,
            format!(
                "{what}->struct_size is {size}; allowed are {known} (sizeof(gk_strided_tensor) in some \
                 version of gatherkit.h: set it with GK_STRIDED_TENSOR_INIT)"
            ),
        ));
    }
    // SAFETY: a struct of this library's one known size (checked above) is readable at `ptr`.
    let t = unsafe { &*ptr };
    Ok((
        RawDescriptor::new(what, t.dtype, t.rank, t.shape, t.data as usize),
        t.strides,
    ))
}

/// Step 2 for a strided input's strides, after its shape was read: `rank` values (the row-major
/// strides of `shape` when the pointer is NULL), each read once; a value beyond `isize` is
/// `Overflow`.
///
/// # Safety
/// `strides` is NULL or points to `shape.len()` readable `int64_t`.
pub(crate) unsafe fn read_strides(
    what: &str,
    strides: *const i64,
    shape: &[usize],
) -> Result<Vec<isize>> {
    if strides.is_null() {
        let mut out = vec![0isize; shape.len()];
        let mut step = 1isize;
        for (s, &n) in out.iter_mut().zip(shape).rev() {
            *s = step;
            // Saturating: a shape this large fails the plan's size check (step 7) anyway.
            step = step.saturating_mul(isize::try_from(n).unwrap_or(isize::MAX));
        }
        return Ok(out);
    }
    // SAFETY: non-NULL with `rank` readable entries, by the caller's contract.
    let raw = unsafe { std::slice::from_raw_parts(strides, shape.len()) };
    raw.iter()
        .enumerate()
        .map(|(i, &s)| {
            isize::try_from(s).map_err(|_| {
                Error::new(
                    Status::Overflow,
                    format!("{what}->strides[{i}] is {s}; it must fit in a ptrdiff_t"),
                )
            })
        })
        .collect()
}

impl RawDescriptor {
    fn new(what: &'static str, dtype: i32, rank: usize, shape: *const i64, address: usize) -> Self {
        RawDescriptor {
            what,
            dtype,
            rank,
            shape,
            address,
        }
    }
}

fn null(what: &str) -> Error {
    Error::new(Status::NullPointer, format!("{what} is NULL"))
}

/// Step 1, shape half: a NULL shape with rank > 0 is `NullPointer`.
pub(crate) fn check_shape_pointers(raws: &[RawDescriptor]) -> Result<()> {
    for raw in raws {
        if raw.shape.is_null() && raw.rank > 0 {
            return Err(Error::new(
                Status::NullPointer,
                format!(
                    "{}->shape is NULL but {}->rank is {}",
                    raw.what, raw.what, raw.rank
                ),
            ));
        }
    }
    Ok(())
}

/// Step 2, dtype half: every dtype code is known; returns the dtypes.
pub(crate) fn read_dtypes<const N: usize>(raws: &[RawDescriptor; N]) -> Result<[DType; N]> {
    let mut dtypes = [DType::Uint8; N];
    for (raw, dtype) in raws.iter().zip(dtypes.iter_mut()) {
        *dtype = DType::try_from(raw.dtype)
            .map_err(|e| Error::new(e.status(), format!("{}->dtype: {}", raw.what, e.message())))?;
    }
    Ok(dtypes)
}

impl Default for gk_options {
    /// Every field at its default (`GK_OPTIONS_INIT`), `struct_size` this library's.
    fn default() -> gk_options {
        gk_options {
            struct_size: std::mem::size_of::<gk_options>(),
            flavor: GK_FLAVOR_ONNX,
            version: 0,
            num_threads: 0,
            parallel_for: None,
            parallel_for_ctx: std::ptr::null_mut(),
            parallel_for_concurrency: 0,
        }
    }
}

/// The sizes `gk_options` has had, each ending at a field: 0.2.0's first struct ends after
/// `parallel_for_concurrency`. A later version adds its fields' end offsets here.
const OPTIONS_SIZES: [usize; 1] = [std::mem::size_of::<gk_options>()];

/// `struct_size` is the size of some version of `gk_options` (`InvalidArgument` otherwise).
pub(crate) fn check_options_size(size: usize) -> Result<()> {
    if OPTIONS_SIZES.contains(&size) {
        return Ok(());
    }
    let known = OPTIONS_SIZES.map(|s| s.to_string()).join(", ");
    let hint = if size > std::mem::size_of::<gk_options>() {
        format!(
            "; a larger struct has fields this gatherkit ({}) does not know: build against its header",
            env!("CARGO_PKG_VERSION")
        )
    } else {
        String::new()
    };
    Err(Error::new(
        Status::InvalidArgument,
        format!(
            "options->struct_size is {size}; allowed are {known} (sizeof(gk_options) in some \
             version of gatherkit.h: set it with gk_options_init(&o, sizeof o) or GK_OPTIONS_INIT){hint}"
        ),
    ))
}

/// Step 2, options half: NULL means the defaults; `struct_size` says which fields the caller
/// has (the rest take their defaults); an unknown flavor is `InvalidArgument`, and so is a host
/// context or concurrency without a host parallel-for.
///
/// Not inlined, as [`read_shapes`].
///
/// # Safety
/// `ptr` is NULL or points to `struct_size` readable bytes of a `gk_options`.
#[inline(never)]
pub(crate) unsafe fn read_options(ptr: *const gk_options) -> Result<Options> {
    if ptr.is_null() {
        return Ok(Options::default());
    }
    // SAFETY: every version of the struct starts with `struct_size` (contract: readable).
    let size = unsafe { ptr.cast::<usize>().read_unaligned() };
    check_options_size(size)?;
    let mut o = gk_options::default();
    // SAFETY: `size` bytes are readable at `ptr` (contract) and fit in `o` (checked above).
    unsafe {
        std::ptr::copy_nonoverlapping(
            ptr.cast::<u8>(),
            std::ptr::addr_of_mut!(o).cast::<u8>(),
            size,
        )
    };
    let parallel_for = match o.parallel_for {
        // SAFETY: the documented contract of `gk_options.parallel_for` is `ParallelFor::new`'s.
        Some(run) => Some(unsafe {
            ParallelFor::new(run, o.parallel_for_ctx, o.parallel_for_concurrency)
        }),
        None if !o.parallel_for_ctx.is_null() || o.parallel_for_concurrency != 0 => {
            return Err(Error::new(
                Status::InvalidArgument,
                "options->parallel_for is NULL but parallel_for_ctx or parallel_for_concurrency is set; \
                 set parallel_for too, or clear both to use gatherkit's own pool",
            ))
        }
        None => None,
    };
    Ok(Options {
        flavor: Flavor::try_from(o.flavor)?,
        opset: o.version,
        num_threads: o.num_threads,
        parallel_for,
    })
}

/// Step 2, shape half: rank within `GK_MAX_RANK` (else `InvalidRank`, before the shape is read)
/// and no negative dimension (`InvalidArgument`). Returns the validated descriptors.
///
/// Not inlined: its frame and [`read_call`](super)'s would otherwise add up under every error
/// message of step 1–2 (calls have at most 4 KiB of stack).
///
/// # Safety
/// Each descriptor's `shape` points to `rank` readable `int64_t` (it is non-NULL when rank > 0,
/// which step 1 checked).
#[inline(never)]
pub(crate) unsafe fn read_shapes<const N: usize>(
    raws: [RawDescriptor; N],
    dtypes: [DType; N],
) -> Result<[Descriptor; N]> {
    for raw in &raws {
        check_rank_limit(raw.what, raw.rank)?;
    }
    let mut out = dtypes.map(|dtype| Descriptor {
        dtype,
        shape: Dims::new(),
        address: 0,
    });
    for (raw, d) in raws.iter().zip(out.iter_mut()) {
        d.address = raw.address;
    }
    for (raw, d) in raws.iter().zip(out.iter_mut()) {
        let dims: &[i64] = if raw.rank == 0 {
            &[]
        } else {
            // SAFETY: non-NULL with `rank <= MAX_RANK` readable entries, by the caller's contract.
            unsafe { std::slice::from_raw_parts(raw.shape, raw.rank) }
        };
        for (i, &dim) in dims.iter().enumerate() {
            let dim = usize::try_from(dim).map_err(|_| {
                let status = if dim < 0 {
                    Status::InvalidArgument
                } else {
                    Status::Overflow
                };
                Error::new(
                    status,
                    format!("{}->shape[{i}] is {dim}; dimensions must be >= 0", raw.what),
                )
            })?;
            d.shape.push(dim);
        }
    }
    Ok(out)
}
