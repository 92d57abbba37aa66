//! Gives the shared library its SONAME, and tells the test suite which target it is built for
//! (the C programs in `c-tests/` are compiled from `cargo test` with the `cc` crate).

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target.contains("linux") {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libgatherkit.so.{major}");
    }
    println!("cargo:rustc-env=GATHERKIT_BUILD_TARGET={target}");
    println!("cargo:rustc-env=GATHERKIT_BUILD_HOST={host}");
    println!("cargo:rerun-if-changed=build.rs");
}
