#[pctvb::test(iterations = "1000")]
fn counts() {}

fn main() {}
