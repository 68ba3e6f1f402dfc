#[pctvb::test]
struct Counts;

fn main() {}
