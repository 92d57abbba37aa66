//! How an update meets the element it lands on: replaced, or combined by a reduction in the
//! element's own type.
//!
//! Kernels move raw elements (`u8` … `[u64; 2]`); a reduction needs the dtype's arithmetic. So a
//! combiner is a zero-sized type that views both raw elements as the dtype's value, combines
//! them and stores the result back as raw bits: the apply loop stays generic over the width and
//! is compiled once per (width, combiner) pair, never dispatching per element.
//!
//! The arithmetic is the one the README promises:
//! - add and mul in the dtype, rounded after every step (float16 and bfloat16 compute in `f32`
//!   and round once to nearest-even; `f32` has at least `2p + 2` bits for both, so the result is
//!   the correctly rounded 16-bit sum or product), integers wrap, bool is OR (add) and AND (mul),
//!   complex multiplies as `(ar*br - ai*bi, ar*bi + ai*br)` without fused operations;
//! - max and min are ONNX Runtime's: `existing > update ? existing : update` (min: `<`), so the
//!   existing value stays only when strictly greater (smaller): a NaN update lands, a NaN
//!   already in the output is replaced by the next update, and a tie (`-0` against `+0`
//!   included) takes the update; bool max is OR, min is AND.

use crate::repr::RawElement;
use half::{bf16, f16};
use num_complex::Complex;
use std::marker::PhantomData;

/// Combines an existing element with an update, in that order.
pub(crate) trait Combine<E: RawElement>: Send + Sync + 'static {
    /// Whether the result is the update alone (no read of the existing element needed).
    const REPLACES: bool = false;

    fn combine(existing: E, update: E) -> E;
}

/// Reduction `none`: the update replaces the element; for every width.
pub(crate) struct Replace;

impl<E: RawElement> Combine<E> for Replace {
    const REPLACES: bool = true;

    #[inline(always)]
    fn combine(_existing: E, update: E) -> E {
        update
    }
}

/// A dtype's value as the reductions see it, stored as the raw element of its width.
pub(crate) trait Arith: Copy + Send + Sync + 'static {
    type Raw: RawElement;
    fn from_raw(raw: Self::Raw) -> Self;
    fn to_raw(self) -> Self::Raw;
    fn add(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
}

/// The value types whose max and min are defined (all but complex).
pub(crate) trait Ordered: Arith {
    /// `maximum(existing, update)` by the rules in the module documentation.
    fn max_of(existing: Self, update: Self) -> Self;
    /// `minimum(existing, update)`.
    fn min_of(existing: Self, update: Self) -> Self;
}

/// Reduction `add` on values of type `A`.
pub(crate) struct Add<A>(PhantomData<A>);
/// Reduction `mul`.
pub(crate) struct Mul<A>(PhantomData<A>);
/// Reduction `max`.
pub(crate) struct Max<A>(PhantomData<A>);
/// Reduction `min`.
pub(crate) struct Min<A>(PhantomData<A>);

impl<A: Arith> Combine<A::Raw> for Add<A> {
    #[inline(always)]
    fn combine(existing: A::Raw, update: A::Raw) -> A::Raw {
        A::from_raw(existing).add(A::from_raw(update)).to_raw()
    }
}

impl<A: Arith> Combine<A::Raw> for Mul<A> {
    #[inline(always)]
    fn combine(existing: A::Raw, update: A::Raw) -> A::Raw {
        A::from_raw(existing).mul(A::from_raw(update)).to_raw()
    }
}

impl<A: Ordered> Combine<A::Raw> for Max<A> {
    #[inline(always)]
    fn combine(existing: A::Raw, update: A::Raw) -> A::Raw {
        A::max_of(A::from_raw(existing), A::from_raw(update)).to_raw()
    }
}

impl<A: Ordered> Combine<A::Raw> for Min<A> {
    #[inline(always)]
    fn combine(existing: A::Raw, update: A::Raw) -> A::Raw {
        A::min_of(A::from_raw(existing), A::from_raw(update)).to_raw()
    }
}

/// Eight bytes as two `u32` (the 8-byte raw element) and back, in memory order.
#[inline(always)]
fn u64_from_raw(raw: [u32; 2]) -> u64 {
    let [a, b] = raw.map(u32::to_ne_bytes);
    u64::from_ne_bytes([a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]])
}

#[inline(always)]
fn u64_to_raw(v: u64) -> [u32; 2] {
    let b = v.to_ne_bytes();
    [
        u32::from_ne_bytes([b[0], b[1], b[2], b[3]]),
        u32::from_ne_bytes([b[4], b[5], b[6], b[7]]),
    ]
}

