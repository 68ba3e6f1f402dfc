#[pctvb::instrument(force)]
mod counter {
    use std::*;

    pub fn new() -> sync::Arc<u8> {
        sync::Arc::new(0)
    }
}

fn main() {}
