//! The generator every strategy draws its random choices from ([`ScheduleRng`]): seeded with
//! the run seed, switched to the stream of the execution index, so execution `i` of seed `s`
//! draws the same numbers on every machine and can be re-run alone.
//!
//! It is wyrand (a 64-bit counter stepped by an odd constant, its output a 64x64->128-bit
//! multiply folded to 64 bits) on a counter that starts at `splitmix(splitmix(seed) ^
//! splitmix(stream + STEP))`, not a cryptographic generator: a scheduling point draws at
//! most a few numbers and an execution of a small program lasts a few microseconds, so
//! ChaCha8's block refill (256 bytes at the first draw of every execution) and key setup per
//! execution were a measurable share of a run. Nothing here needs unpredictability; the
//! draws need to be uniform and independent enough for the strategies' probabilities (the
//! tests below check ranges, bits and neighbouring streams).

use std::convert::Infallible;

use rand::{SeedableRng, TryRng};

/// The strategies' random number generator (see the module documentation).
#[derive(Clone, Debug)]
pub struct ScheduleRng {
    /// What the run seed makes of the streams: `set_stream` starts from it.
    key: u64,
    /// The counter: each draw adds [`STEP`] and mixes the result.
    state: u64,
}

/// wyrand's increment (odd, so the counter visits every value once per 2^64 draws).
const STEP: u64 = 0xa076_1d64_78bd_642f;
/// wyrand's output mixing constant.
const MIX: u64 = 0xe703_7ed1_a0b4_28db;

impl ScheduleRng {
    /// Switches to stream `stream` of this seed, from its start: the generator then draws what
    /// a generator seeded alike and switched to the same stream draws.
    pub fn set_stream(&mut self, stream: u64) {
        self.state = splitmix(self.key ^ splitmix(stream.wrapping_add(STEP)));
    }
}

impl TryRng for ScheduleRng {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.try_next_u64()? as u32)
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.state = self.state.wrapping_add(STEP);
        let t = u128::from(self.state).wrapping_mul(u128::from(self.state ^ MIX));
        Ok((t >> 64) as u64 ^ t as u64)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let bytes = self.try_next_u64()?.to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        Ok(())
    }
}

impl SeedableRng for ScheduleRng {
    type Seed = [u8; 8];

    /// The generator of the run seed `u64::from_le_bytes(seed)`, on stream 0.
    fn from_seed(seed: [u8; 8]) -> ScheduleRng {
        ScheduleRng::seed_from_u64(u64::from_le_bytes(seed))
    }

    /// The generator of run seed `seed`, on stream 0 (the same as `from_seed` of its bytes).
    fn seed_from_u64(seed: u64) -> ScheduleRng {
        let mut rng = ScheduleRng { key: splitmix(seed), state: 0 };
        rng.set_stream(0);
        rng
    }
}

/// SplitMix64's finalizer: a bijection of `u64` that spreads every input bit over the output,
/// so nearby seeds and stream numbers start far apart on the counter.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, RngExt};

    #[test]
    fn a_seed_and_a_stream_fix_the_draws() {
        let draws = |seed: u64, stream: u64| {
            let mut r = ScheduleRng::seed_from_u64(seed);
            r.set_stream(stream);
            (0..8).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draws(1, 5), draws(1, 5));
        assert_ne!(draws(1, 5), draws(1, 6));
        assert_ne!(draws(1, 5), draws(2, 5));
        // Switching restarts the stream, wherever the generator was.
        let mut r = ScheduleRng::seed_from_u64(1);
        r.next_u64();
        r.set_stream(5);
        assert_eq!((0..8).map(|_| r.next_u64()).collect::<Vec<_>>(), draws(1, 5));
        assert_eq!(ScheduleRng::from_seed(7u64.to_le_bytes()).next_u64(), draws(7, 0)[0]);
        // Pinned (values computed apart from this code, from the algorithm in the module
        // documentation): the seed -> schedule mapping is what a seed reproduces across
        // versions; a change here changes every run's schedules (say so in the CHANGELOG).
        assert_eq!(
            draws(0, 0)[..3],
            [0x89c5_3e29_99ab_424c, 0x45c2_0152_8257_1e43, 0x65ab_6fdd_bfa5_c297]
        );
        assert_eq!(draws(1, 5)[0], 0x06d4_7b71_ddd0_dfc5);
    }

    #[test]
    fn draws_are_uniform_over_a_range_and_over_bits() {
        // 600,000 draws of 0..6 over 60 streams: each value's count is 100,000 with standard
        // deviation 289; a deviation of 2,000 (6.9 sigma) has probability below 1e-11. Each of
        // the 64 output bits is set in half of 60,000 draws, standard deviation 122; 1,000
        // (8.2 sigma) below 1e-15.
        let mut counts = [0u64; 6];
        let mut bits = [0u64; 64];
        for stream in 0..60 {
            let mut r = ScheduleRng::seed_from_u64(42);
            r.set_stream(stream);
            for i in 0..10_000 {
                counts[r.random_range(0..6usize)] += 1;
                if i < 1_000 {
                    let x = r.next_u64();
                    for (b, n) in bits.iter_mut().enumerate() {
                        *n += (x >> b) & 1;
                    }
                }
            }
        }
        for (v, &c) in counts.iter().enumerate() {
            assert!(c.abs_diff(100_000) < 2_000, "value {v} drawn {c} times");
        }
        for (b, &n) in bits.iter().enumerate() {
            assert!(n.abs_diff(30_000) < 1_000, "bit {b} set {n} times");
        }
    }

    #[test]
    fn consecutive_streams_are_not_shifted_copies() {
        // Execution i and i + 1 of a run must not draw the same sequence one step apart.
        let mut a = ScheduleRng::seed_from_u64(3);
        a.set_stream(10);
        let xs: Vec<u64> = (0..64).map(|_| a.next_u64()).collect();
        let mut b = ScheduleRng::seed_from_u64(3);
        b.set_stream(11);
        let ys: Vec<u64> = (0..64).map(|_| b.next_u64()).collect();
        assert!(xs.iter().all(|x| !ys.contains(x)), "streams 10 and 11 share a draw");
    }
}
