#[pctvb::test(seed = 18446744073709551616)]
fn counts() {}

fn main() {}
