#[pctvb::test]
fn counts(threads: usize) {
    let _ = threads;
}

fn main() {}
