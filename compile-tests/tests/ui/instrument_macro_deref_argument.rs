// A macro defined outside the instrumented item expands to code the pass never sees: a
// dereference passed to it would be written without a hook, unchecked. An error at the access.
macro_rules! set {
    ($a:expr, $v:expr) => {
        $a = $v
    };
}

#[pctvb::instrument(force)]
mod m {
    #[derive(Clone, Copy)]
    pub struct SendPtr(pub *mut u64);
    unsafe impl Send for SendPtr {}

    pub fn alloc() -> SendPtr {
        SendPtr(Box::into_raw(Box::new(0u64)))
    }

    pub fn write(p: SendPtr, v: u64) {
        unsafe { set!(*p.0, v) }
    }
}

fn main() {
    // Outside instrumented code the macro is fine.
    let mut x = 0;
    set!(x, x + 1);
    assert_eq!(x, 1);
}
