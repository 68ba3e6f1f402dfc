#[pctvb::instrument(force)]
mod counter;

fn main() {}
