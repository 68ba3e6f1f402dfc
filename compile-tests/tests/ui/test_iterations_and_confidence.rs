#[pctvb::test(iterations = 1000, confidence = 0.99)]
fn counts() {}

fn main() {}
