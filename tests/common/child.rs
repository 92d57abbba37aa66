//! Running a test's body in a child process of its own: the test binary started again with an
//! environment variable, for tests that count the process's threads or CPU time, fork, or limit
//! its address space, so that the other tests' threads neither disturb them nor are disturbed.

#![allow(dead_code)]

use std::process::Command;

const CHILD: &str = "GATHERKIT_TEST_CHILD";

/// Runs `body` in a fresh child process when called from the test named `name`: the parent
/// starts the child and asserts it succeeded; the child runs `body` and returns.
pub fn in_child(name: &str, body: impl FnOnce()) {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        body();
        return;
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the child for {name} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
