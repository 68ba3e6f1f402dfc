// One byte: pctvb's own start of a logical thread overflowed it and killed the test binary.
#[pctvb::test(stack_size = 1)]
fn counts() {}

fn main() {}
