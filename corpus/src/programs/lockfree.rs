// Lock-free data structures with real bugs, and their fixed versions (in `correct.rs`).
// Included once per tool by `crate::on_tool!`.

use super::rt::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use super::rt::sync::Arc;
use super::rt::thread;

const NIL: usize = usize::MAX;

/// A fixed set of slots handed out by a Treiber stack of free slots, by index (so it compiles
/// under shuttle and loom without unsafe code; `examples/treiber_aba.rs` has the raw-pointer
/// version): `head` the first free slot, `next[i]` the one after slot `i`.
struct SlotPool {
    head: AtomicUsize,
    next: Vec<AtomicUsize>,
    in_use: Vec<AtomicBool>,
}

impl SlotPool {
    fn new(slots: usize) -> SlotPool {
        SlotPool {
            head: AtomicUsize::new(0),
            next: (0..slots)
                .map(|i| AtomicUsize::new(if i + 1 < slots { i + 1 } else { NIL }))
                .collect(),
            in_use: (0..slots).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    /// Pops a free slot. BUG: ABA on `head` (a recycled slot makes a stale `next` look valid).
    fn alloc(&self) -> Option<usize> {
        loop {
            let head = self.head.load(SeqCst);
            if head == NIL {
                return None;
            }
            let next = self.next[head].load(SeqCst);
            if self.head.compare_exchange(head, next, SeqCst, SeqCst).is_ok() {
                let was_in_use = self.in_use[head].swap(true, SeqCst);
                assert!(!was_in_use, "treiber: slot {head} handed out twice (ABA)");
                return Some(head);
            }
        }
    }

    fn free(&self, slot: usize) {
        self.in_use[slot].store(false, SeqCst);
        loop {
            let head = self.head.load(SeqCst);
            self.next[slot].store(head, SeqCst);
            if self.head.compare_exchange(head, slot, SeqCst, SeqCst).is_ok() {
                return;
            }
        }
    }
}

/// ABA on a Treiber stack with a recycled node pool: three threads each take two slots of six
/// and give them back. c=2: thread 1 preempted between reading `next[head]` and its CAS, and
/// thread 2 preempted after popping two slots and pushing the first back; v=2 (`head` and
/// `next`); t=2 (a third thread can share thread 2's part).
pub fn treiber_aba(_: usize) {
    let pool = Arc::new(SlotPool::new(6));
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let pool = pool.clone();
            thread::spawn(move || {
                let a = pool.alloc().expect("6 slots are enough for 3 threads x 2");
                let b = pool.alloc().expect("6 slots are enough for 3 threads x 2");
                pool.free(a);
                pool.free(b);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// A Chase-Lev work-stealing deque on a fixed ring of `CAP` slots. Indices start at 1 so
/// `bottom - 1` never underflows. The owner pushes and pops at `bottom`, thieves steal at
/// `top` with a compare-and-swap.
pub struct Deque {
    top: AtomicUsize,
    bottom: AtomicUsize,
    buf: Vec<AtomicUsize>,
    /// With `true`, `pop`'s size check is off by one (a bug).
    pop_bug: bool,
    /// With `true`, `try_push`'s capacity check is off by one (a bug).
    capacity_bug: bool,
}

const CAP: usize = 4;

impl Deque {
    pub fn new(pop_bug: bool, capacity_bug: bool) -> Deque {
        Deque {
            top: AtomicUsize::new(1),
            bottom: AtomicUsize::new(1),
            buf: (0..CAP).map(|_| AtomicUsize::new(NIL)).collect(),
            pop_bug,
            capacity_bug,
        }
    }

    /// Pushes `x`, or gives it back when the ring is full.
    pub fn try_push(&self, x: usize) -> Result<(), usize> {
        let b = self.bottom.load(SeqCst);
        let t = self.top.load(SeqCst);
        // BUG (capacity_bug): `>` lets a push into a full ring overwrite the slot of the
        // oldest item, which a thief has not taken yet; the check must be `>=`.
        let full = if self.capacity_bug { b - t > CAP } else { b - t >= CAP };
        if full {
            return Err(x);
        }
        self.buf[b % CAP].store(x, SeqCst);
        self.bottom.store(b + 1, SeqCst);
        Ok(())
    }

    pub fn push(&self, x: usize) {
        let b = self.bottom.load(SeqCst);
        let t = self.top.load(SeqCst);
        assert!(b - t < CAP, "deque full");
        self.buf[b % CAP].store(x, SeqCst);
        self.bottom.store(b + 1, SeqCst);
    }

    pub fn pop(&self) -> Option<usize> {
        let b = self.bottom.load(SeqCst) - 1;
        self.bottom.store(b, SeqCst);
        let t = self.top.load(SeqCst);
        // BUG (pop_bug): `t <= b` treats the last item as uncontended and takes it without the
        // compare-and-swap that races with thieves; the check must be `t < b`.
        let uncontended = if self.pop_bug { t <= b } else { t < b };
        if uncontended {
            return Some(self.buf[b % CAP].load(SeqCst));
        }
        if t == b {
            let x = self.buf[b % CAP].load(SeqCst);
            let won = self.top.compare_exchange(t, t + 1, SeqCst, SeqCst).is_ok();
            self.bottom.store(b + 1, SeqCst);
            return won.then_some(x);
        }
        self.bottom.store(b + 1, SeqCst);
        None
    }

    pub fn steal(&self) -> Option<usize> {
        let t = self.top.load(SeqCst);
        let b = self.bottom.load(SeqCst);
        if t >= b {
            return None;
        }
        let x = self.buf[t % CAP].load(SeqCst);
        self.top.compare_exchange(t, t + 1, SeqCst, SeqCst).is_ok().then_some(x)
    }
}

/// The owner pushes two items and pops twice while a thief steals once; every item must be
/// taken at most once.
pub fn deque_scenario(buggy: bool) {
    let dq = Arc::new(Deque::new(buggy, false));
    let taken: Arc<Vec<AtomicUsize>> = Arc::new((0..2).map(|_| AtomicUsize::new(0)).collect());
    let record = |taken: &[AtomicUsize], x: Option<usize>| {
        if let Some(x) = x {
            let before = taken[x].fetch_add(1, SeqCst);
            assert_eq!(before, 0, "work-stealing deque: item {x} taken twice");
        }
    };
    let (dq1, taken1) = (dq.clone(), taken.clone());
    let owner = thread::spawn(move || {
        dq1.push(0);
        dq1.push(1);
        record(&taken1, dq1.pop());
        record(&taken1, dq1.pop());
    });
    let thief = thread::spawn(move || record(&taken, dq.steal()));
    owner.join().unwrap();
    thief.join().unwrap();
}

/// Work-stealing deque with an off-by-one size check in `pop`. c=2: the owner preempted after
/// its first push (so the thief sees an item), the thief preempted between reading the slot
/// and its CAS while the owner pops both items; v=2 (`bottom`, `top`); t=2.
pub fn ws_deque(_: usize) {
    deque_scenario(true);
}

/// The owner fills the ring (four items), pushes a fifth (running it itself if the ring is
/// full), and pops until empty, while a thief steals one item; every item must be taken
/// exactly once.
pub fn deque_capacity_scenario(buggy: bool) {
    let dq = Arc::new(Deque::new(false, buggy));
    let taken: Arc<Vec<AtomicUsize>> = Arc::new((0..5).map(|_| AtomicUsize::new(0)).collect());
    let record = |taken: &[AtomicUsize], x: usize| {
        let before = taken[x].fetch_add(1, SeqCst);
        assert_eq!(before, 0, "work-stealing deque: item {x} taken twice");
    };
    let (dq1, taken1) = (dq.clone(), taken.clone());
    let owner = thread::spawn(move || {
        for x in 0..5 {
            if let Err(x) = dq1.try_push(x) {
                record(&taken1, x); // full: the owner runs the task itself
            }
        }
        while let Some(x) = dq1.pop() {
            record(&taken1, x);
        }
    });
    let taken2 = taken.clone();
    let thief = thread::spawn(move || {
        if let Some(x) = dq.steal() {
            record(&taken2, x);
        }
    });
    owner.join().unwrap();
    thief.join().unwrap();
    for (x, n) in taken.iter().enumerate() {
        assert_eq!(n.load(SeqCst), 1, "work-stealing deque: item {x} lost");
    }
}

/// Work-stealing deque with an off-by-one capacity check in `try_push`: when the owner's
/// fifth push comes before the thief's steal, it overwrites the oldest item (c=0: an order of
/// the two threads; v=0; t=2).
pub fn ws_deque_capacity(_: usize) {
    deque_capacity_scenario(true);
}
