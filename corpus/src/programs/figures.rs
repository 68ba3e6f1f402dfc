// The PCTVB paper's Figures 1-4, 8-10 and 12 (Bindal, Bansal, Lal), written against the facade
// `rt`. Included once per tool by `crate::on_tool!`, and by the root crate's
// `tests/common/paper_figures.rs`: no inner attributes or doc comments here. Every shared
// variable is created at a line of its own: pctvb names a variable by its creation site, so
// atomics made by one helper function would all be one variable.

use super::rt::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use super::rt::sync::{Arc, Mutex};
use super::rt::thread;

type Body = Box<dyn FnOnce() + Send + 'static>;

/// Spawns every closure as a thread, in order, then joins them all.
pub fn run_threads(bodies: Vec<Body>) {
    #[allow(clippy::redundant_closure)]
    let handles: Vec<_> = bodies.into_iter().map(|b| thread::spawn(b)).collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Figure 1 (c=0, v=0, t=2): `ASSERT(a == 0)` against `a++`.
pub fn figure_1(_: usize) {
    let a = Arc::new(AtomicUsize::new(0));
    let (a1, a2) = (a.clone(), a);
    run_threads(vec![
        Box::new(move || assert_eq!(a1.load(SeqCst), 0, "figure 1: a was incremented")),
        Box::new(move || {
            a2.fetch_add(1, SeqCst);
        }),
    ]);
}

/// Figure 2 (c=1, v=1, t=2): two reads of `a` separated by `a++`.
pub fn figure_2(_: usize) {
    let a = Arc::new(AtomicUsize::new(0));
    let (a1, a2) = (a.clone(), a);
    run_threads(vec![
        Box::new(move || {
            let t1 = a1.load(SeqCst);
            let t2 = a1.load(SeqCst);
            assert_eq!(t1, t2, "figure 2: a changed between the reads");
        }),
        Box::new(move || {
            a2.fetch_add(1, SeqCst);
        }),
    ]);
}

/// Figure 3 (c=2, v=1, t=2): the reads must see `a = 1` and then `a = 0`.
pub fn figure_3(_: usize) {
    let a = Arc::new(AtomicUsize::new(0));
    let (a1, a2) = (a.clone(), a);
    run_threads(vec![
        Box::new(move || {
            let t1 = a1.load(SeqCst);
            let t2 = a1.load(SeqCst);
            assert_eq!(t1, t2, "figure 3: a changed between the reads");
        }),
        Box::new(move || {
            a2.store(1, SeqCst);
            a2.store(0, SeqCst);
        }),
    ]);
}

/// Figure 4 (c=2, v=2, t=2): `t1 != t2` needs a preemption on `a`, `t3 == 1` one on `b`.
pub fn figure_4(_: usize) {
    let a = Arc::new(AtomicUsize::new(0));
    let b = Arc::new(AtomicUsize::new(0));
    let (a1, b1, a2, b2) = (a.clone(), b.clone(), a, b);
    run_threads(vec![
        Box::new(move || {
            let t1 = a1.load(SeqCst);
            let t2 = a1.load(SeqCst);
            let t3 = b1.load(SeqCst);
            assert!(t1 == t2 || t3 != 1, "figure 4: a changed and b was 1");
        }),
        Box::new(move || {
            a2.store(1, SeqCst);
            b2.store(1, SeqCst);
            b2.store(0, SeqCst);
        }),
    ]);
}

/// Figure 8 (c=0, v=0, t=3): the check runs after both increments.
pub fn figure_8(_: usize) {
    let a = Arc::new(AtomicUsize::new(0));
    let (a1, a2, a3) = (a.clone(), a.clone(), a);
    run_threads(vec![
        Box::new(move || {
            a1.fetch_add(1, SeqCst);
        }),
        Box::new(move || {
            a2.fetch_add(1, SeqCst);
        }),
        Box::new(move || assert_ne!(a3.load(SeqCst), 2, "figure 8: both increments ran")),
    ]);
}

/// Figure 9 (c=1, v=1, t=3): both increments between two reads.
pub fn figure_9(_: usize) {
    let a = Arc::new(AtomicUsize::new(0));
    let (a1, a2, a3) = (a.clone(), a.clone(), a);
    run_threads(vec![
        Box::new(move || {
            let t1 = a1.load(SeqCst);
            let t2 = a1.load(SeqCst);
            assert!(t2 <= t1 + 1, "figure 9: both increments ran between the reads");
        }),
        Box::new(move || {
            a2.fetch_add(1, SeqCst);
        }),
        Box::new(move || {
            a3.fetch_add(1, SeqCst);
        }),
    ]);
}

/// Figure 10 (c=2, v=2, t=3): `a++` between the reads of `a` and `b++` between those of `b`.
pub fn figure_10(_: usize) {
    let a = Arc::new(AtomicUsize::new(0));
    let b = Arc::new(AtomicUsize::new(0));
    let (a1, b1, a2, b3) = (a.clone(), b.clone(), a, b);
    run_threads(vec![
        Box::new(move || {
            let t1 = a1.load(SeqCst);
            let t2 = a1.load(SeqCst);
            let t3 = b1.load(SeqCst);
            let t4 = b1.load(SeqCst);
            assert!(t1 == t2 || t3 == t4, "figure 10: both a and b changed between reads");
        }),
        Box::new(move || {
            a2.fetch_add(1, SeqCst);
        }),
        Box::new(move || {
            b3.fetch_add(1, SeqCst);
        }),
    ]);
}

/// Figure 12 (c=2, v=1, t=2): AllocationVector. Every routine locks the vector's monitor; two
/// threads can find the same free block, and the second then sees it allocated.
pub fn figure_12(_: usize) {
    let blocks = Arc::new(Mutex::new(vec![false; 2]));
    let worker = |blocks: Arc<Mutex<Vec<bool>>>| {
        move || {
            let find_free_block = || blocks.lock().unwrap().iter().position(|&used| !used);
            let is_block_free = |b: usize| !blocks.lock().unwrap()[b];
            let mark_block_allocated = |b: usize| blocks.lock().unwrap()[b] = true;
            let free_all_blocks = || blocks.lock().unwrap().iter_mut().for_each(|u| *u = false);
            let b = find_free_block().expect("a free block");
            assert!(is_block_free(b), "figure 12: block {b} was allocated by the other thread");
            mark_block_allocated(b);
            free_all_blocks();
        }
    };
    run_threads(vec![Box::new(worker(blocks.clone())), Box::new(worker(blocks))]);
}
