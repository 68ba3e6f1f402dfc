const ITERATIONS: u64 = 100;

#[pctvb::test(iterations = ITERATIONS)]
fn counts() {}

fn main() {}
