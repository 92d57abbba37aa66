//! ScatterElements and ScatterND, with their reductions, written straight from their
//! specifications: the output starts as a copy of `data`, and every update is combined into the
//! element (or slice) its index names, one element at a time, in row-major order of `indices`,
//! with coordinates by division. Slow on purpose; the oracle the optimised kernels are compared
//! with.
//!
//! The specification texts:
//! - ONNX ScatterElements-11/13/16/18: <https://onnx.ai/onnx/operators/onnx__ScatterElements.html>
//! - ONNX ScatterND-11/13/16/18: <https://onnx.ai/onnx/operators/onnx__ScatterND.html>
//!
//! Where the specifications are silent, this follows what gatherkit promises, which is not
//! always what the ONNX reference or ONNX Runtime do:
//! - duplicates are combined in row-major order of `indices` (with [`Reduce::None`] the last
//!   one wins), as the ONNX reference does;
//! - every index value is checked before anything is combined, so a bad one leaves no partial
//!   output;
//! - arithmetic rounds after every step in the element type, and 16-bit floats compute in `f64`
//!   and round once (see [`Combine`]);
//! - max and min follow ONNX Runtime (`existing > update ? existing : update`): a NaN update
//!   lands, a NaN already in the output is replaced by the next update, and a tie (`-0`/`+0`
//!   included) takes the update (the ONNX references disagree with each other on NaN).
//!
//! As in [`reference`](crate::reference), shapes are checked by assertions (callers pass shapes
//! the specification accepts) and index values by the result.

use crate::reference::resolve_index;
use crate::shape::{coords, count, flat};

/// The `reduction` attribute of ScatterElements-16/18 and ScatterND-16/18: how an update is
/// combined with the value already in the output. Versions 11 and 13 have only `None`; 16 adds
/// `Add` and `Mul`, 18 adds `Max` and `Min`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    /// The update replaces the existing value.
    None,
    /// `existing + update`.
    Add,
    /// `existing * update`.
    Mul,
    /// The larger of the two.
    Max,
    /// The smaller of the two.
    Min,
}

/// Why a scatter produced no output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScatterError {
    /// The first out-of-range index value, at this row-major position of `indices`.
    BadIndex(usize),
    /// The reduction is not defined for the element type (see [`Combine::defined`]).
    Undefined,
}

/// An element type a scatter can combine: `combine(existing, update, reduce)` is the value the
/// output holds after `update` is applied to `existing` (the existing value first, as both
/// specifications write `f(out[t], update)`), or `None` when `reduce` is not defined for the type.
pub trait Combine: Copy {
    /// Whether `reduce` is defined for the type: exactly when [`combine`](Combine::combine)
    /// returns `Some`. Asked before anything is combined, so that an undefined reduction is
    /// reported whatever the indices are, also when there is nothing to combine.
    fn defined(reduce: Reduce) -> bool;

    /// The value after `update` is applied to `existing`; `None` when `reduce` is not defined.
    fn combine(existing: Self, update: Self, reduce: Reduce) -> Option<Self>;
}

/// Integers: add and multiply wrap (two's complement, as the ONNX reference's numpy arithmetic
/// does: int8 `100 + 100 = -56`), max and min are the usual order.
macro_rules! combine_integers {
    ($($t:ty),*) => {$(
        impl Combine for $t {
            fn defined(_: Reduce) -> bool {
                true
            }

            fn combine(existing: Self, update: Self, reduce: Reduce) -> Option<Self> {
                Some(match reduce {
                    Reduce::None => update,
                    Reduce::Add => existing.wrapping_add(update),
                    Reduce::Mul => existing.wrapping_mul(update),
                    Reduce::Max => existing.max(update),
                    Reduce::Min => existing.min(update),
                })
            }
        }
    )*};
}

combine_integers!(i8, u8, i16, u16, i32, u32, i64, u64);

/// `f32` and `f64`: add and multiply are the native IEEE operations, rounded in the type; max
/// and min follow [`keeps_existing`], and return one of the two operands bit for bit.
macro_rules! combine_floats {
    ($($t:ty),*) => {$(
        impl Combine for $t {
            fn defined(_: Reduce) -> bool {
                true
            }

            fn combine(existing: Self, update: Self, reduce: Reduce) -> Option<Self> {
                Some(match reduce {
                    Reduce::None => update,
                    Reduce::Add => existing + update,
                    Reduce::Mul => existing * update,
                    Reduce::Max | Reduce::Min => {
                        // Widening to f64 is exact, keeps NaN a NaN and keeps the sign of zero.
                        if keeps_existing(f64::from(existing), f64::from(update), reduce) {
                            existing
                        } else {
                            update
                        }
                    }
                })
            }
        }
    )*};
}

combine_floats!(f32, f64);

/// Max and min on floating-point values (given exactly, as `f64`): whether the result is
/// `existing` rather than `update`, by ONNX Runtime's rule (`existing = existing > update ?
/// existing : update` for max, `<` for min): the existing value stays only when it is strictly
/// greater (smaller). So a NaN update always lands, a NaN already in the output is replaced by
/// the next update, and on equal values (`-0` and `+0` included) the update lands.
fn keeps_existing(existing: f64, update: f64, reduce: Reduce) -> bool {
    match reduce {
        Reduce::Max => existing > update,
        Reduce::Min => existing < update,
        _ => unreachable!("keeps_existing is for max and min"),
    }
}

/// A bool element: one byte, as the C ABI stores it, true when nonzero. With a
/// reduction the result byte is 0 or 1: add and max are OR, mul and min are AND (numpy's
/// arithmetic on bools, which the ONNX reference uses). [`Reduce::None`] stores the update byte
/// unchanged: it copies, as every other type does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bool(pub u8);

impl Combine for Bool {
    fn defined(_: Reduce) -> bool {
        true
    }

    fn combine(existing: Self, update: Self, reduce: Reduce) -> Option<Self> {
        let (a, b) = (existing.0 != 0, update.0 != 0);
        Some(match reduce {
            Reduce::None => update,
            Reduce::Add | Reduce::Max => Bool(u8::from(a || b)),
            Reduce::Mul | Reduce::Min => Bool(u8::from(a && b)),
        })
    }
}

