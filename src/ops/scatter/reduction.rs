//! The `reduction` attribute of the scatters: its values, which versions and dtypes have each,
//! and the one place a (dtype, reduction) pair becomes a compiled combiner.

use crate::dtype::DType;
use crate::error::{Error, Result, Status};
use crate::kernels::scatter::combine::{
    Add, Arith, Bool, Combine, Max, Min, Mul, Ordered, Replace,
};
use crate::repr::{RawElement, WidthVisitor};
use half::{bf16, f16};
use num_complex::Complex;

/// How an update meets the element it lands on (ONNX `reduction`; the C ABI's
/// `GK_REDUCTION_*`). Duplicates are applied in row-major order of `indices`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(i32)]
pub enum Reduction {
    /// `"none"`: the update replaces the element (the last duplicate wins).
    #[default]
    None = 0,
    /// `"add"`: `element + update` in the dtype (integers wrap; bool is OR).
    Add = 1,
    /// `"mul"`: `element * update` in the dtype (integers wrap; bool is AND).
    Mul = 2,
    /// `"max"` (ONNX opset 18): `existing > update ? existing : update`, ONNX Runtime's rule (a
    /// NaN update lands, an existing NaN is replaced, a tie takes the update); bool is OR.
    Max = 3,
    /// `"min"` (ONNX opset 18): `existing < update ? existing : update`, as for max; bool is
    /// AND.
    Min = 4,
}

impl Reduction {
    /// Every reduction, in code order.
    ///
    /// cbindgen:ignore
    pub const ALL: [Reduction; 5] = [
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
    ];

    /// The C code (`GK_REDUCTION_*`).
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The ONNX attribute value: `"none"`, `"add"`, `"mul"`, `"max"` or `"min"`.
    pub const fn name(self) -> &'static str {
        match self {
            Reduction::None => "none",
            Reduction::Add => "add",
            Reduction::Mul => "mul",
            Reduction::Max => "max",
            Reduction::Min => "min",
        }
    }

    /// Whether the reduction means something for `dtype`: strings are opaque handles
    /// (gatherkit never builds a string, so only `none`), and complex numbers have no order
    /// (no `max`, `min`).
    pub fn is_defined_for(self, dtype: DType) -> bool {
        match dtype {
            DType::String => self == Reduction::None,
            DType::Complex64 | DType::Complex128 => {
                !matches!(self, Reduction::Max | Reduction::Min)
            }
            _ => true,
        }
    }
}

impl TryFrom<i32> for Reduction {
    type Error = Error;

    /// Converts a C reduction code; an unknown code is `Status::InvalidAttribute`.
    fn try_from(code: i32) -> Result<Reduction> {
        Reduction::ALL
            .into_iter()
            .find(|r| r.code() == code)
            .ok_or_else(|| {
                Error::new(
                    Status::InvalidAttribute,
                    format!(
                        "reduction is {code}; allowed are 0 (GK_REDUCTION_NONE), 1 (GK_REDUCTION_ADD), 2 (GK_REDUCTION_MUL), 3 (GK_REDUCTION_MAX) and 4 (GK_REDUCTION_MIN)"
                    ),
                )
            })
    }
}

/// Generic code to run for one (raw element, combiner) pair (see [`dispatch`]).
pub(crate) trait CombineVisitor {
    type Output;
    fn visit<E: RawElement, C: Combine<E>>(self) -> Self::Output;
}

/// Runs `visitor` for the combiner of `reduction` on `dtype`: `none` by the dtype's width alone,
/// the others by its arithmetic. `None` for a pair that [`Reduction::is_defined_for`] refuses
/// (validation keeps those from getting here).
pub(crate) fn dispatch<V: CombineVisitor>(
    dtype: DType,
    reduction: Reduction,
    visitor: V,
) -> Option<V::Output> {
    if reduction == Reduction::None {
        return Some(dtype.width().dispatch(Replacing(visitor)));
    }
    macro_rules! arith {
        ($($dtype:ident => $t:ty),*) => {
            match dtype {
                $(DType::$dtype => ordered::<$t, V>(reduction, visitor),)*
                DType::Complex64 => unordered::<Complex<f32>, V>(reduction, visitor),
                DType::Complex128 => unordered::<Complex<f64>, V>(reduction, visitor),
                DType::String => None,
            }
        };
    }
    arith!(
        Float => f32, Uint8 => u8, Int8 => i8, Uint16 => u16, Int16 => i16, Int32 => i32,
        Int64 => i64, Bool => Bool, Float16 => f16, Double => f64, Uint32 => u32,
        Uint64 => u64, Bfloat16 => bf16
    )
}

fn ordered<A: Ordered, V: CombineVisitor>(reduction: Reduction, visitor: V) -> Option<V::Output> {
    match reduction {
        Reduction::Max => Some(visitor.visit::<A::Raw, Max<A>>()),
        Reduction::Min => Some(visitor.visit::<A::Raw, Min<A>>()),
        _ => unordered::<A, V>(reduction, visitor),
    }
}

fn unordered<A: Arith, V: CombineVisitor>(reduction: Reduction, visitor: V) -> Option<V::Output> {
    match reduction {
        Reduction::Add => Some(visitor.visit::<A::Raw, Add<A>>()),
        Reduction::Mul => Some(visitor.visit::<A::Raw, Mul<A>>()),
        _ => None,
    }
}

struct Replacing<V>(V);

impl<V: CombineVisitor> WidthVisitor for Replacing<V> {
    type Output = V::Output;
    fn visit<R: RawElement>(self) -> V::Output {
        self.0.visit::<R, Replace>()
    }
}
