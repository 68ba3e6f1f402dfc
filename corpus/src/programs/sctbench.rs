// Rust ports of programs of SCTBench, the benchmark of Thomson, Donaldson and Betts's empirical
// study of schedule bounding and controlled schedulers (PPoPP 2014, ACM TOPC 2016); the C and
// C++ sources are public at github.com/mc-imperial/sctbench. Each keeps its original's threads,
// locks, racing accesses and assertion; the code is written anew against the facade `rt`.
// Included once per tool by `crate::on_tool!`.
//
// How the C programs map to Rust:
// - A plain or `volatile` shared `int` is a `SeqCst` atomic, one load or store per C access,
//   so every access the C tools could preempt at is a scheduling point here too (`x++` is a
//   load and a store, not a `fetch_add`).
// - ESBMC's `__ESBMC_atomic_begin/end`, which SCTBench's `common.inc` defines as one global
//   pthread mutex, is one `Mutex`; state only touched inside those blocks lives in it.
// - `sched_yield()` is `thread::yield_now()`.
// - A `main` that does not join its threads joins them here (the tools need every thread to
//   end); a `main` that takes part in the bug (bluetooth, stringbuffer, workstealqueue) still
//   does so from the test body.

use super::rt::sync::atomic::{AtomicBool, AtomicI32, AtomicIsize, AtomicUsize, Ordering::SeqCst};
use super::rt::sync::{Arc, Mutex};
use super::rt::thread;

fn join_all(handles: Vec<thread::JoinHandle<()>>) {
    for h in handles {
        h.join().unwrap();
    }
}

/// `reorder_N_bad`: the setters write `a = 1` then `b = -1`; a checker accepts `(a, b)` only as
/// `(0, 0)` or `(1, -1)`, reading `a`, `b`, `a`, `b` as C's `||` and `&&` do.
fn reorder_with(setters: usize, checkers: usize) {
    let ab = Arc::new((AtomicI32::new(0), AtomicI32::new(0)));
    let mut handles = Vec::new();
    for _ in 0..setters {
        let ab = ab.clone();
        handles.push(thread::spawn(move || {
            ab.0.store(1, SeqCst);
            ab.1.store(-1, SeqCst);
        }));
    }
    for _ in 0..checkers {
        let ab = ab.clone();
        handles.push(thread::spawn(move || {
            let (a, b) = (&ab.0, &ab.1);
            let ok = (a.load(SeqCst) == 0 && b.load(SeqCst) == 0)
                || (a.load(SeqCst) == 1 && b.load(SeqCst) == -1);
            assert!(ok, "reorder: saw a = 1 before b = -1");
        }));
    }
    join_all(handles);
}

/// `reorder_N_bad` with `n` spawned threads: `n - 1` setters and one checker (SCTBench's
/// reorder_3, _4, _5 and _10). The check fails only when it reads `a == 1` and then `b == 0`:
/// some setter is preempted between its two stores (c=1) while no setter has stored `b` yet.
pub fn reorder(n: usize) {
    reorder_with(n - 1, 1);
}

/// `reorder_20_bad`: ten setters and ten checkers.
pub fn reorder_20(_: usize) {
    reorder_with(10, 10);
}

/// `twostage_bad` / `twostage_100_bad` with `n` spawned threads: `n - 1` threads publish
/// `data1 = 1` under one lock and then, under a second lock, `data2 = data1 + 1`; one reader,
/// spawned last, reads `data1` under the first lock and `data2` under the second and expects
/// `data2 == data1 + 1`. BUG: the two stages are not one critical section; the reader fails
/// when it runs between a writer's stages (c=1) before any writer finished its second stage.
pub fn twostage(n: usize) {
    struct Shared {
        lock1: Mutex<()>,
        lock2: Mutex<()>,
        data1: AtomicI32,
        data2: AtomicI32,
    }
    let s = Arc::new(Shared {
        lock1: Mutex::new(()),
        lock2: Mutex::new(()),
        data1: AtomicI32::new(0),
        data2: AtomicI32::new(0),
    });
    let mut handles = Vec::new();
    for _ in 0..n - 1 {
        let s = s.clone();
        handles.push(thread::spawn(move || {
            {
                let _g = s.lock1.lock().unwrap();
                s.data1.store(1, SeqCst);
            }
            let _g = s.lock2.lock().unwrap();
            // As in the C original, `data1` is read under the second lock only.
            s.data2.store(s.data1.load(SeqCst) + 1, SeqCst);
        }));
    }
    handles.push(thread::spawn(move || {
        let t1 = {
            let _g = s.lock1.lock().unwrap();
            let t1 = s.data1.load(SeqCst);
            if t1 == 0 {
                return;
            }
            t1
        };
        let t2 = {
            let _g = s.lock2.lock().unwrap();
            s.data2.load(SeqCst)
        };
        assert_eq!(t2, t1 + 1, "twostage: read data1 of the first stage but data2 from before it");
    }));
    join_all(handles);
}

