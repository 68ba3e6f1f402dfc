// A `Receiver` is not `Sync`, as std's: only one thread at a time may receive.

fn assert_sync<T: Sync>() {}

fn main() {
    assert_sync::<pctvb::sync::mpsc::Receiver<u32>>();
}
