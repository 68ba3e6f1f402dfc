// `matches!` takes a pattern, so it is not one of the std macros whose arguments the pass
// parses as expressions: an access inside it is an error like in any other macro.
#[pctvb::instrument(force)]
mod state {
    use std::sync::atomic::{AtomicU8, Ordering};

    pub fn idle(s: &AtomicU8) -> bool {
        matches!(s.load(Ordering::Acquire), 0 | 2)
    }
}

fn main() {}
