#[pctvb::test(confidence = 1)]
fn counts() {}

fn main() {}
