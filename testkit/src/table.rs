use std::any::Any;
use std::fmt::Display;
use std::panic::{self, AssertUnwindSafe};

/// Runs `check` on every row of a table and fails once, at the end, listing every row that
/// failed: a loop of assertions stops at the first failing row and hides how many others fail
/// too, which is what tells a one-row slip from a broken rule.
///
/// A row fails when `check` panics (an `assert!`, an `unwrap`, ...); the panic is caught and the
/// next row runs. The final panic names each failing row by its position and `label`, with its
/// panic message, and says how many of how many rows failed. A table with no rows fails too:
/// it would check nothing.
///
/// `check` may keep state across rows; after a row panics that state is whatever the panic left,
/// which is the caller's to allow for.
///
/// ```
/// gatherkit_testkit::test_each(
///     [(2, 4), (3, 9), (4, 16)],
///     |&(x, _)| format!("{x} squared"),
///     |&(x, square)| assert_eq!(x * x, square),
/// );
/// ```
pub fn test_each<R, L: Display>(
    rows: impl IntoIterator<Item = R>,
    label: impl Fn(&R) -> L,
    mut check: impl FnMut(&R),
) {
    let mut total = 0;
    let mut failures = Vec::new();
    for (position, row) in rows.into_iter().enumerate() {
        total += 1;
        // Unwind safety: the row is only borrowed, and state the closure keeps is covered above.
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| check(&row))) {
            let message = panic_message(payload.as_ref()).replace('\n', "\n    ");
            failures.push(format!("row {position} ({}): {message}", label(&row)));
        }
    }
    assert!(
        total > 0,
        "test_each: the table has no rows, so it checks nothing"
    );
    if !failures.is_empty() {
        panic!(
            "{} of {total} rows failed:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

/// The text a panic carried (`panic!` with a message gives a `&str` or a `String`).
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(message) = payload.downcast_ref::<&str>() {
        message
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message
    } else {
        "(a panic without a message)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message of the panic `f` ends in.
    fn failure_of(f: impl FnOnce()) -> String {
        let payload = panic::catch_unwind(AssertUnwindSafe(f)).expect_err("should fail");
        panic_message(payload.as_ref()).to_owned()
    }

    #[test]
    fn passing_rows_pass_and_each_row_is_checked_once() {
        let mut checked = Vec::new();
        test_each(1..=3, |n| *n, |&n| checked.push(n));
        assert_eq!(checked, [1, 2, 3]);
    }

    #[test]
    fn every_failing_row_is_reported_with_its_label_and_message() {
        let rows = [("one", 1), ("two", 2), ("three", 3), ("four", 4)];
        let mut checked = 0;
        let message = failure_of(|| {
            test_each(
                rows,
                |row| row.0,
                |&(_, n)| {
                    checked += 1;
                    assert!(n % 2 == 1, "{n} is even");
                },
            )
        });
        assert_eq!(checked, 4, "rows after a failing one still run");
        assert!(message.starts_with("2 of 4 rows failed:\n"), "{message}");
        assert!(message.contains("row 1 (two): 2 is even"), "{message}");
        assert!(message.contains("row 3 (four): 4 is even"), "{message}");
        assert!(
            !message.contains("one") && !message.contains("three"),
            "{message}"
        );
    }

    #[test]
    #[should_panic(expected = "2 of 3 rows failed")]
    fn a_table_with_failing_rows_fails() {
        test_each(
            [1, 2, 3],
            |n| format!("n = {n}"),
            |&n| assert_eq!(n, 2, "not two"),
        );
    }

    #[test]
    fn multi_line_messages_stay_under_their_row_and_any_payload_is_reported() {
        let message = failure_of(|| test_each([[1, 2]], |_| "pair", |&[a, b]| assert_eq!(a, b)));
        assert!(message.contains("row 0 (pair): assertion"), "{message}");
        assert!(message.contains("\n    "), "{message}");
        let message = failure_of(|| test_each([()], |_| "any", |_| panic::panic_any(42)));
        assert!(
            message.contains("row 0 (any): (a panic without a message)"),
            "{message}"
        );
    }

    #[test]
    #[should_panic(expected = "the table has no rows")]
    fn an_empty_table_fails() {
        test_each(Vec::<u8>::new(), |n| *n, |_| {});
    }
}