/// An IEEE 754 binary16 (half precision) element, as its bit pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct F16(pub u16);

/// A bfloat16 element (the top half of an `f32`), as its bit pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bf16(pub u16);

/// A 16-bit binary floating-point format: 1 sign bit, then `exponent_bits` of biased exponent,
/// then `fraction_bits` of fraction, with IEEE 754's rules (subnormals, infinities, NaNs).
#[derive(Clone, Copy)]
struct Format {
    exponent_bits: u32,
    fraction_bits: u32,
}

/// binary16: 5 exponent bits, 10 fraction bits.
const HALF: Format = Format {
    exponent_bits: 5,
    fraction_bits: 10,
};

/// bfloat16: 8 exponent bits (as `f32`), 7 fraction bits.
const BFLOAT: Format = Format {
    exponent_bits: 8,
    fraction_bits: 7,
};

impl Format {
    /// The all-ones exponent field, which marks infinities and NaNs.
    fn exponent_max(self) -> u32 {
        (1 << self.exponent_bits) - 1
    }

    /// The exponent bias: 15 for binary16, 127 for bfloat16.
    fn bias(self) -> i32 {
        (self.exponent_max() >> 1) as i32
    }

    /// The exponent of the last fraction bit of the smallest normal numbers, which is also the
    /// spacing of the subnormals: `2^(1 - bias - fraction_bits)`.
    fn min_quantum(self) -> i32 {
        1 - self.bias() - self.fraction_bits as i32
    }

    /// The exact value of `bits`. Every value of a 16-bit format is exactly an `f64`. A NaN
    /// gives a NaN with the same sign (the payload is not kept).
    fn decode(self, bits: u16) -> f64 {
        let bits = u32::from(bits);
        let negative = bits >> 15 == 1;
        let exponent = (bits >> self.fraction_bits) & self.exponent_max();
        let fraction = bits & ((1 << self.fraction_bits) - 1);
        let magnitude = if exponent == self.exponent_max() {
            if fraction == 0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        } else if exponent == 0 {
            // Subnormal (or zero): fraction * 2^(1 - bias - fraction_bits).
            f64::from(fraction) * pow2(self.min_quantum())
        } else {
            // Normal: (2^fraction_bits + fraction) * 2^(exponent - bias - fraction_bits).
            let significand = (1 << self.fraction_bits) + fraction;
            f64::from(significand) * pow2(self.min_quantum() + exponent as i32 - 1)
        };
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// The bits of `value` rounded to the format, to nearest with ties to even: finite values
    /// too large for it become infinities, values too small become subnormals or zeros (keeping
    /// the sign), and a NaN becomes the quiet NaN with the top fraction bit set and the sign of
    /// `value`.
    fn encode(self, value: f64) -> u16 {
        let sign = if value.is_sign_negative() { 0x8000 } else { 0 };
        let infinity = self.exponent_max() << self.fraction_bits;
        let bits = if value.is_nan() {
            infinity | (1 << (self.fraction_bits - 1))
        } else if value.is_infinite() {
            infinity
        } else if value == 0.0 {
            0
        } else {
            let magnitude = value.abs();
            // The exponent of the last fraction bit the format keeps for this magnitude: the
            // leading bit's exponent minus fraction_bits, but no lower than the subnormals'
            // spacing. (An f64 subnormal is far below that spacing in both formats.)
            let leading = ((magnitude.to_bits() >> 52) as i32 - 1023).max(-1022);
            let quantum = (leading - self.fraction_bits as i32).max(self.min_quantum());
            // Scaling by a power of two is exact, and the result is below 2^(fraction_bits + 1),
            // so its fractional part is exact as well and the one rounding happens here.
            let mut significand = (magnitude / pow2(quantum)).round_ties_even() as u32;
            let mut quantum = quantum;
            if significand == 1 << (self.fraction_bits + 1) {
                // Rounded up to the next power of two: one more exponent, one less bit.
                significand >>= 1;
                quantum += 1;
            }
            if significand < 1 << self.fraction_bits {
                // Subnormal (or rounded to zero): the exponent field is 0.
                significand
            } else {
                let exponent = (quantum - self.min_quantum() + 1) as u32;
                if exponent >= self.exponent_max() {
                    infinity
                } else {
                    (exponent << self.fraction_bits) | (significand - (1 << self.fraction_bits))
                }
            }
        };
        sign | bits as u16
    }
}

/// `2^n` for `n` in the normal range of `f64` (-1022 to 1023), built from its bits, so exact.
fn pow2(n: i32) -> f64 {
    assert!((-1022..=1023).contains(&n), "2^{n} is not a normal f64");
    f64::from_bits(((n + 1023) as u64) << 52)
}

impl F16 {
    /// The exact value (a NaN gives a NaN of the same sign).
    pub fn to_f64(self) -> f64 {
        HALF.decode(self.0)
    }

    /// `value` rounded to nearest, ties to even; overflow gives an infinity and a NaN gives the
    /// quiet NaN `0x7E00` with the sign of `value`.
    pub fn from_f64(value: f64) -> F16 {
        F16(HALF.encode(value))
    }
}

impl Bf16 {
    /// The exact value (a NaN gives a NaN of the same sign).
    pub fn to_f64(self) -> f64 {
        BFLOAT.decode(self.0)
    }

    /// `value` rounded to nearest, ties to even; overflow gives an infinity and a NaN gives the
    /// quiet NaN `0x7FC0` with the sign of `value`.
    pub fn from_f64(value: f64) -> Bf16 {
        Bf16(BFLOAT.encode(value))
    }
}

/// Combines two 16-bit floats of `format`: add and multiply compute the exact operands in `f64`
/// and round once to the format. That equals rounding the exact result, since `f64`'s 53 bits
/// are at least twice the format's significand (11 or 8 bits) plus two, so the rounding through
/// `f64` cannot be a double rounding that differs. Max and min return one operand's bits, by
/// [`keeps_existing`] on the exact values.
fn combine_16(format: Format, existing: u16, update: u16, reduce: Reduce) -> u16 {
    let (a, b) = (format.decode(existing), format.decode(update));
    match reduce {
        Reduce::None => update,
        Reduce::Add => format.encode(a + b),
        Reduce::Mul => format.encode(a * b),
        Reduce::Max | Reduce::Min => {
            if keeps_existing(a, b, reduce) {
                existing
            } else {
                update
            }
        }
    }
}

impl Combine for F16 {
    fn defined(_: Reduce) -> bool {
        true
    }

