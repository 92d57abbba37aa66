//! Builds the C programs in `c-tests/` with the C compiler the `cc` crate picks, with
//! `-std=c99 -Wall -Wextra -Werror`, links each against the static and the shared library that
//! this `cargo test` built, and runs them. The header is also compiled as C++.

use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAMS: &[&str] = &[
    "test_spec_examples",
    "test_scatter",
    "test_dtypes",
    "test_errors",
    "test_text",
    "test_host_pool",
    "test_strided",
];

/// Where the library's C artifacts are: `cargo test` builds the library once with all its crate
/// types, so the static and shared libraries sit beside this test's own binary in `deps/`, built
/// from the same sources with the same profile. (Building them again here would cost a full
/// optimised build of the library.)
fn artifact_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    let dir = exe
        .parent()
        .expect("the test binary lives in <target>/<profile>/deps");
    for lib in ["libgatherkit.a", "libgatherkit.so"] {
        assert!(
            dir.join(lib).exists(),
            "{} was not built beside the test",
            dir.join(lib).display()
        );
    }
    dir.to_path_buf()
}

fn compiler(cpp: bool) -> cc::Tool {
    cc::Build::new()
        .cpp(cpp)
        .target(env!("GATHERKIT_BUILD_TARGET"))
        .host(env!("GATHERKIT_BUILD_HOST"))
        .opt_level(1)
        .debug(false)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .try_get_compiler()
        .expect("a C compiler")
}

/// The shared library under its SONAME (and the link-time name) in a directory of its own, so the
/// loader finds what the programs record as NEEDED.
fn shared_lib_dir(artifacts: &Path) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("c-shared");
    std::fs::create_dir_all(&dir).unwrap();
    let soname = format!("libgatherkit.so.{}", env!("CARGO_PKG_VERSION_MAJOR"));
    for name in [soname.as_str(), "libgatherkit.so"] {
        std::fs::copy(artifacts.join("libgatherkit.so"), dir.join(name)).unwrap();
    }
    dir
}

fn build(source: &Path, exe: &Path, cpp: bool, link: &[String]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = compiler(cpp).to_command();
    if !cpp {
        cmd.arg("-std=c99");
    }
    cmd.args(["-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(root.join("include"))
        .arg(source)
        .arg("-o")
        .arg(exe)
        .args(link);
    let output = cmd.output().expect("the C compiler runs");
    assert!(
        output.status.success(),
        "compiling {} failed:\n{}{}",
        source.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn run(exe: &Path) {
    let output = Command::new(exe).output().expect("the test program runs");
    assert!(
        output.status.success(),
        "{} failed ({}):\n{}{}",
        exe.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn static_link(artifacts: &Path) -> Vec<String> {
    let mut args = vec![artifacts.join("libgatherkit.a").display().to_string()];
    args.extend(
        [
            "-lpthread",
            "-ldl",
            "-lm",
            "-lrt",
            "-lutil",
            "-lgcc_s",
            "-lc",
        ]
        .map(String::from),
    );
    args
}

fn shared_link(dir: &Path) -> Vec<String> {
    vec![
        format!("-L{}", dir.display()),
        format!("-Wl,-rpath,{}", dir.display()),
        "-lgatherkit".into(),
    ]
}

#[test]
fn c_programs_pass_against_the_static_library() {
    let artifacts = artifact_dir();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("c-static");
    std::fs::create_dir_all(&out).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for program in PROGRAMS {
        let exe = out.join(program);
        build(
            &root.join("c-tests").join(format!("{program}.c")),
            &exe,
            false,
            &static_link(&artifacts),
        );
        run(&exe);
    }
}

#[test]
fn c_programs_pass_against_the_shared_library() {
    let artifacts = artifact_dir();
    let lib_dir = shared_lib_dir(&artifacts);
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("c-shared-bin");
    std::fs::create_dir_all(&out).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for program in PROGRAMS {
        let exe = out.join(program);
        build(
            &root.join("c-tests").join(format!("{program}.c")),
            &exe,
            false,
            &shared_link(&lib_dir),
        );
        run(&exe);
    }
    let exe = out.join("test_header_cpp");
    build(
        &root.join("c-tests/test_header_cpp.cpp"),
        &exe,
        true,
        &shared_link(&lib_dir),
    );
    run(&exe);
    let demo = out.join("demo");
    build(
        &root.join("examples/demo.c"),
        &demo,
        false,
        &shared_link(&lib_dir),
    );
    run(&demo);
}

/// The README's C usage example compiles warning-free, runs, and prints what it says.
#[test]
fn readme_c_example_runs_and_prints_the_documented_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme.find("```c\n").expect("README has a C example") + 5;
    let end = start + readme[start..].find("```").unwrap();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("readme-example");
    std::fs::create_dir_all(&out).unwrap();
    let source = out.join("readme_example.c");
    std::fs::write(&source, &readme[start..end]).unwrap();
    let exe = out.join("readme_example");
    build(&source, &exe, false, &static_link(&artifact_dir()));
    let output = Command::new(&exe).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "7 5 3 4 2 3\n");
}

/// The header compiles in every C and C++ standard a user may build with, strictly (finding 7 of
/// the second hardening round: a `//` comment made C89 fail), and GK_OPTIONS_INIT and
/// GK_STRIDED_TENSOR_INIT are valid initializers in each.
#[test]
fn header_compiles_as_c89_to_c11_and_cxx98_to_cxx20() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("header-standards");
    std::fs::create_dir_all(&out).unwrap();
    let body = "#include \"gatherkit.h\"\n\
                int main(void) {\n\
                    gk_options o = GK_OPTIONS_INIT;\n\
                    gk_strided_tensor t = GK_STRIDED_TENSOR_INIT;\n\
                    return (int)o.num_threads + (int)(o.struct_size != sizeof(gk_options))\n\
                        + (int)(t.struct_size != sizeof(gk_strided_tensor)) + (int)t.rank;\n\
                }\n";
    for (std, cpp) in [
        ("c89", false),
        ("c99", false),
        ("c11", false),
        ("c++98", true),
        ("c++11", true),
        ("c++20", true),
    ] {
        let source = out.join(if cpp { "header.cpp" } else { "header.c" });
        std::fs::write(&source, body).unwrap();
        let mut cmd = compiler(cpp).to_command();
        cmd.arg(format!("-std={std}"))
            .args(["-Wall", "-Wextra", "-pedantic", "-Werror", "-c"])
            .arg("-I")
            .arg(root.join("include"))
            .arg(&source)
            .arg("-o")
            .arg(out.join(format!("header-{std}.o")));
        let output = cmd.output().expect("the compiler runs");
        assert!(
            output.status.success(),
            "gatherkit.h does not compile as {std}:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
