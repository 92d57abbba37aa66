//! The committed C header is exactly what cbindgen generates from the sources.

use std::path::Path;

#[test]
fn committed_header_matches_a_fresh_cbindgen_generation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let mut fresh = Vec::new();
    cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut fresh);
    let fresh = String::from_utf8(fresh).expect("the header is UTF-8");
    let path = root.join("include/gatherkit.h");
    if std::env::var_os("GATHERKIT_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("include/gatherkit.h is writable");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/gatherkit.h differs from cbindgen's output; regenerate it with \
         `GATHERKIT_BLESS=1 cargo test --test header` and commit the result"
    );
}

#[test]
fn version_constants_match_the_package_version() {
    use gatherkit::ffi::{GK_VERSION_MAJOR, GK_VERSION_MINOR, GK_VERSION_PATCH};
    let version = format!("{GK_VERSION_MAJOR}.{GK_VERSION_MINOR}.{GK_VERSION_PATCH}");
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    // SAFETY: gk_version returns a static NUL-terminated string.
    let reported = unsafe { std::ffi::CStr::from_ptr(gatherkit::ffi::gk_version()) };
    assert_eq!(reported.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}
