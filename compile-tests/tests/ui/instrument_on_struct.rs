#[pctvb::instrument(force)]
struct Counter {
    n: std::sync::atomic::AtomicUsize,
}

fn main() {}
