//! The pass on small items: which variables it finds and what each site may access.

use super::*;
use quote::quote;

/// Runs numbering and the pass; returns `label -> sorted var names` (or `["*"]`).
fn run(tokens: proc_macro2::TokenStream) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let mut item: Item = syn::parse2(tokens).unwrap();
    let sites = sites::number(&mut item).unwrap();
    let a = analyze(&item, &sites);
    let vars: Vec<String> =
        a.vars.iter().map(|v| format!("{}:{}", v.kind.name(), v.name)).collect();
    let may = sites
        .iter()
        .zip(&a.may)
        .map(|(s, m)| {
            let names = match m {
                May::Anything => vec!["*".to_string()],
                May::Vars(vs) => vs.iter().map(|&v| a.vars[v].name.clone()).collect(),
            };
            (s.label.clone(), names)
        })
        .collect();
    (vars, may)
}

/// What the site labelled `label` may access, from [`run`]'s list; panics listing the
/// labels there are if there is no such site.
fn may_of<'a>(may: &'a [(String, Vec<String>)], label: &str) -> &'a [String] {
    &may.iter().find(|(l, _)| l == label).unwrap_or_else(|| panic!("no site {label}: {may:?}")).1
}

/// A Treiber stack: each field of `Stack` is its own variable, and node pointers loaded from
/// `Stack.head` point to the boxes `push` allocates.
#[test]
fn treiber_stack_fields_and_nodes() {
    let (vars, may) = run(quote! {
        mod stack {
            use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
            use std::sync::Mutex;
            struct Node { value: u64, next: *mut Node }
            pub struct Stack { head: AtomicPtr<Node>, len: AtomicUsize, log: Mutex<Vec<u64>> }
            impl Stack {
                pub fn new() -> Stack {
                    Stack {
                        head: AtomicPtr::new(std::ptr::null_mut()),
                        len: AtomicUsize::new(0),
                        log: Mutex::new(Vec::new()),
                    }
                }
                pub fn push(&self, value: u64) {
                    let node = Box::into_raw(Box::new(Node { value, next: std::ptr::null_mut() }));
                    loop {
                        let head = self.head.load(Ordering::SeqCst);
                        unsafe { (*node).next = head; }
                        if self.head.compare_exchange(head, node, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                            break;
                        }
                    }
                    self.len.fetch_add(1, Ordering::SeqCst);
                    self.log.lock().unwrap().push(value);
                }
                pub fn pop(&self) -> Option<u64> {
                    let head = self.head.load(Ordering::SeqCst);
                    if head.is_null() { return None; }
                    let next = unsafe { (*head).next };
                    self.head.store(next, Ordering::SeqCst);
                    Some(unsafe { (*head).value })
                }
            }
        }
    });
    assert_eq!(
        vars,
        vec!["Atomic:Stack.head", "Atomic:Stack.len", "Mutex:Stack.log", "Heap:Box::new(let node)"]
    );
    assert_eq!(may_of(&may, "self.head.load"), ["Stack.head"]);
    assert_eq!(may_of(&may, "self.head.compare_exchange"), ["Stack.head"]);
    assert_eq!(may_of(&may, "self.len.fetch_add"), ["Stack.len"]);
    assert_eq!(may_of(&may, "self.log.lock"), ["Stack.log"]);
    assert_eq!(may_of(&may, "*node"), ["Box::new(let node)"]);
    // `head` was loaded from `Stack.head`, which holds node pointers.
    assert_eq!(may_of(&may, "*head"), ["Box::new(let node)"]);
    assert_eq!(may_of(&may, "Box::new"), ["Box::new(let node)"]);
}

