// u32::MAX fits `depth`'s type, but each execution drew depth - 1 change points: the test
// binary aborted allocating 34 GB ("memory allocation of 34359738352 bytes failed").
#[pctvb::test(iterations = 50, depth = 4294967295, strategy = "pct")]
fn counts() {}

fn main() {}
