// Rust versions of the kinds of programs in the PCTVB paper's Table 1 (ConTest benchmarks),
// written against the facade `rt`. Thread counts follow the table where the description
// allows (the test body's thread included). Included once per tool by `crate::on_tool!`.
//
// Where the table's systematic search needed many schedules, the racy window is a small part
// of the program: the threads do other work through correct synchronization, and the bug
// needs one particular preemption among many possible ones.

use super::rt::sync::atomic::{AtomicU32, AtomicUsize, Ordering::SeqCst};
use super::rt::sync::{Arc, Condvar, Mutex};
use super::rt::thread;

type Body = Box<dyn FnOnce() + Send + 'static>;

fn run_threads(bodies: Vec<Body>) {
    #[allow(clippy::redundant_closure)]
    let handles: Vec<_> = bodies.into_iter().map(|b| thread::spawn(b)).collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// The `i`-th number of an input (deterministic, in `0..1000`, no order).
fn input_value(i: usize) -> u32 {
    ((i as u64 * 2_654_435_761 + 12_345) % 1000) as u32
}

/// Insertion sort of `data[lo..hi]` in place, one access per element read or written.
fn insertion_sort(data: &[AtomicU32], lo: usize, hi: usize) {
    for i in lo + 1..hi {
        let x = data[i].load(SeqCst);
        let mut j = i;
        while j > lo {
            let y = data[j - 1].load(SeqCst);
            if y <= x {
                break;
            }
            data[j].store(y, SeqCst);
            j -= 1;
        }
        data[j].store(x, SeqCst);
    }
}

/// Merges the sorted runs `data[lo..mid]` and `data[mid..hi]` in place (through a copy).
fn merge(data: &[AtomicU32], lo: usize, mid: usize, hi: usize) {
    let left: Vec<u32> = data[lo..mid].iter().map(|x| x.load(SeqCst)).collect();
    let right: Vec<u32> = data[mid..hi].iter().map(|x| x.load(SeqCst)).collect();
    let (mut a, mut b) = (0, 0);
    for slot in &data[lo..hi] {
        if b == right.len() || (a < left.len() && left[a] <= right[b]) {
            slot.store(left[a], SeqCst);
            a += 1;
        } else {
            slot.store(right[b], SeqCst);
            b += 1;
        }
    }
}

/// MergeSort (Table 1: 100 threads, (1,1,2)): `workers` threads sort numbers split by value:
/// worker `w` takes those in `[10w, 10w + 10)`, sorts them and copies its run into the shared
/// output at a place it reserves with a cursor; the runs are then merged. The numbers come in
/// eight clusters, so eight workers, spread over the pool, get numbers and the others stop at
/// once. BUG: the cursor is read and written back in two steps (not a `fetch_add`); two
/// workers that read the same cursor copy their runs to the same place.
pub fn merge_sort(workers: usize) {
    // (first value, count) of each cluster; a cluster stays within one worker's range.
    const CLUSTERS: [(u32, u32); 8] =
        [(51, 5), (171, 7), (291, 4), (412, 6), (531, 5), (662, 7), (781, 4), (902, 6)];
    let input: Vec<u32> =
        CLUSTERS.iter().flat_map(|&(v, k)| (0..k).map(move |i| v + (i * 3) % 7)).collect();
    let out = Arc::new(Mutex::new(vec![u32::MAX; input.len()]));
    let cursor = Arc::new(AtomicUsize::new(0));
    let bodies: Vec<Body> = (0..workers)
        .map(|w| {
            let mut run: Vec<u32> = input.iter().copied().filter(|&x| x / 10 == w as u32).collect();
            let (out, cursor) = (out.clone(), cursor.clone());
            Box::new(move || {
                if run.is_empty() {
                    return;
                }
                run.sort_unstable();
                let at = cursor.load(SeqCst);
                cursor.store(at + run.len(), SeqCst); // BUG: not atomic with the load
                out.lock().unwrap()[at..at + run.len()].copy_from_slice(&run);
            }) as Body
        })
        .collect();
    run_threads(bodies);
    let runs = out.lock().unwrap().clone();
    assert!(!runs.contains(&u32::MAX), "merge sort: two runs were copied to the same place");
    // The final merge of the sorted runs.
    let mut merged = runs;
    merged.sort_unstable();
    let mut expected = input;
    expected.sort_unstable();
    assert_eq!(merged, expected, "merge sort: elements were lost");
}

/// Producer/Consumer (Table 1: 7 threads, (0,0,2)): three producers and three consumers on a
/// buffer guarded by a mutex and a condition variable. BUG: a consumer waits with `if`, not
/// `while`, so when a producer's `notify_all` wakes two consumers for one item, the second
/// finds the buffer empty.
pub fn producer_consumer(_: usize) {
    let q = Arc::new((Mutex::new(Vec::<u32>::new()), Condvar::new()));
    let mut bodies: Vec<Body> = Vec::new();
    for i in 0..3u32 {
        let q = q.clone();
        bodies.push(Box::new(move || {
            let (m, cv) = &*q;
            m.lock().unwrap().push(i);
            cv.notify_all();
        }));
    }
    for _ in 0..3 {
        let q = q.clone();
        bodies.push(Box::new(move || {
            let (m, cv) = &*q;
            let mut buf = m.lock().unwrap();
            if buf.is_empty() {
                buf = cv.wait(buf).unwrap(); // BUG: `if` instead of `while`
            }
            buf.pop().expect("producer/consumer: woke up to an empty buffer");
        }));
    }
    run_threads(bodies);
}

const NIL: usize = usize::MAX;

/// A sorted singly linked list in an arena: `(value, next)` nodes, `head` the first index.
struct List {
    nodes: Vec<(u32, usize)>,
    head: usize,
}

/// LinkedList (Table 1: 3 threads, (1,1,2)): a sorted list whose `insert` finds its place in
/// one critical section and links the node in another, with the successor it saw: an insert
/// by another thread in between is unlinked again. Each of two threads looks values up and
/// inserts one value; both inserts go between the same two nodes.
pub fn linked_list(_: usize) {
    let list = Arc::new(Mutex::new(List { nodes: vec![(0, 1), (100, NIL)], head: 0 }));
    let find = |l: &List, v: u32| {
        let (mut pred, mut cur) = (NIL, l.head);
        while cur != NIL && l.nodes[cur].0 < v {
            pred = cur;
            cur = l.nodes[cur].1;
        }
        (pred, cur)
    };
    let bodies: Vec<Body> = [30u32, 60]
        .into_iter()
        .map(|v| {
            let list = list.clone();
            Box::new(move || {
                for probe in [5u32, 50, 95] {
                    let l = list.lock().unwrap();
                    let (_, cur) = find(&l, probe);
                    assert!(cur != NIL, "linked list: the tail is always there");
                }
                let (pred, succ) = find(&list.lock().unwrap(), v);
                // BUG: the lock was released; `succ` may no longer follow `pred`.
                let mut l = list.lock().unwrap();
                let node = l.nodes.len();
                l.nodes.push((v, succ));
                match pred {
                    NIL => l.head = node,
                    p => l.nodes[p].1 = node,
                }
            }) as Body
        })
        .collect();
    run_threads(bodies);
    let l = list.lock().unwrap();
    let (mut len, mut cur) = (0, l.head);
    while cur != NIL {
        len += 1;
        cur = l.nodes[cur].1;
    }
    assert_eq!(len, 4, "linked list: an inserted node was unlinked");
}

/// BubbleSort (Table 1: 9 threads, (0,0,2)): seven sorters each make one bubble-sort pass
/// (under the lock) over eight reversed numbers, which then need seven passes; a verifier
/// waits for the passes and checks the result. BUG: it waits for six passes, so it fails when
/// it runs between the sixth and the seventh.
pub fn bubble_sort(_: usize) {
    struct State {
        data: Vec<u32>,
        passes: usize,
    }
    let st =
        Arc::new((Mutex::new(State { data: (0..8).rev().collect(), passes: 0 }), Condvar::new()));
    let mut bodies: Vec<Body> = Vec::new();
    for _ in 0..7 {
        let st = st.clone();
        bodies.push(Box::new(move || {
            let (m, cv) = &*st;
            let mut s = m.lock().unwrap();
            for i in 0..s.data.len() - 1 {
                if s.data[i] > s.data[i + 1] {
                    s.data.swap(i, i + 1);
                }
            }
            s.passes += 1;
            cv.notify_all();
        }));
    }
    bodies.push(Box::new(move || {
        let (m, cv) = &*st;
        let mut s = m.lock().unwrap();
        while s.passes < 6 {
            // BUG: eight numbers need seven passes
            s = cv.wait(s).unwrap();
        }
        assert!(s.data.windows(2).all(|w| w[0] <= w[1]), "bubble sort: verified too early");
    }));
    run_threads(bodies);
}

/// A reusable barrier whose parties register themselves (like Java's `Phaser`).
struct Phaser {
    state: Mutex<PhaserState>,
    cv: Condvar,
}

struct PhaserState {
    parties: usize,
    arrived: usize,
    phase: usize,
}

impl Phaser {
    fn new() -> Phaser {
        Phaser {
            state: Mutex::new(PhaserState { parties: 0, arrived: 0, phase: 0 }),
            cv: Condvar::new(),
        }
    }

    fn register(&self) {
        self.state.lock().unwrap().parties += 1;
    }

    /// Arrives at the end of `phase` and waits until every party has; `false` at once when
    /// the phaser is no longer in `phase`.
    fn arrive_and_wait(&self, phase: usize) -> bool {
        let mut s = self.state.lock().unwrap();
        if s.phase != phase {
            return false;
        }
        s.arrived += 1;
        if s.arrived == s.parties {
            s.arrived = 0;
            s.phase += 1;
            self.cv.notify_all();
        } else {
            while s.phase == phase {
                s = self.cv.wait(s).unwrap();
            }
        }
        true
    }
}

/// BubbleSort2 (Table 1: 101 threads, (0,0,2)): odd-even transposition sort of 100 numbers by
/// 100 threads, one per element: in phase `p`, thread `i` compares elements `i` and `i + 1`
/// and swaps them if they are out of order, when `i` and `p` have the same parity; a phaser
/// separates the phases, and a thread checks that it arrives in its own phase. The numbers
/// are in blocks of four in decreasing order, which four phases sort. BUG: each thread
/// registers with the phaser when it starts, instead of the spawner registering it before:
/// the threads that have started can complete a phase before the others register, and a late
/// thread then arrives in a phase that is over. It needs no preemption: one thread running
/// before another starts is enough.
pub fn bubble_sort_phased(_: usize) {
    const N: usize = 100;
    const PHASES: usize = 4;
    let data: Arc<Vec<AtomicU32>> =
        Arc::new((0..N as u32).map(|i| AtomicU32::new(i / 4 * 4 + 3 - i % 4)).collect());
    let phaser = Arc::new(Phaser::new());
    let bodies: Vec<Body> = (0..N)
        .map(|i| {
            let (data, phaser) = (data.clone(), phaser.clone());
            Box::new(move || {
                phaser.register(); // BUG: the spawner should register the thread
                for p in 0..PHASES {
                    if i % 2 == p % 2 && i + 1 < N {
                        let (a, b) = (data[i].load(SeqCst), data[i + 1].load(SeqCst));
                        if a > b {
                            data[i].store(b, SeqCst);
                            data[i + 1].store(a, SeqCst);
                        }
                    }
                    let in_step = phaser.arrive_and_wait(p);
                    assert!(in_step, "bubble sort: thread {i} arrived after phase {p} was over");
                }
            }) as Body
        })
        .collect();
    run_threads(bodies);
    let out: Vec<u32> = data.iter().map(|x| x.load(SeqCst)).collect();
    assert!(out.windows(2).all(|w| w[0] <= w[1]), "bubble sort: not sorted");
}

/// Piper (Table 1: 9 threads, (1,1,2)): eight passengers try to book the four seats of a
/// flight. A passenger checks that seats are left, has the agent at the desk (one passenger
/// at a time) look up the fares of eight rows, and books: reads the count of seats taken and,
/// if the flight is not full, writes back one more and takes a seat. BUG: reading and writing
/// the count are two steps; when another passenger books in between, two bookings count as
/// one, and a fifth passenger gets through to find no seat. The desk spaces the bookings out.
pub fn piper(_: usize) {
    const SEATS: usize = 4;
    const ROWS: usize = 12;
    let taken = Arc::new(AtomicUsize::new(0));
    let fares: Arc<Vec<AtomicU32>> =
        Arc::new((0..ROWS as u32).map(|r| AtomicU32::new(300 - 10 * r)).collect());
    let desk = Arc::new(Mutex::new(0usize)); // quotes given
    let seats = Arc::new(Mutex::new([None::<(usize, u32)>; SEATS]));
    let bodies: Vec<Body> = (0..8)
        .map(|p| {
            let (taken, fares, desk, seats) =
                (taken.clone(), fares.clone(), desk.clone(), seats.clone());
            Box::new(move || {
                if taken.load(SeqCst) >= SEATS {
                    return; // the flight shows as full
                }
                let fare = {
                    let mut quotes = desk.lock().unwrap();
                    *quotes += 1;
                    (0..8).map(|r| fares[(p + r) % ROWS].load(SeqCst)).min().unwrap()
                };
                let t = taken.load(SeqCst);
                if t < SEATS {
                    taken.store(t + 1, SeqCst); // BUG: not atomic with the load
                    let seated = {
                        let mut s = seats.lock().unwrap();
                        let free = s.iter().position(|x| x.is_none());
                        if let Some(k) = free {
                            s[k] = Some((p, fare));
                        }
                        free.is_some()
                    };
                    assert!(seated, "piper: passenger {p} booked but found no free seat");
                }
            }) as Body
        })
        .collect();
    run_threads(bodies);
}

/// Allocation Vector (Table 1: 3 threads, (2,1,2)), sized up from Figure 12: eight blocks, two
/// threads each allocating and freeing a block twice. `find_free_block`, `is_block_free`,
/// `mark_block_allocated` and `free_block` each lock the vector, but a block found free can be
/// taken by the other thread before it is marked.
pub fn allocation_vector(_: usize) {
    let blocks = Arc::new(Mutex::new(vec![false; 8]));
    let worker = |blocks: Arc<Mutex<Vec<bool>>>| {
        move || {
            for _ in 0..2 {
                let b = blocks.lock().unwrap().iter().position(|&used| !used).expect("a block");
                let free = !blocks.lock().unwrap()[b];
                assert!(free, "allocation vector: block {b} was allocated by the other thread");
                blocks.lock().unwrap()[b] = true;
                blocks.lock().unwrap()[b] = false;
            }
        }
    };
    run_threads(vec![Box::new(worker(blocks.clone())), Box::new(worker(blocks))]);
}

/// BufWriter (Table 1: 5 threads, (0,0,2)): three writers append lines to a buffered writer
/// and a closer flushes and closes it once the writers are done. BUG: the closer waits for two
/// lines instead of three, so when it runs before the last writer, that writer writes to a
/// closed writer.
pub fn buf_writer(_: usize) {
    struct Buf {
        pending: Vec<u8>,
        flushed: Vec<u8>,
        lines: usize,
        closed: bool,
    }
    let b = Buf { pending: Vec::new(), flushed: Vec::new(), lines: 0, closed: false };
    let w = Arc::new((Mutex::new(b), Condvar::new()));
    let mut bodies: Vec<Body> = Vec::new();
    for i in 0..3u8 {
        let w = w.clone();
        bodies.push(Box::new(move || {
            let (m, cv) = &*w;
            let mut b = m.lock().unwrap();
            assert!(!b.closed, "bufwriter: line {i} written after close");
            b.pending.extend([b'a' + i, b'\n']);
            if b.pending.len() >= 4 {
                let p = std::mem::take(&mut b.pending);
                b.flushed.extend(p);
            }
            b.lines += 1;
            cv.notify_all();
        }));
    }
    bodies.push(Box::new(move || {
        let (m, cv) = &*w;
        let mut b = m.lock().unwrap();
        while b.lines < 2 {
            // BUG: three writers
            b = cv.wait(b).unwrap();
        }
        let p = std::mem::take(&mut b.pending);
        b.flushed.extend(p);
        b.closed = true;
    }));
    run_threads(bodies);
}

/// PingPong (Table 1: 18 threads, (1,1,2)): a server and sixteen players play "around the
/// world" at one table: the turn passes from the server to each player in order (a mutex and
/// a condition variable). On its turn a player reads where the ball is and how it spins
/// (eight reads), hits it and passes the turn on, and then counts the hit on the scoreboard.
/// BUG: counting is a read and a write of the score; when the next player counts its hit
/// between them, one of the two hits is lost. Players look at the score when they come to
/// the table (it sets how hard they hit).
pub fn ping_pong(_: usize) {
    const PLAYERS: usize = 16; // the server is number PLAYERS
    let hits = Arc::new(AtomicUsize::new(0));
    let ball: Arc<Vec<AtomicUsize>> = Arc::new((0..4).map(AtomicUsize::new).collect());
    let table = Arc::new((Mutex::new(PLAYERS), Condvar::new()));
    let bodies: Vec<Body> = (0..=PLAYERS)
        .map(|me| {
            let (hits, ball, table) = (hits.clone(), ball.clone(), table.clone());
            Box::new(move || {
                let power = hits.load(SeqCst) % 3;
                let (m, cv) = &*table;
                let mut turn = m.lock().unwrap();
                while *turn != me {
                    turn = cv.wait(turn).unwrap();
                }
                let spin: usize = (0..8).map(|k| ball[k % 4].load(SeqCst)).sum();
                ball[me % 4].store((spin + power) % 7, SeqCst);
                *turn = (me + 1) % (PLAYERS + 1);
                cv.notify_all();
                drop(turn);
                let h = hits.load(SeqCst);
                hits.store(h + 1, SeqCst); // BUG: not atomic with the load
            }) as Body
        })
        .collect();
    run_threads(bodies);
    assert_eq!(hits.load(SeqCst), PLAYERS + 1, "ping-pong: a hit was not counted");
}

/// Manager (Table 1: 6 threads, (1,1,2)): a block manager hands out eight blocks of different
/// sizes, and five workers each ask for two. An allocation finds the best-fitting free block
/// under the manager's lock, scanning every block's descriptor, and then decrements the count
/// of free blocks kept beside the descriptors (workers check it before asking). BUG: the
/// decrement is a read and a write; when another allocation decrements in between, two
/// allocations count as one, and the count no longer agrees with the descriptors.
pub fn block_manager(_: usize) {
    const BLOCKS: usize = 8;
    let free = Arc::new(AtomicUsize::new(BLOCKS));
    // A block's descriptor: its size when free, 0 when allocated.
    let blocks: Arc<Vec<AtomicUsize>> =
        Arc::new((0..BLOCKS).map(|b| AtomicUsize::new(1 + b * 5 % 7)).collect());
    let manager = Arc::new(Mutex::new(()));
    let bodies: Vec<Body> = (0..5)
        .map(|w| {
            let (free, blocks, manager) = (free.clone(), blocks.clone(), manager.clone());
            Box::new(move || {
                for r in 0..2 {
                    if free.load(SeqCst) == 0 {
                        return;
                    }
                    let want = 1 + (w + r) % 3;
                    let found = {
                        let _m = manager.lock().unwrap();
                        let mut best: Option<(usize, usize)> = None;
                        for (b, d) in blocks.iter().enumerate() {
                            let size = d.load(SeqCst);
                            if size >= want && best.is_none_or(|(_, s)| size < s) {
                                best = Some((b, size));
                            }
                        }
                        if let Some((b, _)) = best {
                            blocks[b].store(0, SeqCst);
                        }
                        best.is_some()
                    };
                    if !found {
                        return;
                    }
                    let f = free.load(SeqCst);
                    free.store(f - 1, SeqCst); // BUG: not atomic with the load
                }
            }) as Body
        })
        .collect();
    run_threads(bodies);
    let left = blocks.iter().filter(|d| d.load(SeqCst) != 0).count();
    assert_eq!(free.load(SeqCst), left, "block manager: the free count drifted");
}

/// A node of a merge tree: its parent waits until its children have reported.
struct MergeNode {
    pending: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

impl MergeNode {
    fn new() -> MergeNode {
        MergeNode { pending: AtomicUsize::new(0), lock: Mutex::new(()), cv: Condvar::new() }
    }

    /// Sets the number of children that will report.
    fn expect(&self, children: usize) {
        self.pending.store(children, SeqCst);
    }

    fn report(&self) {
        let p = self.pending.load(SeqCst);
        self.pending.store(p - 1, SeqCst); // BUG: not atomic with the load
        let _g = self.lock.lock().unwrap();
        self.cv.notify_all();
    }

    fn wait(&self) {
        let mut g = self.lock.lock().unwrap();
        while self.pending.load(SeqCst) > 0 {
            g = self.cv.wait(g).unwrap();
        }
    }
}

/// MergeSortBug (Table 1: 29 threads, (1,1,2)): a merge tree of threads over a shared array:
/// sixteen sorters each sort a chunk in place (the chunks are of uneven length), eight
/// mergers each merge two sorted chunks, four merge two of those, and the test body merges
/// the last four runs. A thread reports to its parent's node by decrementing the node's count
/// of pending children, and the parent waits until the count is 0. BUG: the decrement is a
/// read and a write; when two siblings report at once, one decrement is lost and the parent
/// waits forever (a deadlock).
pub fn merge_sort_tree(_: usize) {
    const CHUNKS: [usize; 16] = [1, 7, 6, 2, 2, 8, 5, 1, 7, 3, 1, 6, 8, 2, 3, 5];
    let mut bounds = vec![0];
    for len in CHUNKS {
        bounds.push(bounds[bounds.len() - 1] + len);
    }
    let n = bounds[16];
    let input: Vec<u32> = (0..n).map(input_value).collect();
    let data: Arc<Vec<AtomicU32>> = Arc::new(input.iter().map(|&x| AtomicU32::new(x)).collect());
    // Nodes 0..8 wait for two sorters each, 8..12 for two of those mergers each, 12 and 13
    // (both the test body's) for two of those each.
    let nodes: Arc<Vec<MergeNode>> = Arc::new((0..14).map(|_| MergeNode::new()).collect());
    for node in nodes.iter() {
        node.expect(2);
    }
    let bounds = Arc::new(bounds);
    let mut bodies: Vec<Body> = Vec::new();
    for c in 0..16 {
        let (data, nodes, bounds) = (data.clone(), nodes.clone(), bounds.clone());
        bodies.push(Box::new(move || {
            insertion_sort(&data, bounds[c], bounds[c + 1]);
            nodes[c / 2].report();
        }));
    }
    for m in 0..12 {
        let (data, nodes, bounds) = (data.clone(), nodes.clone(), bounds.clone());
        bodies.push(Box::new(move || {
            nodes[m].wait();
            // Node m covers `width` chunks from `first`.
            let (width, first) = if m < 8 { (2, 2 * m) } else { (4, 4 * (m - 8)) };
            let mid = bounds[first + width / 2];
            merge(&data, bounds[first], mid, bounds[first + width]);
            nodes[if m < 8 { 8 + m / 2 } else { 12 + (m - 8) / 2 }].report();
        }));
    }
    #[allow(clippy::redundant_closure)]
    let handles: Vec<_> = bodies.into_iter().map(|b| thread::spawn(b)).collect();
    nodes[12].wait();
    merge(&data, bounds[0], bounds[4], bounds[8]);
    nodes[13].wait();
    merge(&data, bounds[8], bounds[12], bounds[16]);
    merge(&data, bounds[0], bounds[8], bounds[16]);
    for h in handles {
        h.join().unwrap();
    }
    let out: Vec<u32> = data.iter().map(|x| x.load(SeqCst)).collect();
    let mut expected = input;
    expected.sort_unstable();
    assert_eq!(out, expected, "merge sort (tree): wrong result");
}

/// Account (Table 1: 3 threads, (1,1,2)): two clerks post four transactions each to one bank
/// account, first looking through the account's journal of recent transactions for a
/// duplicate. Deposits and withdrawals update the balance in one critical section; the
/// monthly fee (one posting) reads the balance in one and writes it in another. BUG: an update
/// by the other clerk between the two is lost.
pub fn account(_: usize) {
    const JOURNAL: usize = 12;
    const FEE: i64 = 5;
    // 0 stands for the monthly fee.
    const BATCHES: [[i64; 4]; 2] = [[50, -20, 0, 30], [-40, 25, 60, -15]];
    let balance = Arc::new(Mutex::new(1000i64));
    let journal: Arc<Vec<AtomicUsize>> =
        Arc::new((0..JOURNAL).map(|_| AtomicUsize::new(0)).collect());
    let posted = Arc::new(AtomicUsize::new(0));
    let bodies: Vec<Body> = BATCHES
        .iter()
        .enumerate()
        .map(|(clerk, batch)| {
            let (balance, journal, posted) = (balance.clone(), journal.clone(), posted.clone());
            Box::new(move || {
                for (i, &amount) in batch.iter().enumerate() {
                    let id = 100 * (clerk + 1) + i;
                    if journal.iter().any(|e| e.load(SeqCst) == id) {
                        continue; // already posted
                    }
                    if amount == 0 {
                        let b = *balance.lock().unwrap();
                        *balance.lock().unwrap() = b - FEE; // BUG: a second critical section
                    } else {
                        *balance.lock().unwrap() += amount;
                    }
                    let k = posted.fetch_add(1, SeqCst);
                    journal[k % JOURNAL].store(id, SeqCst);
                }
            }) as Body
        })
        .collect();
    run_threads(bodies);
    let expected = 1000 + BATCHES.iter().flatten().sum::<i64>() - FEE;
    assert_eq!(*balance.lock().unwrap(), expected, "account: an update was lost");
}

/// AirLineTickets (Table 1: 11 threads, (0,0,2)): ten agents sell the eight seats of a flight.
/// An agent checks that seats remain, prints the ticket (yields), and then counts the sale: a
/// check-then-act across a yield, so agents oversell.
pub fn airline_tickets(_: usize) {
    const SEATS: usize = 8;
    let sold = Arc::new(AtomicUsize::new(0));
    let bodies: Vec<Body> = (0..10)
        .map(|_| {
            let sold = sold.clone();
            Box::new(move || {
                if sold.load(SeqCst) < SEATS {
                    thread::yield_now(); // printing the ticket
                    sold.fetch_add(1, SeqCst);
                }
            }) as Body
        })
        .collect();
    run_threads(bodies);
    let n = sold.load(SeqCst);
    assert!(n <= SEATS, "airline tickets: {n} tickets sold for {SEATS} seats");
}
