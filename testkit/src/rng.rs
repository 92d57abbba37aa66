/// xorshift64* (Marsaglia's xorshift with a multiplied output, after Vigna): deterministic from
/// its seed, a few instructions a draw, and plenty for picking shapes, attributes, index values
/// and element bits. Not for anything statistical or secret.
///
/// Every test, fuzz helper and benchmark draws from this one type, so that a failure reported
/// with its seed reproduces anywhere.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// The generator whose sequence `seed` fixes. Any seed will do, 0 and neighbouring ones
    /// included: the seed goes through SplitMix64's mixing function first, so seeds 1, 2, 3
    /// start unrelated sequences (xorshift itself would keep them related for a while, and never
    /// leave the all-zero state).
    pub fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // The mixing is a bijection, so exactly one seed lands on zero; move it anywhere else.
        Rng {
            state: if z == 0 { 0x9E37_79B9_7F4A_7C15 } else { z },
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (the modulo bias is negligible for the small `n` tests draw). Panics
    /// when `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0): the range is empty");
        self.next_u64() % n
    }

    /// A value in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi, "Rng::range({lo}, {hi}): the range is empty");
        let span = hi.abs_diff(lo);
        let offset = if span == u64::MAX {
            self.next_u64()
        } else {
            self.below(span + 1)
        };
        lo.wrapping_add(offset as i64)
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A valid index value for a dimension of `size` (> 0), in either spelling: `-size` to
    /// `size - 1`, where a negative value counts from the end.
    pub fn index(&mut self, size: usize) -> i64 {
        let size = size as i64;
        self.range(-size, size - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_fixes_the_sequence_and_zero_is_a_usable_seed() {
        let draws = |seed| {
            let mut rng = Rng::new(seed);
            (0..8).map(|_| rng.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
        assert!(draws(0).iter().all(|&x| x != 0));
    }

    #[test]
    fn neighbouring_seeds_start_unrelated_sequences() {
        // The first draw of seeds 0..64 in 0..4 takes every value, about equally often.
        let mut seen = [0; 4];
        for seed in 0..64 {
            seen[Rng::new(seed).below(4) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (8..=24).contains(&n)), "{seen:?}");
    }

    #[test]
    fn draws_stay_in_their_ranges_and_reach_both_ends() {
        let mut rng = Rng::new(1);
        let values: Vec<i64> = (0..1000).map(|_| rng.range(-3, 2)).collect();
        assert!(values.iter().all(|v| (-3..=2).contains(v)));
        assert!(values.contains(&-3) && values.contains(&2));
        let indices: Vec<i64> = (0..1000).map(|_| rng.index(4)).collect();
        assert!(indices.iter().all(|v| (-4..=3).contains(v)));
        assert!(indices.contains(&-4) && indices.contains(&3));
        // The widest ranges draw without overflowing.
        assert_eq!(rng.range(i64::MIN, i64::MIN), i64::MIN);
        rng.range(i64::MIN, i64::MAX);
    }
}
