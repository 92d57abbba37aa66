//! Test support shared by gatherkit's integration tests, its fuzz target and its benchmarks, so
//! that each piece exists once:
//!
//! - [`Rng`]: the one seeded pseudo-random generator;
//! - [`count`], [`coords`], [`flat`]: row-major shape arithmetic;
//! - [`reference`](mod@reference): Gather, GatherElements and GatherND written straight from their
//!   specifications, one element at a time, to compare the optimised kernels with;
//! - [`scatter`](mod@scatter): ScatterElements and ScatterND with their reductions, written the
//!   same way, with the element types' exact combining rules ([`scatter::Combine`]);
//! - [`test_each`]: runs a table of rows and reports every failing row, not only the first.
//!
//! Shapes are `&[usize]`, index values `i64` and elements any `T: Copy`: nothing here depends on
//! gatherkit, so a bug there cannot leak into the oracle.

pub mod reference;
mod rng;
pub mod scatter;
mod shape;
mod table;

pub use rng::Rng;
pub use shape::{coords, count, flat};
pub use table::test_each;