/// `wronglock_bad` (one checker, seven incrementers) and `wronglock_3_bad` (three
/// incrementers), `incrementers` being the parameter. The checker increments `data` under
/// `data_lock` and checks that its own increment is all that happened; the incrementers
/// increment it under another lock, `this_lock`. BUG: the two lock different mutexes; an
/// incrementer's store between the checker's first read and its check fails it (c=1).
pub fn wronglock(incrementers: usize) {
    struct Shared {
        data_lock: Mutex<()>,
        this_lock: Mutex<()>,
        data: AtomicI32,
    }
    let s = Arc::new(Shared {
        data_lock: Mutex::new(()),
        this_lock: Mutex::new(()),
        data: AtomicI32::new(0),
    });
    let mut handles = Vec::new();
    let s1 = s.clone();
    handles.push(thread::spawn(move || {
        let _g = s1.data_lock.lock().unwrap();
        let x = s1.data.load(SeqCst);
        let v = s1.data.load(SeqCst); // `dataValue++` reads the volatile again
        s1.data.store(v + 1, SeqCst);
        assert_eq!(s1.data.load(SeqCst), x + 1, "wronglock: data changed under data_lock");
    }));
    for _ in 0..incrementers {
        let s = s.clone();
        handles.push(thread::spawn(move || {
            let _g = s.this_lock.lock().unwrap(); // BUG: not data_lock
            let v = s.data.load(SeqCst);
            s.data.store(v + 1, SeqCst);
        }));
    }
    join_all(handles);
}

/// `token_ring_bad`: three threads pass a value around (`x1 = (x3 + 1) % 4`, `x2 = x1`,
/// `x3 = x2`, each in one atomic block that also raises its flag); a fourth checks, once all
/// three flags are up, that the three values agree. They agree only when the first thread ran
/// before the other two; the bug is an order of whole atomic blocks (c=0): thread 2 or 3
/// before thread 1, and the checker after all three.
pub fn token_ring(_: usize) {
    struct Ring {
        x: [i32; 3],
        flag: [bool; 3],
    }
    let ring = Arc::new(Mutex::new(Ring { x: [1, 2, 1], flag: [false; 3] }));
    let mut handles = Vec::new();
    for i in 0..3 {
        let ring = ring.clone();
        handles.push(thread::spawn(move || {
            let mut r = ring.lock().unwrap();
            r.x[i] = if i == 0 { (r.x[2] + 1) % 4 } else { r.x[i - 1] };
            r.flag[i] = true;
        }));
    }
    handles.push(thread::spawn(move || {
        let r = ring.lock().unwrap();
        if r.flag.iter().all(|&f| f) {
            assert!(r.x[0] == r.x[1] && r.x[1] == r.x[2], "token ring: values disagree: {:?}", r.x);
        }
    }));
    join_all(handles);
}

