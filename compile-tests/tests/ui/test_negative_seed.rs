#[pctvb::test(seed = -1)]
fn counts() {}

fn main() {}
