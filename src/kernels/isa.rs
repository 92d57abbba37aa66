//! Which instruction-set variant of a kernel to run, decided at run time.
//!
//! Fast variants are the same Rust loop compiled with more target features (so the compiler may
//! use wider registers); the portable variant is always compiled and always available.
//! `GATHERKIT_PORTABLE_KERNELS=1` in the environment forces the portable variants, which is how
//! the test suite checks them on machines that have the fast ones.

use std::sync::OnceLock;

fn portable_forced() -> bool {
    static FORCED: OnceLock<bool> = OnceLock::new();
    *FORCED.get_or_init(|| std::env::var_os("GATHERKIT_PORTABLE_KERNELS").is_some_and(|v| v != "0"))
}

/// Whether AVX2 variants may run on this CPU.
#[inline]
pub(crate) fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !portable_forced() && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
