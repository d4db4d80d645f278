#!/usr/bin/env bash
# Validates what `herald` prints against the JSON Schemas in schema/, on the conformance cases
# and the sample payloads. Needs python3 with `jsonschema` (pip install jsonschema).
# usage: Tools/check-schemas.sh [path/to/herald]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
herald=${1:-"$root/.build/debug/herald"}
fixtures="$root/Tests/Fixtures"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for events in "$fixtures"/conformance/*.events.jsonl; do
  name=$(basename "$events" .events.jsonl)
  "$herald" ingest --quiet --store "$work/$name" "$events"
  "$herald" state --store "$work/$name" --json > "$work/$name.state.json"
  "$herald" replay --store "$work/$name" --updates --json > "$work/$name.updates.jsonl"
  "$herald" replay --store "$work/$name" --json > "$work/$name.replay.jsonl"
  "$herald" export --store "$work/$name" > "$work/$name.export.jsonl"
  "$herald" stats --store "$work/$name" --json > "$work/$name.stats.json"
  "$herald" verify --store "$work/$name" --json > "$work/$name.verify.json"
  account=$(head -c 200 "$events" | sed 's/.*"account":"\([^"]*\)".*/\1/' | head -1)
  chat=$(awk 'match($0, /"chat":"[^"]*"/) { print substr($0, RSTART + 8, RLENGTH - 9); exit }' "$events")
  "$herald" audit --store "$work/$name" --account "$account" --notification 1 --json > "$work/$name.audit.jsonl"
  "$herald" audit --store "$work/$name" --account "$account" --group 1 --json >> "$work/$name.audit.jsonl"
  "$herald" audit --store "$work/$name" --account "$account" --chat "$chat" --json >> "$work/$name.audit.jsonl"
done
# Quarantine entries: without --account, with it, and a payload that is not UTF-8 (rawBase64).
printf '{"type":"notify"}\n' | "$herald" ingest --quiet --store "$work/q" - 2>/dev/null || true
printf '{"type":"read"}\n\377\376\n' | "$herald" ingest --quiet --store "$work/q" --account tg:1 - 2>/dev/null || true
"$herald" quarantine list --store "$work/q" --json > "$work/q.quarantine.jsonl"
for id in 1 2 3; do "$herald" quarantine show --store "$work/q" "$id" --json >> "$work/q.quarantine-show.jsonl"; done
python3 - "$root/schema" "$work" "$fixtures/conformance" <<'PY'
import glob, json, os, sys
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
schema_dir, work, conformance = sys.argv[1:4]
schemas = {os.path.basename(p): json.load(open(p)) for p in glob.glob(schema_dir + "/*.schema.json")}
registry = Registry().with_resources([(name, Resource.from_contents(s)) for name, s in schemas.items()] +
                                     [(s["$id"], Resource.from_contents(s)) for s in schemas.values()])
def check(schema, docs, what):
    v = Draft202012Validator(schemas[schema], registry=registry)
    n = 0
    for doc in docs:
        errors = list(v.iter_errors(doc))
        if errors:
            sys.exit(f"{what}: {errors[0].message} at {list(errors[0].absolute_path)}")
        n += 1
    return n
def lines(path): return [json.loads(l) for l in open(path) if l.strip()]
total = 0
total += check("event.schema.json", [d for p in glob.glob(conformance + "/*.events.jsonl") for d in lines(p)], "conformance events")
total += check("state.schema.json", [json.load(open(p)) for p in glob.glob(work + "/*.state.json")], "state")
total += check("state.schema.json", [json.load(open(p)) for p in glob.glob(conformance + "/*.expected.json")], "expected state")
total += check("updates-line.schema.json", [d for p in glob.glob(work + "/*.updates.jsonl") for d in lines(p)], "updates")
total += check("export-line.schema.json", [d for p in glob.glob(work + "/*.export.jsonl") for d in lines(p)], "export")
total += check("export-line.schema.json", [d for p in glob.glob(work + "/*.replay.jsonl") for d in lines(p)], "replay")
total += check("stats.schema.json", [json.load(open(p)) for p in glob.glob(work + "/*.stats.json")], "stats")
total += check("verify.schema.json", [json.load(open(p)) for p in glob.glob(work + "/*.verify.json")], "verify")
total += check("audit-line.schema.json", [d for p in glob.glob(work + "/*.audit.jsonl") for d in lines(p)], "audit")
total += check("quarantine-entry.schema.json", lines(work + "/q.quarantine.jsonl"), "quarantine")
shown = lines(work + "/q.quarantine-show.jsonl")
if len(shown) != 3 or not any("account" in d for d in shown) or not any("rawBase64" in d for d in shown):
    sys.exit("quarantine show: expected three entries, one with an account and one with rawBase64")
total += check("quarantine-entry.schema.json", shown, "quarantine show")
print(f"{total} documents valid against schema/")
PY
