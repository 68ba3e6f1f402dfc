// usize::MAX: the stack allocator's guard page and rounding to pages overflowed, and the test
// failed with no message at all.
#[pctvb::test(iterations = 5, stack_size = 18446744073709551615)]
fn counts() {}

fn main() {}
