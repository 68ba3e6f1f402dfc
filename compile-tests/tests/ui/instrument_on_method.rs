pub struct S(u32);

impl S {
    #[pctvb::instrument]
    pub fn get(&self) -> u32 {
        self.0
    }
}

fn main() {
    // The method is kept as written: this call is no second error.
    assert_eq!(S(1).get(), 1);
}
