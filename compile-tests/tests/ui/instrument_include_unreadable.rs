// An absolute path, so the message is the same on every machine (relative paths are joined to
// the crate root).
#[pctvb::instrument(force, include = "/nonexistent/pctvb/counter.rs")]
mod counter {}

fn main() {}
