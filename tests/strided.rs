//! Gathers whose data and indices are read through element strides: the `*_strided` functions,
//! their `_dyn` forms, the plans' `run_strided*` methods and the C ABI's `gk_*_strided`.
//!
//! The oracle is the dense call on copies of the views materialized here (by walking each view's
//! shape, strides and origin in plain Rust): a strided call must give exactly its bits, or exactly
//! its error (status and message), whatever the layouts — dense, dense at an offset, transposed,
//! stepped, negative strides with the origin at the far end, broadcast (stride 0, the innermost
//! dimension included), size-1 and size-0 dimensions with arbitrary strides — for the three
//! operators in both flavors, every element width (1, 2, 4, 8, 16 bytes), both index types and
//! negative index values. Elements of a buffer that a view does not reach hold values that would
//! show if read: random data, and index values out of every range.
//!
//! Then: large calls split across threads (gatherkit's pool and host pools) give the same bits
//! and the same first bad index; bad index values give the dense call's message (broadcast ones
//! and outputs without elements included); step 9 for views refuses what it must with
//! `InvalidArgument` and a message naming the input; and the C ABI's shell (NULL strides,
//! `struct_size`, NULL pointers, overlap with the bytes a view spans, spans that leave the
//! address space, the first bad index).

#[path = "common/hosts.rs"]
mod hosts;

use gatherkit::ffi::{
    gk_gather, gk_gather_elements, gk_gather_elements_strided, gk_gather_nd, gk_gather_nd_strided,
    gk_gather_strided, gk_last_error_message, gk_options, gk_strided_tensor, gk_tensor,
    gk_tensor_mut, GK_DTYPE_FLOAT, GK_DTYPE_INT32, GK_DTYPE_INT64, GK_STATUS_INDEX_OUT_OF_BOUNDS,
    GK_STATUS_INVALID_ARGUMENT, GK_STATUS_NULL_POINTER, GK_STATUS_OK, GK_STATUS_OVERFLOW,
    GK_STATUS_OVERLAP,
};
use gatherkit::{
    f16, gather_elements_strided, gather_elements_strided_dyn, gather_elements_to_vec,
    gather_nd_strided, gather_nd_strided_dyn, gather_nd_to_vec, gather_strided, gather_strided_dyn,
    gather_to_vec, Complex, DType, DynStridedRef, DynTensorMut, Element, Error, Gather,
    GatherElements, GatherNd, IndexElement, Options, ParallelFor, Status, StridedRef, TaskFn,
    TensorDesc, TensorMut, TensorRef,
};
use gatherkit_testkit::{coords, count, reference, Rng};
use hosts::executors;
use std::ffi::{c_void, CStr};
use std::mem::{size_of, size_of_val, MaybeUninit};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};

// ---------------------------------------------------------------------------------------------
// Element and index types
// ---------------------------------------------------------------------------------------------

/// An element type the tests fill with random bits (never a NaN or an infinity, so that every
/// value is one bit pattern that only a copy produces).
trait Sample: Element + std::fmt::Debug {
    fn sample(bits: u64) -> Self;
}

impl Sample for u8 {
    fn sample(bits: u64) -> u8 {
        bits as u8
    }
}

impl Sample for f16 {
    fn sample(bits: u64) -> f16 {
        // Exponent bit 10 cleared: never all ones (no NaN, no infinity).
        f16::from_bits(bits as u16 & 0xfbff)
    }
}

impl Sample for f32 {
    fn sample(bits: u64) -> f32 {
        f32::from_bits(bits as u32 & 0xff7f_ffff)
    }
}

impl Sample for f64 {
    fn sample(bits: u64) -> f64 {
        f64::from_bits(bits & 0xffef_ffff_ffff_ffff)
    }
}

impl Sample for Complex<f64> {
    fn sample(bits: u64) -> Complex<f64> {
        Complex::new(
            f64::sample(bits),
            f64::sample(bits.rotate_left(23) ^ 0x9E37_79B9_7F4A_7C15),
        )
    }
}

/// The index types, with their dtype and a conversion (values are chosen to fit).
trait Idx: IndexElement + Element + std::fmt::Debug {
    fn of(v: i64) -> Self;
    fn wide() -> bool;
}

impl Idx for i32 {
    fn of(v: i64) -> i32 {
        i32::try_from(v).expect("an int32 index value")
    }
    fn wide() -> bool {
        false
    }
}

impl Idx for i64 {
    fn of(v: i64) -> i64 {
        v
    }
    fn wide() -> bool {
        true
    }
}

/// The bytes of a slice of elements (every `Element` has no padding).
fn bytes_of<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: `Element` types have their dtype's size and no padding bytes, so every byte of the
    // slice is initialized; the view borrows `v`.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), size_of_val(v)) }
}

fn bytes_of_mut<T: Element>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as above; any bytes written are a valid element (every Element type the tests use
    // is plain old data), and the view borrows `v` mutably.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), size_of_val(v)) }
}

// ---------------------------------------------------------------------------------------------
// Layouts: strides and origin of a view of a given shape, and the buffer length it needs
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Row-major strides, origin 0, nothing around.
    Dense,
    /// Row-major strides at a nonzero origin, with elements before and after.
    Offset,
    /// A permutation of the dimensions in memory.
    Transposed,
    /// Gaps: strides k > 1 times the row-major ones.
    Stepped,
    /// Some strides negated, the origin at the far end.
    Negative,
    /// Stride 0 along some dimensions.
    Broadcast,
    /// Stride 0 along the innermost dimension (and maybe others).
    BroadcastInner,
    /// Row-major, but dimensions of size 1 (and 0) with arbitrary strides.
    SizeOne,
    /// All of the above at random.
    Mixed,
}

const KINDS: [Kind; 9] = [
    Kind::Dense,
    Kind::Offset,
    Kind::Transposed,
    Kind::Stepped,
    Kind::Negative,
    Kind::Broadcast,
    Kind::BroadcastInner,
    Kind::SizeOne,
    Kind::Mixed,
];

/// Strides that are fine along a dimension of size 1 or 0, where no step is ever taken.
const ODD_STRIDES: [isize; 8] = [isize::MAX, isize::MIN, 1 << 40, -(1 << 33), 0, -1, 7, 12345];

#[derive(Clone, Debug)]
struct Layout {
    strides: Vec<isize>,
    /// Which buffer element is element [0, ..., 0].
    origin: usize,
    /// Buffer length in elements.
    len: usize,
}

/// The lowest and highest element offsets a view reaches (from element [0, ..., 0]); `None`
/// when it has no elements.
fn reach(shape: &[usize], strides: &[isize]) -> Option<(i128, i128)> {
    if shape.contains(&0) {
        return None;
    }
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&n, &s) in shape.iter().zip(strides) {
        let span = (n as i128 - 1) * s as i128;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    Some((lo, hi))
}

fn shuffle<T>(rng: &mut Rng, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

/// A random layout of `kind` for a view of `shape`.
fn layout(rng: &mut Rng, shape: &[usize], kind: Kind) -> Layout {
    let r = shape.len();
    let mut order: Vec<usize> = (0..r).collect(); // memory order, outermost first
    let mut steps = vec![1usize; r];
    let mut negate = vec![false; r];
    let mut broadcast = vec![false; r];
    let mut odd_small = false;
    let pad = |rng: &mut Rng| rng.below(4) as usize;
    let (mut front, mut back) = (0, 0);
    // A dimension that really steps (size > 1), if any: where a kind must show.
    let stepping: Vec<usize> = (0..r).filter(|&d| shape[d] > 1).collect();
    let pick = |rng: &mut Rng, all: &[usize]| all[rng.below(all.len() as u64) as usize];
    match kind {
        Kind::Dense => {}
        Kind::Offset => {
            front = 1 + rng.below(5) as usize;
            back = pad(rng);
        }
        Kind::Transposed => {
            shuffle(rng, &mut order);
            if r >= 2 && order.iter().enumerate().all(|(i, &d)| i == d) {
                order.swap(0, r - 1);
            }
            front = pad(rng);
            back = pad(rng);
        }
        Kind::Stepped => {
            for s in steps.iter_mut() {
                *s = 1 + rng.below(3) as usize;
            }
            if let Some(&d) = stepping.last() {
                steps[d] = 2 + rng.below(2) as usize;
            }
            front = pad(rng);
            back = pad(rng);
        }
        Kind::Negative => {
            if rng.chance(30) {
                shuffle(rng, &mut order);
            }
            for n in negate.iter_mut() {
                *n = rng.chance(60);
            }
            if !stepping.is_empty() {
                negate[pick(rng, &stepping)] = true;
            }
            front = pad(rng);
            back = pad(rng);
        }
        Kind::Broadcast => {
            for b in broadcast.iter_mut() {
                *b = rng.chance(40);
            }
            if !stepping.is_empty() {
                broadcast[pick(rng, &stepping)] = true;
            }
            front = pad(rng);
            back = pad(rng);
        }
        Kind::BroadcastInner => {
            for b in broadcast.iter_mut() {
                *b = rng.chance(25);
            }
            if r > 0 {
                broadcast[r - 1] = true;
            }
            front = pad(rng);
        }
        Kind::SizeOne => {
            odd_small = true;
            front = pad(rng);
        }
        Kind::Mixed => {
            if rng.chance(50) {
                shuffle(rng, &mut order);
            }
            for d in 0..r {
                steps[d] = if rng.chance(30) {
                    2 + rng.below(2) as usize
                } else {
                    1
                };
                negate[d] = rng.chance(40);
                broadcast[d] = rng.chance(20);
            }
            odd_small = rng.chance(50);
            front = pad(rng);
            back = pad(rng);
        }
    }
    // At most 8 times the dense buffer's size in gaps (a step per dimension of a high-rank view
    // would multiply into gigabytes): the innermost steps in memory order are kept.
    let mut gaps = 1;
    for &d in order.iter().rev() {
        if gaps * steps[d] > 8 {
            steps[d] = 1;
        }
        gaps *= steps[d];
    }
    let mut strides = vec![0isize; r];
    let mut running = 1usize;
    for &d in order.iter().rev() {
        if broadcast[d] {
            continue;
        }
        let s = running * steps[d];
        running = s * shape[d].max(1);
        strides[d] = if negate[d] { -(s as isize) } else { s as isize };
    }
    if odd_small {
        for d in 0..r {
            if shape[d] <= 1 && rng.chance(80) {
                strides[d] = ODD_STRIDES[rng.below(ODD_STRIDES.len() as u64) as usize];
            }
        }
    }
    match reach(shape, &strides) {
        Some((lo, hi)) => {
            let origin = front + (-lo) as usize;
            Layout {
                len: origin + hi as usize + 1 + back,
                origin,
                strides,
            }
        }
        None => Layout {
            len: front + back,
            origin: front,
            strides,
        },
    }
}

/// The buffer offset of the element at row-major position `p` of a view.
fn offset_of(shape: &[usize], layout: &Layout, p: usize) -> usize {
    let c = coords(p, shape);
    let o = c
        .iter()
        .zip(&layout.strides)
        .fold(layout.origin as i128, |o, (&c, &s)| {
            o + c as i128 * s as i128
        });
    usize::try_from(o).expect("an offset inside the buffer")
}

/// The view's elements, row-major: what the dense call is given.
fn materialize<T: Copy>(buf: &[T], shape: &[usize], layout: &Layout) -> Vec<T> {
    (0..count(shape))
        .map(|p| buf[offset_of(shape, layout, p)])
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Calls: an operator with its attributes and shapes, the dense oracle and every strided API
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Op {
    Elements { axis: i64 },
    Nd { batch_dims: i64 },
    Gather { axis: i64, batch_dims: i64 },
}

#[derive(Clone, Debug)]
struct Case {
    op: Op,
    /// Flavor and opset (threads come from the executor).
    options: Options,
    data_shape: Vec<usize>,
    indices_shape: Vec<usize>,
}

enum AnyPlan {
    Elements(GatherElements),
    Nd(GatherNd),
    Gather(Gather),
}

/// Runs `$body` with `$p` bound to the plan, whichever operator it is.
macro_rules! on_plan {
    ($plan:expr, $p:ident => $body:expr) => {
        match $plan {
            AnyPlan::Elements($p) => $body,
            AnyPlan::Nd($p) => $body,
            AnyPlan::Gather($p) => $body,
        }
    };
}

impl Case {
    fn normalized_axis(&self, axis: i64) -> usize {
        axis.rem_euclid(self.data_shape.len() as i64) as usize
    }

    /// The size of the data dimension the index value at row-major position `p` addresses.
    fn addressed(&self, p: usize) -> usize {
        match self.op {
            Op::Elements { axis } | Op::Gather { axis, .. } => {
                self.data_shape[self.normalized_axis(axis)]
            }
            Op::Nd { batch_dims } => {
                let k = *self
                    .indices_shape
                    .last()
                    .expect("GatherND indices of rank >= 1");
                self.data_shape[batch_dims as usize + p % k]
            }
        }
    }

    fn plan(&self, dtype: DType, index: DType, options: &Options) -> Result<AnyPlan, Error> {
        let d = TensorDesc::new(dtype, &self.data_shape);
        let i = TensorDesc::new(index, &self.indices_shape);
        Ok(match self.op {
            Op::Elements { axis } => AnyPlan::Elements(GatherElements::new(d, i, axis, options)?),
            Op::Nd { batch_dims } => AnyPlan::Nd(GatherNd::new(d, i, batch_dims, options)?),
            Op::Gather { axis, batch_dims } => {
                AnyPlan::Gather(Gather::new(d, i, axis, batch_dims, options)?)
            }
        })
    }

    fn output_shape<T: Element, I: Idx>(&self) -> Vec<usize> {
        let plan = self
            .plan(T::DTYPE, I::DTYPE, &self.options)
            .unwrap_or_else(|e| panic!("{self:?}: {}", e.message()));
        on_plan!(&plan, p => p.output_shape().to_vec())
    }

    /// The dense call on row-major buffers (the oracle).
    fn dense<T: Element, I: Idx>(
        &self,
        data: &[T],
        indices: &[I],
        options: &Options,
    ) -> Result<(Vec<usize>, Vec<T>), Error> {
        let d = TensorRef::new(&self.data_shape, data);
        let i = TensorRef::new(&self.indices_shape, indices);
        match self.op {
            Op::Elements { axis } => gather_elements_to_vec(d, i, axis, options),
            Op::Nd { batch_dims } => gather_nd_to_vec(d, i, batch_dims, options),
            Op::Gather { axis, batch_dims } => gather_to_vec(d, i, axis, batch_dims, options),
        }
    }

    /// The testkit's element-by-element reference (an oracle independent of gatherkit).
    fn reference<T: Copy>(&self, data: &[T], indices: &[i64]) -> Result<Vec<T>, usize> {
        let (ds, is) = (&self.data_shape[..], &self.indices_shape[..]);
        match self.op {
            Op::Elements { axis } => reference::gather_elements(data, ds, indices, is, axis),
            Op::Nd { batch_dims } => {
                reference::gather_nd(data, ds, indices, is, batch_dims as usize)
            }
            Op::Gather { axis, batch_dims } => {
                let q = is.len() as i64;
                let b = if batch_dims < 0 {
                    batch_dims + q
                } else {
                    batch_dims
                };
                reference::gather(data, ds, indices, is, axis, b as usize)
            }
        }
    }
}

/// Options with the case's flavor and opset and the executor's threads.
fn merged(case: &Options, exec: &Options) -> Options {
    Options {
        flavor: case.flavor,
        opset: case.opset,
        ..*exec
    }
}

/// A strided view: shape, layout and buffer.
#[derive(Clone, Copy)]
struct View<'a, T> {
    shape: &'a [usize],
    layout: &'a Layout,
    buf: &'a [T],
}

impl<'a, T: Element> View<'a, T> {
    fn typed(&self) -> StridedRef<'a, T> {
        StridedRef::new(self.shape, &self.layout.strides, self.buf).with_origin(self.layout.origin)
    }

    fn dynamic(&self) -> DynStridedRef<'a> {
        DynStridedRef::new(
            T::DTYPE,
            self.shape,
            &self.layout.strides,
            bytes_of(self.buf),
        )
        .with_origin(self.layout.origin)
    }

    /// The C descriptor's parts: shape and strides as int64, and the address of element
    /// [0, ..., 0] (one past the buffer's end is fine for an empty view).
    fn c_parts(&self) -> (Vec<i64>, Vec<i64>, *const c_void) {
        (
            self.shape.iter().map(|&d| d as i64).collect(),
            self.layout.strides.iter().map(|&s| s as i64).collect(),
            self.buf.as_ptr().wrapping_add(self.layout.origin).cast(),
        )
    }
}

