// 2^32 + 1: `depth` is a u32, so this once became depth 1 (and a guarantee for depth <= 1).
#[pctvb::test(depth = 4294967297, confidence = 0.9)]
fn counts() {}

fn main() {}
