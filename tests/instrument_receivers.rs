//! Method calls whose receiver is not a plain place, under `#[pctvb::instrument]`: a
//! temporary (a `MutexGuard` from `.lock().unwrap()`, an `Option` unwrapped, a builder) keeps
//! its type and value category, so `&mut self` and `self` methods named like an operation
//! (`replace`, `swap`, `write`, `as_mut`, `set`, `send`) compile and behave as written; a field
//! behind a raw pointer (`(*p).items.swap(..)`) is borrowed mutably as written; and each
//! receiver is evaluated once. This file compiling is half the test (before, the hook borrowed
//! every such receiver as `&T`: E0596 and E0507); the other half runs the code with every
//! variable tracked and the soundness check on, so every hook is armed.

use pctvb::instrument::{self, Selection};

#[pctvb::instrument(force)]
pub mod guards {
    use std::io::Write;
    use std::sync::Mutex;

    /// `Option::replace` (`&mut self`) through a guard temporary.
    pub fn guard_replace(slot: &Mutex<Option<u32>>) -> Option<u32> {
        slot.lock().unwrap().replace(7)
    }

    /// `<[T]>::swap` (`&mut self`) through a guard temporary.
    pub fn guard_swap(v: &Mutex<Vec<u32>>) {
        v.lock().unwrap().swap(0, 1)
    }

    /// `io::Write::write` (`&mut self`) through a guard temporary.
    pub fn guard_write(out: &Mutex<Vec<u8>>) -> usize {
        out.lock().unwrap().write(b"hi").unwrap()
    }

    /// `Option::as_mut` (`&mut self`) through a guard temporary.
    pub fn guard_as_mut(slot: &Mutex<Option<u32>>) {
        if let Some(x) = slot.lock().unwrap().as_mut() {
            *x += 1
        }
    }
}

#[pctvb::instrument(force)]
pub mod by_value {
    use std::cell::Cell;

    /// A sender whose `send` takes `self`.
    pub struct Tx(pub Vec<u32>);

    impl Tx {
        pub fn send(mut self, v: u32) -> Vec<u32> {
            self.0.push(v);
            self.0
        }
    }

    /// `self` method on an unwrapped temporary.
    pub fn forward(tx: Option<Tx>) -> Vec<u32> {
        tx.unwrap().send(5)
    }

    /// A builder whose `set` and `send` take `self`.
    pub struct B(Vec<u32>);

    impl B {
        pub fn start() -> B {
            B(Vec::new())
        }
        pub fn set(mut self, x: u32) -> B {
            self.0.push(x);
            self
        }
        pub fn send(self) -> usize {
            self.0.len()
        }
    }

    /// A chain of `self` methods on temporaries.
    pub fn build() -> usize {
        B::start().set(1).set(2).send()
    }

    /// A receiver with a side effect: `calls` counts its evaluations.
    pub fn counted(calls: &Cell<u32>) -> B {
        calls.set(calls.get() + 1);
        B::start()
    }

    /// `set` and `send` on receivers that count their evaluations.
    pub fn once(calls: &Cell<u32>) -> usize {
        counted(calls).set(3).send()
    }
}

#[pctvb::instrument(force)]
pub mod through_pointers {
    /// A struct reached through a raw pointer.
    pub struct Node {
        pub items: Vec<u32>,
        pub slot: Option<u32>,
    }

    /// `&mut self` methods on fields behind a raw pointer, and on the pointee itself.
    ///
    /// # Safety
    /// `p` points to a live `Node` nobody else uses.
    pub unsafe fn shuffle(p: *mut Node) -> Option<u32> {
        unsafe {
            (*p).items.swap(0, 1);
            let old = (*p).slot.replace(9);
            if let Some(x) = (*p).slot.as_mut() {
                *x += 1;
            }
            old
        }
    }
}

#[test]
fn methods_on_temporaries_compile_and_behave_as_written() {
    use pctvb::sync::Mutex;
    use std::cell::Cell;

    let tracking = instrument::track(Selection::All).soundness_check(true);
    let report = pctvb::Config::new().ignore_env().iterations(20).seed(3).run(|| {
        let slot = Mutex::new(Some(1));
        assert_eq!(guards::guard_replace(&slot), Some(1));
        guards::guard_as_mut(&slot);
        assert_eq!(*slot.lock().unwrap(), Some(8));
        let v = Mutex::new(vec![1, 2]);
        guards::guard_swap(&v);
        assert_eq!(*v.lock().unwrap(), vec![2, 1]);
        let out = Mutex::new(vec![]);
        assert_eq!(guards::guard_write(&out), 2);
        assert_eq!(*out.lock().unwrap(), b"hi");

        assert_eq!(by_value::forward(Some(by_value::Tx(vec![4]))), vec![4, 5]);
        assert_eq!(by_value::build(), 2);
        let calls = Cell::new(0);
        assert_eq!(by_value::once(&calls), 1);
        assert_eq!(calls.get(), 1, "the receiver was evaluated more than once");

        let p =
            Box::into_raw(Box::new(through_pointers::Node { items: vec![1, 2], slot: Some(4) }));
        assert_eq!(unsafe { through_pointers::shuffle(p) }, Some(4));
        let node = unsafe { Box::from_raw(p) };
        assert_eq!((node.items.clone(), node.slot), (vec![2, 1], Some(10)));
    });
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
    let stats = tracking.stats();
    assert!(stats.misses.is_empty(), "{:?}", stats.misses);
}

/// Outside any run the same code behaves the same (the hooks are unarmed).
#[test]
fn outside_a_run_the_methods_behave_the_same() {
    let slot = pctvb::sync::Mutex::new(None);
    assert_eq!(guards::guard_replace(&slot), None);
    assert_eq!(by_value::build(), 2);
    let calls = std::cell::Cell::new(0);
    assert_eq!(by_value::once(&calls), 1);
    assert_eq!(calls.get(), 1);
}
