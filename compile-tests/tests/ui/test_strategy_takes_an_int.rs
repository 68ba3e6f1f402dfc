#[pctvb::test(strategy = 2)]
fn counts() {}

fn main() {}
