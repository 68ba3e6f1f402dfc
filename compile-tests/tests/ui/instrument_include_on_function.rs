#[pctvb::instrument(force, include = "src/counter.rs")]
fn counter() {}

fn main() {}
