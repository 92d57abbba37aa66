//! Which instruction-set variant of a kernel to run, decided at run time, and who made the CPU.
//!
//! Fast variants are the same Rust loop compiled with more target features (so the compiler may
//! use wider registers); the portable variant is always compiled and always available.
//! `GATHERKIT_PORTABLE_KERNELS=1` in the environment forces the portable variants, which is how
//! the test suite checks them on machines that have the fast ones.

use std::sync::atomic::{AtomicU8, Ordering};

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

/// Defines `fn $name` that calls the `#[inline(always)]` kernel `$kernel` (named with its generic
/// arguments, `kernel::<E, I>`, which may add const ones of its own) with the same arguments,
/// compiled with AVX2 when the CPU has it and portable otherwise: the one way a kernel picks its
/// instruction set. The AVX2 twin is a function of its own with the kernel's parameter list, so
/// the kernel inlines into it with its features *and* with its reference parameters still known
/// not to alias (a kernel reached through a struct of references lost that, and with it the
/// vectorised stores: W4 ran 5-15% slower).
macro_rules! best_isa {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident<$($generic:ident: $bound:path),*>($($arg:ident: $ty:ty),* $(,)?)
            -> $ret:ty = $kernel:expr;
    ) => {
        $(#[$attr])*
        #[inline(always)]
        $vis fn $name<$($generic: $bound),*>($($arg: $ty),*) -> $ret {
            /// # Safety
            /// The CPU supports AVX2.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            unsafe fn avx2<$($generic: $bound),*>($($arg: $ty),*) -> $ret {
                $kernel($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            if $crate::kernels::isa::avx2() {
                // SAFETY: the CPU has AVX2 (checked just above).
                return unsafe { avx2::<$($generic),*>($($arg),*) };
            }
            $kernel($($arg),*)
        }
    };
}
pub(crate) use best_isa;

/// Whether the AVX-512 gather instructions may run, and are not slowed by a mitigation: the CPU has
/// AVX-512F and AVX-512VL (the OS saving their registers, which the detection checks), and Linux
/// reports it "Not affected" by Gather Data Sampling. The microcode that mitigates GDS on the Intel
/// cores it affects (Skylake to Tiger Lake and Ice Lake servers) makes every gather several times
/// slower, and a VM may report such a core's model number for a newer one, so the model is no
/// guide; where the kernel's report cannot be read (another OS, a kernel before 6.5), the gathers
/// are not used. Read once per process. Whether they then take the rows is decided by a race
/// against the other loops on this core, its close calls by what the maker's cores were measured
/// to do (GatherElements' `gather_speed`).
#[cfg(target_arch = "x86_64")]
pub(crate) fn gather_instructions() -> bool {
    use std::sync::OnceLock;
    static USABLE: OnceLock<bool> = OnceLock::new();
    *USABLE.get_or_init(|| {
        avx2()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && gds_not_affected()
    })
}

/// Whether Linux says this CPU is not affected by Gather Data Sampling. Read with the C library's
/// `open` and `read` into a buffer of 64 bytes: `std::fs` took a call that asked first past the
/// 4 KiB of stack a call may use (its path conversion alone keeps 384 bytes on the stack).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn gds_not_affected() -> bool {
    use std::ffi::{c_char, c_int, c_void, CStr};
    extern "C" {
        fn open(path: *const c_char, flags: c_int, ...) -> c_int;
        fn read(fd: c_int, buf: *mut c_void, count: usize) -> isize;
        fn close(fd: c_int) -> c_int;
    }
    const REPORT: &CStr = c"/sys/devices/system/cpu/vulnerabilities/gather_data_sampling";
    const O_RDONLY: c_int = 0;
    const O_CLOEXEC: c_int = 0o2_000_000;
    let mut text = [0u8; 64];
    // SAFETY: a NUL-terminated path; `read` writes at most text.len() bytes into `text`; the
    // descriptor is this function's own and closed once.
    let n = unsafe {
        let fd = open(REPORT.as_ptr(), O_RDONLY | O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let n = read(fd, text.as_mut_ptr().cast(), text.len());
        close(fd);
        n
    };
    let Ok(n) = usize::try_from(n) else {
        return false;
    };
    let report = &text[..n];
    report.strip_suffix(b"\n").unwrap_or(report) == b"Not affected"
}

/// Elsewhere the kernel's report cannot be read: the gathers are not used.
#[cfg(all(target_arch = "x86_64", not(target_os = "linux")))]
fn gds_not_affected() -> bool {
    false
}

/// Whether this CPU is one of Intel's: what the index hints (`prefetch::index_hints_pay`), the
/// slice hints (`prefetch::SliceHintCores`), the close calls of the gathers' race
/// (GatherElements' `gather_speed`), the gathers across few positions at any span
/// (`gathers::GATHER_ACROSS_POSITIONS_MAX`), the selection of positions read once
/// (`select::STREAMED_MAX_POSITIONS`), the longest slice the vector copy moves
/// (`copy::INTEL_VECTOR_COPY_MAX_BYTES`) and whether GatherElements across few positions leaves
/// tiles (`tiled::few_positions_go_in_row_order`) follow, each for measured reasons of its own.
/// One CPUID instruction on the first call, a load after.
#[inline]
pub(crate) fn intel_core() -> bool {
    #[cfg(test)]
    if let Some(intel) = INTEL_FOR_TESTS.with(std::cell::Cell::get) {
        return intel;
    }
    // 0: not read yet; 1: no; 2: yes.
    static INTEL: AtomicU8 = AtomicU8::new(0);
    match INTEL.load(Ordering::Relaxed) {
        0 => read_intel_core(&INTEL),
        known => known == 2,
    }
}

#[cfg(test)]
thread_local! {
    static INTEL_FOR_TESTS: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with [`intel_core`] answering `intel` on this thread: for tests that pin a rule as
/// measured on one maker's cores, whatever CPU runs them.
#[cfg(test)]
pub(crate) fn with_intel_core<R>(intel: bool, f: impl FnOnce() -> R) -> R {
    let before = INTEL_FOR_TESTS.with(|maker| maker.replace(Some(intel)));
    let result = f();
    INTEL_FOR_TESTS.with(|maker| maker.set(before));
    result
}

/// The first call's half of [`intel_core`]: one CPUID instruction, kept in `intel`.
#[cold]
#[inline(never)]
fn read_intel_core(intel: &AtomicU8) -> bool {
    let yes = is_intel_vendor(&cpu_vendor());
    intel.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
    yes
}

/// The rule of [`intel_core`] for a CPUID vendor string.
fn is_intel_vendor(vendor: &[u8; 12]) -> bool {
    vendor == b"GenuineIntel"
}

/// The CPU's vendor string (CPUID leaf 0: "GenuineIntel", "AuthenticAMD", ...).
#[cfg(target_arch = "x86_64")]
fn cpu_vendor() -> [u8; 12] {
    #[allow(unused_unsafe)]
    // SAFETY: CPUID leaf 0 exists on every x86-64 CPU.
    let leaf = unsafe { std::arch::x86_64::__cpuid(0) };
    let mut vendor = [0u8; 12];
    vendor[..4].copy_from_slice(&leaf.ebx.to_le_bytes());
    vendor[4..8].copy_from_slice(&leaf.edx.to_le_bytes());
    vendor[8..].copy_from_slice(&leaf.ecx.to_le_bytes());
    vendor
}

/// No vendor string on other architectures, whose loops have no prefetch hints or gathers.
#[cfg(not(target_arch = "x86_64"))]
fn cpu_vendor() -> [u8; 12] {
    [0; 12]
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn the_gather_instructions_follow_the_cpu_and_the_kernels_report() {
        // The report read by std here, by the C library's calls in the library.
        let report =
            std::fs::read_to_string("/sys/devices/system/cpu/vulnerabilities/gather_data_sampling");
        let not_affected = report.as_deref().ok().map(str::trim) == Some("Not affected");
        let cpu = std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl");
        assert_eq!(
            gather_instructions(),
            cpu && not_affected && !portable_forced()
        );
        assert_eq!(gds_not_affected(), not_affected);
    }
}

#[cfg(test)]
mod vendor_tests {
    use super::*;

    #[test]
    fn only_intels_vendor_string_is_intel() {
        assert!(is_intel_vendor(b"GenuineIntel"));
        assert!(!is_intel_vendor(b"AuthenticAMD"));
        assert!(!is_intel_vendor(b"HygonGenuine"));
        assert!(!is_intel_vendor(&[0; 12]));
        assert_eq!(intel_core(), is_intel_vendor(&cpu_vendor()));
    }

    /// The vendor string as CPUID gives it is the one Linux reports (`vendor_id` in
    /// /proc/cpuinfo), where that can be read: registers taken in the wrong order would make an
    /// Intel core's string "GenuntelineI" and silently drop its hints.
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    #[test]
    fn the_vendor_string_is_the_one_linux_reports() {
        let Ok(cpuinfo) = std::fs::read_to_string("/proc/cpuinfo") else {
            return;
        };
        let Some(reported) = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("vendor_id"))
            .and_then(|rest| rest.split(':').nth(1))
        else {
            return;
        };
        // Trimmed on both sides: some vendors' strings have spaces ("  Shanghai  ").
        assert_eq!(
            String::from_utf8_lossy(&cpu_vendor()).trim(),
            reported.trim()
        );
    }
}
