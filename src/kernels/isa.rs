//! Which instruction-set variant of a kernel to run, decided at run time.
//!
//! Fast variants are the same Rust loop compiled with more target features (so the compiler may
//! use wider registers); the portable variant is always compiled and always available.
//! `GATHERKIT_PORTABLE_KERNELS=1` in the environment forces the portable variants, which is how
//! the test suite checks them on machines that have the fast ones.

#[cfg(target_arch = "x86_64")]
fn portable_forced() -> bool {
    use std::sync::OnceLock;
    static FORCED: OnceLock<bool> = OnceLock::new();
    *FORCED.get_or_init(|| std::env::var_os("GATHERKIT_PORTABLE_KERNELS").is_some_and(|v| v != "0"))
}

/// Whether AVX2 variants may run on this CPU. Only x86-64 has fast variants; on every other
/// architecture (aarch64 included) [`best_isa`] compiles the portable variant alone.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn avx2() -> bool {
    !portable_forced() && std::arch::is_x86_feature_detected!("avx2")
}

/// Defines `fn $name` that calls the `#[inline(always)]` kernel `$kernel` with the same arguments,
/// compiled with AVX2 when the CPU has it and portable otherwise: the one way a kernel picks its
/// instruction set. The AVX2 twin is a function of its own with the kernel's parameter list, so
/// the kernel inlines into it with its features *and* with its reference parameters still known
/// not to alias (a kernel reached through a struct of references lost that, and with it the
/// vectorised stores: W4 ran 5-15% slower).
macro_rules! best_isa {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident<$($generic:ident: $bound:path),*>($($arg:ident: $ty:ty),* $(,)?)
            -> $ret:ty = $kernel:ident;
    ) => {
        $(#[$attr])*
        #[inline(always)]
        $vis fn $name<$($generic: $bound),*>($($arg: $ty),*) -> $ret {
            /// # Safety
            /// The CPU supports AVX2.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            unsafe fn avx2<$($generic: $bound),*>($($arg: $ty),*) -> $ret {
                $kernel::<$($generic),*>($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            if $crate::kernels::isa::avx2() {
                // SAFETY: the CPU has AVX2 (checked just above).
                return unsafe { avx2::<$($generic),*>($($arg),*) };
            }
            $kernel::<$($generic),*>($($arg),*)
        }
    };
}
pub(crate) use best_isa;

/// Whether the AVX-512 gather instructions may run, and are fast: the CPU has AVX-512F and
/// AVX-512VL (the OS saving their registers, which the detection checks), and Linux reports it
/// "Not affected" by Gather Data Sampling. The microcode that mitigates GDS on the Intel cores it
/// affects (Skylake to Tiger Lake and Ice Lake servers) makes every gather several times slower,
/// and a VM may report such a core's model number for a newer one, so the model is no guide;
/// where the kernel's report cannot be read (another OS, a kernel before 6.5), the gathers are
/// not used. Read once per process.
#[cfg(target_arch = "x86_64")]
pub(crate) fn gather_instructions() -> bool {
    use std::sync::OnceLock;
    static FAST: OnceLock<bool> = OnceLock::new();
    *FAST.get_or_init(|| {
        !portable_forced()
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && gds_not_affected()
    })
}

/// Whether Linux says this CPU is not affected by Gather Data Sampling.
#[cfg(target_arch = "x86_64")]
fn gds_not_affected() -> bool {
    use std::io::Read;
    const REPORT: &str = "/sys/devices/system/cpu/vulnerabilities/gather_data_sampling";
    // A fixed buffer: the report is one short line, and this runs inside a call.
    let mut text = [0u8; 64];
    let Ok(mut file) = std::fs::File::open(REPORT) else {
        return false;
    };
    let Ok(n) = file.read(&mut text) else {
        return false;
    };
    let report = &text[..n];
    report.strip_suffix(b"\n").unwrap_or(report) == b"Not affected"
}
