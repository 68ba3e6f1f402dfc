#[pctvb::test(iterations = 0)]
fn counts() {}

fn main() {}