/// Values keep their variables through `Arc::new`, `clone`, `Arc::clone` and a `move`
/// closure passed to `thread::spawn`; unrelated atomics stay apart.
#[test]
fn flow_through_arcs_clones_closures_and_spawn() {
    let (_, may) = run(quote! {
        fn body() {
            let a = Arc::new(AtomicUsize::new(0));
            let b = Arc::new(AtomicUsize::new(0));
            let m = Arc::new(Mutex::new(0));
            let a2 = a.clone();
            let m2 = Arc::clone(&m);
            let h = thread::spawn(move || {
                a2.fetch_add(1, Ordering::SeqCst);
                *m2.lock().unwrap() += 1;
            });
            b.store(1, Ordering::SeqCst);
            h.join().unwrap();
            assert_eq!(a.load(Ordering::SeqCst), 1);
        }
    });
    assert_eq!(may_of(&may, "a2.fetch_add"), ["let a"]);
    assert_eq!(may_of(&may, "m2.lock"), ["let m"]);
    assert_eq!(may_of(&may, "b.store"), ["let b"]);
    assert_eq!(may_of(&may, "a.load"), ["let a"]);
}

/// A static passed by reference to a private helper reaches the helper's parameter; each
/// static is its own variable.
#[test]
fn statics_and_helper_functions() {
    let (_, may) = run(quote! {
        mod m {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            static OTHER: AtomicUsize = AtomicUsize::new(0);
            fn bump(c: &AtomicUsize) { c.fetch_add(1, Ordering::SeqCst); }
            pub fn run() { bump(&COUNTER); OTHER.load(Ordering::SeqCst); }
        }
    });
    assert_eq!(may_of(&may, "c.fetch_add"), ["static COUNTER"]);
    assert_eq!(may_of(&may, "OTHER.load"), ["static OTHER"]);
}

/// `pub` fields, parameters of `pub` functions, outside statics and values returned by
/// outside functions may be anything; a private struct built in the item is not.
#[test]
fn what_the_pass_cannot_see_is_anything() {
    let (_, may) = run(quote! {
        mod m {
            pub struct Open { pub n: AtomicUsize }
            struct Closed { n2: AtomicUsize }
            pub fn f(o: &Open, x: &AtomicUsize) {
                o.n.load(Ordering::SeqCst);          // pub field: outside code may store
                x.load(Ordering::SeqCst);            // parameter of a pub function
                outside::COUNTER.load(Ordering::SeqCst); // a static the pass cannot see
                outside::get().load(Ordering::SeqCst);   // a function the pass cannot see
                let c = Closed { n2: AtomicUsize::new(0) };
                c.n2.load(Ordering::SeqCst);
            }
        }
    });
    assert_eq!(may_of(&may, "o.n.load"), ["*"]);
    assert_eq!(may_of(&may, "x.load"), ["*"], "a parameter of a pub function");
    assert_eq!(may_of(&may, "outside::COUNTER.load"), ["*"]);
    assert_eq!(may_of(&may, "outside::get().load"), ["*"]);
    assert_eq!(may_of(&may, "c.n2.load"), ["Closed.n2"]);
}

/// A `get` on a `Vec` is a candidate site by name, but may access no variable: no hook.
#[test]
fn sites_of_unrelated_types_need_no_hook() {
    let (_, may) = run(quote! {
        fn f() {
            let v = vec![1, 2, 3];
            let _ = v.get(0);
            let a = AtomicUsize::new(0);
            a.load(Ordering::SeqCst);
        }
    });
    assert_eq!(may_of(&may, "v.get"), Vec::<String>::new().as_slice());
    assert_eq!(may_of(&may, "a.load"), ["let a"]);
}

/// `*t = *g` copies data, not pointers: neither buffer ends up inside the other.
#[test]
fn copying_data_between_buffers_does_not_nest_them() {
    let (_, may) = run(quote! {
        fn f(i: usize) {
            let g = Box::into_raw(Box::new([0.0f64; 8]));
            let t = Box::into_raw(Box::new([0.0f64; 8]));
            unsafe {
                *t = *g;
                (*g)[i] = 1.0;
            }
        }
    });
    // `*t = *g` copies data: `g` does not end up inside `t`, nor `t` inside `g`.
    assert_eq!(may_of(&may, "*t"), ["Box::new(let t)"]);
    assert_eq!(may_of(&may, "*g"), ["Box::new(let g)"]);
}

