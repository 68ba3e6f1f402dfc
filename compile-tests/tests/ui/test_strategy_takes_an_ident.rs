// `strategy` names are strings, not identifiers.
#[pctvb::test(strategy = pct)]
fn counts() {}

fn main() {}
