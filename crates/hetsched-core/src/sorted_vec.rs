//! A small ordered set kept as a sorted Vec. The sets the scheduler keeps per CPU (the
//! CFS timeline, the armed timers) hold a handful of entries; a sorted Vec serves them
//! with binary search and no allocation once warm, where a BTreeSet allocates a node each
//! time a set goes from empty to one entry.

#[derive(Debug, Clone)]
pub struct SortedVec<T> {
    v: Vec<T>,
}

impl<T> Default for SortedVec<T> {
    fn default() -> Self {
        SortedVec { v: Vec::new() }
    }
}

impl<T: Ord + Copy> SortedVec<T> {
    /// Inserts `x`; returns false (and changes nothing) if it is already present.
    #[inline]
    pub fn insert(&mut self, x: T) -> bool {
        match self.v.binary_search(&x) {
            Ok(_) => false,
            Err(i) => {
                self.v.insert(i, x);
                true
            }
        }
    }

    #[inline]
    pub fn remove(&mut self, x: &T) -> bool {
        match self.v.binary_search(x) {
            Ok(i) => {
                self.v.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    #[inline]
    pub fn contains(&self, x: &T) -> bool {
        self.v.binary_search(x).is_ok()
    }

    #[inline]
    pub fn first(&self) -> Option<&T> {
        self.v.first()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.v.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.v.iter()
    }

    pub fn retain(&mut self, f: impl FnMut(&T) -> bool) {
        self.v.retain(f)
    }
}

impl<'a, T> IntoIterator for &'a SortedVec<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.v.iter()
    }
}

/// An ordered set that is a sorted Vec while small and a B-tree once large: a run queue
/// holds a handful of entities on a phone and hundreds when a thousand threads wake
/// together, where a Vec's insert and remove shift kilobytes. It turns into a tree at
/// `LARGE` entries and back into a Vec at `SMALL`, apart enough that a set hovering at
/// one size does not convert at every change. The order, and so every iteration, is the
/// same in both forms.
#[derive(Debug, Clone)]
pub enum OrdSet<T> {
    Small(SortedVec<T>),
    Large(std::collections::BTreeSet<T>),
}

const LARGE: usize = 128;
const SMALL: usize = 32;

impl<T> Default for OrdSet<T> {
    fn default() -> Self {
        OrdSet::Small(SortedVec::default())
    }
}

impl<T: Ord + Copy> OrdSet<T> {
    #[inline]
    pub fn insert(&mut self, x: T) -> bool {
        match self {
            OrdSet::Small(v) => {
                let new = v.insert(x);
                if v.len() >= LARGE {
                    *self = OrdSet::Large(v.iter().copied().collect());
                }
                new
            }
            OrdSet::Large(b) => b.insert(x),
        }
    }

    #[inline]
    pub fn remove(&mut self, x: &T) -> bool {
        match self {
            OrdSet::Small(v) => v.remove(x),
            OrdSet::Large(b) => {
                let gone = b.remove(x);
                if b.len() <= SMALL {
                    *self = OrdSet::Small(SortedVec {
                        v: b.iter().copied().collect(),
                    });
                }
                gone
            }
        }
    }

    #[inline]
    pub fn contains(&self, x: &T) -> bool {
        match self {
            OrdSet::Small(v) => v.contains(x),
            OrdSet::Large(b) => b.contains(x),
        }
    }

    #[inline]
    pub fn first(&self) -> Option<&T> {
        match self {
            OrdSet::Small(v) => v.first(),
            OrdSet::Large(b) => b.first(),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match self {
            OrdSet::Small(v) => v.len(),
            OrdSet::Large(b) => b.len(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn iter(&self) -> OrdSetIter<'_, T> {
        match self {
            OrdSet::Small(v) => OrdSetIter::Small(v.iter()),
            OrdSet::Large(b) => OrdSetIter::Large(b.iter()),
        }
    }
}

/// An [`OrdSet`]'s entries in order, in either form.
pub enum OrdSetIter<'a, T> {
    Small(std::slice::Iter<'a, T>),
    Large(std::collections::btree_set::Iter<'a, T>),
}

impl<'a, T> Iterator for OrdSetIter<'a, T> {
    type Item = &'a T;
    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        match self {
            OrdSetIter::Small(i) => i.next(),
            OrdSetIter::Large(i) => i.next(),
        }
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            OrdSetIter::Small(i) => i.size_hint(),
            OrdSetIter::Large(i) => i.size_hint(),
        }
    }
}

impl<T> DoubleEndedIterator for OrdSetIter<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            OrdSetIter::Small(i) => i.next_back(),
            OrdSetIter::Large(i) => i.next_back(),
        }
    }
}

impl<T> ExactSizeIterator for OrdSetIter<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_like_an_ordered_set() {
        let mut s = SortedVec::default();
        for x in [5, 1, 9, 3, 5] {
            s.insert(x);
        }
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![1, 3, 5, 9]);
        assert!(s.remove(&3) && !s.remove(&3));
        assert_eq!(s.first(), Some(&1));
        assert!(s.contains(&9) && !s.contains(&3));
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn an_ord_set_keeps_its_order_through_both_forms() {
        let mut s = OrdSet::default();
        let mut model = std::collections::BTreeSet::new();
        // up past LARGE and back below SMALL, in a scrambled order
        for i in 0..300u64 {
            let x = (i * 7919) % 1009;
            assert_eq!(s.insert(x), model.insert(x));
            assert!(s.iter().copied().eq(model.iter().copied()));
        }
        assert!(matches!(s, OrdSet::Large(_)));
        for i in 0..290u64 {
            let x = (i * 7919) % 1009;
            assert_eq!(s.remove(&x), model.remove(&x));
            assert!(s.iter().rev().copied().eq(model.iter().rev().copied()));
            assert_eq!(s.first(), model.first());
        }
        assert!(matches!(s, OrdSet::Small(_)));
        assert_eq!(s.len(), 10);
    }
}
