// `assert!`'s arguments are looked into, split at top-level commas. Here the split cuts the
// turbofish `::<HashMap<u8, u8>>` in two, the first piece does not parse as an expression and
// names an access (`lock`), so this valid code is rejected. The file records that current
// behaviour; it should move to a passing test once the split respects generic arguments.
#[pctvb::instrument(force)]
mod table {
    use std::collections::HashMap;
    use std::sync::Mutex;

    pub fn check(m: &Mutex<Vec<(u8, u8)>>) {
        assert!(m.lock().unwrap().iter().copied().collect::<HashMap<u8, u8>>().is_empty());
    }
}

fn main() {}
