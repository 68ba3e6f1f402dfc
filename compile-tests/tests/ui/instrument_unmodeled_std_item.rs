#[pctvb::instrument(force)]
mod counter {
    pub fn take(_: std::sync::Exclusive<u8>) {}
}

fn main() {}
