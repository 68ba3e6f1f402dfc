// A percentage where a probability is expected.
#[pctvb::test(confidence = 99.0)]
fn counts() {}

fn main() {}
