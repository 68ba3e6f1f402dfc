#[pctvb::instrument(force)]
mod pool {
    use std::thread::available_parallelism;

    pub fn workers() -> usize {
        available_parallelism().map_or(1, |n| n.get())
    }
}

fn main() {}
