#[pctvb::test]
fn counts<T: Default>() {
    let _ = T::default();
}

fn main() {}
