#[pctvb::instrument(force)]
mod slot {
    use std::cell;

    pub struct Slot(cell::UnsafeCell<u8>);
}

fn main() {}