/// `carter01_bad` (a readers-writers lock by class): a thread of class A or B takes the shared
/// lock `l` when it is the first of its class, inside a critical section of `m`, and gives it
/// back when it is the last. BUG: it blocks on `l` while holding `m`: once the A thread holds
/// `l` and has left `m`, the B thread takes `m` and waits for `l` inside it, and the A thread
/// can never take `m` to release `l`: a deadlock (c=1: the A thread preempted after its first
/// section). Two more threads, empty, as in the original.
pub fn carter01(_: usize) {
    struct Shared {
        m: Mutex<[i32; 2]>, // the count of class A and of class B threads inside
        l: Mutex<()>,
    }
    let s = Arc::new(Shared { m: Mutex::new([0, 0]), l: Mutex::new(()) });
    let class = |s: Arc<Shared>, c: usize| {
        move || {
            let held = {
                let mut m = s.m.lock().unwrap();
                m[c] += 1;
                (m[c] == 1).then(|| s.l.lock().unwrap())
            };
            // the class's operation
            let mut m = s.m.lock().unwrap();
            m[c] -= 1;
            if m[c] == 0 {
                drop(held);
            }
        }
    };
    let handles = vec![
        thread::spawn(class(s.clone(), 0)),
        thread::spawn(class(s, 1)),
        thread::spawn(|| {}),
        thread::spawn(|| {}),
    ];
    join_all(handles);
}

/// The device of `bluetooth_driver_bad` (a model of a Windows Bluetooth driver's stop and
/// request paths).
struct Device {
    /// ESBMC's atomic blocks, around `pending_io`.
    pending_io: Mutex<i32>,
    stopping_flag: AtomicBool,
    stopping_event: AtomicBool,
    stopped: AtomicBool,
}

impl Device {
    fn io_increment(&self) -> Result<(), ()> {
        if self.stopping_flag.load(SeqCst) {
            return Err(());
        }
        // BUG: the flag check and the increment are not one atomic step.
        *self.pending_io.lock().unwrap() += 1;
        Ok(())
    }

    fn io_decrement(&self) {
        let pending = {
            let mut p = self.pending_io.lock().unwrap();
            *p -= 1;
            *p
        };
        if pending == 0 {
            self.stopping_event.store(true, SeqCst);
        }
    }
}

/// `bluetooth_driver_bad`: the test body is the driver's add routine (a request), a thread its
/// stop routine. The add checks that the driver is not stopping, counts itself in and asserts
/// the driver has not stopped. BUG: when the stop runs whole between the add's check and its
/// increment, the count drops to zero, the stop releases the driver, and the request then
/// runs on a stopped driver (c=1: the add preempted after reading the flag; t=2).
pub fn bluetooth(_: usize) {
    let e = Arc::new(Device {
        pending_io: Mutex::new(1),
        stopping_flag: AtomicBool::new(false),
        stopping_event: AtomicBool::new(false),
        stopped: AtomicBool::new(false),
    });
    let e2 = e.clone();
    let stop = thread::spawn(move || {
        e2.stopping_flag.store(true, SeqCst);
        e2.io_decrement();
        if e2.stopping_event.load(SeqCst) {
            e2.stopped.store(true, SeqCst); // release the driver's resources
        }
    });
    if e.io_increment().is_ok() {
        assert!(!e.stopped.load(SeqCst), "bluetooth: a request runs on a stopped driver");
    }
    e.io_decrement();
    stop.join().unwrap();
}

/// A `StringBuffer` as in JDK 1.4 (SCTBench's `stringbuffer-jdk1.4`): every method locks the
/// buffer's own mutex.
struct StringBuffer {
    value: Mutex<Vec<u8>>,
}

impl StringBuffer {
    fn new(s: &[u8]) -> StringBuffer {
        StringBuffer { value: Mutex::new(s.to_vec()) }
    }

    fn length(&self) -> usize {
        self.value.lock().unwrap().len()
    }

    fn get_chars(&self, begin: usize, end: usize, dst: &mut Vec<u8>) {
        let v = self.value.lock().unwrap();
        assert!(end <= v.len(), "stringbuffer: getChars up to {end} past the length {}", v.len());
        dst.extend_from_slice(&v[begin..end]);
    }

    /// `append(StringBuffer)`. BUG: `sb`'s length and its characters are read in two critical
    /// sections of `sb`; a change of `sb` between them makes the length stale.
    fn append_buffer(&self, sb: &StringBuffer) {
        let mut value = self.value.lock().unwrap();
        let len = sb.length();
        sb.get_chars(0, len, &mut value);
    }

