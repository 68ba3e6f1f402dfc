#[pctvb::instrument(force)]
mod outer {
    #[pctvb::instrument(force)]
    pub mod inner {
        pub fn f() {}
    }
}

fn main() {}