/// Which strided entry point a call goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    /// `gather_*_strided`.
    Function,
    /// `gather_*_strided_dyn`.
    Dyn,
    /// `Plan::run_strided`.
    Plan,
    /// `Plan::run_strided_uninit`.
    PlanUninit,
    /// `Plan::run_strided_bytes`.
    PlanBytes,
    /// `gk_gather_*_strided` (gatherkit's own pool only: `num_threads` is passed on).
    C,
}

const APIS: [Api; 6] = [
    Api::Function,
    Api::Dyn,
    Api::Plan,
    Api::PlanUninit,
    Api::PlanBytes,
    Api::C,
];

fn last_error() -> String {
    // SAFETY: the library returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(gk_last_error_message()) }
        .to_str()
        .unwrap()
        .to_string()
}

fn c_options(options: &Options) -> gk_options {
    gk_options {
        flavor: options.flavor.code(),
        version: options.opset,
        num_threads: options.num_threads,
        ..Default::default()
    }
}

fn strided_tensor(
    dtype: i32,
    shape: &[i64],
    strides: Option<&[i64]>,
    data: *const c_void,
) -> gk_strided_tensor {
    gk_strided_tensor {
        struct_size: size_of::<gk_strided_tensor>(),
        dtype,
        rank: shape.len(),
        shape: if shape.is_empty() {
            null()
        } else {
            shape.as_ptr()
        },
        strides: strides.map_or(null(), |s| s.as_ptr()),
        data,
    }
}

fn tensor_mut(dtype: i32, shape: &[i64], data: *mut c_void) -> gk_tensor_mut {
    gk_tensor_mut {
        dtype,
        rank: shape.len(),
        shape: shape.as_ptr(),
        data,
    }
}

/// One strided gather through `api` into `out`; an error as its status and message.
fn strided_call<T: Element, I: Idx>(
    api: Api,
    case: &Case,
    options: &Options,
    data: View<'_, T>,
    indices: View<'_, I>,
    out_shape: &[usize],
    out: &mut [T],
) -> Result<(), (Status, String)> {
    let err = |e: Error| (e.status(), e.message().to_string());
    match api {
        Api::Function => {
            let (d, i) = (data.typed(), indices.typed());
            let o = TensorMut::new(out_shape, out);
            match case.op {
                Op::Elements { axis } => gather_elements_strided(d, i, axis, o, options),
                Op::Nd { batch_dims } => gather_nd_strided(d, i, batch_dims, o, options),
                Op::Gather { axis, batch_dims } => {
                    gather_strided(d, i, axis, batch_dims, o, options)
                }
            }
            .map_err(err)
        }
        Api::Dyn => {
            let (d, i) = (data.dynamic(), indices.dynamic());
            let o = DynTensorMut::new(T::DTYPE, out_shape, bytes_of_mut(out));
            match case.op {
                Op::Elements { axis } => gather_elements_strided_dyn(d, i, axis, o, options),
                Op::Nd { batch_dims } => gather_nd_strided_dyn(d, i, batch_dims, o, options),
                Op::Gather { axis, batch_dims } => {
                    gather_strided_dyn(d, i, axis, batch_dims, o, options)
                }
            }
            .map_err(err)
        }
        Api::Plan | Api::PlanUninit | Api::PlanBytes => {
            let plan = case.plan(T::DTYPE, I::DTYPE, options).map_err(err)?;
            assert_eq!(on_plan!(&plan, p => p.output_shape()), out_shape);
            match api {
                Api::Plan => {
                    on_plan!(&plan, p => p.run_strided(data.typed(), indices.typed(), out))
                        .map_err(err)
                }
                Api::PlanBytes => on_plan!(&plan, p => p.run_strided_bytes(
                    data.dynamic(),
                    indices.dynamic(),
                    bytes_of_mut(out)
                ))
                .map_err(err),
                _ => {
                    let mut fresh: Vec<MaybeUninit<T>> =
                        (0..out.len()).map(|_| MaybeUninit::uninit()).collect();
                    on_plan!(&plan, p => p.run_strided_uninit(data.typed(), indices.typed(), &mut fresh))
                        .map_err(err)?;
                    for (o, f) in out.iter_mut().zip(&fresh) {
                        // SAFETY: on Ok, run_strided_uninit initialized every element.
                        *o = unsafe { f.assume_init() };
                    }
                    Ok(())
                }
            }
        }
        Api::C => {
            let (ds, dst, dp) = data.c_parts();
            let (is, ist, ip) = indices.c_parts();
            let os: Vec<i64> = out_shape.iter().map(|&d| d as i64).collect();
            let d = strided_tensor(T::DTYPE.code(), &ds, Some(&dst), dp);
            let i = strided_tensor(I::DTYPE.code(), &is, Some(&ist), ip);
            let o = tensor_mut(T::DTYPE.code(), &os, out.as_mut_ptr().cast());
            let opts = c_options(options);
            // SAFETY: the descriptors describe live buffers: every element each view reaches is
            // inside its buffer (the layouts are built so), and the output holds its elements.
            let status = unsafe {
                match case.op {
                    Op::Elements { axis } => gk_gather_elements_strided(&d, &i, axis, &o, &opts),
                    Op::Nd { batch_dims } => gk_gather_nd_strided(&d, &i, batch_dims, &o, &opts),
                    Op::Gather { axis, batch_dims } => {
                        gk_gather_strided(&d, &i, axis, batch_dims, &o, &opts)
                    }
                }
            };
            match status {
                GK_STATUS_OK => Ok(()),
                code => Err((Status::from_code(code).unwrap(), last_error())),
            }
        }
    }
}

/// Index values through a view: each buffer element the view reaches gets a valid value for every
/// position that reads it (a broadcast element may be read against several dimensions); elements
/// it does not reach get a value out of every range, which shows if read. Then `bad` logical
/// positions get out-of-range values.
fn fill_indices<I: Idx>(rng: &mut Rng, case: &Case, layout: &Layout, bad: &[usize]) -> Vec<I> {
    let shape = &case.indices_shape;
    let poison = if I::wide() {
        i64::MAX - 3
    } else {
        i32::MAX.into()
    };
    let mut smallest = vec![usize::MAX; layout.len];
    for p in 0..count(shape) {
        let o = offset_of(shape, layout, p);
        smallest[o] = smallest[o].min(case.addressed(p));
    }
    let mut values: Vec<i64> = smallest
        .iter()
        .map(|&m| match m {
            usize::MAX => poison,
            0 => 0, // no valid value exists: every read of it is an error anyway
            m => rng.index(m),
        })
        .collect();
    for &p in bad {
        let size = case.addressed(p) as i64;
        let v = match rng.below(6) {
            0 => size,
            1 => size + 1 + rng.below(5) as i64,
            2 => -size - 1,
            3 => -size - 2 - rng.below(5) as i64,
            4 => i32::MIN.into(),
            _ if I::wide() => [i64::MIN, i64::MAX, 1 << 40][rng.below(3) as usize],
            _ => i32::MAX.into(),
        };
        values[offset_of(shape, layout, p)] = v;
    }
    values.into_iter().map(I::of).collect()
}

/// What a call left: the output's bytes, or its error.
type Outcome = Result<Vec<u8>, (Status, String)>;

fn outcome<T: Element>(result: Result<Vec<T>, Error>) -> Outcome {
    result
        .map(|v| bytes_of(&v).to_vec())
        .map_err(|e| (e.status(), e.message().to_string()))
}

/// One random call: layouts of `kinds` for data and indices, `bad` out-of-range values; the
/// strided call through `api` with each executor must give the dense call's outcome on the
/// materialized views (and the reference's values when it succeeds). Returns whether the dense
/// call failed, and whether the views were not both dense row-major (the strided traversal's
/// cases, rather than the dense kernels').
#[allow(clippy::too_many_arguments)]
fn check_case<T: Sample, I: Idx>(
    seed: u64,
    case: &Case,
    kinds: (Kind, Kind),
    api: Api,
    bad: usize,
    execs: &[(String, Options)],
) -> (bool, bool) {
    let mut rng = Rng::new(seed);
    let data_layout = layout(&mut rng, &case.data_shape, kinds.0);
    let data: Vec<T> = (0..data_layout.len)
        .map(|_| T::sample(rng.next_u64()))
        .collect();
    let index_layout = layout(&mut rng, &case.indices_shape, kinds.1);
    let n_idx = count(&case.indices_shape);
    let bad: Vec<usize> = if n_idx == 0 {
        Vec::new()
    } else {
        (0..bad).map(|_| rng.below(n_idx as u64) as usize).collect()
    };
    let indices: Vec<I> = fill_indices(&mut rng, case, &index_layout, &bad);
    let dense_data = materialize(&data, &case.data_shape, &data_layout);
    let dense_indices = materialize(&indices, &case.indices_shape, &index_layout);
    let ctx = format!(
        "seed {seed}, {} {} {case:?}, layouts {kinds:?} (data {data_layout:?}, indices {index_layout:?}), {api:?}",
        T::DTYPE,
        I::DTYPE
    );

    let expected = case.dense(&dense_data, &dense_indices, &case.options.with_threads(1));
    if let Ok((shape, out)) = &expected {
        let idx64: Vec<i64> = dense_indices.iter().map(|v| v.to_i64()).collect();
        let want = case
            .reference(&dense_data, &idx64)
            .unwrap_or_else(|p| panic!("{ctx}: the reference refuses index {p}"));
        assert!(
            bytes_of(out) == bytes_of(&want),
            "{ctx}: the dense call differs from the reference"
        );
        assert_eq!(shape, &case.output_shape::<T, I>(), "{ctx}");
    }
    let failed = expected.is_err();
    let expected = outcome(expected.map(|(_, out)| out));
    let out_shape = case.output_shape::<T, I>();
    let data_view = View {
        shape: &case.data_shape,
        layout: &data_layout,
        buf: &data,
    };
    let index_view = View {
        shape: &case.indices_shape,
        layout: &index_layout,
        buf: &indices,
    };
    for (label, exec) in execs {
        if api == Api::C && exec.parallel_for.is_some() {
            continue;
        }
        let options = merged(&case.options, exec);
        let mut out: Vec<T> = (0..count(&out_shape))
            .map(|i| T::sample(!(i as u64)))
            .collect();
        let got = strided_call(
            api, case, &options, data_view, index_view, &out_shape, &mut out,
        )
        .map(|()| bytes_of(&out).to_vec());
        match (&expected, &got) {
            (Ok(want), Ok(got)) => assert!(want == got, "{ctx}, {label}: the outputs differ"),
            _ => assert_eq!(got, expected, "{ctx}, {label}"),
        }
    }
    let strided = !(row_major(&case.data_shape, &data_layout)
        && row_major(&case.indices_shape, &index_layout));
    (failed, strided)
}

