// A misspelt argument name: the error lists the valid ones.
#[pctvb::test(iteratons = 100)]
fn counts() {}

fn main() {}
