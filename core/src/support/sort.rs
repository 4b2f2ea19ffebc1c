//! One sort for every list the crate orders. The standard sort is generic over the element and the
//! comparator, so each call site with its own type or closure adds a full copy of it (~3 KB in the
//! browser `.wasm`). [`sort_unstable_by`] sorts indices with a `dyn` comparator instead: one copy of
//! the sort serves every caller; each caller adds only a move of its elements into the new order.
//! The lists are small (a page, a report's rows, a batch's results), so the indirection costs little.

use std::cmp::Ordering;

/// Sorts `items` by `cmp`, like `slice::sort_unstable_by`: equal elements may change places, so callers
/// give a total order when the output must not depend on the input order.
pub fn sort_unstable_by<T>(items: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    let mut order: Vec<usize> = (0..items.len()).collect();
    sort_indices(&mut order, &|a, b| cmp(&items[a], &items[b]));
    let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
    // `order` is a permutation of the indices: each slot is taken exactly once.
    items.extend(order.iter().filter_map(|&i| slots[i].take()));
}

/// The one instance of the standard sort.
fn sort_indices(order: &mut [usize], cmp: &dyn Fn(usize, usize) -> Ordering) {
    order.sort_unstable_by(|&a, &b| cmp(a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_sort_and_keeps_every_element() {
        let mut rng = fastrand::Rng::with_seed(7);
        for len in [0usize, 1, 2, 3, 17, 64, 300] {
            let input: Vec<(u8, String)> = (0..len).map(|i| (rng.u8(0..5), format!("item-{i}"))).collect();
            let mut ours = input.clone();
            sort_unstable_by(&mut ours, |a, b| a.cmp(b));
            let mut expected = input;
            expected.sort();
            assert_eq!(ours, expected, "length {len}");
        }
    }

    #[test]
    fn follows_the_comparator_given() {
        let mut v = vec![3, 1, 2];
        sort_unstable_by(&mut v, |a, b| b.cmp(a));
        assert_eq!(v, [3, 2, 1]);
    }
}