/// Whether a view's strides are the row-major ones of its shape, along every dimension where a
/// step is taken (a view without elements counts as row-major).
fn row_major(shape: &[usize], layout: &Layout) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut expected = 1isize;
    for (&n, &s) in shape.iter().zip(&layout.strides).rev() {
        if n != 1 && s != expected {
            return false;
        }
        expected *= n as isize;
    }
    true
}

// ---------------------------------------------------------------------------------------------
// Random cases
// ---------------------------------------------------------------------------------------------

fn small_dim(rng: &mut Rng) -> usize {
    match rng.below(12) {
        0 | 1 => 1,
        2 => 7 + rng.below(6) as usize,
        _ => 2 + rng.below(4) as usize,
    }
}

/// Halves dimensions among `free` until the shape has at most `max` elements (or none can shrink).
fn shrink(rng: &mut Rng, shape: &mut [usize], free: &[usize], max: usize) {
    while count(shape) > max {
        let big: Vec<usize> = free.iter().copied().filter(|&d| shape[d] > 1).collect();
        if big.is_empty() {
            return;
        }
        let d = big[rng.below(big.len() as u64) as usize];
        shape[d] = shape[d].div_ceil(2);
    }
}

fn elements_case(rng: &mut Rng) -> Case {
    let r = 1 + rng.below(4) as usize;
    let mut data_shape: Vec<usize> = (0..r).map(|_| small_dim(rng)).collect();
    let all: Vec<usize> = (0..r).collect();
    shrink(rng, &mut data_shape, &all, 2000);
    let axis = rng.below(r as u64) as usize;
    let openvino = rng.chance(30);
    let mut indices_shape: Vec<usize> = (0..r)
        .map(|d| {
            if d == axis {
                small_dim(rng)
            } else if openvino {
                data_shape[d]
            } else {
                1 + rng.below(data_shape[d] as u64) as usize
            }
        })
        .collect();
    shrink(rng, &mut indices_shape, &all, 2000);
    if openvino {
        // Off the axis, OpenVINO needs the data's dimensions: shrink only data's to match.
        for d in 0..r {
            if d != axis {
                data_shape[d] = indices_shape[d];
            }
        }
    }
    let axis = if rng.chance(50) {
        axis as i64
    } else {
        axis as i64 - r as i64
    };
    let options = if openvino {
        Options::openvino(0)
    } else {
        Options::onnx([0, 11, 13][rng.below(3) as usize])
    };
    Case {
        op: Op::Elements { axis },
        options,
        data_shape,
        indices_shape,
    }
}

fn nd_case(rng: &mut Rng) -> Case {
    let b = rng.below(3) as usize;
    let k = 1 + rng.below(3) as usize;
    let slice_rank = rng.below(3) as usize;
    let r = b + k + slice_rank;
    let mut data_shape: Vec<usize> = (0..r).map(|_| small_dim(rng)).collect();
    let all: Vec<usize> = (0..r).collect();
    shrink(rng, &mut data_shape, &all, 3000);
    let extra = rng.below(3) as usize;
    let mut indices_shape = data_shape[..b].to_vec();
    indices_shape.extend((0..extra).map(|_| small_dim(rng)));
    indices_shape.push(k);
    let free: Vec<usize> = (b..b + extra).collect();
    shrink(rng, &mut indices_shape, &free, 1500);
    let options = match rng.below(5) {
        0 => Options::onnx(0),
        1 => Options::onnx(12),
        2 if b == 0 => Options::onnx(11),
        2 => Options::onnx(13),
        3 => Options::openvino(5),
        _ => Options::openvino(8),
    };
    Case {
        op: Op::Nd {
            batch_dims: b as i64,
        },
        options,
        data_shape,
        indices_shape,
    }
}

fn gather_case(rng: &mut Rng) -> Case {
    let r = 1 + rng.below(4) as usize;
    let mut data_shape: Vec<usize> = (0..r).map(|_| small_dim(rng)).collect();
    let all: Vec<usize> = (0..r).collect();
    shrink(rng, &mut data_shape, &all, 2000);
    let axis = rng.below(r as u64) as usize;
    let openvino = rng.chance(40);
    let b = if openvino {
        rng.below(axis as u64 + 1) as usize
    } else {
        0
    };
    let extra = rng.below(3) as usize;
    let mut indices_shape = data_shape[..b].to_vec();
    indices_shape.extend((0..extra).map(|_| small_dim(rng)));
    let q = indices_shape.len();
    // The output is data's dimensions but the axis times the extra index dimensions.
    let free: Vec<usize> = (b..q).collect();
    let room = (20000 * data_shape[axis]) / count(&data_shape).max(1);
    shrink(
        rng,
        &mut indices_shape,
        &free,
        room.max(1) * count(&data_shape[..b]).max(1),
    );
    let batch_dims = if openvino && b < q && rng.chance(40) {
        b as i64 - q as i64 // OpenVINO counts a negative one from the indices' rank
    } else {
        b as i64
    };
    let axis = if rng.chance(50) {
        axis as i64
    } else {
        axis as i64 - r as i64
    };
    let options = if openvino {
        Options::openvino(0)
    } else {
        Options::onnx([0, 1, 11, 13][rng.below(4) as usize])
    };
    Case {
        op: Op::Gather { axis, batch_dims },
        options,
        data_shape,
        indices_shape,
    }
}

/// Makes the output of a GatherND or Gather case empty while its indices keep elements (a slice
/// dimension, or a data dimension off the axis, of size 0): index values must still be checked.
fn with_empty_output(rng: &mut Rng, mut case: Case) -> Case {
    let r = case.data_shape.len();
    let candidates: Vec<usize> = match case.op {
        Op::Elements { .. } => Vec::new(),
        Op::Nd { batch_dims } => {
            let k = *case.indices_shape.last().unwrap();
            (batch_dims as usize + k..r).collect()
        }
        Op::Gather { axis, batch_dims } => {
            let a = case.normalized_axis(axis);
            let q = case.indices_shape.len() as i64;
            let b = if batch_dims < 0 {
                batch_dims + q
            } else {
                batch_dims
            } as usize;
            // Not a batch dimension (indices would be empty too), not the axis.
            (b..r).filter(|&d| d != a).collect()
        }
    };
    if !candidates.is_empty() {
        let d = candidates[rng.below(candidates.len() as u64) as usize];
        case.data_shape[d] = 0;
    }
    case
}

/// Runs `check` for every element width with both index types.
macro_rules! for_each_type {
    ($check:ident($($arg:expr),* $(,)?)) => {
        $check::<u8, i32>($($arg),*);
        $check::<u8, i64>($($arg),*);
        $check::<f16, i64>($($arg),*);
        $check::<f16, i32>($($arg),*);
        $check::<f32, i32>($($arg),*);
        $check::<f32, i64>($($arg),*);
        $check::<f64, i64>($($arg),*);
        $check::<f64, i32>($($arg),*);
        $check::<Complex<f64>, i32>($($arg),*);
        $check::<Complex<f64>, i64>($($arg),*);
    };
}

/// Every pair of layout kinds (data, indices) once, each on a fresh random case, through the APIs
/// in turn.
fn equivalence<T: Sample, I: Idx>(make: fn(&mut Rng) -> Case, tag: u64) {
    let one = [("1 thread".to_string(), Options::default().with_threads(1))];
    let salt = (size_of::<T>() as u64) << 8 | size_of::<I>() as u64;
    let mut through_strided = 0;
    for i in 0..(KINDS.len() * KINDS.len()) {
        let seed = tag << 32 | salt << 16 | i as u64;
        let mut rng = Rng::new(seed);
        let case = make(&mut rng);
        let kinds = (KINDS[i % KINDS.len()], KINDS[i / KINDS.len()]);
        let api = APIS[(i + i / KINDS.len()) % APIS.len()];
        let (failed, strided) = check_case::<T, I>(seed, &case, kinds, api, 0, &one);
        assert!(!failed, "seed {seed}: valid indices failed: {case:?}");
        through_strided += usize::from(strided);
    }
    // Most pairs of layouts must reach the strided traversal (not both views row-major: 9 of
    // the 81 pairs are row-major by design, scalar indices always are, and a random shape may
    // make a layout row-major).
    assert!(
        through_strided >= 45,
        "only {through_strided} of 81 cases took the strided traversal"
    );
}

#[test]
fn gather_elements_strided_equals_dense_on_materialized_views() {
    for_each_type!(equivalence(elements_case, 1));
}

#[test]
fn gather_nd_strided_equals_dense_on_materialized_views() {
    for_each_type!(equivalence(nd_case, 2));
}

#[test]
fn gather_strided_equals_dense_on_materialized_views() {
    for_each_type!(equivalence(gather_case, 3));
}

/// Bad index values (1 to 3, at random positions, so also at broadcast elements read at many
/// positions), with 1 and 2 threads and the host pools: the dense call's status and message.
fn bad_indices<T: Sample, I: Idx>(make: fn(&mut Rng) -> Case, tag: u64, empty_output: bool) {
    let execs = executors(&[1, 2]);
    let salt = (size_of::<T>() as u64) << 8 | size_of::<I>() as u64;
    for i in 0..40usize {
        let seed = tag << 40 | salt << 16 | i as u64;
        let mut rng = Rng::new(seed);
        let mut case = make(&mut rng);
        if empty_output {
            case = with_empty_output(&mut rng, case);
        }
        let kinds = (
            KINDS[rng.below(KINDS.len() as u64) as usize],
            KINDS[i % KINDS.len()],
        );
        let api = APIS[i % APIS.len()];
        let bad = 1 + rng.below(3) as usize;
        let (failed, _) = check_case::<T, I>(seed, &case, kinds, api, bad, &execs);
        if count(&case.indices_shape) > 0 {
            assert!(failed, "seed {seed}: {bad} bad values passed: {case:?}");
        }
    }
}

#[test]
fn bad_indices_give_the_dense_message_for_every_operator() {
    for_each_type!(bad_indices(elements_case, 11, false));
    for_each_type!(bad_indices(nd_case, 12, false));
    for_each_type!(bad_indices(gather_case, 13, false));
}

#[test]
fn bad_indices_are_found_when_the_output_has_no_elements() {
    for_each_type!(bad_indices(nd_case, 14, true));
    for_each_type!(bad_indices(gather_case, 15, true));
}

/// Empty outputs, by hand: the index values are still checked, in every layout of the indices,
/// and the first bad one is the dense call's.
#[test]
fn empty_outputs_still_check_their_index_values() {
    let cases = [
        // Gather with a zero-size dimension after the axis, and before it.
        (
            Op::Gather {
                axis: 0,
                batch_dims: 0,
            },
            vec![3, 0],
            vec![4, 2],
            Options::onnx(0),
        ),
        (
            Op::Gather {
                axis: 1,
                batch_dims: 0,
            },
            vec![0, 5],
            vec![6],
            Options::onnx(0),
        ),
        (
            Op::Gather {
                axis: -2,
                batch_dims: 1,
            },
            vec![2, 4, 0],
            vec![2, 3],
            Options::openvino(8),
        ),
        // GatherND with an empty slice, with and without batch dimensions.
        (
            Op::Nd { batch_dims: 0 },
            vec![5, 0],
            vec![3, 1],
            Options::onnx(0),
        ),
        (
            Op::Nd { batch_dims: 0 },
            vec![4, 3, 0, 2],
            vec![2, 3, 2],
            Options::onnx(0),
        ),
        (
            Op::Nd { batch_dims: 1 },
            vec![2, 3, 0],
            vec![2, 4, 1],
            Options::openvino(5),
        ),
    ];
    let execs = executors(&[1, 2]);
    for (n, (op, data_shape, indices_shape, options)) in cases.into_iter().enumerate() {
        let case = Case {
            op,
            options,
            data_shape,
            indices_shape,
        };
        for (k, &kind) in KINDS.iter().enumerate() {
            let seed = 900 + (n * KINDS.len() + k) as u64;
            let (failed, _) = check_case::<f32, i64>(
                seed,
                &case,
                (Kind::Mixed, kind),
                APIS[k % APIS.len()],
                2,
                &execs,
            );
            assert!(failed, "{case:?} {kind:?}: bad values passed");
            // And valid values pass.
            let (failed, _) = check_case::<u8, i32>(
                seed,
                &case,
                (Kind::Negative, kind),
                APIS[(k + 1) % APIS.len()],
                0,
                &execs,
            );
            assert!(!failed, "{case:?} {kind:?}: valid values failed");
        }
    }
}