    fn combine(existing: Self, update: Self, reduce: Reduce) -> Option<Self> {
        Some(F16(combine_16(HALF, existing.0, update.0, reduce)))
    }
}

impl Combine for Bf16 {
    fn defined(_: Reduce) -> bool {
        true
    }

    fn combine(existing: Self, update: Self, reduce: Reduce) -> Option<Self> {
        Some(Bf16(combine_16(BFLOAT, existing.0, update.0, reduce)))
    }
}

/// A complex64 element: real and imaginary parts, each an `f32`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct C64(pub f32, pub f32);

/// A complex128 element: real and imaginary parts, each an `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct C128(pub f64, pub f64);

/// Complex numbers: add is componentwise; multiply is `(ar*br - ai*bi, ar*bi + ai*br)` with each
/// product and each sum rounded in the component type (Rust never fuses them into a
/// multiply-add). Complex numbers have no order, so max and min are not defined.
macro_rules! combine_complex {
    ($($t:ident),*) => {$(
        impl Combine for $t {
            fn defined(reduce: Reduce) -> bool {
                !matches!(reduce, Reduce::Max | Reduce::Min)
            }

            fn combine(existing: Self, update: Self, reduce: Reduce) -> Option<Self> {
                let ($t(ar, ai), $t(br, bi)) = (existing, update);
                match reduce {
                    Reduce::None => Some(update),
                    Reduce::Add => Some($t(ar + br, ai + bi)),
                    Reduce::Mul => Some($t(ar * br - ai * bi, ar * bi + ai * br)),
                    Reduce::Max | Reduce::Min => None,
                }
            }
        }
    )*};
}

combine_complex!(C64, C128);

/// A string element, as an opaque handle (the C ABI copies `const char *` handles and never
/// reads the strings), so only [`Reduce::None`], which copies the handle, is defined. (The ONNX
/// reference concatenates strings on add; a handle cannot be added.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Str(pub usize);

impl Combine for Str {
    fn defined(reduce: Reduce) -> bool {
        reduce == Reduce::None
    }

