// Async programs: tasks and wakers instead of threads. Included once per tool by
// `crate::on_async_tool!`, for pctvb (`pctvb::future`) and shuttle (`shuttle::future`) only:
// loom 0.7 has `block_on` but no `spawn`, so it cannot run them. `super::rt::join` awaits a
// task's handle on either tool (shuttle's handle yields a `Result`, pctvb's the value).
//
// The futures are written by hand over the tool's `Mutex` and `std::task::Waker`, the way
// executor-independent crates build channels and oneshots, so that every step that matters is
// an operation of the tool's primitives.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::rt::future::{block_on, spawn};
use super::rt::join;
use super::rt::sync::{Arc, Mutex};

/// Two tasks each add 1 to a counter, but read it, await a subtask, and write it back: an
/// update is lost when the other task runs during the `.await`. Nothing but the await is
/// needed to switch tasks, so the bug needs no preemption.
pub fn lost_update(_: usize) {
    let n = Arc::new(Mutex::new(0u32));
    block_on(async {
        let tasks: Vec<_> = (0..2)
            .map(|_| {
                let n = n.clone();
                spawn(async move {
                    let v = *n.lock().unwrap();
                    // The bug: the guard is gone, but `v` is used after the await.
                    let d = join(spawn(async { 1 })).await;
                    *n.lock().unwrap() = v + d;
                })
            })
            .collect();
        for t in tasks {
            join(t).await;
        }
    });
    assert_eq!(*n.lock().unwrap(), 2, "an update was lost across an .await");
}

/// A channel: a queue under a `Mutex` with the waker of the receiver waiting on it.
struct Channel {
    state: Mutex<(VecDeque<u32>, Option<Waker>)>,
    /// Register the waker in the critical section that found the queue empty (the fix).
    fixed: bool,
}

impl Channel {
    fn send(&self, v: u32) {
        let waiter = {
            let mut st = self.state.lock().unwrap();
            st.0.push_back(v);
            st.1.take()
        };
        if let Some(w) = waiter {
            w.wake();
        }
    }
}

/// `recv` of [`Channel`].
struct Recv<'a>(&'a Channel);

impl Future for Recv<'_> {
    type Output = u32;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        let mut st = self.0.state.lock().unwrap();
        if let Some(v) = st.0.pop_front() {
            return Poll::Ready(v);
        }
        if !self.0.fixed {
            // The bug: check and registration in two critical sections. A message sent between
            // them finds no waker, and the receiver then waits for a wake-up no one will give.
            drop(st);
            st = self.0.state.lock().unwrap();
        }
        st.1 = Some(cx.waker().clone());
        Poll::Pending
    }
}

fn channel(fixed: bool) {
    let ch = Arc::new(Channel { state: Mutex::new((VecDeque::new(), None)), fixed });
    let producer = {
        let ch = ch.clone();
        spawn(async move {
            ch.send(1);
            ch.send(2);
        })
    };
    let got = block_on(async {
        let a = Recv(&ch).await;
        let b = Recv(&ch).await;
        join(producer).await;
        (a, b)
    });
    assert_eq!(got, (1, 2));
}

/// A channel whose receiver checks the queue and registers its waker in two critical
/// sections: a message sent in between is never announced (a lost wake-up).
pub fn channel_lost_wakeup(_: usize) {
    channel(false)
}

/// The same channel with check and registration in one critical section.
pub fn channel_fixed(_: usize) {
    channel(true)
}

/// A oneshot: the value and the receiver's waker under one `Mutex`.
struct Oneshot {
    state: Mutex<(Option<u32>, Option<Waker>)>,
}

impl Oneshot {
    /// The bug: wakes the receiver before the value is there. A receiver that polls between
    /// the wake and the store registers its waker again, and the store does not wake it.
    fn send(&self, v: u32) {
        let waiter = self.state.lock().unwrap().1.take();
        if let Some(w) = waiter {
            w.wake();
        }
        self.state.lock().unwrap().0 = Some(v);
    }
}

/// The receiving end of a [`Oneshot`]: a future of its value.
struct Receive(Arc<Oneshot>);

impl Future for Receive {
    type Output = u32;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        let mut st = self.0.state.lock().unwrap();
        match st.0.take() {
            Some(v) => Poll::Ready(v),
            None => {
                st.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// A producer task sends one value over a [`Oneshot`] to a consumer task. The bug needs the
/// consumer to poll again between the producer's wake and its store: the woken task running
/// before the waker's next operation.
pub fn oneshot_wake_before_store(_: usize) {
    let shot = Arc::new(Oneshot { state: Mutex::new((None, None)) });
    let consumer = spawn(Receive(shot.clone()));
    let producer = {
        let shot = shot.clone();
        spawn(async move { shot.send(7) })
    };
    let got = block_on(async {
        join(producer).await;
        join(consumer).await
    });
    assert_eq!(got, 7);
}
