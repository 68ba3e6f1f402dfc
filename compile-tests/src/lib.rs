//! Nothing here: the crate exists for `tests/compile_errors.rs`, which checks the compile
//! errors of `#[pctvb::test]` and `#[pctvb::instrument]` with trybuild.
