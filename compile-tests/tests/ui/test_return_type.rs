// A `#[pctvb::test]` function returns `()` or a `Result`; another type is named with what to do.
#[pctvb::test(iterations = 1)]
fn returns_an_exit_code() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}

fn main() {}