    fn append(&self, s: &[u8]) {
        self.value.lock().unwrap().extend_from_slice(s);
    }

    fn erase(&self, start: usize, end: usize) {
        let mut v = self.value.lock().unwrap();
        let end = end.min(v.len());
        assert!(start <= end, "stringbuffer: erase from {start} past {end}");
        v.drain(start..end);
    }
}

/// `stringbuffer-jdk1.4`: a thread erases a shared buffer's "abc" and appends it again while
/// the test body appends the shared buffer to a new one; the append fails when the erase runs
/// between its read of the length and its copy (c=1, t=2).
pub fn stringbuffer(_: usize) {
    let shared = Arc::new(StringBuffer::new(b"abc"));
    let s2 = shared.clone();
    let other = thread::spawn(move || {
        s2.erase(0, 3);
        s2.append(b"abc");
    });
    let sb = StringBuffer::new(b"");
    sb.append_buffer(&shared);
    other.join().unwrap();
}

/// The log of `circular_buffer_bad`: a ring of ten characters, written at `next` (which wraps)
/// and read at `first` (which does not), and the two flags that make the two threads take
/// turns.
struct Log {
    buffer: [i32; 10],
    first: usize,
    next: usize,
    send: bool,
    receive: bool,
}

impl Log {
    fn remove(&mut self) -> Option<i32> {
        if self.next > 0 && self.first < self.buffer.len() {
            self.first += 1;
            Some(self.buffer[self.first - 1])
        } else {
            None
        }
    }

    fn insert(&mut self, b: i32) {
        if self.next < self.buffer.len() {
            self.buffer[self.next] = b;
            self.next = (self.next + 1) % self.buffer.len();
        }
    }
}

/// `circular_buffer_bad`: a sender and a receiver loop seven times each, taking turns through
/// `send`/`receive` under one mutex; the sender inserts its loop index, the receiver asserts
/// it removes its own loop index. BUG: an iteration that finds it is not its turn still counts,
/// so the indices drift apart: the receiver's first iteration before the sender's first, then
/// the sender's first before the receiver's second, fails it (c=1: the receiver preempted
/// after one iteration).
pub fn circular_buffer(_: usize) {
    const N: i32 = 7;
    let log = Arc::new(Mutex::new(Log {
        buffer: [0; 10],
        first: 0,
        next: 0,
        send: true,
        receive: false,
    }));
    let l1 = log.clone();
    let sender = thread::spawn(move || {
        for i in 0..N {
            let mut l = l1.lock().unwrap();
            if l.send {
                l.insert(i);
                l.send = false;
                l.receive = true;
            }
        }
    });
    let receiver = thread::spawn(move || {
        for i in 0..N {
            let mut l = log.lock().unwrap();
            if l.receive {
                assert_eq!(l.remove(), Some(i), "circular buffer: removed another iteration's item");
                l.receive = false;
                l.send = true;
            }
        }
    });
    sender.join().unwrap();
    receiver.join().unwrap();
}

/// SCTBench's `SafeStack` (from Relacy's examples): a lock-free stack of array slots by index.
/// `pop` locks the head slot by swapping its `next` for -1 and retries (yielding) while it
/// finds it locked; `count` keeps one slot in the stack.
struct SafeStack {
    head: AtomicIsize,
    count: AtomicIsize,
    next: Vec<AtomicIsize>,
    value: Vec<AtomicUsize>,
}

impl SafeStack {
    fn new(slots: usize) -> SafeStack {
        SafeStack {
            head: AtomicIsize::new(0),
            count: AtomicIsize::new(slots as isize),
            next: (0..slots)
                .map(|i| AtomicIsize::new(if i + 1 < slots { i as isize + 1 } else { -1 }))
                .collect(),
            value: (0..slots).map(|_| AtomicUsize::new(usize::MAX)).collect(),
        }
    }