/// A value built in place through a pointer (`*b = Some(Slot { .. })`) lives inline in the
/// pointee: a pointer into its cell may access the box.
#[test]
fn constructed_values_stored_through_pointers_live_inline() {
    let (_, may) = run(quote! {
        mod m {
            struct Slot { cell: UnsafeCell<u64> }
            pub fn f() {
                let b = Box::into_raw(Box::new(None));
                unsafe {
                    *b = Some(Slot { cell: UnsafeCell::new(0) });
                    let p = (*b).as_ref().unwrap().cell.get();
                    *p = 1;
                }
            }
        }
    });
    assert_eq!(may_of(&may, "*p"), ["Box::new(let b)"]);
}

/// Two structs with a field of the same name: the syntax (`self`, annotations, struct
/// literals) tells them apart; otherwise both, or anything for a value from outside.
#[test]
fn fields_are_told_apart_by_struct_when_the_syntax_says() {
    let (_, may) = run(quote! {
        mod m {
            struct A { n: AtomicUsize }
            struct B { n: AtomicUsize }
            impl A {
                fn new() -> A { A { n: AtomicUsize::new(0) } }
                fn get(&self) -> usize { self.n.load(Ordering::SeqCst) }
            }
            impl B {
                fn new() -> Self { Self { n: AtomicUsize::new(0) } }
                fn get(&self) -> usize { self.n.load(Ordering::SeqCst) }
            }
            fn either(b: &B, x: &A, pair: (&A, &B)) {
                b.n.store(1, Ordering::SeqCst);
                let y: &A = x;
                y.n.store(2, Ordering::SeqCst);
                let z = pair.0;
                z.n.store(3, Ordering::SeqCst);
                let w = outside();
                w.n.store(4, Ordering::SeqCst);
            }
        }
    });
    // The pass lists sites in source order: A::get's load, then B::get's.
    let loads: Vec<_> = may.iter().filter(|(l, _)| l == "self.n.load").collect();
    assert_eq!(loads[0].1, ["A.n"]);
    assert_eq!(loads[1].1, ["B.n"]);
    assert_eq!(may_of(&may, "b.n.store"), ["B.n"]);
    assert_eq!(may_of(&may, "y.n.store"), ["A.n"]);
    // `z`'s struct is not evident: both.
    assert_eq!(may_of(&may, "z.n.store"), ["A.n", "B.n"]);
    // `w` comes from code the pass cannot see: its struct may be another crate's.
    assert_eq!(may_of(&may, "w.n.store"), ["*"]);
}

/// `let (a, b) = (g, t);` binds element-wise: `a` is only `g`'s box and `b` only `t`'s.
#[test]
fn tuple_lets_bind_element_wise() {
    let (_, may) = run(quote! {
        fn f() {
            let g = Box::into_raw(Box::new(0u64));
            let t = Box::into_raw(Box::new(0u64));
            let (a, b) = (g, t);
            unsafe { *a = 1; *b = 2; }
        }
    });
    assert_eq!(may_of(&may, "*a"), ["Box::new(let g)"]);
    assert_eq!(may_of(&may, "*b"), ["Box::new(let t)"]);
}

/// A pointer into an `UnsafeCell` inside a box may access the box's memory.
#[test]
fn pointers_into_cells_reach_their_containers() {
    let (_, may) = run(quote! {
        mod m {
            struct Slot { cell: UnsafeCell<u64> }
            pub fn f() {
                let s = Box::new(Slot { cell: UnsafeCell::new(0) });
                let p = s.cell.get();
                unsafe { *p = 1; }
            }
        }
    });
    assert_eq!(may_of(&may, "s.cell.get"), ["Slot.cell"]);
    // The pointer points into the cell, which lives inside the box.
    assert_eq!(may_of(&may, "*p"), ["Box::new(let s)"]);
}
