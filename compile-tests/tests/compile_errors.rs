//! The compile errors of `#[pctvb::test]` and `#[pctvb::instrument]`: each file of `tests/ui/`
//! must fail to compile with exactly the message and span recorded in its `.stderr` beside it.
//! The `compile_fail` doc tests only check that compilation fails; these check what the user
//! reads and where it points.
//!
//! After changing a message on purpose, regenerate the expectations with
//! `TRYBUILD=overwrite cargo test -p pctvb-compile-tests` and read the diff.

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