macro_rules! integers {
    ($($t:ty => $raw:ty, $from:expr, $to:expr;)*) => {$(
        impl Arith for $t {
            type Raw = $raw;
            #[inline(always)]
            fn from_raw(raw: $raw) -> $t {
                #[allow(clippy::redundant_closure_call)]
                ($from)(raw)
            }
            #[inline(always)]
            fn to_raw(self) -> $raw {
                #[allow(clippy::redundant_closure_call)]
                ($to)(self)
            }
            #[inline(always)]
            fn add(self, other: $t) -> $t {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn mul(self, other: $t) -> $t {
                self.wrapping_mul(other)
            }
        }

        impl Ordered for $t {
            #[inline(always)]
            fn max_of(existing: $t, update: $t) -> $t {
                existing.max(update)
            }
            #[inline(always)]
            fn min_of(existing: $t, update: $t) -> $t {
                existing.min(update)
            }
        }
    )*};
}

integers! {
    u8 => u8, |r: u8| r, |v: u8| v;
    i8 => u8, |r: u8| r as i8, |v: i8| v as u8;
    u16 => u16, |r: u16| r, |v: u16| v;
    i16 => u16, |r: u16| r as i16, |v: i16| v as u16;
    u32 => u32, |r: u32| r, |v: u32| v;
    i32 => u32, |r: u32| r as i32, |v: i32| v as u32;
    u64 => [u32; 2], u64_from_raw, u64_to_raw;
    i64 => [u32; 2], |r| u64_from_raw(r) as i64, |v: i64| u64_to_raw(v as u64);
}

/// A bool element: one byte, true when not zero. Results are 0 or 1.
#[derive(Clone, Copy)]
pub(crate) struct Bool(bool);

impl Arith for Bool {
    type Raw = u8;
    #[inline(always)]
    fn from_raw(raw: u8) -> Bool {
        Bool(raw != 0)
    }
    #[inline(always)]
    fn to_raw(self) -> u8 {
        self.0 as u8
    }
    #[inline(always)]
    fn add(self, other: Bool) -> Bool {
        Bool(self.0 | other.0)
    }
    #[inline(always)]
    fn mul(self, other: Bool) -> Bool {
        Bool(self.0 & other.0)
    }
}

impl Ordered for Bool {
    #[inline(always)]
    fn max_of(existing: Bool, update: Bool) -> Bool {
        existing.add(update)
    }
    #[inline(always)]
    fn min_of(existing: Bool, update: Bool) -> Bool {
        existing.mul(update)
    }
}

/// The float formats: their arithmetic, and the comparison max and min share.
trait Float: Arith {
    /// `self < other` (false when either is NaN).
    fn less(self, other: Self) -> bool;
}

/// ONNX Runtime's max (`MAX`) or min: the existing value stays only when it is strictly greater
/// (smaller) than the update; every comparison with a NaN is false, so then the update lands.
#[inline(always)]
fn float_extreme<F: Float, const MAX: bool>(existing: F, update: F) -> F {
    let keep = if MAX {
        update.less(existing)
    } else {
        existing.less(update)
    };
    if keep {
        existing
    } else {
        update
    }
}

macro_rules! floats {
    ($($t:ty => $raw:ty, $from:expr, $to:expr, $add:expr, $mul:expr, $cmp:expr;)*) => {$(
        impl Arith for $t {
            type Raw = $raw;
            #[inline(always)]
            fn from_raw(raw: $raw) -> $t {
                #[allow(clippy::redundant_closure_call)]
                ($from)(raw)
            }
            #[inline(always)]
            fn to_raw(self) -> $raw {
                #[allow(clippy::redundant_closure_call)]
                ($to)(self)
            }
            #[inline(always)]
            fn add(self, other: $t) -> $t {
                #[allow(clippy::redundant_closure_call)]
                ($add)(self, other)
            }
            #[inline(always)]
            fn mul(self, other: $t) -> $t {
                #[allow(clippy::redundant_closure_call)]
                ($mul)(self, other)
            }
        }

        impl Float for $t {
            #[inline(always)]
            fn less(self, other: $t) -> bool {
                #[allow(clippy::redundant_closure_call)]
                let (a, b) = (($cmp)(self), ($cmp)(other));
                a < b
            }
        }

        impl Ordered for $t {
            #[inline(always)]
            fn max_of(existing: $t, update: $t) -> $t {
                float_extreme::<$t, true>(existing, update)
            }
            #[inline(always)]
            fn min_of(existing: $t, update: $t) -> $t {
                float_extreme::<$t, false>(existing, update)
            }
        }
    )*};
}

floats! {
    f32 => u32, f32::from_bits, f32::to_bits, |a: f32, b: f32| a + b, |a: f32, b: f32| a * b,
        |v: f32| v;
    f64 => [u32; 2], |r| f64::from_bits(u64_from_raw(r)), |v: f64| u64_to_raw(v.to_bits()),
        |a: f64, b: f64| a + b, |a: f64, b: f64| a * b, |v: f64| v;
    f16 => u16, f16::from_bits, f16::to_bits,
        |a: f16, b: f16| f16::from_f32(a.to_f32() + b.to_f32()),
        |a: f16, b: f16| f16::from_f32(a.to_f32() * b.to_f32()), f16::to_f32;
    bf16 => u16, bf16::from_bits, bf16::to_bits,
        |a: bf16, b: bf16| bf16::from_f32(a.to_f32() + b.to_f32()),
        |a: bf16, b: bf16| bf16::from_f32(a.to_f32() * b.to_f32()), bf16::to_f32;
}

macro_rules! complexes {
    ($($t:ty => $raw:ty, $from:expr, $to:expr;)*) => {$(
        impl Arith for Complex<$t> {
            type Raw = $raw;
            #[inline(always)]
            fn from_raw(raw: $raw) -> Complex<$t> {
                #[allow(clippy::redundant_closure_call)]
                ($from)(raw)
            }
            #[inline(always)]
            fn to_raw(self) -> $raw {
                #[allow(clippy::redundant_closure_call)]
                ($to)(self)
            }
            #[inline(always)]
            fn add(self, other: Complex<$t>) -> Complex<$t> {
                Complex::new(self.re + other.re, self.im + other.im)
            }
            #[inline(always)]
            fn mul(self, other: Complex<$t>) -> Complex<$t> {
                Complex::new(
                    self.re * other.re - self.im * other.im,
                    self.re * other.im + self.im * other.re,
                )
            }
        }
    )*};
}

complexes! {
    f32 => [u32; 2], |r: [u32; 2]| Complex::new(f32::from_bits(r[0]), f32::from_bits(r[1])),
        |v: Complex<f32>| [v.re.to_bits(), v.im.to_bits()];
    f64 => [u64; 2], |r: [u64; 2]| Complex::new(f64::from_bits(r[0]), f64::from_bits(r[1])),
        |v: Complex<f64>| [v.re.to_bits(), v.im.to_bits()];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn max32(a: f32, b: f32) -> u32 {
        Max::<f32>::combine(a.to_bits(), b.to_bits())
    }
    fn min32(a: f32, b: f32) -> u32 {
        Min::<f32>::combine(a.to_bits(), b.to_bits())
    }

    #[test]
    fn max_and_min_keep_the_existing_value_only_when_strictly_beyond_the_update() {
        let nan = f32::from_bits(0x7fc0_0001);
        let other_nan = f32::from_bits(0xffc0_0002);
        // A NaN update lands; an existing NaN is replaced; NaN against NaN takes the update.
        assert_eq!(max32(1.0, nan), nan.to_bits());
        assert_eq!(max32(nan, 1.0), 1f32.to_bits());
        assert_eq!(min32(nan, 1.0), 1f32.to_bits());
        assert_eq!(max32(nan, other_nan), other_nan.to_bits());
        // A tie takes the update, signed zeros included.
        assert_eq!(max32(-0.0, 0.0), 0f32.to_bits());
        assert_eq!(max32(0.0, -0.0), (-0f32).to_bits());
        assert_eq!(min32(0.0, -0.0), (-0f32).to_bits());
        assert_eq!(min32(-0.0, 0.0), 0f32.to_bits());
        assert_eq!(max32(1.0, 2.0), 2f32.to_bits());
        assert_eq!(max32(2.0, 1.0), 2f32.to_bits());
        assert_eq!(min32(1.0, 2.0), 1f32.to_bits());
        let h = |v: f32| f16::from_f32(v).to_bits();
        assert_eq!(Max::<f16>::combine(h(0.0), h(-0.0)), h(-0.0));
        assert_eq!(
            Min::<bf16>::combine(
                bf16::from_f32(3.0).to_bits(),
                bf16::from_f32(-2.0).to_bits()
            ),
            bf16::from_f32(-2.0).to_bits()
        );
    }

    #[test]
    fn half_precision_rounds_after_every_step_and_integers_wrap() {
        let h = |v: f32| f16::from_f32(v).to_bits();
        let once = Add::<f16>::combine(h(2048.0), h(1.0));
        assert_eq!(Add::<f16>::combine(once, h(1.0)), h(2048.0));
        assert_eq!(Add::<i8>::combine(100, 100), (-56i8) as u8);
        assert_eq!(Mul::<i8>::combine(100, 100), 16);
        assert_eq!(Add::<u8>::combine(200, 100), 44);
        let big = u64_to_raw(i64::MAX as u64);
        assert_eq!(
            Add::<i64>::combine(big, u64_to_raw(1)),
            u64_to_raw(i64::MIN as u64)
        );
        assert_eq!(
            Max::<i64>::combine(u64_to_raw(-5i64 as u64), u64_to_raw(3)),
            u64_to_raw(3)
        );
    }

    #[test]
    fn bool_and_complex_follow_their_rules() {
        assert_eq!(Add::<Bool>::combine(0, 7), 1);
        assert_eq!(Mul::<Bool>::combine(2, 7), 1);
        assert_eq!(Mul::<Bool>::combine(0, 7), 0);
        assert_eq!(Max::<Bool>::combine(0, 0), 0);
        assert_eq!(Min::<Bool>::combine(1, 0), 0);
        let c = |re: f32, im: f32| Complex::new(re, im).to_raw();
        assert_eq!(
            Mul::<Complex<f32>>::combine(c(1.0, 2.0), c(3.0, 4.0)),
            c(-5.0, 10.0)
        );
        assert_eq!(
            Add::<Complex<f32>>::combine(c(1.0, 2.0), c(3.0, 4.0)),
            c(4.0, 6.0)
        );
    }
}
