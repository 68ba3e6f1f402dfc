// A `macro_rules!` of the instrumented item whose body dereferences an argument: its expansions
// would be unchecked. The error does not suggest defining the macro elsewhere, which would
// hide the access from the attribute altogether.
#[pctvb::instrument(force)]
mod m {
    macro_rules! set {
        ($p:expr, $v:expr) => {
            *$p = $v
        };
    }

    pub fn write(p: *mut u64, v: u64) {
        unsafe { set!(p, v) }
    }
}

fn main() {}
