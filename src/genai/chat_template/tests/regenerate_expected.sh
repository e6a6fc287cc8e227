#!/bin/sh
# Regenerates tests/data/expected.json (Python jinja2 renders of every template and scenario).
set -e
cd "$(dirname "$0")"
/usr/bin/python3 render_reference.py data/scenarios.json data/expected.json data/templates/*.jinja
