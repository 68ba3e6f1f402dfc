#[pctvb::instrument(force, include = counter_rs)]
mod counter {}

fn main() {}
