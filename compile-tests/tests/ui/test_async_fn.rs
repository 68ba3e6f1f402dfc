#[pctvb::test]
async fn counts() {}

fn main() {}
