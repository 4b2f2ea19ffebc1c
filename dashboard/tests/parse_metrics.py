"""Parses Prometheus text on stdin with the reference parser (prometheus_client)
and prints the families as JSON: {name: {"type": ..., "samples": [[name, labels, value]]}}.
A text the parser rejects exits non-zero with its error."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

families = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    families[family.name] = {
        "type": family.type,
        "samples": [[s.name, s.labels, s.value] for s in family.samples],
    }
json.dump(families, sys.stdout)
