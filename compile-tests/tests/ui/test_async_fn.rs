// `#[pctvb::test] async fn` is accepted (the body runs under `pctvb::future::block_on`); an
// async test still takes no arguments.
#[pctvb::test]
async fn counts(n: u32) {
    let _ = n;
}

fn main() {}
