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
}
