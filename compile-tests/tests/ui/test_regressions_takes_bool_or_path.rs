#[pctvb::test(regressions = 0)]
fn counts() {}

fn main() {}
