#[pctvb::test(pctvb::iterations = 10)]
fn counts() {}

fn main() {}
