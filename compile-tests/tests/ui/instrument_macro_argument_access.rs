// The pass cannot see inside a macro it does not know: an access in its arguments is an error.
macro_rules! log {
    ($e:expr) => {
        let _ = $e;
    };
}

#[pctvb::instrument(force)]
mod counter {
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub fn report(n: &AtomicUsize) {
        log!(n.load(Ordering::SeqCst));
    }
}

fn main() {
    log!(0);
}
