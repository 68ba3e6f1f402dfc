#[pctvb::instrument(force)]
mod clock {
    use std::thread::sleep_until;

    pub fn wait_until(deadline: std::time::Instant) {
        sleep_until(deadline)
    }
}

fn main() {}
