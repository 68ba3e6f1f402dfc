pub struct S(u32);

impl S {
    #[pctvb::instrument]
    pub fn new(v: u32) -> Self {
        S(v)
    }
}

fn main() {}