    fn combine(_: Self, update: Self, reduce: Reduce) -> Option<Self> {
        (reduce == Reduce::None).then_some(update)
    }
}

/// ScatterElements: the output has `data`'s shape and starts as a copy of it; then, for every
/// position `p` of `indices` in row-major order, the target is `p`'s coordinates with the one
/// along `axis` replaced by `indices[p]` (resolved by [`resolve_index`]), and
/// `out[target] = combine(out[target], updates[p])`. For rank 2 and axis 1:
/// `out[i][indices[i][j]] = f(out[i][indices[i][j]], updates[i][j])`.
///
/// `updates` has the shape of `indices`, which has `data`'s rank and is no larger than `data`
/// off the axis (along the axis any length: more positions are duplicates). `axis` may be
/// negative (counting from the end).
///
/// `Err(Undefined)` when `reduce` is not defined for `T`, asked first. Every index value is
/// checked before anything is combined: `Err(BadIndex(p))` for the first out-of-range value, at
/// row-major position `p` of `indices`.
pub fn scatter_elements<T: Combine>(
    data: &[T],
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    updates: &[T],
    axis: i64,
    reduce: Reduce,
) -> Result<Vec<T>, ScatterError> {
    assert_eq!(data.len(), count(data_shape), "data length and shape");
    assert_eq!(
        indices.len(),
        count(indices_shape),
        "indices length and shape"
    );
    assert_eq!(
        updates.len(),
        indices.len(),
        "updates length and indices' shape"
    );
    assert_eq!(
        data_shape.len(),
        indices_shape.len(),
        "data and indices ranks"
    );
    let axis = resolve_index(axis, data_shape.len()).expect("an axis in [-rank, rank - 1]");
    for d in (0..data_shape.len()).filter(|&d| d != axis) {
        assert!(
            indices_shape[d] <= data_shape[d],
            "indices dimension {d} larger than data's off the axis"
        );
    }
    if !T::defined(reduce) {
        return Err(ScatterError::Undefined);
    }
    let targets = indices
        .iter()
        .enumerate()
        .map(|(p, &value)| {
            let mut at = coords(p, indices_shape);
            at[axis] = resolve_index(value, data_shape[axis]).ok_or(ScatterError::BadIndex(p))?;
            Ok(flat(&at, data_shape))
        })
        .collect::<Result<Vec<usize>, ScatterError>>()?;
    let mut out = data.to_vec();
    for (&target, &update) in targets.iter().zip(updates) {
        out[target] = T::combine(out[target], update, reduce).expect("a defined reduction");
    }
    Ok(out)
}

/// ScatterND: the output has `data`'s shape and starts as a copy of it. The last dimension of
/// `indices` holds tuples of `k = indices_shape[-1]` values (`k <= rank(data)`); for each tuple,
/// at row-major position `t` of `indices_shape[..q - 1]`, component `j` is resolved by
/// [`resolve_index`] against `data_shape[j]`, and the slice `out[tuple, ..]` (shape
/// `data_shape[k..]`) is combined elementwise with the `t`-th slice of `updates`:
/// `out[tuple, s] = combine(out[tuple, s], updates[t, s])`. With `k = 0` every (empty) tuple
/// addresses the whole tensor.
///
/// `updates` has the shape `indices_shape[..q - 1] + data_shape[k..]`.
///
/// `Err(Undefined)` when `reduce` is not defined for `T`, asked first. Every tuple is checked
/// before anything is combined: `Err(BadIndex(p))` for the first out-of-range value, at
/// row-major position `p` of `indices`.
pub fn scatter_nd<T: Combine>(
    data: &[T],
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    updates: &[T],
    reduce: Reduce,
) -> Result<Vec<T>, ScatterError> {
    assert_eq!(data.len(), count(data_shape), "data length and shape");
    assert_eq!(
        indices.len(),
        count(indices_shape),
        "indices length and shape"
    );
    let (&k, tuples_shape) = indices_shape
        .split_last()
        .expect("ScatterND indices of rank >= 1");
    assert!(
        k <= data_shape.len(),
        "tuples of {k} values into data of rank {}",
        data_shape.len()
    );
    let slice_shape = &data_shape[k..];
    assert_eq!(
        updates.len(),
        count(&[tuples_shape, slice_shape].concat()),
        "updates length and indices.shape[:-1] + data.shape[k:]"
    );
    if !T::defined(reduce) {
        return Err(ScatterError::Undefined);
    }
    // No index value to check and nothing to write: empty tuples into empty data (whose count
    // no buffer bounds, so counting them could overflow: indices and updates are empty
    // whatever it is; `slice_shape` is data's shape here), or no tuples (the slice shape then
    // need not describe real elements, and counting it could overflow).
    if k == 0 && count(slice_shape) == 0 {
        return Ok(data.to_vec());
    }
    let tuples = count(tuples_shape);
    if tuples == 0 {
        return Ok(data.to_vec());
    }
    let targets = (0..tuples)
        .map(|t| {
            (0..k)
                .map(|j| {
                    let p = t * k + j;
                    resolve_index(indices[p], data_shape[j]).ok_or(ScatterError::BadIndex(p))
                })
                .collect()
        })
        .collect::<Result<Vec<Vec<usize>>, ScatterError>>()?;
    let mut out = data.to_vec();
    if tuples == 0 {
        // The slice shape need not describe real elements then (see `reference::gather_nd`).
        return Ok(out);
    }
    let slice_len = count(slice_shape);
    for (t, tuple) in targets.iter().enumerate() {
        for s in 0..slice_len {
            let at = [&tuple[..], &coords(s, slice_shape)].concat();
            let target = flat(&at, data_shape);
            let update = updates[t * slice_len + s];
            out[target] = T::combine(out[target], update, reduce).expect("a defined reduction");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Reduce; 5] = [
        Reduce::None,
        Reduce::Add,
        Reduce::Mul,
        Reduce::Max,
        Reduce::Min,
    ];

    fn f32_bits(values: &[f32]) -> Vec<u32> {
        values.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn empty_tuples_into_empty_data_do_not_walk_the_tuples() {
        let out = scatter_nd::<f32>(&[], &[0], &[], &[1 << 40, 0], &[], Reduce::Add);
        assert_eq!(out, Ok(vec![]));
        // No tuples beside a slice shape whose count overflows: nothing to do either.
        let huge = 1usize << 40;
        let out = scatter_nd::<u8>(&[], &[0, huge, huge], &[], &[0, 0], &[], Reduce::None);
        assert_eq!(out, Ok(vec![]));
        // Empty tuples whose count overflows, into empty data.
        let out = scatter_nd::<u8>(&[], &[0], &[], &[huge, huge, 0], &[], Reduce::Add);
        assert_eq!(out, Ok(vec![]));
    }

    #[test]
    fn scatter_elements_matches_the_onnx_examples_and_backend_tests() {
        // Example 1 (test_scatter_elements_without_axis): axis 0, 3×3 zeros.
        let updates = [1.0f32, 1.1, 1.2, 2.0, 2.1, 2.2];
        let out = scatter_elements(
            &[0.0f32; 9],
            &[3, 3],
            &[1, 0, 2, 0, 2, 1],
            &[2, 3],
            &updates,
            0,
            Reduce::None,
        );
        let expected = [2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2];
        assert_eq!(out, Ok(expected.to_vec()));
        // Example 2 (test_scatter_elements_with_axis), and with a negative index.
        let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
        let row = |indices: [i64; 2], reduce| {
            scatter_elements(&data, &[1, 5], &indices, &[1, 2], &[1.1, 2.1], 1, reduce).unwrap()
        };
        assert_eq!(row([1, 3], Reduce::None), [1.0, 1.1, 3.0, 2.1, 5.0]);
        assert_eq!(row([1, -3], Reduce::None), [1.0, 1.1, 2.1, 4.0, 5.0]);
        // The reductions, with both updates on one element: (2 + 1.1) + 2.1 and (2 * 1.1) * 2.1
        // rounded in f32 after each step.
        let add = row([1, 1], Reduce::Add);
        assert_eq!(add[1].to_bits(), 0x40A6_6666);
        assert_eq!(add, [1.0, 5.2, 3.0, 4.0, 5.0]);
        let mul = row([1, 1], Reduce::Mul);
        assert_eq!(mul[1].to_bits(), 0x4093_D70A);
        assert_eq!(mul, [1.0, 4.62, 3.0, 4.0, 5.0]);
        assert_eq!(row([1, 1], Reduce::Max), [1.0, 2.1, 3.0, 4.0, 5.0]);
        assert_eq!(row([1, 1], Reduce::Min), [1.0, 1.1, 3.0, 4.0, 5.0]);
    }

    #[test]
    fn scatter_elements_matches_the_extra_cases() {
        // Indices longer than the axis: duplicates, the last one wins.
        let out = scatter_elements(
            &[1, 2, 3],
            &[1, 3],
            &[0, 1, 1, 2, 0],
            &[1, 5],
            &[10, 20, 30, 40, 50],
            1,
            Reduce::None,
        );
        assert_eq!(out, Ok(vec![50, 30, 40]));
        let out = scatter_elements(
            &[0; 6],
            &[2, 3],
            &[2, 2, 0, 1, 1, 1],
            &[2, 3],
            &[1, 2, 3, 4, 5, 6],
            1,
            Reduce::None,
        );
        assert_eq!(out, Ok(vec![3, 0, 2, 0, 6, 0]));
        // A negative axis and index, indices smaller than data.
        let out = scatter_elements(&[0; 6], &[2, 3], &[-1], &[1, 1], &[1], -2, Reduce::None);
        assert_eq!(out, Ok(vec![0, 0, 0, 1, 0, 0]));
        // Empty indices leave data as it is.
        let out = scatter_elements(&[1, 2], &[2], &[], &[0], &[], 0, Reduce::Mul);
        assert_eq!(out, Ok(vec![1, 2]));
    }

    #[test]
    fn scatter_elements_checks_every_index_first_and_reports_the_first_bad_one() {
        let out = scatter_elements(
            &[0; 9],
            &[3, 3],
            &[0, 1, 2, 3, 0, -4],
            &[2, 3],
            &[1; 6],
            0,
            Reduce::None,
        );
        assert_eq!(out, Err(ScatterError::BadIndex(3)));
        let out = scatter_elements(&[0; 3], &[3], &[-4], &[1], &[1], 0, Reduce::Add);
        assert_eq!(out, Err(ScatterError::BadIndex(0)));
    }

    /// ONNX ScatterND example 2's data and updates, shapes [4, 4, 4] and [2, 4, 4].
    fn example_2() -> (Vec<f32>, Vec<f32>) {
        let block_a = [
            1., 2., 3., 4., 5., 6., 7., 8., 8., 7., 6., 5., 4., 3., 2., 1.,
        ];
        let block_b = [
            8., 7., 6., 5., 4., 3., 2., 1., 1., 2., 3., 4., 5., 6., 7., 8.,
        ];
        let data = [block_a, block_a, block_b, block_b].concat();
        let updates = [5., 6., 7., 8., 1., 2., 3., 4.]
            .iter()
            .flat_map(|&v| [v; 4])
            .collect();
        (data, updates)
    }

    #[test]
    fn scatter_nd_matches_the_onnx_examples() {
        // Example 1: k = r = 1.
        let out = scatter_nd(
            &[1, 2, 3, 4, 5, 6, 7, 8],
            &[8],
            &[4, 3, 1, 7],
            &[4, 1],
            &[9, 10, 11, 12],
            Reduce::None,
        );
        assert_eq!(out, Ok(vec![1, 11, 3, 10, 9, 6, 7, 12]));
        // Example 2 (test_scatternd): blocks 0 and 2 replaced.
        let (data, updates) = example_2();
        let out = scatter_nd(&data, &[4, 4, 4], &[0, 2], &[2, 1], &updates, Reduce::None);
        let expected = [&updates[..16], &data[16..32], &updates[16..], &data[48..]].concat();
        assert_eq!(out, Ok(expected));
    }

    #[test]
    fn scatter_nd_matches_the_backend_reduction_tests() {
        // test_scatternd_add, _multiply, _max, _min: both update blocks into block 0; blocks 1,
        // 2 and 3 stay data's (the test comments' block 2 is a copy-paste slip).
        let (data, updates) = example_2();
        let blocks: [(Reduce, [f32; 16]); 4] = [
            (
                Reduce::Add,
                [
                    7., 8., 9., 10., 13., 14., 15., 16., 18., 17., 16., 15., 16., 15., 14., 13.,
                ],
            ),
            (
                Reduce::Mul,
                [
                    5., 10., 15., 20., 60., 72., 84., 96., 168., 147., 126., 105., 128., 96., 64.,
                    32.,
                ],
            ),
            (
                Reduce::Max,
                [
                    5., 5., 5., 5., 6., 6., 7., 8., 8., 7., 7., 7., 8., 8., 8., 8.,
                ],
            ),
            (
                Reduce::Min,
                [
                    1., 1., 1., 1., 2., 2., 2., 2., 3., 3., 3., 3., 4., 3., 2., 1.,
                ],
            ),
        ];
        for (reduce, block) in blocks {
            let out = scatter_nd(&data, &[4, 4, 4], &[0, 0], &[2, 1], &updates, reduce);
            let expected = [&block[..], &data[16..]].concat();
            assert_eq!(out, Ok(expected), "{reduce:?}");
        }
        // test_scatternd_max/min_with_element_indices: k = r = 2.
        let element = |reduce| {
            scatter_nd(
                &[1, 2, 3, 4],
                &[2, 2],
                &[0, 0, 1, 1],
                &[2, 2],
                &[5, 1],
                reduce,
            )
        };
        assert_eq!(element(Reduce::Max), Ok(vec![5, 2, 3, 4]));
        assert_eq!(element(Reduce::Min), Ok(vec![1, 2, 3, 1]));
    }

    #[test]
    fn scatter_nd_matches_the_extra_cases() {
        let data = [0, 1, 2, 3, 4, 5];
        // Negative components, element tuples.
        let out = scatter_nd(
            &data,
            &[2, 3],
            &[1, -1, 0, 0],
            &[2, 2],
            &[100, 200],
            Reduce::None,
        );
        assert_eq!(out, Ok(vec![200, 1, 2, 3, 4, 100]));
        // A negative row index, a row slice.
        let out = scatter_nd(&data, &[2, 3], &[-1], &[1, 1], &[7, 8, 9], Reduce::None);
        assert_eq!(out, Ok(vec![0, 1, 2, 7, 8, 9]));
        // k = 0: each empty tuple addresses the whole tensor.
        let out = scatter_nd(&data, &[2, 3], &[], &[1, 0], &[9; 6], Reduce::None);
        assert_eq!(out, Ok(vec![9; 6]));
        let updates = [[9; 6], [1; 6]].concat();
        let out = scatter_nd(&data, &[2, 3], &[], &[2, 0], &updates, Reduce::Add);
        assert_eq!(out, Ok(vec![10, 11, 12, 13, 14, 15]));
        // Duplicates with no reduction: row-major order, the last one wins.
        let updates: Vec<i32> = (0..12).collect();
        let out = scatter_nd(
            &[0; 6],
            &[2, 3],
            &[1, 0, 1, 1],
            &[2, 2, 1],
            &updates,
            Reduce::None,
        );
        assert_eq!(out, Ok(vec![3, 4, 5, 9, 10, 11]));
        // No tuples: data as it is, even where the slice shape alone would overflow usize.
        let huge = 1usize << 40;
        let out = scatter_nd::<u8>(&[], &[0, huge, huge], &[], &[0, 1], &[], Reduce::Add);
        assert_eq!(out, Ok(vec![]));
    }

    #[test]
    fn scatter_nd_checks_every_tuple_first_and_reports_the_first_bad_value() {
        let data = [0, 1, 2, 3, 4, 5];
        // The second tuple's second component, although the first tuple is fine.
        let out = scatter_nd(
            &data,
            &[2, 3],
            &[0, 0, 1, 3, 2, 0],
            &[3, 2],
            &[1; 3],
            Reduce::Add,
        );
        assert_eq!(out, Err(ScatterError::BadIndex(3)));
        let out = scatter_nd(&data, &[2, 3], &[1, -3], &[2, 1], &[1; 6], Reduce::None);
        assert_eq!(out, Err(ScatterError::BadIndex(1)));
    }

    #[test]
    fn integers_wrap_and_bools_or_and_and() {
        assert_eq!(
            scatter_elements(&[100i8], &[1], &[0], &[1], &[100], 0, Reduce::Add),
            Ok(vec![-56])
        );
        assert_eq!(
            scatter_elements(&[100i8], &[1], &[0], &[1], &[100], 0, Reduce::Mul),
            Ok(vec![16])
        );
        // Duplicates fold in order: 100 + 100 = -56, then -56 + 100 = 44.
        assert_eq!(
            scatter_elements(&[100i8], &[1], &[0, 0], &[2], &[100; 2], 0, Reduce::Add),
            Ok(vec![44])
        );
        assert_eq!(
            scatter_nd(&[200u8], &[1], &[0], &[1, 1], &[100], Reduce::Add),
            Ok(vec![44])
        );
        assert_eq!(u64::combine(u64::MAX, 2, Reduce::Mul), Some(u64::MAX - 1));
        assert_eq!(i32::combine(-3, 2, Reduce::Max), Some(2));
        assert_eq!(i32::combine(-3, 2, Reduce::Min), Some(-3));

        let (f, t, t2) = (Bool(0), Bool(1), Bool(2));
        assert_eq!(Bool::combine(f, t2, Reduce::Add), Some(t));
        assert_eq!(Bool::combine(f, f, Reduce::Add), Some(f));
        assert_eq!(Bool::combine(t2, Bool(3), Reduce::Mul), Some(t));
        assert_eq!(Bool::combine(t, f, Reduce::Mul), Some(f));
        assert_eq!(Bool::combine(f, t2, Reduce::Max), Some(t));
        assert_eq!(Bool::combine(t2, f, Reduce::Min), Some(f));
        // No reduction copies the byte as it is.
        assert_eq!(Bool::combine(f, Bool(7), Reduce::None), Some(Bool(7)));
        let out = scatter_elements(
            &[f, t, f],
            &[3],
            &[0, 0, 1],
            &[3],
            &[t, f, f],
            0,
            Reduce::Add,
        );
        assert_eq!(out, Ok(vec![t, t, f]));
        let out = scatter_elements(&[t, t], &[2], &[0, 1], &[2], &[f, t2], 0, Reduce::Mul);
        assert_eq!(out, Ok(vec![f, t]));
    }

    #[test]
    fn half_precision_rounds_after_every_step() {
        // 2048 + 1 = 2049 is a tie between 2048 and 2050, which rounds to even 2048, twice.
        let one = F16(0x3C00);
        let out = scatter_elements(
            &[F16(0x6800)],
            &[1],
            &[0, 0],
            &[2],
            &[one; 2],
            0,
            Reduce::Add,
        );
        assert_eq!(out, Ok(vec![F16(0x6800)]));
        // 2050 + 1 is a tie too, rounded up to even 2052.
        assert_eq!(
            F16::combine(F16(0x6801), one, Reduce::Add),
            Some(F16(0x6802))
        );
        // Overflow: 65504 * 2 is infinity; inf * 0 is NaN (any NaN).
        let max = F16(0x7BFF);
        assert_eq!(
            F16::combine(max, F16(0x4000), Reduce::Mul),
            Some(F16(0x7C00))
        );
        let nan = F16::combine(F16(0x7C00), F16(0), Reduce::Mul).unwrap();
        assert!(nan.to_f64().is_nan());
        // bfloat16: 256 + 1 rounds to 256 (8 significand bits); 1.5 * 1.5 = 2.25 exactly.
        assert_eq!(
            Bf16::combine(Bf16(0x4380), Bf16(0x3F80), Reduce::Add),
            Some(Bf16(0x4380))
        );
        assert_eq!(
            Bf16::combine(Bf16(0x3FC0), Bf16(0x3FC0), Reduce::Mul),
            Some(Bf16(0x4010))
        );
    }

    #[test]
    fn float_max_and_min_keep_the_existing_value_only_when_strictly_beyond_the_update() {
        let (nan_a, nan_b) = (f32::from_bits(0x7FC0_0001), f32::from_bits(0xFFC0_0002));
        // The spec's NaN table, ONNX Runtime's column: a NaN update lands, an existing NaN is
        // replaced, bits and all.
        let data = [nan_a, 1.0, nan_a, 3.0];
        let updates = [1.0, nan_b, nan_b, 4.0];
        let max = scatter_elements(&data, &[4], &[0, 1, 2, 3], &[4], &updates, 0, Reduce::Max);
        let expected = [1f32.to_bits(), 0xFFC0_0002, 0xFFC0_0002, 4f32.to_bits()];
        assert_eq!(f32_bits(&max.unwrap()), expected);
        let min = scatter_nd(&data, &[4], &[0, 1, 2, 3], &[4, 1], &updates, Reduce::Min);
        let expected = [1f32.to_bits(), 0xFFC0_0002, 0xFFC0_0002, 3f32.to_bits()];
        assert_eq!(f32_bits(&min.unwrap()), expected);
        // Duplicates, in order: [1, 1] with NaN, 5 | 5, NaN gives [5, NaN] for both.
        let updates = [nan_b, 5.0, 5.0, nan_b];
        for reduce in [Reduce::Max, Reduce::Min] {
            let out = scatter_elements(&[1.0, 1.0], &[2], &[0, 0, 1, 1], &[4], &updates, 0, reduce);
            assert_eq!(
                f32_bits(&out.unwrap()),
                [5f32.to_bits(), 0xFFC0_0002],
                "{reduce:?}"
            );
        }
        // A tie takes the update, signed zeros included.
        for (existing, update) in [(-0.0f64, 0.0), (0.0, -0.0)] {
            let max = f64::combine(existing, update, Reduce::Max).unwrap();
            let min = f64::combine(existing, update, Reduce::Min).unwrap();
            assert_eq!(
                (max.to_bits(), min.to_bits()),
                (update.to_bits(), update.to_bits())
            );
        }
        assert_eq!(f64::combine(-1.0, 2.0, Reduce::Max), Some(2.0));
        assert_eq!(f64::combine(-1.0, 2.0, Reduce::Min), Some(-1.0));
        assert_eq!(f64::combine(3.0, 2.0, Reduce::Max), Some(3.0));
        // The same rule on the 16-bit formats, bits kept.
        let (half_nan, half_one) = (F16(0x7D01), F16(0x3C00));
        assert_eq!(
            F16::combine(half_nan, half_one, Reduce::Max),
            Some(half_one)
        );
        assert_eq!(
            F16::combine(half_one, F16(0xFE03), Reduce::Min),
            Some(F16(0xFE03))
        );
        assert_eq!(F16::combine(F16(0x8000), F16(0), Reduce::Max), Some(F16(0)));
        assert_eq!(
            F16::combine(F16(0), F16(0x8000), Reduce::Max),
            Some(F16(0x8000))
        );
        // -2 < 1 though its bits are larger.
        assert_eq!(
            F16::combine(F16(0xC000), half_one, Reduce::Max),
            Some(half_one)
        );
        assert_eq!(
            F16::combine(half_one, F16(0xC000), Reduce::Max),
            Some(half_one)
        );
        let (bf_nan, bf_one) = (Bf16(0xFF81), Bf16(0x3F80));
        assert_eq!(Bf16::combine(bf_nan, bf_one, Reduce::Min), Some(bf_one));
        assert_eq!(Bf16::combine(bf_one, bf_nan, Reduce::Max), Some(bf_nan));
        assert_eq!(
            Bf16::combine(Bf16(0x8000), Bf16(0), Reduce::Min),
            Some(Bf16(0))
        );
    }

    #[test]
    fn complex_numbers_add_and_multiply_without_fusing_and_have_no_order() {
        assert_eq!(
            C128::combine(C128(1.0, 2.0), C128(3.0, 4.0), Reduce::Mul),
            Some(C128(-5.0, 10.0))
        );
        assert_eq!(
            C128::combine(C128(1.0, 2.0), C128(3.0, -4.5), Reduce::Add),
            Some(C128(4.0, -2.5))
        );
        // a = 1 + 2^-12 + 2^-12 i, b = 1 + 2^-12 - 2^-12 i. ar * br = 1 + 2^-11 + 2^-24 rounds
        // (a tie) to 1 + 2^-11; adding ai * bi's 2^-24 ties again, to 1 + 2^-11. A fused
        // multiply-add would give 1 + 2^-11 + 2^-23. The imaginary part is -x + x = +0.
        let (r, i) = (1.0 + 2f32.powi(-12), 2f32.powi(-12));
        let product = C64::combine(C64(r, i), C64(r, -i), Reduce::Mul).unwrap();
        assert_eq!(product.0.to_bits(), (1.0 + 2f32.powi(-11)).to_bits());
        assert_eq!(product.1.to_bits(), 0);
        let out = scatter_nd(
            &[C64(1.0, 1.0), C64(2.0, 0.0)],
            &[2],
            &[1, 1],
            &[2, 1],
            &[C64(0.0, 1.0), C64(0.0, 1.0)],
            Reduce::Mul,
        );
        assert_eq!(out, Ok(vec![C64(1.0, 1.0), C64(-2.0, 0.0)]));
        for reduce in [Reduce::Max, Reduce::Min] {
            assert_eq!(C64::combine(C64(1.0, 0.0), C64(2.0, 0.0), reduce), None);
            let out = scatter_elements(
                &[C128(0.0, 0.0)],
                &[1],
                &[0],
                &[1],
                &[C128(1.0, 0.0)],
                0,
                reduce,
            );
            assert_eq!(out, Err(ScatterError::Undefined));
        }
    }

    #[test]
    fn strings_only_move_and_an_undefined_reduction_is_reported_first() {
        let (a, b) = (Str(10), Str(20));
        assert_eq!(Str::combine(a, b, Reduce::None), Some(b));
        let out = scatter_nd(&[a, a], &[2], &[1], &[1, 1], &[b], Reduce::None);
        assert_eq!(out, Ok(vec![a, b]));
        for reduce in [Reduce::Add, Reduce::Mul, Reduce::Max, Reduce::Min] {
            assert_eq!(Str::combine(a, b, reduce), None);
            // Reported before the bad index, and with nothing to combine.
            let out = scatter_elements(&[a], &[1], &[5], &[1], &[b], 0, reduce);
            assert_eq!(out, Err(ScatterError::Undefined));
            let out = scatter_nd(&[a], &[1], &[], &[0, 1], &[], reduce);
            assert_eq!(out, Err(ScatterError::Undefined));
        }
    }

    #[test]
    fn defined_agrees_with_combine() {
        fn agrees<T: Combine>(x: T) {
            for reduce in ALL {
                let combined = T::combine(x, x, reduce).is_some();
                assert_eq!(T::defined(reduce), combined, "{reduce:?}");
            }
        }
        agrees(1i8);
        agrees(1u8);
        agrees(1i16);
        agrees(1u16);
        agrees(1i32);
        agrees(1u32);
        agrees(1i64);
        agrees(1u64);
        agrees(1f32);
        agrees(1f64);
        agrees(Bool(1));
        agrees(F16(0x3C00));
        agrees(Bf16(0x3F80));
        agrees(C64(1.0, 0.0));
        agrees(C128(1.0, 0.0));
        agrees(Str(0));
    }

    #[test]
    fn half_conversions_handle_subnormals_the_largest_finite_and_ties() {
        let tiny = 2f64.powi(-24);
        // Subnormals: the smallest, the largest, and the smallest normal.
        assert_eq!(F16(0x0001).to_f64(), tiny);
        assert_eq!(F16(0x03FF).to_f64(), 1023.0 * tiny);
        assert_eq!(F16(0x0400).to_f64(), 2f64.powi(-14));
        assert_eq!(F16(0x8001).to_f64(), -tiny);
        assert_eq!(F16::from_f64(tiny), F16(0x0001));
        assert_eq!(F16::from_f64(-3.0 * tiny), F16(0x8003));
        // Half the smallest subnormal ties to 0 (even), a little more rounds up, 1.5 of it ties
        // up to 2; the tie between the largest subnormal and the smallest normal goes to normal.
        assert_eq!(F16::from_f64(tiny / 2.0), F16(0));
        assert_eq!(F16::from_f64(-tiny / 2.0), F16(0x8000));
        assert_eq!(F16::from_f64(tiny * 0.5000001), F16(0x0001));
        assert_eq!(F16::from_f64(tiny * 1.5), F16(0x0002));
        assert_eq!(F16::from_f64(tiny * 1023.5), F16(0x0400));
        assert_eq!(F16::from_f64(1e-300), F16(0));
        assert_eq!(F16::from_f64(f64::from_bits(1)), F16(0));
        // The largest finite, and overflow: 65520 is the tie with 2^16 and goes to infinity.
        assert_eq!(F16(0x7BFF).to_f64(), 65504.0);
        assert_eq!(F16::from_f64(65519.99), F16(0x7BFF));
        assert_eq!(F16::from_f64(65520.0), F16(0x7C00));
        assert_eq!(F16::from_f64(-1e300), F16(0xFC00));
        assert_eq!(F16::from_f64(f64::INFINITY), F16(0x7C00));
        assert_eq!(F16(0xFC00).to_f64(), f64::NEG_INFINITY);
        // Ties to even among normals: 2049 → 2048, 2051 → 2052; 1 + 2^-11 → 1.
        assert_eq!(F16::from_f64(2049.0), F16(0x6800));
        assert_eq!(F16::from_f64(2051.0), F16(0x6802));
        assert_eq!(F16::from_f64(1.0 + 2f64.powi(-11)), F16(0x3C00));
        assert_eq!(F16::from_f64(1.0 + 3.0 * 2f64.powi(-11)), F16(0x3C02));
        // Zeros keep their sign; NaNs become the quiet NaN with their sign.
        assert_eq!(F16::from_f64(-0.0), F16(0x8000));
        assert_eq!(F16::from_f64(f64::NAN), F16(0x7E00));
        assert_eq!(F16::from_f64(-f64::NAN), F16(0xFE00));
        assert!(F16(0x7C01).to_f64().is_nan());
        assert!(F16(0xFE00).to_f64().is_sign_negative());
    }

    #[test]
    fn bfloat_conversions_handle_subnormals_the_largest_finite_and_ties() {
        let tiny = 2f64.powi(-133);
        assert_eq!(Bf16(0x0001).to_f64(), tiny);
        assert_eq!(Bf16(0x007F).to_f64(), 127.0 * tiny);
        assert_eq!(Bf16(0x0080).to_f64(), 2f64.powi(-126));
        assert_eq!(Bf16::from_f64(tiny / 2.0), Bf16(0));
        assert_eq!(Bf16::from_f64(tiny * 1.5), Bf16(0x0002));
        assert_eq!(Bf16::from_f64(tiny * 127.5), Bf16(0x0080));
        // The largest finite is (2 - 2^-7) * 2^127; the tie above it goes to infinity.
        let max = (2.0 - 2f64.powi(-7)) * 2f64.powi(127);
        assert_eq!(Bf16(0x7F7F).to_f64(), max);
        assert_eq!(Bf16::from_f64(max), Bf16(0x7F7F));
        assert_eq!(Bf16::from_f64(f64::from(f32::MAX)), Bf16(0x7F80));
        assert_eq!(
            Bf16::from_f64((2.0 - 2f64.powi(-8)) * 2f64.powi(127)),
            Bf16(0x7F80)
        );
        assert_eq!(Bf16::from_f64(-1e300), Bf16(0xFF80));
        // Ties to even: 1 + 2^-8 → 1, 1 + 3 * 2^-8 → 1 + 2^-6.
        assert_eq!(Bf16::from_f64(1.0 + 2f64.powi(-8)), Bf16(0x3F80));
        assert_eq!(Bf16::from_f64(1.0 + 3.0 * 2f64.powi(-8)), Bf16(0x3F82));
        assert_eq!(Bf16::from_f64(f64::NAN), Bf16(0x7FC0));
        assert_eq!(Bf16::from_f64(-f64::NAN), Bf16(0xFFC0));
        // bfloat16 is the top half of an f32: every value agrees with f32's.
        for bits in 0..=u16::MAX {
            let value = f32::from_bits(u32::from(bits) << 16);
            if !value.is_nan() {
                assert_eq!(Bf16(bits).to_f64(), f64::from(value), "{bits:#06x}");
            }
        }
    }

    #[test]
    fn conversions_round_trip_and_midpoints_round_to_even() {
        for format in [HALF, BFLOAT] {
            let exponent_max = format.exponent_max() as u16;
            for bits in 0..=u16::MAX {
                let exponent = (bits & 0x7FFF) >> format.fraction_bits;
                let value = format.decode(bits);
                if exponent == exponent_max {
                    // Infinities come back; NaNs are NaN.
                    assert_eq!(
                        value.is_nan(),
                        bits & 0x7FFF != exponent_max << format.fraction_bits
                    );
                    continue;
                }
                assert_eq!(format.encode(value), bits, "{bits:#06x}");
                // The exact midpoint to the next larger magnitude rounds to the even one of
                // the two (the one past the largest finite is infinity, whose field is even).
                let next = match format.decode(bits + 1) {
                    // Past the largest finite: the power of two the next exponent would start at.
                    next if next.is_infinite() => pow2(format.bias() + 1).copysign(value),
                    next => next,
                };
                let midpoint = (value + next) / 2.0;
                let even = if bits % 2 == 0 { bits } else { bits + 1 };
                assert_eq!(format.encode(midpoint), even, "{bits:#06x}");
            }
        }
    }
}
