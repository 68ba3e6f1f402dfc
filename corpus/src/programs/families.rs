// Program families that scale one factor while the bug stays the same: the thread count
// (a 2-thread bug among n threads) and the access frequency of an uninvolved variable (the
// paper's Figure 6). Included once per tool by `crate::on_tool!`.

use super::rt::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use super::rt::sync::Arc;
use super::rt::thread;

/// A bug between two threads among `n` spawned threads: the setter increments `a` ten times
/// and then raises `flag`; the checker fails if it sees all ten increments but not the flag,
/// so it must run exactly between the setter's last increment and its flag store (c=1: the
/// setter preempted there; v=1; t=2). The `n - 2` bystanders increment counters of their own:
/// steps, but no shared variables.
pub fn thread_scaling(n: usize) {
    let a = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicUsize::new(0));
    let (a1, flag1) = (a.clone(), flag.clone());
    let setter = thread::spawn(move || {
        for _ in 0..10 {
            a1.fetch_add(1, SeqCst);
        }
        flag1.store(1, SeqCst);
    });
    let checker = thread::spawn(move || {
        if a.load(SeqCst) == 10 {
            assert_eq!(flag.load(SeqCst), 1, "thread scaling: saw the work but not the flag");
        }
    });
    let bystanders: Vec<_> = (0..n.saturating_sub(2))
        .map(|_| {
            thread::spawn(|| {
                let own = AtomicUsize::new(0);
                for _ in 0..3 {
                    own.fetch_add(1, SeqCst);
                }
            })
        })
        .collect();
    setter.join().unwrap();
    checker.join().unwrap();
    for h in bystanders {
        h.join().unwrap();
    }
}

/// The paper's Figure 6 program: thread 1 reads `x` twice and expects the same value, thread
/// 2 writes `x` once (c=1, v=1, t=2), thread 3 accesses the unrelated `y` `noise` times.
pub fn access_frequency(noise: usize) {
    let x = Arc::new(AtomicUsize::new(0));
    let y = Arc::new(AtomicUsize::new(0));
    let x1 = x.clone();
    let reader = thread::spawn(move || {
        let a = x1.load(SeqCst);
        let b = x1.load(SeqCst);
        assert_eq!(a, b, "access frequency: x changed between the reads");
    });
    let writer = thread::spawn(move || x.store(1, SeqCst));
    let busy = thread::spawn(move || {
        for _ in 0..noise {
            y.fetch_add(1, SeqCst);
        }
    });
    reader.join().unwrap();
    writer.join().unwrap();
    busy.join().unwrap();
}
