//! A job's labels as the engine keeps them while the job lives: a shared slice of
//! `(name, value)` pairs in name order. Callers hand labels over and get them back as a
//! `BTreeMap` (journal entries, records, answers), but a map's first node takes about
//! 550 bytes even for one label, which would be a third of what the engine holds per job;
//! the slice takes 48 bytes per label, and copying a job (to write its journal entry) does
//! not copy it.

use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Labels(Arc<[(String, String)]>);

impl Labels {
    /// The pairs, in name order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    pub(crate) fn to_map(&self) -> BTreeMap<String, String> {
        // `insert`, not `collect()`: `BTreeMap::from_iter` stable-sorts its input, and this was the
        // last stable sort in the browser `.wasm` (~10 KB raw).
        let mut map = BTreeMap::new();
        for (name, value) in self.0.iter() {
            map.insert(name.clone(), value.clone());
        }
        map
    }
}

impl From<BTreeMap<String, String>> for Labels {
    fn from(map: BTreeMap<String, String>) -> Self {
        // A map iterates in name order: the slice keeps it.
        Labels(map.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_name_order() {
        let map = BTreeMap::from([
            ("routing".to_string(), "fastest".to_string()),
            ("batch".to_string(), "b-1".to_string()),
            ("line".to_string(), "7".to_string()),
        ]);
        let labels = Labels::from(map.clone());
        assert_eq!(labels.iter().map(|(n, _)| n).collect::<Vec<_>>(), ["batch", "line", "routing"]);
        assert_eq!(labels.clone().to_map(), map);
        assert_eq!(Labels::from(BTreeMap::new()).to_map(), BTreeMap::new());
    }
}
