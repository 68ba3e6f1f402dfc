#[pctvb::test(strategy = "exhaustive")]
fn counts() {}

fn main() {}
