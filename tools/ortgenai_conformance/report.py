"""Summarizes a conformance run (run.sh): upstream's pytest results (junit XML) and the examples' exit codes,
as Markdown tables. usage: report.py --out RUN_DIR"""
import argparse
import collections
import glob
import os
import xml.etree.ElementTree as ET


def first_line(text, limit=150):
    for line in (text or "").splitlines():
        line = line.strip()
        if line.startswith("E ") or line.startswith("E\t"):
            line = line[1:].strip()
            return line[:limit]
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return (lines[-1] if lines else "")[:limit]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows = []
    xml = os.path.join(a.out, "pytest.xml")
    if os.path.exists(xml):
        for case in ET.parse(xml).getroot().iter("testcase"):
            name = f"{case.get('classname', '').split('.')[-1]}::{case.get('name')}"
            outcome, why = "pass", ""
            for tag in ("failure", "error", "skipped"):
                el = case.find(tag)
                if el is not None:
                    outcome = {"failure": "FAIL", "error": "ERROR", "skipped": "skip"}[tag]
                    why = el.get("message") or first_line(el.text)
                    why = first_line(why) if "\n" in why else why[:150]
                    break
            rows.append((name, outcome, why.replace("|", "/")))
    counts = collections.Counter(r[1] for r in rows)
    print("## upstream Python tests\n")
    print(" ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "no results (see pytest.log)")
    print("\n| test | result | reason |\n|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")
    print("\n## upstream Python examples\n\n| example | exit | last line |\n|---|---|---|")
    for rc_file in sorted(glob.glob(os.path.join(a.out, "example-*.rc"))):
        name = os.path.basename(rc_file)[len("example-"):-3]
        rc = open(rc_file).read().strip()
        log = open(rc_file[:-3] + ".log", errors="replace").read()
        print(f"| {name}.py | {rc} | {first_line(log).replace('|', '/')} |")


if __name__ == "__main__":
    main()
