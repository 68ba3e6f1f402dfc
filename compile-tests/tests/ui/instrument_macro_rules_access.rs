#[pctvb::instrument(force)]
mod counter {
    use std::sync::atomic::{AtomicUsize, Ordering};

    macro_rules! bump {
        ($n:expr) => {
            $n.fetch_add(1, Ordering::SeqCst)
        };
    }

    pub fn next(n: &AtomicUsize) -> usize {
        bump!(n)
    }
}

fn main() {}
