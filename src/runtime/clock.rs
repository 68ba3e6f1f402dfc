//! Vector clocks for the data-race detector (`race.rs`).
//!
//! A [`VClock`] maps a thread id to the number of that thread's release operations known to
//! have happened before; a missing entry is 0. Clocks are reused across executions: `clear`
//! keeps the allocation, and `join`/`copy_from` only allocate when a clock must grow past the
//! largest thread count seen so far.

/// A vector clock indexed by thread id.
#[derive(Clone, Debug, Default)]
pub(super) struct VClock(Vec<u32>);

impl VClock {
    /// The entry of thread `i` (0 when the clock never heard of it).
    #[inline]
    pub(super) fn get(&self, i: usize) -> u32 {
        self.0.get(i).copied().unwrap_or(0)
    }

    /// Sets the entry of thread `i`.
    #[inline]
    pub(super) fn set(&mut self, i: usize, value: u32) {
        if self.0.len() <= i {
            self.0.resize(i + 1, 0);
        }
        self.0[i] = value;
    }

    /// Advances thread `i`'s own entry (after a release, so that its later accesses are not
    /// covered by what it released).
    #[inline]
    pub(super) fn tick(&mut self, i: usize) {
        let v = self.get(i);
        self.set(i, v.wrapping_add(1));
    }

    /// Forgets everything (all entries 0), keeping the allocation.
    #[inline]
    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    /// The pointwise maximum of `self` and `other`, into `self`.
    #[inline]
    pub(super) fn join(&mut self, other: &VClock) {
        if other.0.len() > self.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (mine, &theirs) in self.0.iter_mut().zip(&other.0) {
            if theirs > *mine {
                *mine = theirs;
            }
        }
    }

    /// Makes `self` equal to `other`, reusing `self`'s allocation.
    #[inline]
    pub(super) fn copy_from(&mut self, other: &VClock) {
        self.0.clear();
        self.0.extend_from_slice(&other.0);
    }
}

/// `clocks[dst].join(&clocks[src])` for two entries of one vector.
pub(super) fn join_within(clocks: &mut [VClock], dst: usize, src: usize) {
    if dst == src {
        return;
    }
    if dst < src {
        let (a, b) = clocks.split_at_mut(src);
        a[dst].join(&b[0]);
    } else {
        let (a, b) = clocks.split_at_mut(dst);
        b[0].join(&a[src]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_is_pointwise_max_and_grows() {
        let mut a = VClock::default();
        a.set(0, 3);
        let mut b = VClock::default();
        b.set(0, 1);
        b.set(2, 5);
        a.join(&b);
        assert_eq!((a.get(0), a.get(1), a.get(2), a.get(7)), (3, 0, 5, 0));
        a.tick(1);
        assert_eq!(a.get(1), 1);
        let mut c = VClock::default();
        c.copy_from(&a);
        assert_eq!(c.get(2), 5);
        c.clear();
        assert_eq!(c.get(2), 0);
        let mut v = vec![a, b];
        join_within(&mut v, 1, 0);
        assert_eq!(v[1].get(0), 3);
    }
}