/// A Gather whose output is empty through a huge dimension: only the two index values need
/// checking. The call runs on a thread of its own so that a walk over the 2^40 outer positions
/// fails the test instead of hanging the suite.
#[test]
fn an_empty_strided_output_costs_no_more_than_checking_its_indices() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let data: [f32; 0] = [];
        let indices = [7i64, -3, 2];
        let run = |idx: [i64; 3]| {
            let mut out: [f32; 0] = [];
            gather_strided(
                StridedRef::new(&[1 << 40, 3, 0], &[5, -1, 1 << 50], &data),
                // [2, -3] read backwards from element 2: values 2, -3.
                StridedRef::new(&[2], &[-1], &idx).with_origin(2),
                1,
                0,
                TensorMut::new(&[1 << 40, 2, 0], &mut out),
                &Options::default(),
            )
        };
        let ok = run(indices);
        let bad = run([7, 3, 2]);
        let nd = {
            let mut out: [f32; 0] = [];
            gather_nd_strided(
                StridedRef::new(&[3, 1 << 40, 0], &[0, 0, 0], &data),
                StridedRef::new(&[2, 1], &[-1, 99], &[1i32, 5]).with_origin(1),
                0,
                TensorMut::new(&[2, 1 << 40, 0], &mut out),
                &Options::default(),
            )
        };
        let _ = tx.send((ok, bad, nd));
    });
    let (ok, bad, nd) = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("an empty strided gather still running after 20 s");
    ok.unwrap();
    let e = bad.unwrap_err();
    assert_eq!(e.status(), Status::IndexOutOfBounds);
    assert_eq!(
        e.message(),
        "Gather-13: indices[1] = 3 is out of range; allowed is [-3, 2] for data.shape[1] = 3"
    );
    let e = nd.unwrap_err();
    assert_eq!(e.status(), Status::IndexOutOfBounds);
    assert!(
        e.message().contains("indices[0, 0]) = 5"),
        "{}",
        e.message()
    );
}

// ---------------------------------------------------------------------------------------------
// Hand-made layouts: exact values
// ---------------------------------------------------------------------------------------------

