#[pctvb::test(regressions)]
fn counts() {}

fn main() {}