    /// A slot, or `None` when only one is left. BUG: the head read before the swap can be
    /// popped, pushed back with another `next` and be the head again (ABA), so the CAS
    /// succeeds with a stale `next` and two threads come to hold one slot.
    fn pop(&self) -> Option<usize> {
        while self.count.load(SeqCst) > 1 {
            let head1 = self.head.load(SeqCst);
            let next1 = self.next[head1 as usize].swap(-1, SeqCst);
            if next1 >= 0 {
                if self.head.compare_exchange(head1, next1, SeqCst, SeqCst).is_ok() {
                    self.count.fetch_sub(1, SeqCst);
                    return Some(head1 as usize);
                }
                self.next[head1 as usize].swap(next1, SeqCst);
            } else {
                thread::yield_now();
            }
        }
        None
    }

    fn push(&self, index: usize) {
        let mut head1 = self.head.load(SeqCst);
        loop {
            self.next[index].store(head1, SeqCst);
            match self.head.compare_exchange(head1, index as isize, SeqCst, SeqCst) {
                Ok(_) => break,
                Err(h) => head1 = h,
            }
        }
        self.count.fetch_add(1, SeqCst);
    }
}

/// `safestack` (SCTBench's hardest bug): three threads each pop a slot of three, write their
/// id into it, check it is still theirs, and push it back, twice. The check fails when ABA
/// hands one slot to two threads; it needs several preemptions at the right CAS windows: at
/// least 8 (`python3 scripts/safestack-min-preemptions.py` searches a model of this port and
/// prints a failing schedule of 8). In it a thread reads the head and stalls; another pops that
/// slot and, pushing it back, stores its `next` and stalls before its CAS; the first swaps that
/// `next` (taking the lock); the pusher's CAS fails (a third thread popped meanwhile) and its
/// retry overwrites the lock and succeeds; the first's CAS then succeeds with the stale `next`,
/// making the head a slot the third thread holds, which another pop then hands out twice.
/// A faithful port of SCTBench's `SafeStack.cpp` (same operations and retry loops; its
/// `volatile` values are atomics here, scheduling points as SCTBench's racy accesses are).
pub fn safestack(_: usize) {
    let stack = Arc::new(SafeStack::new(3));
    let handles = (0..3)
        .map(|id| {
            let stack = stack.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    let elem = loop {
                        match stack.pop() {
                            Some(e) => break e,
                            None => thread::yield_now(),
                        }
                    };
                    stack.value[elem].store(id, SeqCst);
                    assert_eq!(
                        stack.value[elem].load(SeqCst),
                        id,
                        "safestack: slot {elem} held by two threads"
                    );
                    stack.push(elem);
                }
            })
        })
        .collect();
    join_all(handles);
}

/// CHESS's `WorkStealQueue` (SCTBench's chess/WorkStealQueue with its `BUG3`), the Cilk "THE"
/// protocol: the owner pushes and pops at `tail` without a lock, thieves steal at `head` under
/// a lock, and a pop that may race with a steal retries under the lock. The arrays the queue
/// grows into are allocated up front (sizes 2, 4, 8, 16; `generation` says which is current)
/// so that no unsafe code swaps them.
struct WorkStealQueue {
    lock: Mutex<()>,
    head: AtomicIsize,
    tail: AtomicIsize,
    generation: AtomicUsize,
    arrays: Vec<Vec<AtomicUsize>>,
}

impl WorkStealQueue {
    fn new() -> WorkStealQueue {
        WorkStealQueue {
            lock: Mutex::new(()),
            head: AtomicIsize::new(0),
            tail: AtomicIsize::new(0),
            generation: AtomicUsize::new(0),
            arrays: (1..5).map(|g| (0..1 << g).map(|_| AtomicUsize::new(usize::MAX)).collect()).collect(),
        }
    }

    /// The current array and its mask (its length minus one).
    fn elems(&self) -> (&[AtomicUsize], isize) {
        let a = &self.arrays[self.generation.load(SeqCst)];
        (a, a.len() as isize - 1)
    }

    fn steal(&self) -> Option<usize> {
        let _g = self.lock.lock().unwrap();
        let h = self.head.load(SeqCst);
        self.head.store(h + 1, SeqCst);
        if h < self.tail.load(SeqCst) {
            let (elems, mask) = self.elems();
            Some(elems[(h & mask) as usize].load(SeqCst))
        } else {
            self.head.store(h, SeqCst);
            None
        }
    }

