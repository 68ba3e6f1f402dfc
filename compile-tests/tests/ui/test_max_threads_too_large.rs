// 2^64: `max_threads` is a usize, at most u64::MAX on any target.
#[pctvb::test(max_threads = 18446744073709551616)]
fn counts() {}

fn main() {}