#[test]
fn small_layouts_give_the_values_the_spec_defines() {
    // GatherElements on the transpose of a row-major [3, 2] buffer, the index broadcast along
    // the second dimension and read backwards: out[i][j] = dataᵀ[index[i]][j].
    let buffer = [1i32, 2, 3, 4, 5, 6]; // dataᵀ = [[1, 3, 5], [2, 4, 6]]
    let index = [9i64, 0, -1, 9]; // index[0] = -1, index[1] = 0 (origin 2, stride -1)
    let mut out = [0i32; 6];
    gather_elements_strided(
        StridedRef::new(&[2, 3], &[1, 2], &buffer),
        StridedRef::new(&[2, 3], &[-1, 0], &index).with_origin(2),
        0,
        TensorMut::new(&[2, 3], &mut out),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(out, [2, 4, 6, 1, 3, 5]);

    // GatherND on data read backwards in both dimensions: data = [[6, 5, 4], [3, 2, 1]].
    let mut out = [0i32; 2];
    gather_nd_strided(
        StridedRef::new(&[2, 3], &[-3, -1], &buffer).with_origin(5),
        StridedRef::new(&[2, 2], &[2, 1], &[0i32, 2, -1, 0]),
        0,
        TensorMut::new(&[2], &mut out),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(out, [4, 3]);

    // Gather along axis 1 of a stepped view (every other column: [[1, 3], [4, 6]] of a [2, 3]
    // buffer seen as [2, 2] with strides [3, 2]), scalar index -1.
    let mut out = [0i32; 2];
    gather_strided(
        StridedRef::new(&[2, 2], &[3, 2], &buffer),
        StridedRef::new(&[], &[], &[-1i64]),
        1,
        0,
        TensorMut::new(&[2], &mut out),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(out, [3, 6]);

    // Data broadcast along its rows (stride 0): every row is [1, 2, 3]; indices [2, -3].
    let mut out = [0i32; 8];
    gather_strided(
        StridedRef::new(&[4, 3], &[0, 1], &buffer),
        StridedRef::new(&[2], &[1], &[2i32, -3]),
        1,
        0,
        TensorMut::new(&[4, 2], &mut out),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(out, [3, 1, 3, 1, 3, 1, 3, 1]);
}

// ---------------------------------------------------------------------------------------------
// Threads: large calls split across tasks
// ---------------------------------------------------------------------------------------------

/// A host parallel-for that records the most tasks one call asked for (in `*host`, an
/// AtomicUsize) and runs them serially, last first.
unsafe extern "C" fn counting_reverse(host: *mut c_void, n: usize, task: TaskFn, ctx: *mut c_void) {
    // SAFETY: the tests pass a pointer to an AtomicUsize that outlives the options.
    let most = unsafe { &*host.cast::<AtomicUsize>() };
    most.fetch_max(n, Ordering::Relaxed);
    for i in (0..n).rev() {
        // SAFETY: the parallel-for contract: each task once, with its context.
        unsafe { task(ctx, i) };
    }
}

/// The executors of the thread tests: 1 and 2 threads of gatherkit's pool, the two host pools of
/// `common/hosts.rs`, and a counting host (concurrency 4) whose count `most` says whether the
/// work was split.
fn thread_executors(most: &AtomicUsize) -> Vec<(String, Options)> {
    let mut all = executors(&[1, 2]);
    // SAFETY: `counting_reverse` runs every task once and returns after all have finished; its
    // context outlives every call made with these options (the caller keeps `most` alive).
    let host = unsafe {
        ParallelFor::new(
            counting_reverse,
            (most as *const AtomicUsize).cast_mut().cast(),
            4,
        )
    };
    all.push((
        "counting host".to_string(),
        Options::default().with_parallel_for(host),
    ));
    all
}

/// A large call through the strided functions (and the plan's uninit and byte forms, and the C
/// ABI at 2 threads) with every executor: the dense call's bits on the materialized views, or
/// its message. Checks that the counting host was asked for more than one task.
fn check_large<T: Element, I: Idx>(
    name: &str,
    case: &Case,
    data: View<'_, T>,
    indices: View<'_, I>,
) -> Outcome {
    let dense_data = materialize(data.buf, data.shape, data.layout);
    let dense_indices = materialize(indices.buf, indices.shape, indices.layout);
    let expected = outcome(
        case.dense(&dense_data, &dense_indices, &case.options.with_threads(1))
            .map(|(_, out)| out),
    );
    let out_shape = case.output_shape::<T, I>();
    let most = AtomicUsize::new(0);
    for (i, (label, exec)) in thread_executors(&most).into_iter().enumerate() {
        let options = merged(&case.options, &exec);
        let api = [Api::Function, Api::PlanUninit, Api::PlanBytes, Api::Dyn][i % 4];
        let mut out: Vec<T> = vec![dense_data.first().copied().unwrap(); count(&out_shape)];
        let got = strided_call(api, case, &options, data, indices, &out_shape, &mut out)
            .map(|()| bytes_of(&out).to_vec());
        match (&expected, &got) {
            (Ok(want), Ok(got)) => assert!(want == got, "{name}, {label}: the outputs differ"),
            _ => assert_eq!(got, expected, "{name}, {label}"),
        }
    }
    assert!(
        most.load(Ordering::Relaxed) >= 2,
        "{name}: the call was not split ({} tasks)",
        most.load(Ordering::Relaxed)
    );
    let mut out: Vec<T> = vec![dense_data[0]; count(&out_shape)];
    let got = strided_call(
        Api::C,
        case,
        &merged(&case.options, &Options::default().with_threads(2)),
        data,
        indices,
        &out_shape,
        &mut out,
    )
    .map(|()| bytes_of(&out).to_vec());
    assert!(got == expected, "{name}, C ABI at 2 threads");
    expected
}

fn at<'a, T>(shape: &'a [usize], layout: &'a Layout, buf: &'a [T]) -> View<'a, T> {
    View { shape, layout, buf }
}

fn random_data(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| f32::sample(rng.next_u64())).collect()
}

/// GatherElements along axis 0 of [N, 128] f32 with one index per row broadcast along the row
/// (indices [N, 128], strides [1, 0]): 8 MiB of output in rows copied whole. Then bad values in
/// a late and an early row: the early one is reported, at the row's first column, whatever the
/// split (a chunk that starts inside the early row meets the value at a later column).
#[test]
fn broadcast_index_rows_split_across_threads() {
    let (n, w) = (16384usize, 128usize);
    let mut rng = Rng::new(41);
    let data = random_data(&mut rng, n * w);
    let case = Case {
        op: Op::Elements { axis: 0 },
        options: Options::onnx(0),
        data_shape: vec![n, w],
        indices_shape: vec![n, w],
    };
    let dense = Layout {
        strides: vec![w as isize, 1],
        origin: 0,
        len: n * w,
    };
    let rows = Layout {
        strides: vec![1, 0],
        origin: 0,
        len: n,
    };
    let mut index: Vec<i64> = (0..n).map(|_| rng.index(n)).collect();
    let data_view = View {
        shape: &case.data_shape,
        layout: &dense,
        buf: &data,
    };
    check_large(
        "broadcast rows",
        &case,
        data_view,
        at(&case.indices_shape, &rows, &index),
    )
    .unwrap();
    let index32: Vec<i32> = index.iter().map(|&v| v as i32).collect();
    let view32 = View {
        shape: &case.indices_shape,
        layout: &rows,
        buf: &index32,
    };
    check_large("broadcast rows, int32", &case, data_view, view32).unwrap();

    // The chunks of 2 and of 4 tasks start at rows n/2 and n/4, 3n/4: put the early bad value
    // in the row a chunk starts in, the late one in the first row of the last chunk. The chunks
    // of 3 tasks start inside rows (a third of n * w elements is not a whole number of rows):
    // the later chunk meets the early value at a column > 0, the earlier one at column 0.
    let third = (n * w).div_ceil(3) / w;
    assert_ne!((n * w).div_ceil(3) % w, 0);
    for early in [n / 4 - 1, n / 4, n / 2, n / 2 + 1, third, 2 * third] {
        index[3 * n / 4] = n as i64;
        index[early] = -(n as i64) - 1;
        let e = check_large(
            "broadcast rows, bad",
            &case,
            data_view,
            at(&case.indices_shape, &rows, &index),
        )
        .unwrap_err();
        assert_eq!(
            e,
            (
                Status::IndexOutOfBounds,
                format!(
                    "GatherElements-13: indices[{early}, 0] = {} is out of range; allowed is [-{n}, {}] for data.shape[0] = {n}",
                    -(n as i64) - 1,
                    n - 1
                )
            )
        );
        index[early] = 0;
    }
}

/// A transposed data view (the transpose of a row-major [1024, 2048] buffer) read by
/// GatherElements along both axes and by Gather along axis 1 with a reversed index view.
#[test]
fn transposed_data_splits_across_threads() {
    let (rows, cols) = (1024usize, 2048usize);
    let mut rng = Rng::new(42);
    let buffer = random_data(&mut rng, rows * cols);
    let transposed = Layout {
        strides: vec![1, cols as isize],
        origin: 0,
        len: rows * cols,
    };
    let data_shape = vec![cols, rows];
    let data = View {
        shape: &data_shape,
        layout: &transposed,
        buf: &buffer,
    };
    for axis in [0i64, 1, -1] {
        let (m, k) = if axis == 0 { (700, rows) } else { (cols, 600) };
        let indices_shape = vec![m, k];
        let size = data_shape[axis.rem_euclid(2) as usize];
        let mut index: Vec<i64> = (0..m * k).map(|_| rng.index(size)).collect();
        let case = Case {
            op: Op::Elements { axis },
            options: Options::onnx(0),
            data_shape: data_shape.clone(),
            indices_shape: indices_shape.clone(),
        };
        let dense = Layout {
            strides: vec![k as isize, 1],
            origin: 0,
            len: m * k,
        };
        let name = format!("transposed data, GatherElements axis {axis}");
        check_large(&name, &case, data, at(&case.indices_shape, &dense, &index)).unwrap();
        index[m * k - 5] = size as i64;
        index[m * k / 2 + 3] = -(size as i64) - 7;
        check_large(&name, &case, data, at(&case.indices_shape, &dense, &index)).unwrap_err();
    }

    let n_idx = 600usize;
    let mut index: Vec<i32> = (0..n_idx).map(|_| rng.index(rows) as i32).collect();
    let case = Case {
        op: Op::Gather {
            axis: 1,
            batch_dims: 0,
        },
        options: Options::onnx(0),
        data_shape: data_shape.clone(),
        indices_shape: vec![n_idx],
    };
    let reversed = Layout {
        strides: vec![-1],
        origin: n_idx - 1,
        len: n_idx,
    };
    check_large(
        "transposed data, Gather",
        &case,
        data,
        at(&case.indices_shape, &reversed, &index),
    )
    .unwrap();
    // Logical positions 100 and 450 (buffer elements 499 and 149): 100 is reported, by every
    // chunk of every split (each outer position reads all the indices).
    index[n_idx - 1 - 450] = rows as i32;
    index[n_idx - 1 - 100] = -(rows as i32) - 1;
    let e = check_large(
        "transposed data, Gather, bad",
        &case,
        data,
        at(&case.indices_shape, &reversed, &index),
    )
    .unwrap_err();
    assert_eq!(
        e,
        (
            Status::IndexOutOfBounds,
            "Gather-13: indices[100] = -1025 is out of range; allowed is [-1024, 1023] for data.shape[1] = 1024"
                .to_string()
        )
    );
}

/// GatherND from data read backwards in both dimensions, tuples from a transposed index view;
/// and Gather rows (embedding lookups) into an output of more than 16 MiB from a reversed index
/// view, which streams the copies.
#[test]
fn reversed_views_and_streamed_rows_split_across_threads() {
    let mut rng = Rng::new(43);
    let (rows, len) = (4096usize, 256usize);
    let buffer = random_data(&mut rng, rows * len);
    let backwards = Layout {
        strides: vec![-(len as isize), -1],
        origin: rows * len - 1,
        len: rows * len,
    };
    let data_shape = vec![rows, len];
    let data = View {
        shape: &data_shape,
        layout: &backwards,
        buf: &buffer,
    };
    // Element tuples [131072, 2] stored as [2, 131072] (the transpose): data[t0, t1].
    let pairs = 1usize << 17;
    let pair_index: Vec<i64> = (0..2 * pairs)
        .map(|p| rng.index(if p < pairs { rows } else { len }))
        .collect();
    let case = Case {
        op: Op::Nd { batch_dims: 0 },
        options: Options::onnx(0),
        data_shape: data_shape.clone(),
        indices_shape: vec![pairs, 2],
    };
    let transposed = Layout {
        strides: vec![1, pairs as isize],
        origin: 0,
        len: 2 * pairs,
    };
    let pair_view = View {
        shape: &case.indices_shape,
        layout: &transposed,
        buf: &pair_index,
    };
    check_large("reversed data, GatherND elements", &case, data, pair_view).unwrap();
    // Row tuples [8192, 1] (the component's stride 0: it has size 1): 8 MiB of slices.
    let tuples = 8192usize;
    let mut index: Vec<i64> = (0..tuples).map(|_| rng.index(rows)).collect();
    let case_rows = Case {
        indices_shape: vec![tuples, 1],
        ..case.clone()
    };
    let one = Layout {
        strides: vec![1, 0],
        origin: 0,
        len: tuples,
    };
    let row_view = View {
        shape: &case_rows.indices_shape,
        layout: &one,
        buf: &index,
    };
    check_large("reversed data, GatherND rows", &case_rows, data, row_view).unwrap();
    index[tuples - 2] = rows as i64;
    index[tuples / 3] = 5 * rows as i64;
    let row_view = View {
        shape: &case_rows.indices_shape,
        layout: &one,
        buf: &index,
    };
    let e = check_large(
        "reversed data, GatherND rows, bad",
        &case_rows,
        data,
        row_view,
    );
    assert!(
        e.unwrap_err()
            .1
            .contains(&format!("indices[{}, 0]) = {}", tuples / 3, 5 * rows)),
        "GatherND first bad tuple"
    );

    // Streamed: [1000, 128] f32 rows (512 bytes) by 32771 indices read backwards: 16 MiB + 1.5 KiB.
    let (n_rows, width, n_idx) = (1000usize, 128usize, 32771usize);
    let table = random_data(&mut rng, n_rows * width);
    let dense = Layout {
        strides: vec![width as isize, 1],
        origin: 0,
        len: n_rows * width,
    };
    let table_shape = vec![n_rows, width];
    let mut index: Vec<i64> = (0..n_idx + 3).map(|_| rng.index(n_rows)).collect();
    let case = Case {
        op: Op::Gather {
            axis: 0,
            batch_dims: 0,
        },
        options: Options::onnx(0),
        data_shape: table_shape.clone(),
        indices_shape: vec![n_idx],
    };
    let reversed = Layout {
        strides: vec![-1],
        origin: n_idx + 1,
        len: n_idx + 3,
    };
    let table_view = View {
        shape: &table_shape,
        layout: &dense,
        buf: &table,
    };
    check_large(
        "streamed Gather rows",
        &case,
        table_view,
        at(&case.indices_shape, &reversed, &index),
    )
    .unwrap();
    // Positions 20000 and 17 (buffer elements origin - p).
    index[n_idx + 1 - 20000] = -1001;
    index[n_idx + 1 - 17] = 1000;
    let e = check_large(
        "streamed Gather rows, bad",
        &case,
        table_view,
        at(&case.indices_shape, &reversed, &index),
    );
    assert!(
        e.unwrap_err().1.contains("indices[17] = 1000"),
        "Gather first bad index"
    );
}

/// Negative strides on both inputs at once, with stepped (gapped) data: GatherElements along
/// the middle axis of [64, 256, 64] f64.
#[test]
fn negative_and_stepped_views_split_across_threads() {
    let mut rng = Rng::new(44);
    let shape = vec![64usize, 256, 64];
    let data_layout = layout(&mut rng, &shape, Kind::Stepped);
    let data_layout = Layout {
        strides: data_layout.strides.iter().map(|&s| -s).collect(),
        origin: data_layout.len - 1,
        len: data_layout.len,
    };
    let buffer: Vec<f64> = (0..data_layout.len)
        .map(|_| f64::sample(rng.next_u64()))
        .collect();
    let indices_shape = vec![64usize, 40, 64];
    let index_layout = layout(&mut rng, &indices_shape, Kind::Negative);
    let case = Case {
        op: Op::Elements { axis: -2 },
        options: Options::openvino(0),
        data_shape: shape.clone(),
        indices_shape: indices_shape.clone(),
    };
    let mut index: Vec<i64> = fill_indices(&mut rng, &case, &index_layout, &[]);
    let data = View {
        shape: &shape,
        layout: &data_layout,
        buf: &buffer,
    };
    check_large(
        "negative and stepped",
        &case,
        data,
        at(&case.indices_shape, &index_layout, &index),
    )
    .unwrap();
    let (late, early) = (count(&indices_shape) - 100, count(&indices_shape) / 2 + 1);
    let late_at = offset_of(&indices_shape, &index_layout, late);
    let early_at = offset_of(&indices_shape, &index_layout, early);
    index[late_at] = 256;
    index[early_at] = -257;
    let e = check_large(
        "negative and stepped, bad",
        &case,
        data,
        at(&case.indices_shape, &index_layout, &index),
    )
    .unwrap_err();
    let c = coords(early, &indices_shape);
    assert!(
        e.1.contains(&format!("indices[{}, {}, {}] = -257", c[0], c[1], c[2])),
        "{}",
        e.1
    );
}

// ---------------------------------------------------------------------------------------------
// Step 9 for views: InvalidArgument, naming the input
// ---------------------------------------------------------------------------------------------

const SENTINEL: f32 = -12345.5;

/// The buffer of a [2, 3] f32 data view and a [2, 3] int64 index view (axis 1 values).
fn small_inputs() -> (Vec<f32>, Vec<i64>) {
    ((0..6).map(|x| x as f32).collect(), vec![0, 2, -1, 1, 0, -3])
}

fn expect_error(result: Result<(), Error>, status: Status, message: &str, out: &[f32]) {
    let e = result.expect_err(message);
    assert_eq!((e.status(), e.message()), (status, message));
    assert!(
        out.iter().all(|&v| v == SENTINEL),
        "{message}: output written before the error"
    );
}

#[test]
fn views_need_one_stride_per_dimension() {
    let (data, index) = small_inputs();
    let mut out = [SENTINEL; 6];
    let shape = [2usize, 3];
    let run = |d: &[isize], i: &[isize], out: &mut [f32]| {
        gather_elements_strided(
            StridedRef::new(&shape, d, &data),
            StridedRef::new(&shape, i, &index),
            1,
            TensorMut::new(&shape, out),
            &Options::default(),
        )
    };
    expect_error(
        run(&[1], &[3, 1], &mut out),
        Status::InvalidArgument,
        "data has 1 strides for rank 2; give one per dimension",
        &out,
    );
    expect_error(
        run(&[3, 1], &[3, 1, 1], &mut out),
        Status::InvalidArgument,
        "indices has 3 strides for rank 2; give one per dimension",
        &out,
    );
    expect_error(
        run(&[], &[], &mut out),
        Status::InvalidArgument,
        "data has 0 strides for rank 2; give one per dimension",
        &out,
    );
    // Also for a view without elements, and for scalar indices given a stride.
    let e = gather_strided(
        StridedRef::new(&[2, 0], &[1], &[] as &[f32]),
        StridedRef::new(&[1], &[1], &[0i64]),
        0,
        0,
        TensorMut::new(&[1, 0], &mut []),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(
        (e.status(), e.message()),
        (
            Status::InvalidArgument,
            "data has 1 strides for rank 2; give one per dimension"
        )
    );
    let mut out2 = [SENTINEL; 3];
    expect_error(
        gather_strided(
            StridedRef::new(&shape, &[3, 1], &data),
            StridedRef::new(&[], &[1], &[0i64]),
            0,
            0,
            TensorMut::new(&[3], &mut out2),
            &Options::default(),
        ),
        Status::InvalidArgument,
        "indices has 1 strides for rank 0; give one per dimension",
        &out2,
    );
    // Through the byte form and a plan too.
    let e = gather_nd_strided_dyn(
        DynStridedRef::new(DType::Float, &shape, &[3, 1, 0], bytes_of(&data)),
        DynStridedRef::new(DType::Int64, &[3, 1], &[1, 1], bytes_of(&[0i64, 1, 0])),
        0,
        DynTensorMut::new(DType::Float, &[3, 3], bytes_of_mut(&mut [0f32; 9])),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(
        (e.status(), e.message()),
        (
            Status::InvalidArgument,
            "data has 3 strides for rank 2; give one per dimension"
        )
    );
}

#[test]
fn views_must_reach_only_elements_of_their_buffer() {
    let (data, index) = small_inputs();
    let shape = [2usize, 3];
    let dense_index = StridedRef::new(&shape, &[3, 1], &index);
    let run = |d: StridedRef<'_, f32>, i: StridedRef<'_, i64>, out: &mut [f32]| {
        gather_elements_strided(d, i, 1, TensorMut::new(&shape, out), &Options::default())
    };
    let mut out = [SENTINEL; 6];
    let rows: [(StridedRef<'_, f32>, &str); 7] = [
        // One element past the end.
        (
            StridedRef::new(&shape, &[3, 1], &data).with_origin(1),
            "data view (shape [2, 3], strides [3, 1], element [0, ...] at 1) reaches elements 1 to 6, but its buffer holds 6",
        ),
        // A gap too many.
        (
            StridedRef::new(&shape, &[4, 1], &data),
            "data view (shape [2, 3], strides [4, 1], element [0, ...] at 0) reaches elements 0 to 6, but its buffer holds 6",
        ),
        // Negative strides with the origin one element short of the far end: below element 0.
        (
            StridedRef::new(&shape, &[-3, -1], &data).with_origin(4),
            "data view (shape [2, 3], strides [-3, -1], element [0, ...] at 4) reaches elements -1 to 4, but its buffer holds 6",
        ),
        // Negative strides with no origin at all.
        (
            StridedRef::new(&shape, &[1, -2], &data),
            "data view (shape [2, 3], strides [1, -2], element [0, ...] at 0) reaches elements -4 to 1, but its buffer holds 6",
        ),
        // A stride as large as they come: its reach does not wrap around.
        (
            StridedRef::new(&shape, &[isize::MAX, 1], &data),
            "data view (shape [2, 3], strides [9223372036854775807, 1], element [0, ...] at 0) reaches elements 0 to 9223372036854775809, but its buffer holds 6",
        ),
        // An origin as large as they come.
        (
            StridedRef::new(&shape, &[0, -1], &data).with_origin(usize::MAX),
            "data view (shape [2, 3], strides [0, -1], element [0, ...] at 18446744073709551615) reaches elements 18446744073709551613 to 18446744073709551615, but its buffer holds 6",
        ),
        // A broadcast of an empty buffer.
        (
            StridedRef::new(&shape, &[0, 0], &[] as &[f32]),
            "data view (shape [2, 3], strides [0, 0], element [0, ...] at 0) reaches elements 0 to 0, but its buffer holds 0",
        ),
    ];
    for (view, message) in rows {
        expect_error(
            run(view, dense_index, &mut out),
            Status::InvalidArgument,
            message,
            &out,
        );
    }
    let d = StridedRef::new(&shape, &[3, 1], &data);
    expect_error(
        run(d, StridedRef::new(&shape, &[-1, 2], &index), &mut out),
        Status::InvalidArgument,
        "indices view (shape [2, 3], strides [-1, 2], element [0, ...] at 0) reaches elements -1 to 4, but its buffer holds 6",
        &out,
    );
    expect_error(
        run(d, StridedRef::new(&shape, &[-1, 2], &index[..5]).with_origin(1), &mut out),
        Status::InvalidArgument,
        "indices view (shape [2, 3], strides [-1, 2], element [0, ...] at 1) reaches elements 0 to 5, but its buffer holds 5",
        &out,
    );

    // What they may do: reach exactly their buffer's ends, broadcast one element, or reach
    // nothing at all (any strides and origin along a dimension of size 0, or of size 1).
    run(
        StridedRef::new(&shape, &[-3, -1], &data).with_origin(5),
        StridedRef::new(&shape, &[1, 0], &[2i64, 0]),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [3.0, 3.0, 3.0, 2.0, 2.0, 2.0]);
    run(
        StridedRef::new(&shape, &[0, 0], &data[4..5]),
        dense_index,
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [4.0; 6]);
    gather_elements_strided(
        StridedRef::new(&[2, 1, 3], &[3, isize::MIN, 1], &data),
        StridedRef::new(&[2, 1, 0], &[isize::MAX, 7, -9], &[] as &[i32]).with_origin(99),
        2,
        TensorMut::new(&[2, 1, 0], &mut []),
        &Options::default(),
    )
    .unwrap();
}

#[test]
fn plans_refuse_views_of_another_shape_or_dtype() {
    let (data, index) = small_inputs();
    let desc = |dtype, shape| TensorDesc::new(dtype, shape);
    let options = Options::default();
    let plan = GatherElements::new(
        desc(DType::Float, &[2, 3]),
        desc(DType::Int64, &[2, 3]),
        1,
        &options,
    )
    .unwrap();
    let mut out = [SENTINEL; 6];
    expect_error(
        plan.run_strided(
            StridedRef::new(&[3, 2], &[2, 1], &data),
            StridedRef::new(&[2, 3], &[3, 1], &index),
            &mut out,
        ),
        Status::InvalidArgument,
        "data view has shape [3, 2] but the plan was made for [2, 3]",
        &out,
    );
    expect_error(
        plan.run_strided(
            StridedRef::new(&[2, 3], &[3, 1], &data),
            StridedRef::new(&[2, 2], &[2, 1], &index),
            &mut out,
        ),
        Status::InvalidArgument,
        "indices view has shape [2, 2] but the plan was made for [2, 3]",
        &out,
    );
    expect_error(
        plan.run_strided_bytes(
            DynStridedRef::new(DType::Int32, &[2, 3], &[3, 1], bytes_of(&data)),
            DynStridedRef::new(DType::Int64, &[2, 3], &[3, 1], bytes_of(&index)),
            bytes_of_mut(&mut out),
        ),
        Status::InvalidArgument,
        "data view has dtype int32 but the plan was made for float",
        &out,
    );
    let index32 = [0i32, 1, 2, 0, 1, 2];
    expect_error(
        plan.run_strided_bytes(
            DynStridedRef::new(DType::Float, &[2, 3], &[3, 1], bytes_of(&data)),
            DynStridedRef::new(DType::Int32, &[2, 3], &[3, 1], bytes_of(&index32)),
            bytes_of_mut(&mut out),
        ),
        Status::InvalidArgument,
        "indices view has dtype int32 but the plan was made for int64",
        &out,
    );
    // A typed call of other element types is refused as for dense runs.
    let e = plan
        .run_strided(
            StridedRef::new(&[2, 3], &[3, 1], &index32),
            StridedRef::new(&[2, 3], &[3, 1], &index),
            &mut [0i32; 6],
        )
        .unwrap_err();
    let dense = plan.run(&index32, &index, &mut [0i32; 6]).unwrap_err();
    assert_eq!((e.status(), e.message()), (dense.status(), dense.message()));

    // GatherND and Gather plans alike.
    let nd = GatherNd::new(
        desc(DType::Float, &[2, 3]),
        desc(DType::Int64, &[2, 1]),
        0,
        &options,
    )
    .unwrap();
    expect_error(
        nd.run_strided(
            StridedRef::new(&[2, 3], &[3, 1], &data),
            StridedRef::new(&[1, 2], &[2, 1], &index),
            &mut out,
        ),
        Status::InvalidArgument,
        "indices view has shape [1, 2] but the plan was made for [2, 1]",
        &out,
    );
    let g = Gather::new(
        desc(DType::Float, &[2, 3]),
        desc(DType::Int64, &[]),
        1,
        0,
        &options,
    )
    .unwrap();
    let mut out2 = [SENTINEL; 2];
    expect_error(
        g.run_strided_uninit(
            StridedRef::new(&[6], &[1], &data),
            StridedRef::new(&[], &[], &index),
            // SAFETY: f32 and MaybeUninit<f32> have the same layout; nothing uninitialized is
            // written through this view.
            unsafe { &mut *(&mut out2[..] as *mut [f32] as *mut [MaybeUninit<f32>]) },
        ),
        Status::InvalidArgument,
        "data view has shape [6] but the plan was made for [2, 3]",
        &out2,
    );
    // The right shapes then run.
    g.run_strided(
        StridedRef::new(&[2, 3], &[1, 2], &data),
        StridedRef::new(&[], &[], &index[2..]),
        &mut out2,
    )
    .unwrap();
    assert_eq!(out2, [4.0, 5.0]);
}

#[test]
fn misaligned_and_ragged_byte_buffers_are_refused() {
    let (data, index) = small_inputs();
    // Word buffers, viewed one byte in: misaligned for 4- and 8-byte elements.
    let data_words: Vec<u64> = vec![0; 4];
    let index_words: Vec<u64> = vec![0; 8];
    let data_bytes = &bytes_of(&data_words)[1..25];
    let index_bytes = &bytes_of(&index_words)[1..49];
    let shape = [2usize, 3];
    let mut out = [SENTINEL; 6];
    let run = |d: &[u8], i: &[u8], out: &mut [f32]| {
        gather_elements_strided_dyn(
            DynStridedRef::new(DType::Float, &shape, &[3, 1], d),
            DynStridedRef::new(DType::Int64, &shape, &[-3, 1], i).with_origin(3),
            1,
            DynTensorMut::new(DType::Float, &shape, bytes_of_mut(out)),
            &Options::default(),
        )
    };
    let e = run(data_bytes, bytes_of(&index), &mut out).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert_eq!(
        e.message(),
        format!(
            "data pointer {:#x} is not aligned to 4 bytes as float elements need",
            data_bytes.as_ptr() as usize
        )
    );
    let e = run(bytes_of(&data), index_bytes, &mut out).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert_eq!(
        e.message(),
        format!(
            "indices pointer {:#x} is not aligned to 8 bytes as int64 elements need",
            index_bytes.as_ptr() as usize
        )
    );
    assert!(out.iter().all(|&v| v == SENTINEL));
    expect_error(
        run(&bytes_of(&data)[..23], bytes_of(&index), &mut out),
        Status::InvalidArgument,
        "data buffer holds 23 bytes, not a whole number of 4-byte float elements",
        &out,
    );
    expect_error(
        run(bytes_of(&data), &bytes_of(&index)[..47], &mut out),
        Status::InvalidArgument,
        "indices buffer holds 47 bytes, not a whole number of 8-byte int64 elements",
        &out,
    );
    // A misaligned output through the byte form.
    let mut out_words = [0u64; 4];
    let out_bytes = &mut bytes_of_mut(&mut out_words)[2..26];
    let address = out_bytes.as_ptr() as usize;
    let e = gather_elements_strided_dyn(
        DynStridedRef::new(DType::Float, &shape, &[3, 1], bytes_of(&data)),
        DynStridedRef::new(DType::Int64, &shape, &[3, 1], bytes_of(&index)),
        1,
        DynTensorMut::new(DType::Float, &shape, out_bytes),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(
        (e.status(), e.message().to_string()),
        (
            Status::InvalidArgument,
            format!("output pointer {address:#x} is not aligned to 4 bytes as float elements need")
        )
    );
    assert_eq!(out_words, [0; 4]);
}

#[test]
fn outputs_of_the_wrong_length_are_refused() {
    let (data, index) = small_inputs();
    let shape = [2usize, 3];
    let (d, i) = (
        StridedRef::new(&shape, &[1, 2], &data),
        StridedRef::new(&shape, &[3, 1], &index),
    );
    let mut out = [SENTINEL; 7];
    expect_error(
        gather_elements_strided(
            d,
            i,
            1,
            TensorMut::new(&shape, &mut out[..5]),
            &Options::default(),
        ),
        Status::InvalidArgument,
        "output buffer holds 20 bytes but its shape needs 24",
        &out,
    );
    let plan = GatherElements::new(
        d.desc(),
        TensorDesc::new(DType::Int64, &shape),
        1,
        &Options::default(),
    )
    .unwrap();
    expect_error(
        plan.run_strided(d, i, &mut out),
        Status::InvalidArgument,
        "output buffer holds 28 bytes but its shape needs 24",
        &out,
    );
    expect_error(
        plan.run_strided_bytes(
            DynStridedRef::new(DType::Float, &shape, &[1, 2], bytes_of(&data)),
            DynStridedRef::new(DType::Int64, &shape, &[3, 1], bytes_of(&index)),
            &mut bytes_of_mut(&mut out)[..25],
        ),
        Status::InvalidArgument,
        "output buffer holds 25 bytes but its shape needs 24",
        &out,
    );
    // The output's shape is step 8 (OutputMismatch), before the views.
    let e = gather_elements_strided(
        StridedRef::new(&shape, &[1], &data),
        i,
        1,
        TensorMut::new(&[3, 2], &mut out[..6]),
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::OutputMismatch, "{}", e.message());
    // With the right length, the call runs: out[i][j] = data[i][idx[i][j]] of
    // data = [[0, 2, 4], [1, 3, 5]] (the transposed view) and idx [[0, 2, -1], [1, 0, -3]].
    gather_elements_strided(
        d,
        i,
        1,
        TensorMut::new(&shape, &mut out[..6]),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(out, [0.0, 4.0, 4.0, 3.0, 1.0, 1.0, SENTINEL]);
}

// ---------------------------------------------------------------------------------------------
// The C ABI's shell
// ---------------------------------------------------------------------------------------------

fn c_opts(threads: usize) -> gk_options {
    gk_options {
        num_threads: threads,
        ..Default::default()
    }
}

/// The dense C entry point on row-major buffers: the oracle of the C tests.
fn c_dense_call<T: Element, I: Idx>(
    case: &Case,
    data: &[T],
    indices: &[I],
    out: &mut [T],
    options: &Options,
) -> Result<(), (Status, String)> {
    let ds: Vec<i64> = case.data_shape.iter().map(|&d| d as i64).collect();
    let is: Vec<i64> = case.indices_shape.iter().map(|&d| d as i64).collect();
    let os: Vec<i64> = case
        .output_shape::<T, I>()
        .iter()
        .map(|&d| d as i64)
        .collect();
    let d = gk_tensor {
        dtype: T::DTYPE.code(),
        rank: ds.len(),
        shape: ds.as_ptr(),
        data: data.as_ptr().cast(),
    };
    let i = gk_tensor {
        dtype: I::DTYPE.code(),
        rank: is.len(),
        shape: is.as_ptr(),
        data: indices.as_ptr().cast(),
    };
    let o = tensor_mut(T::DTYPE.code(), &os, out.as_mut_ptr().cast());
    let opts = c_options(options);
    // SAFETY: descriptors of live row-major buffers of exactly their shapes.
    let status = unsafe {
        match case.op {
            Op::Elements { axis } => gk_gather_elements(&d, &i, axis, &o, &opts),
            Op::Nd { batch_dims } => gk_gather_nd(&d, &i, batch_dims, &o, &opts),
            Op::Gather { axis, batch_dims } => gk_gather(&d, &i, axis, batch_dims, &o, &opts),
        }
    };
    match status {
        GK_STATUS_OK => Ok(()),
        code => Err((Status::from_code(code).unwrap(), last_error())),
    }
}

/// `[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]`.
fn table() -> Vec<f32> {
    (0..12).map(|x| x as f32).collect()
}

#[test]
fn c_null_strides_mean_row_major() {
    let data = table();
    let ds = [3i64, 4];
    let row_major = [4i64, 1];
    let idx = [2i64, -1, 0, 1, -3, 0, 2, 1];
    let opts = c_opts(1);
    let dense_d = gk_tensor {
        dtype: GK_DTYPE_FLOAT,
        rank: 2,
        shape: ds.as_ptr(),
        data: data.as_ptr().cast(),
    };
    // Each operator: the dense entry point, then NULL strides, then explicit row-major strides.
    type Call<'a> = &'a dyn Fn(&gk_strided_tensor, &gk_strided_tensor, &gk_tensor_mut) -> i32;
    let check = |is: &[i64],
                 os: &[i64],
                 dense: &dyn Fn(&gk_tensor, &gk_tensor_mut) -> i32,
                 strided: Call<'_>| {
        let n = count(os);
        let mut want = vec![SENTINEL; n];
        let i = gk_tensor {
            dtype: GK_DTYPE_INT64,
            rank: is.len(),
            shape: is.as_ptr(),
            data: idx.as_ptr().cast(),
        };
        assert_eq!(
            dense(
                &i,
                &tensor_mut(GK_DTYPE_FLOAT, os, want.as_mut_ptr().cast())
            ),
            GK_STATUS_OK,
            "{}",
            last_error()
        );
        let is_row_major: Vec<i64> = (0..is.len())
            .map(|d| is[d + 1..].iter().product())
            .collect();
        for explicit in [false, true] {
            let mut got = vec![SENTINEL; n];
            let d = strided_tensor(
                GK_DTYPE_FLOAT,
                &ds,
                explicit.then_some(&row_major[..]),
                data.as_ptr().cast(),
            );
            let i = strided_tensor(
                GK_DTYPE_INT64,
                is,
                explicit.then_some(&is_row_major[..]),
                idx.as_ptr().cast(),
            );
            let status = strided(
                &d,
                &i,
                &tensor_mut(GK_DTYPE_FLOAT, os, got.as_mut_ptr().cast()),
            );
            assert_eq!(status, GK_STATUS_OK, "{}", last_error());
            assert_eq!(got, want, "indices {is:?}, explicit strides {explicit}");
        }
    };
    check(
        &[2, 4],
        &[2, 4],
        // SAFETY: descriptors of live buffers of exactly their shapes.
        &|i, o| unsafe { gk_gather_elements(&dense_d, i, 0, o, &opts) },
        // SAFETY: as above, every view inside its buffer.
        &|d, i, o| unsafe { gk_gather_elements_strided(d, i, 0, o, &opts) },
    );
    check(
        &[4, 2],
        &[4],
        // SAFETY: as above.
        &|i, o| unsafe { gk_gather_nd(&dense_d, i, 0, o, &opts) },
        // SAFETY: as above.
        &|d, i, o| unsafe { gk_gather_nd_strided(d, i, 0, o, &opts) },
    );
    check(
        &[2, 2, 2],
        &[3, 2, 2, 2],
        // SAFETY: as above.
        &|i, o| unsafe { gk_gather(&dense_d, i, 1, 0, o, &opts) },
        // SAFETY: as above.
        &|d, i, o| unsafe { gk_gather_strided(d, i, 1, 0, o, &opts) },
    );
    // Scalar indices: shape and strides NULL (rank 0).
    check(
        &[],
        &[3],
        // SAFETY: as above.
        &|i, o| unsafe { gk_gather(&dense_d, i, -1, 0, o, &opts) },
        // SAFETY: as above.
        &|d, i, o| unsafe { gk_gather_strided(d, i, -1, 0, o, &opts) },
    );
}

/// A valid strided Gather through the C ABI (data [3, 4] transposed to [4, 3], indices [2]
/// reversed, axis 0: rows 3 and 0 of the transpose), which `fault` then breaks; returns the
/// status, the message and the output.
fn c_gather_with(
    fault: impl FnOnce(&mut gk_strided_tensor, &mut gk_strided_tensor, &mut gk_tensor_mut),
) -> (i32, String, [f32; 6]) {
    static DS: [i64; 2] = [4, 3];
    static DSTRIDES: [i64; 2] = [1, 4];
    static IS: [i64; 1] = [2];
    static ISTRIDES: [i64; 1] = [-1];
    static OS: [i64; 2] = [2, 3];
    let data = table();
    let idx = [0i64, -1];
    let mut out = [SENTINEL; 6];
    let mut d = strided_tensor(GK_DTYPE_FLOAT, &DS, Some(&DSTRIDES), data.as_ptr().cast());
    let mut i = strided_tensor(
        GK_DTYPE_INT64,
        &IS,
        Some(&ISTRIDES),
        idx[1..].as_ptr().cast(),
    );
    let mut o = tensor_mut(GK_DTYPE_FLOAT, &OS, out.as_mut_ptr().cast());
    fault(&mut d, &mut i, &mut o);
    // SAFETY: the descriptors point to live buffers or (where a fault says so) are NULL.
    let status = unsafe { gk_gather_strided(&d, &i, 0, 0, &o, &c_opts(2)) };
    (status, last_error(), out)
}

#[test]
fn c_a_valid_call_reads_views_where_they_are() {
    let (status, message, out) = c_gather_with(|_, _, _| {});
    assert_eq!(status, GK_STATUS_OK, "{message}");
    // Transpose rows 3 (= -1) and 0: [3, 7, 11], [0, 4, 8].
    assert_eq!(out, [3.0, 7.0, 11.0, 0.0, 4.0, 8.0]);
}

#[test]
fn c_struct_size_must_be_one_the_library_knows() {
    let size = size_of::<gk_strided_tensor>();
    for wrong in [0, 1, size - 8, size + 8, usize::MAX] {
        for on_data in [true, false] {
            let (status, message, out) = c_gather_with(|d, i, _| {
                if on_data {
                    d.struct_size = wrong;
                } else {
                    i.struct_size = wrong;
                }
            });
            let what = if on_data { "data" } else { "indices" };
            assert_eq!(status, GK_STATUS_INVALID_ARGUMENT, "{message}");
            assert_eq!(
                message,
                format!(
                    "{what}->struct_size is {wrong}; allowed are {size} (sizeof(gk_strided_tensor) in some version of gatherkit.h: set it with GK_STRIDED_TENSOR_INIT)"
                )
            );
            assert_eq!(out, [SENTINEL; 6], "output written");
        }
    }
}

#[test]
fn c_null_pointers_are_reported() {
    // NULL descriptors.
    let data = table();
    let idx = [0i64];
    let mut out = [SENTINEL; 3];
    let (ds, is, os) = ([3i64, 4], [1i64], [1i64, 4]);
    let d = strided_tensor(GK_DTYPE_FLOAT, &ds, None, data.as_ptr().cast());
    let i = strided_tensor(GK_DTYPE_INT64, &is, None, idx.as_ptr().cast());
    let o = tensor_mut(GK_DTYPE_FLOAT, &os, out.as_mut_ptr().cast());
    // SAFETY: NULL or live descriptors.
    let status = unsafe { gk_gather_elements_strided(null(), &i, 0, &o, &c_opts(1)) };
    assert_eq!(status, GK_STATUS_NULL_POINTER);
    assert!(last_error().contains("data"), "{}", last_error());
    // SAFETY: as above.
    let status = unsafe { gk_gather_nd_strided(&d, null(), 0, &o, &c_opts(1)) };
    assert_eq!(status, GK_STATUS_NULL_POINTER);
    assert!(last_error().contains("indices"), "{}", last_error());

    // NULL data pointers of views with elements.
    let (status, message, out) = c_gather_with(|d, _, _| d.data = null());
    assert_eq!(status, GK_STATUS_NULL_POINTER, "{message}");
    assert!(
        message.starts_with("data->data is NULL but the tensor has "),
        "{message}"
    );
    assert_eq!(out, [SENTINEL; 6]);
    let (status, message, _) = c_gather_with(|_, i, _| i.data = null());
    assert_eq!(status, GK_STATUS_NULL_POINTER, "{message}");
    assert!(
        message.starts_with("indices->data is NULL but the tensor has "),
        "{message}"
    );
    let (status, message, _) = c_gather_with(|_, _, o| o.data = null_mut());
    assert_eq!(
        (status, message.as_str()),
        (
            GK_STATUS_NULL_POINTER,
            "output->data is NULL but the tensor has 24 bytes"
        )
    );

    // Views without elements may be NULL, whatever their strides: the index values are still
    // checked (data [3, 0] along axis 0).
    static EMPTY: [i64; 2] = [3, 0];
    static EMPTY_STRIDES: [i64; 2] = [i64::MIN, 5];
    static EMPTY_OUT: [i64; 2] = [2, 0];
    for (values, want) in [
        ([2i64, -3], GK_STATUS_OK),
        ([2, 3], GK_STATUS_INDEX_OUT_OF_BOUNDS),
    ] {
        let (status, message, _) = c_gather_with(|d, i, o| {
            *d = strided_tensor(GK_DTYPE_FLOAT, &EMPTY, Some(&EMPTY_STRIDES), null());
            i.data = values[1..].as_ptr().cast();
            *o = tensor_mut(GK_DTYPE_FLOAT, &EMPTY_OUT, null_mut());
        });
        assert_eq!(status, want, "{message}");
        if want != GK_STATUS_OK {
            assert_eq!(
                message,
                "Gather-13: indices[0] = 3 is out of range; allowed is [-3, 2] for data.shape[0] = 3"
            );
        }
    }
}

#[test]
fn c_output_may_not_overlap_the_bytes_a_view_spans() {
    // One allocation of 64 floats; data views of 4 elements stepping 4 apart (elements 0, 4, 8,
    // 12: bytes [0, 52) spanned), forwards and backwards, and a broadcast of element 20.
    let mut words = [0f32; 64];
    for (i, w) in words.iter_mut().enumerate() {
        *w = i as f32;
    }
    let base = words.as_mut_ptr();
    let idx = [3i64, 0];
    static DS: [i64; 1] = [4];
    static IS: [i64; 1] = [2];
    static OS: [i64; 1] = [2];
    let call = |first: usize, stride: i64, out_at: usize| {
        let strides = [stride];
        let d = strided_tensor(
            GK_DTYPE_FLOAT,
            &DS,
            Some(&strides),
            base.wrapping_add(first).cast_const().cast(),
        );
        let i = strided_tensor(GK_DTYPE_INT64, &IS, None, idx.as_ptr().cast());
        let o = tensor_mut(GK_DTYPE_FLOAT, &OS, base.wrapping_add(out_at).cast());
        // SAFETY: every pointer is inside `words` (64 floats), which outlives the call; the
        // output is the two floats at `out_at`.
        let status = unsafe { gk_gather_strided(&d, &i, 0, 0, &o, &c_opts(1)) };
        // SAFETY: reading two floats of `words`.
        let out = unsafe { [*base.add(out_at), *base.add(out_at + 1)] };
        (status, last_error(), out)
    };
    let span = |a: usize, b: usize| {
        let p = base as usize;
        format!("overlap data bytes [{:#x}, {:#x})", p + 4 * a, p + 4 * b)
    };
    for (first, stride) in [(0usize, 4i64), (12, -4)] {
        // Inside the span, between elements the view reads; straddling its last element; on its
        // first.
        for out_at in [5usize, 2, 11, 0, 12] {
            let (status, message, _) = call(first, stride, out_at);
            assert_eq!(status, GK_STATUS_OVERLAP, "output at {out_at}: {message}");
            assert!(message.contains(&span(0, 13)), "{message}");
        }
        // Right after the span: fine. Index 3 then 0: elements 12 and 0 forwards, 0 and 12
        // backwards.
        let (status, message, out) = call(first, stride, 13);
        assert_eq!(status, GK_STATUS_OK, "{message}");
        assert_eq!(out, if stride > 0 { [12.0, 0.0] } else { [0.0, 12.0] });
        words_reset(base);
    }
    // A broadcast view spans one element.
    for out_at in [19usize, 20] {
        let (status, message, _) = call(20, 0, out_at);
        assert_eq!(status, GK_STATUS_OVERLAP, "{message}");
        assert!(message.contains(&span(20, 21)), "{message}");
    }
    for out_at in [18usize, 21] {
        let (status, message, out) = call(20, 0, out_at);
        assert_eq!(status, GK_STATUS_OK, "{message}");
        assert_eq!(out, [20.0, 20.0]);
        words_reset(base);
    }

    // The indices' span: int64 values 3 apart, the output between two of them.
    let mut slots = [0i64; 16];
    slots[2] = 1;
    slots[5] = -4;
    let data = table();
    let (status, message) = {
        let strides = [3i64];
        let d = strided_tensor(GK_DTYPE_FLOAT, &DS, None, data.as_ptr().cast());
        let i = strided_tensor(
            GK_DTYPE_INT64,
            &IS,
            Some(&strides),
            slots[2..].as_ptr().cast(),
        );
        let o = tensor_mut(GK_DTYPE_FLOAT, &OS, slots[3..].as_mut_ptr().cast());
        // SAFETY: live buffers; the output is 8 bytes of `slots` (slot 3).
        let status = unsafe { gk_gather_strided(&d, &i, 0, 0, &o, &c_opts(1)) };
        (status, last_error())
    };
    assert_eq!(status, GK_STATUS_OVERLAP, "{message}");
    assert!(message.contains("overlap indices bytes"), "{message}");
    assert_eq!(slots[3], 0);
}

/// Writes back the values `c_output_may_not_overlap_the_bytes_a_view_spans` starts from.
fn words_reset(base: *mut f32) {
    for i in 0..64 {
        // SAFETY: `base` points to 64 floats.
        unsafe { *base.add(i) = i as f32 };
    }
}

#[test]
fn c_spans_outside_the_address_space_are_overflow_and_touch_nothing() {
    // Addresses in the never-mapped first pages: reading any of them would crash the test.
    let fake = 0x1000usize as *const c_void;
    let idx = [0i64, 1];
    let tbl = table();
    let mut out;
    static IS: [i64; 1] = [2];
    let call = |shape: &[i64], strides: &[i64], what: &str| {
        let (d, i) = if what == "data" {
            (
                strided_tensor(GK_DTYPE_FLOAT, shape, Some(strides), fake),
                strided_tensor(GK_DTYPE_INT64, &IS, None, idx.as_ptr().cast()),
            )
        } else {
            (
                strided_tensor(GK_DTYPE_FLOAT, &[4], None, tbl.as_ptr().cast()),
                strided_tensor(GK_DTYPE_INT64, shape, Some(strides), fake),
            )
        };
        let os: Vec<i64> = if what == "data" {
            vec![2; 1]
                .into_iter()
                .chain(shape[1..].iter().copied())
                .collect()
        } else {
            shape.to_vec()
        };
        let mut out = vec![SENTINEL; count(&os)];
        let o = tensor_mut(GK_DTYPE_FLOAT, &os, out.as_mut_ptr().cast());
        // SAFETY: the descriptors' memory is live except at `fake`, which the call must not
        // read: its reach is refused first.
        let status = unsafe { gk_gather_strided(&d, &i, 0, 0, &o, &c_opts(2)) };
        assert!(out.iter().all(|&v| v == SENTINEL));
        (status, last_error())
    };
    let rows: [(&[i64], &[i64], &str, &str); 5] = [
        // Below address 0.
        (&[3], &[-(1 << 60)], "data", "data->data: shape [3] with strides [-1152921504606846976] reaches bytes -9223372036854775808 to 4 around 0x1000, outside the address space or more than PTRDIFF_MAX apart"),
        (&[2, 3], &[1, -1025], "data", "data->data: shape [2, 3] with strides [1, -1025] reaches bytes -8200 to 8 around 0x1000, outside the address space or more than PTRDIFF_MAX apart"),
        // Past the top of the address space.
        (&[3], &[1 << 62], "data", "data->data: shape [3] with strides [4611686018427387904] reaches bytes 0 to 36893488147419103236 around 0x1000, outside the address space or more than PTRDIFF_MAX apart"),
        // Inside it, but more than PTRDIFF_MAX bytes apart.
        (&[2], &[1 << 61], "data", "data->data: shape [2] with strides [2305843009213693952] reaches bytes 0 to 9223372036854775812 around 0x1000, outside the address space or more than PTRDIFF_MAX apart"),
        (&[2], &[-(1 << 60)], "indices", "indices->data: shape [2] with strides [-1152921504606846976] reaches bytes -9223372036854775808 to 8 around 0x1000, outside the address space or more than PTRDIFF_MAX apart"),
    ];
    for (shape, strides, what, message) in rows {
        let (status, got) = call(shape, strides, what);
        assert_eq!((status, got.as_str()), (GK_STATUS_OVERFLOW, message));
    }
    // A stride along a dimension of size 1 is never taken: not an overflow.
    let data = table();
    let ds = [3i64, 1];
    let strides = [4i64, i64::MIN];
    let d = strided_tensor(GK_DTYPE_FLOAT, &ds, Some(&strides), data.as_ptr().cast());
    for (is, is_strides, want) in [
        ([2i64], [1i64], [0.0f32, 4.0]),
        ([1], [i64::MIN], [0.0, SENTINEL]),
    ] {
        let i = strided_tensor(GK_DTYPE_INT64, &is, Some(&is_strides), idx.as_ptr().cast());
        let os = [is[0], 1];
        out = [SENTINEL; 2];
        let o = tensor_mut(GK_DTYPE_FLOAT, &os, out.as_mut_ptr().cast());
        // SAFETY: live buffers; the views reach data elements 0, 4 and 8 and index elements 0
        // and 1.
        let status = unsafe { gk_gather_strided(&d, &i, 0, 0, &o, &c_opts(1)) };
        assert_eq!(status, GK_STATUS_OK, "{}", last_error());
        assert_eq!(out, want);
    }
}

/// Random cases with bad index values (and some without) through `gk_gather_*_strided` at 1
/// and 2 threads: the dense entry point's status, message and output on the materialized views.
fn c_like_dense<T: Sample, I: Idx>(tag: u64) {
    let makers: [fn(&mut Rng) -> Case; 3] = [elements_case, nd_case, gather_case];
    for n in 0..45usize {
        let seed = tag << 32 | n as u64;
        let mut rng = Rng::new(seed);
        let mut case = makers[n % 3](&mut rng);
        if n % 5 == 4 {
            case = with_empty_output(&mut rng, case);
        }
        let kinds = (
            KINDS[rng.below(KINDS.len() as u64) as usize],
            KINDS[rng.below(KINDS.len() as u64) as usize],
        );
        let data_layout = layout(&mut rng, &case.data_shape, kinds.0);
        let data: Vec<T> = (0..data_layout.len)
            .map(|_| T::sample(rng.next_u64()))
            .collect();
        let index_layout = layout(&mut rng, &case.indices_shape, kinds.1);
        let n_idx = count(&case.indices_shape);
        let bad: Vec<usize> = match (n_idx, n % 4) {
            (0, _) | (_, 3) => Vec::new(),
            _ => (0..1 + rng.below(3))
                .map(|_| rng.below(n_idx as u64) as usize)
                .collect(),
        };
        let indices: Vec<I> = fill_indices(&mut rng, &case, &index_layout, &bad);
        let dense_data = materialize(&data, &case.data_shape, &data_layout);
        let dense_indices = materialize(&indices, &case.indices_shape, &index_layout);
        let out_len = count(&case.output_shape::<T, I>());
        for threads in [1, 2] {
            let options = case.options.with_threads(threads);
            let mut want: Vec<T> = vec![T::sample(7); out_len];
            let expected = c_dense_call(&case, &dense_data, &dense_indices, &mut want, &options)
                .map(|()| bytes_of(&want).to_vec());
            assert_eq!(expected.is_err(), !bad.is_empty(), "seed {seed}: {case:?}");
            let mut out: Vec<T> = vec![T::sample(7); out_len];
            let got = strided_call(
                Api::C,
                &case,
                &options,
                View {
                    shape: &case.data_shape,
                    layout: &data_layout,
                    buf: &data,
                },
                View {
                    shape: &case.indices_shape,
                    layout: &index_layout,
                    buf: &indices,
                },
                &case.output_shape::<T, I>(),
                &mut out,
            )
            .map(|()| bytes_of(&out).to_vec());
            assert!(
                got == expected,
                "seed {seed}, {threads} threads, {case:?}, layouts {kinds:?}: {:?} vs {:?}",
                got.as_ref().err(),
                expected.as_ref().err()
            );
        }
    }
}

#[test]
fn c_reports_the_first_bad_index_like_the_dense_entry_point() {
    c_like_dense::<f32, i64>(21);
    c_like_dense::<u8, i32>(22);
    c_like_dense::<Complex<f64>, i64>(23);
    c_like_dense::<f16, i32>(24);
}

/// The broadcast-row case through the C ABI at 2 threads, against the dense entry point: bad
/// values in two rows, the earlier reported at its row's first column.
#[test]
fn c_broadcast_rows_split_across_two_threads_report_the_first_bad_row() {
    let (n, w) = (8192usize, 128usize);
    let mut rng = Rng::new(51);
    let data = random_data(&mut rng, n * w);
    let mut index: Vec<i32> = (0..n).map(|_| rng.index(n) as i32).collect();
    index[n / 2 + 1] = n as i32;
    index[n / 2] = -(n as i32) - 1;
    let case = Case {
        op: Op::Elements { axis: 0 },
        options: Options::onnx(0),
        data_shape: vec![n, w],
        indices_shape: vec![n, w],
    };
    let dense_index: Vec<i32> = index.iter().flat_map(|&v| [v; 128]).collect();
    let mut want = vec![0f32; n * w];
    let expected = c_dense_call(
        &case,
        &data,
        &dense_index,
        &mut want,
        &case.options.with_threads(2),
    );
    let rows = Layout {
        strides: vec![1, 0],
        origin: 0,
        len: n,
    };
    let dense = Layout {
        strides: vec![w as isize, 1],
        origin: 0,
        len: n * w,
    };
    let mut out = vec![0f32; n * w];
    let got = strided_call(
        Api::C,
        &case,
        &case.options.with_threads(2),
        View {
            shape: &case.data_shape,
            layout: &dense,
            buf: &data,
        },
        View {
            shape: &case.indices_shape,
            layout: &rows,
            buf: &index,
        },
        &[n, w],
        &mut out,
    );
    assert_eq!(got, expected);
    assert_eq!(
        got.unwrap_err().1,
        format!(
            "GatherElements-13: indices[{}, 0] = {} is out of range; allowed is [-{n}, {}] for data.shape[0] = {n}",
            n / 2,
            -(n as i64) - 1,
            n - 1
        )
    );
    let _ = GK_DTYPE_INT32;
}

#[test]
fn c_misaligned_view_pointers_are_invalid_arguments() {
    let words = [0u64; 8];
    let odd = bytes_of(&words)[1..].as_ptr();
    let (status, message, out) = c_gather_with(|d, _, _| d.data = odd.cast());
    assert_eq!(
        (status, message),
        (
            GK_STATUS_INVALID_ARGUMENT,
            format!(
                "data->data pointer {:#x} is not aligned to 4 bytes as float elements need",
                odd as usize
            )
        )
    );
    assert_eq!(out, [SENTINEL; 6]);
    let odd = bytes_of(&words)[12..].as_ptr();
    let (status, message, _) = c_gather_with(|_, i, _| i.data = odd.cast());
    assert_eq!(
        (status, message),
        (
            GK_STATUS_INVALID_ARGUMENT,
            format!(
                "indices->data pointer {:#x} is not aligned to 8 bytes as int64 elements need",
                odd as usize
            )
        )
    );
}

/// A data dimension of size 0 addressed by the indices: data has no elements but the output
/// has, and every index value is out of range; the strided call must say so (as the dense one
/// does) without reading data.
#[test]
fn a_zero_size_addressed_dimension_makes_every_index_bad() {
    let cases = [
        (
            Op::Gather {
                axis: 1,
                batch_dims: 0,
            },
            vec![3, 0],
            vec![2, 2],
        ),
        (Op::Elements { axis: 1 }, vec![2, 0], vec![2, 3]),
        (Op::Nd { batch_dims: 0 }, vec![0, 4], vec![3, 1]),
        (Op::Nd { batch_dims: 1 }, vec![2, 5, 0], vec![2, 3, 2]),
    ];
    let execs = executors(&[1, 2]);
    for (n, (op, data_shape, indices_shape)) in cases.into_iter().enumerate() {
        let case = Case {
            op,
            options: Options::onnx(0),
            data_shape,
            indices_shape,
        };
        for (k, &kind) in KINDS.iter().enumerate() {
            let (failed, _) = check_case::<f64, i32>(
                700 + (n * 10 + k) as u64,
                &case,
                (Kind::Mixed, kind),
                APIS[(n + k) % APIS.len()],
                0,
                &execs,
            );
            assert!(failed, "{case:?} {kind:?}: no index can be valid");
        }
    }
}

/// Many dimensions (each a step of its own in some layouts): ranks 12 to 16.
#[test]
fn high_ranks() {
    let cases = [
        (Op::Elements { axis: 7 }, vec![2; 16], vec![2; 16]),
        (Op::Elements { axis: -1 }, vec![3; 12], vec![3; 12]),
        (
            Op::Gather {
                axis: 5,
                batch_dims: 0,
            },
            vec![2; 14],
            vec![3, 1, 2],
        ),
        (Op::Nd { batch_dims: 2 }, vec![2; 14], vec![2, 2, 3, 4]),
    ];
    let execs = executors(&[1, 2]);
    for (n, (op, data_shape, indices_shape)) in cases.into_iter().enumerate() {
        let case = Case {
            op,
            options: Options::openvino(0),
            data_shape,
            indices_shape,
        };
        for (k, &kind) in KINDS.iter().enumerate() {
            let seed = 800 + (n * 10 + k) as u64;
            let kinds = (KINDS[(k + n) % KINDS.len()], kind);
            let (failed, _) =
                check_case::<f32, i64>(seed, &case, kinds, APIS[k % APIS.len()], 0, &execs);
            assert!(!failed, "{case:?} {kinds:?}");
            let (failed, _) =
                check_case::<u8, i32>(seed, &case, kinds, APIS[(k + 1) % APIS.len()], 2, &execs);
            assert!(failed, "{case:?} {kinds:?}");
        }
    }
}