    fn pop(&self) -> Option<usize> {
        let t = self.tail.load(SeqCst) - 1;
        self.tail.store(t, SeqCst);
        if self.head.load(SeqCst) <= t {
            let (elems, mask) = self.elems();
            Some(elems[(t & mask) as usize].load(SeqCst))
        } else {
            self.tail.store(t + 1, SeqCst);
            self.sync_pop()
        }
    }

    fn sync_pop(&self) -> Option<usize> {
        let _g = self.lock.lock().unwrap();
        let t = self.tail.load(SeqCst) - 1;
        self.tail.store(t, SeqCst);
        let mut found = None;
        if self.head.load(SeqCst) <= t {
            let (elems, mask) = self.elems();
            found = Some(elems[(t & mask) as usize].load(SeqCst));
        } else {
            self.tail.store(t + 1, SeqCst);
        }
        if self.head.load(SeqCst) > t {
            self.head.store(0, SeqCst);
            self.tail.store(0, SeqCst);
            found = None;
        }
        found
    }

    fn push(&self, x: usize) {
        let t = self.tail.load(SeqCst);
        let (elems, mask) = self.elems();
        // BUG (the original's BUG3): the check must keep one slot spare, `t < head + mask`, so
        // that a push cannot overwrite the slot a steal has claimed but not yet read.
        if t < self.head.load(SeqCst) + mask + 1 {
            elems[(t & mask) as usize].store(x, SeqCst);
            self.tail.store(t + 1, SeqCst);
        } else {
            self.sync_push(x);
        }
    }

    fn sync_push(&self, x: usize) {
        let _g = self.lock.lock().unwrap();
        let (elems, mask) = self.elems();
        let h = self.head.load(SeqCst);
        let count = self.tail.load(SeqCst) - h;
        let h = h & mask;
        self.head.store(h, SeqCst);
        self.tail.store(h + count, SeqCst);
        if count >= mask {
            let g = self.generation.load(SeqCst) + 1;
            assert!(g < self.arrays.len(), "work-steal queue: grew past its largest array");
            for i in 0..count {
                self.arrays[g][i as usize].store(elems[((h + i) & mask) as usize].load(SeqCst), SeqCst);
            }
            self.generation.store(g, SeqCst);
            self.head.store(0, SeqCst);
            self.tail.store(count, SeqCst);
        }
        let (elems, mask) = self.elems();
        assert!(count < mask, "work-steal queue: no room after growing");
        let t = self.tail.load(SeqCst);
        elems[(t & mask) as usize].store(x, SeqCst);
        self.tail.store(t + 1, SeqCst);
    }
}

/// `WorkStealQueue` with the original's test: one thief tries twice to steal while the test
/// body, the owner, pushes two items and pops one, twice, then pops twice; every item must be
/// operated on exactly once. The bug: the thief claims the oldest item (`head + 1`) and is
/// preempted before reading it, and the owner's pushes wrap around onto its slot (c=2: the
/// owner preempted after its first two pushes so the steal runs then, and the thief inside
/// its steal; t=2).
pub fn workstealqueue(_: usize) {
    const ITEMS: usize = 4;
    let q = Arc::new(WorkStealQueue::new());
    let ops: Arc<Vec<AtomicUsize>> = Arc::new((0..ITEMS).map(|_| AtomicUsize::new(0)).collect());
    let (q2, ops2) = (q.clone(), ops.clone());
    let thief = thread::spawn(move || {
        for _ in 0..2 {
            if let Some(r) = q2.steal() {
                ops2[r].fetch_add(1, SeqCst);
            }
        }
    });
    for i in 0..ITEMS / 2 {
        q.push(2 * i);
        q.push(2 * i + 1);
        if let Some(r) = q.pop() {
            ops[r].fetch_add(1, SeqCst);
        }
    }
    for _ in 0..ITEMS / 2 {
        if let Some(r) = q.pop() {
            ops[r].fetch_add(1, SeqCst);
        }
    }
    thief.join().unwrap();
    for (i, n) in ops.iter().enumerate() {
        assert_eq!(n.load(SeqCst), 1, "work-steal queue: item {i} taken {} times", n.load(SeqCst));
    }
}
