//! `loom::sync::Arc`: loom's `from_std` for unsized values, its panic on a shared `std` Arc,
//! its methods, and loom's leak report for an `Arc` still owned when the execution ends.
extern crate pctvb_loom as loom;

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

fn message(err: Box<dyn std::any::Any + Send>) -> String {
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn from_std_makes_unsized_arcs_shared_across_threads() {
    loom::model(|| {
        let bytes: Arc<[u8]> = Arc::from_std(std::sync::Arc::from(&[1u8, 2, 3][..]));
        let hits = Arc::new(AtomicUsize::new(0));
        let f: std::sync::Arc<dyn Fn(usize) + Send + Sync> = {
            let hits = hits.clone();
            std::sync::Arc::new(move |n| {
                hits.fetch_add(n, SeqCst);
            })
        };
        let f: Arc<dyn Fn(usize) + Send + Sync> = Arc::from_std(f);
        let (b2, f2) = (bytes.clone(), f.clone());
        let h = thread::spawn(move || f2(b2.len()));
        f(bytes[2] as usize);
        h.join().unwrap();
        assert_eq!(hits.load(SeqCst), 6);
        assert_eq!(Arc::strong_count(&bytes), 1);
    });
}

#[test]
fn from_std_of_a_shared_arc_panics_as_in_loom() {
    let err = std::panic::catch_unwind(|| {
        loom::model(|| {
            let std = std::sync::Arc::new(1);
            let _keep = std.clone();
            let _ = Arc::from_std(std);
        })
    })
    .expect_err("a shared std Arc is refused");
    let msg = message(err);
    assert!(msg.contains("Arc provided to `from_std` is not unique"), "{msg}");
}

#[test]
fn methods_as_std() {
    loom::model(|| {
        let mut a = Arc::new(String::from("a"));
        Arc::get_mut(&mut a).unwrap().push('b');
        let b = a.clone();
        assert!(Arc::get_mut(&mut a).is_none());
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(Arc::strong_count(&a), 2);
        let a = Arc::try_unwrap(a).expect_err("shared");
        drop(b);
        assert_eq!(Arc::try_unwrap(a).unwrap(), "ab");

        let c = Arc::new(5u32);
        let p = Arc::into_raw(c.clone());
        assert_eq!(p, Arc::as_ptr(&c));
        unsafe {
            Arc::increment_strong_count(p);
            assert_eq!(Arc::strong_count(&c), 3);
            Arc::decrement_strong_count(p);
            drop(Arc::from_raw(p));
        }
        assert_eq!(Arc::strong_count(&c), 1);
        assert_eq!(*c, 5);
        assert_eq!(c, Arc::from(5));
        assert_eq!(format!("{c} {c:?}"), "5 5");
        let _pinned = Arc::pin(1);
        let d: Arc<Vec<u8>> = Arc::default();
        assert!(d.is_empty());
    });
}

#[test]
fn an_arc_dropped_by_a_thread_after_the_body_is_not_a_leak() {
    loom::model(|| {
        let a = Arc::new(1);
        thread::spawn(move || assert_eq!(*a, 1));
    });
}

#[test]
#[should_panic(expected = "leaked: Arc<u64> created at")]
fn a_forgotten_arc_is_reported() {
    loom::model(|| {
        let a = Arc::new(7u64);
        let b = a.clone();
        thread::spawn(move || drop(b)).join().unwrap();
        std::mem::forget(a);
    });
}

#[test]
#[should_panic(expected = "leaked: Arc<u8> created at")]
fn a_raw_pointer_never_rebuilt_is_reported() {
    loom::model(|| {
        let _p = Arc::into_raw(Arc::new(1u8));
    });
}
