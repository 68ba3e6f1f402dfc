#[pctvb::instrument(forced)]
mod counter {}

fn main() {}
