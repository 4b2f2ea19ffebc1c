//! The shared wire vectors (`tests/vectors`) through `evaluateVector`, the
//! JS entry point of a build with the `vectors` feature (test builds only).
#![cfg(target_arch = "wasm32")]

mod common;

use common::*;
use serde_json::Value;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn the_shared_vectors_agree() {
    let files = [
        ("tasks", include_str!("../../tests/vectors/tasks.json")),
        ("responses", include_str!("../../tests/vectors/responses.json")),
        ("classes", include_str!("../../tests/vectors/classes.json")),
    ];
    let mut ran = 0;
    for (file, text) in files {
        let doc: Value = serde_json::from_str(text).expect("vector file is JSON");
        let cases = doc["cases"].as_array().expect("cases");
        assert!(!cases.is_empty(), "{file} has cases");
        for case in cases {
            let out = captcha_dlq_wasm::evaluate_vector(js(case)).map_err(|e| json(&e));
            let out = out.unwrap_or_else(|e| panic!("{file} {}: {e}", case["name"]));
            // Every case, the declared kinds' included (feature `declared-kinds`).
            assert_eq!(json(&out), case["expected"], "{file} {}", case["name"]);
            ran += 1;
        }
    }
    assert!(ran > 50, "only {ran} cases ran");
}
