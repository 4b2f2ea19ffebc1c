//! A task's labels as the engine and its journal keep them: a shared slice of
//! `(name, value)` pairs in name order. In JSON they are an object, as a `BTreeMap` is.
//!
//! A job keeps its labels while it lives and every journal entry written for it carries
//! them: sharing one slice means writing an entry copies no label, and a job holds 48
//! bytes per label where a `BTreeMap`'s first node alone takes about 550.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::support::json_read::{deserialize_from_json, FieldError, FromJson};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Labels(Arc<[(String, String)]>);

impl Labels {
    /// The pairs, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// The value of the label `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.binary_search_by(|(n, _)| n.as_str().cmp(name)).ok().map(|i| self.0[i].1.as_str())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A copy as a map (what callers are handed).
    pub fn to_map(&self) -> BTreeMap<String, String> {
        // `insert`, not `collect()`: `BTreeMap::from_iter` stable-sorts its input, and this was the
        // last stable sort in the browser `.wasm` (~10 KB raw).
        let mut map = BTreeMap::new();
        for (name, value) in self.0.iter() {
            map.insert(name.clone(), value.clone());
        }
        map
    }
}

impl Default for Labels {
    fn default() -> Self {
        Labels(Arc::from(Vec::new()))
    }
}

impl From<BTreeMap<String, String>> for Labels {
    fn from(map: BTreeMap<String, String>) -> Self {
        // A map iterates in name order, with each name once: the slice keeps both.
        Labels(map.into_iter().collect())
    }
}

impl From<&Labels> for BTreeMap<String, String> {
    fn from(labels: &Labels) -> Self {
        labels.to_map()
    }
}

impl Serialize for Labels {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in self.iter() {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// An object of strings, as a `BTreeMap<String, String>` reads.
impl FromJson for Labels {
    fn from_json(value: Value) -> Result<Self, FieldError> {
        BTreeMap::<String, String>::from_json(value).map(Labels::from)
    }
}

deserialize_from_json!(Labels);

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
        assert_eq!((labels.get("line"), labels.get("lines"), labels.len()), (Some("7"), None, 3));
        assert_eq!(Labels::from(BTreeMap::new()).to_map(), BTreeMap::new());
        assert!(Labels::default().is_empty());
    }

    #[test]
    fn json_is_the_maps_json() {
        let map = BTreeMap::from([("b".to_string(), "2".to_string()), ("a".to_string(), "\"1\"".to_string())]);
        let labels = Labels::from(map.clone());
        let text = serde_json::to_string(&labels).unwrap();
        assert_eq!(text, serde_json::to_string(&map).unwrap());
        assert_eq!(serde_json::from_str::<Labels>(&text).unwrap(), labels);
        let e = Labels::from_json(serde_json::json!({"a": 1})).unwrap_err();
        assert_eq!(e.field, "a", "{e}");
    }
}
