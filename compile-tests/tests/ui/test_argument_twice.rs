#[pctvb::test(seed = 1, iterations = 10, seed = 2)]
fn counts() {}

fn main() {}
