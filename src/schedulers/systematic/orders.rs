//! Combinatorics of the search: the priority orders enumerated exhaustively (permutations) and
//! the variable subsets of a level (combinations).

pub(super) fn factorial(n: u64) -> u64 {
    (1..=n).try_fold(1u64, |acc, x| acc.checked_mul(x)).unwrap_or(u64::MAX)
}

/// All permutations of `items[k..]` (with `items[..k]` fixed), in lexicographic-ish order.
pub(super) fn permutations(items: &mut Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
    if k == items.len() {
        out.push(items.clone());
        return;
    }
    for i in k..items.len() {
        items.swap(k, i);
        permutations(items, k + 1, out);
        items.swap(k, i);
    }
}

/// Calls `f` with every `k`-subset of `0..n` as increasing indices, in lexicographic order.
pub(super) fn combinations(
    n: usize,
    k: usize,
    from: usize,
    pick: &mut Vec<usize>,
    f: &mut dyn FnMut(&[usize]),
) {
    if pick.len() == k {
        f(pick);
        return;
    }
    for i in from..n {
        pick.push(i);
        combinations(n, k, i + 1, pick, f);
        pick.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_subsets_and_counts() {
        let mut out = Vec::new();
        permutations(&mut (0..4).collect(), 0, &mut out);
        out.sort();
        out.dedup();
        assert_eq!(out.len(), 24);
        let mut subsets = Vec::new();
        combinations(5, 2, 0, &mut Vec::new(), &mut |s| subsets.push(s.to_vec()));
        assert_eq!(subsets.len(), 10);
        assert_eq!(subsets[0], vec![0, 1]);
        assert_eq!(factorial(5), 120);
        assert_eq!(factorial(30), u64::MAX);
    }
}
