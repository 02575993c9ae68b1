#!/usr/bin/python3
"""Parses /metrics text with the Prometheus client's own parser (Debian's
python3-prometheus-client) and prints its families as JSON:
[{"name", "type", "samples": [{"name", "labels", "value"}]}]. Exit 2 when the text does not
parse. Usage: parse_metrics.py FILE"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    try:
        families = [
            {
                "name": family.name,
                "type": family.type,
                "samples": [
                    {"name": s.name, "labels": s.labels, "value": s.value} for s in family.samples
                ],
            }
            for family in text_string_to_metric_families(text)
        ]
    except Exception as e:  # the parser raises ValueError and others on bad text
        print(f"parse_metrics.py: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    json.dump(families, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
