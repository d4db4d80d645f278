#!/bin/sh
# Damages copies of Herald stores and checks that every command either answers exactly as on
# the undamaged store or exits 2 with a message: never a signal, never a hang, never a
# different answer with exit 0 (issue 22).
#
# Usage: Tools/damage-test.sh [--trials N] [--seed S] [--events E] [--jobs J] [--herald BIN] [--keep]
#   --trials N   damaged copies to try (default 1000)
#   --seed S     seeds the workload and every damage (default 1): a run is reproducible
#   --events E   events in the base stores (default 4000)
#   --jobs J     trials run at once (default 2)
#   --herald BIN the herald binary (default: a release build, made first)
#   --keep       keep the work directory (the failing copies are kept in any case)
#
# It builds four base stores with the CLI from Tools/workload.sh's workload: one with
# automatic snapshots, a Telegram key and a quarantined line; one compacted with --archive
# and then ingested further, with an audit index; one compacted without an archive; one with
# an account purged after its audit index was built.
# Each trial copies one, damages it one way (truncate a data file, flip a bit in a log key, a
# value, a page header or a meta page, zero a page, overwrite bytes, swap the meta pages, copy
# the older meta page over the newer, delete or empty files), runs every reading command on it
# (verify, state, state --no-snapshots, state --at, state --at --account, export, replay, audit, stats, quarantine
# list, keys list), salvage (whose new store's state must match when it reports no loss) and
# then ingest, each with a timeout, and compares exit-0 outputs with the
# undamaged store's. Prints the figures; exits 1 when any trial had a signal, a hang or a
# silent wrong answer, and lists those trials with the command that reproduces each.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TRIALS=1000 SEED=1 EVENTS=4000 JOBS=2 HERALD="" KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
    --trials) TRIALS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --events) EVENTS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --herald) HERALD=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
    esac
done
if [ -z "$HERALD" ]; then
    (cd "$ROOT" && swift build -c release --product herald >&2)
    HERALD="$(cd "$ROOT" && swift build -c release --show-bin-path)/herald"
fi
WORK=$(mktemp -d /tmp/herald-damage.XXXXXX)
"$ROOT/Tools/workload.sh" --events "$EVENTS" --seed "$SEED" > "$WORK/workload.jsonl"
exec python3 - "$HERALD" "$WORK" "$TRIALS" "$SEED" "$JOBS" "$KEEP" <<'PYTHON'
import base64, concurrent.futures, json, os, random, shutil, struct, subprocess, sys, time

herald, work, trials, seed, jobs, keep = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "1"
TIMEOUT = 60
PAGE = 4096

def run(args, cwd, env=None, stdin=None):
    """Runs herald; returns (exit code or 'signal N' or 'hang', stdout, stderr)."""
    environment = dict(os.environ, **(env or {}))
    environment.pop("HERALD_STORE", None)
    try:
        done = subprocess.run([herald] + args, cwd=cwd, env=environment, input=stdin,
                              capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return "hang", b"", b""
    if done.returncode < 0:
        return "signal %d" % -done.returncode, done.stdout, done.stderr
    return done.returncode, done.stdout, done.stderr

def first_that_works(variants, cwd):
    """Runs the first spelling of a command this build accepts (the CLI's options move)."""
    for args in variants:
        code, out, err = run(args, cwd)
        if code == 0:
            return out
    sys.exit("building the base stores: none of %s worked: %s" % (variants, err.decode()[-500:]))

def must(args, cwd, env=None, allow=(0,)):
    code, out, err = run(args, cwd, env)
    if code not in allow:
        sys.exit("building the base stores: herald %s exited %s: %s" % (" ".join(args), code, err.decode()[-500:]))
    return out

# ---- base stores ---------------------------------------------------------------------------
lines = open(os.path.join(work, "workload.jsonl")).read().splitlines(True)
half = len(lines) // 2
for name, part in (("first.jsonl", lines[:half]), ("second.jsonl", lines[half:])):
    open(os.path.join(work, name), "w").writelines(part)
extra = [json.loads(line) for line in lines[:40]]
with open(os.path.join(work, "extra.jsonl"), "w") as extra_file:
    for index, event in enumerate(extra):
        if event.get("type") == "notify":
            event["id"] = 9_000_000 + index
        extra_file.write(json.dumps(event) + "\n")
first = json.loads(lines[0])
account = first["account"]
chat = next(json.loads(l)["chat"] for l in lines if json.loads(l).get("account") == account and "chat" in json.loads(l))
snap_env = {"HERALD_SNAPSHOT_INTERVAL": str(max(200, len(lines) // 8))}
key = base64.urlsafe_b64encode(bytes(random.Random(seed).randrange(256) for _ in range(256))).rstrip(b"=").decode()

bases = {}
def base(name):
    directory = os.path.join(work, "base-" + name)
    os.makedirs(directory)
    return directory

plain = base("plain")
must(["ingest", "--store", "store", "--format", "herald", os.path.join(work, "first.jsonl")], plain, snap_env)
# One bad line, kept in the quarantine.
code, out, err = run(["ingest", "--store", "store", "--format", "herald", "-"], plain, snap_env, stdin=b'{"type":"notify"}\n')
must(["keys", "add", "--store", "store", "--account", account, key], plain, allow=(0, 1))
must(["ingest", "--store", "store", "--format", "herald", os.path.join(work, "second.jsonl")], plain, snap_env)
bases["plain"] = plain

archived = base("archived")
must(["ingest", "--store", "store", "--format", "herald", os.path.join(work, "first.jsonl")], archived, snap_env)
must(["snapshot", "--store", "store"], archived)
first_that_works([["compact", "--store", "store", "--archive"], ["compact", "--store", "store", "--yes"]], archived)
# With an audit index (when this herald has `index`), kept up by the next ingest.
first_that_works([["index", "--store", "store"], ["stats", "--store", "store"]], archived)
must(["ingest", "--store", "store", "--format", "herald", os.path.join(work, "second.jsonl")], archived, snap_env)
assert os.path.isdir(os.path.join(archived, "store", "archive")), "the archived base store has no archive/"
bases["archived"] = archived

compacted = base("compacted")
must(["ingest", "--store", "store", "--format", "herald", os.path.join(work, "first.jsonl")], compacted, snap_env)
must(["snapshot", "--store", "store"], compacted)
first_that_works([["compact", "--store", "store", "--discard-history", "--yes"], ["compact", "--store", "store"]], compacted)
must(["ingest", "--store", "store", "--format", "herald", os.path.join(work, "second.jsonl")], compacted, snap_env)
bases["compacted"] = compacted

purged = base("purged")
must(["ingest", "--store", "store", "--format", "herald", os.path.join(work, "first.jsonl")], purged, snap_env)
other = next(json.loads(l)["account"] for l in lines if json.loads(l)["account"] != account)
first_that_works([["index", "--store", "store"], ["stats", "--store", "store"]], purged)
first_that_works([["purge", "--store", "store", "--account", other, "--yes"], ["purge", "--store", "store", "--account", other]], purged)
must(["ingest", "--store", "store", "--format", "herald", os.path.join(work, "second.jsonl")], purged, snap_env)
bases["purged"] = purged

def commands(last_seq):
    return [
        ["verify"], ["verify", "--no-snapshots"], ["state", "--json"], ["state", "--json", "--no-snapshots"],
        ["state", "--json", "--at", str(max(1, last_seq // 2))], ["export"], ["replay", "--updates"],
        ["audit", "--account", account, "--chat", chat], ["state", "--json", "--account", account, "--at", str(max(1, last_seq // 3))],
        ["stats"], ["quarantine", "list"], ["keys", "list"],
    ]

def normalise(command, out):
    if command[0] == "stats":
        # The data file's size and the map's use are not answers about the data.
        return b"\n".join(l for l in out.splitlines() if not l.startswith(b"data file") and not l.startswith(b"log "))
    return out

references = {}
for name, directory in bases.items():
    last = json.loads(must(["state", "--json", "--store", "store"], directory).decode())["seq"]
    outputs = {}
    for command in commands(last):
        code, out, err = run(command + ["--store", "store"], directory)
        outputs[tuple(command)] = (code, normalise(command, out))
    after = os.path.join(work, "after-" + name)
    shutil.copytree(directory, after)
    must(["ingest", "--store", "store", "--format", "herald", os.path.join(work, "extra.jsonl")], after)
    outputs[("ingest",)] = (0, normalise(["state"], must(["state", "--json", "--store", "store"], after)))
    outputs[("salvage",)] = (0, outputs[("state", "--json")][1])
    references[name] = (last, outputs)
    shutil.rmtree(after)

# ---- damage ----------------------------------------------------------------------------------
def metas(data):
    found = []
    for index in (0, 1):
        offset = index * PAGE
        if len(data) < offset + 160:
            continue
        last, txn = struct.unpack_from("<QQ", data, offset + 136)
        found.append((txn, last, index))
    return found

def used_pages(data):
    ms = metas(data)
    last = max(ms)[1] if ms else 1
    return max(3, min(len(data) // PAGE, last + 1)) if len(data) >= 3 * PAGE else 2

def leaf_nodes(data):
    nodes = []
    for page in range(2, used_pages(data)):
        offset = page * PAGE
        number, _, flags, lower, upper = struct.unpack_from("<QHHHH", data, offset)
        if number != page or flags & 0x3F != 2 or lower > upper or upper > PAGE or lower < 16:
            continue
        for index in range((lower - 16) // 2):
            node = struct.unpack_from("<H", data, offset + 16 + 2 * index)[0]
            if node + 8 > PAGE:
                continue
            low, high, node_flags, key_size = struct.unpack_from("<HHHH", data, offset + node)
            nodes.append((offset + node, key_size, low | high << 16, node_flags))
    return nodes

def flip(data, position, r):
    data[position] ^= 1 << r.randrange(8)

KINDS = ["truncate", "flip-key", "flip-value", "flip-header", "zero-page", "overwrite", "swap-meta",
         "stale-meta", "flip-meta", "delete"]

def damage(store, r):
    """Damages the store directory in place; returns a description."""
    files = [p for p in (os.path.join(store, "data.mdb"), os.path.join(store, "archive", "data.mdb"))
             if os.path.exists(p) and os.path.getsize(p) >= 3 * PAGE]
    if not files:
        return "nothing left to damage"
    path = r.choice(files)
    short = os.path.relpath(path, store)
    kind = r.choice(KINDS)
    data = bytearray(open(path, "rb").read())
    if kind == "delete":
        what = r.choice(["archive", "data.mdb", "empty data.mdb", "lock.mdb", "archive/data.mdb", "herald.lock"])
        target = os.path.join(store, what.replace("empty ", ""))
        if what.startswith("empty"):
            open(target, "wb").close()
        elif os.path.isdir(target):
            shutil.rmtree(target)
        elif os.path.exists(target):
            os.remove(target)
        return "delete " + what
    if kind == "truncate":
        size = r.randrange(0, len(data)) if r.random() < 0.5 else PAGE * r.randrange(0, max(1, len(data) // PAGE))
        del data[size:]
        description = "truncate %s to %d bytes" % (short, size)
    elif kind in ("flip-key", "flip-value"):
        nodes = [n for n in leaf_nodes(data) if (n[1] == 8 if kind == "flip-key" else n[3] & 1 == 0 and n[2] > 0)]
        if not nodes:
            kind = "overwrite"
        else:
            position, key_size, data_size, _ = r.choice(nodes)
            start = position + 8 + (0 if kind == "flip-key" else key_size)
            length = key_size if kind == "flip-key" else data_size
            target = start + r.randrange(max(1, length))
            flip(data, min(target, len(data) - 1), r)
            description = "%s in %s at byte %d" % (kind, short, target)
    if kind == "flip-header":
        page = r.randrange(2, used_pages(data))
        target = page * PAGE + r.randrange(16)
        flip(data, target, r)
        description = "flip-header of page %d of %s (byte %d)" % (page, short, target % PAGE)
    elif kind == "zero-page":
        page = r.randrange(0, used_pages(data)) if r.random() < 0.1 else r.randrange(2, used_pages(data))
        data[page * PAGE:(page + 1) * PAGE] = bytes(PAGE)
        description = "zero page %d of %s" % (page, short)
    elif kind == "overwrite":
        count = r.randrange(1, 65)
        target = r.randrange(0, max(1, used_pages(data) * PAGE - count))
        data[target:target + count] = bytes(r.randrange(256) for _ in range(count))
        description = "overwrite %d bytes of %s at %d" % (count, short, target)
    elif kind == "swap-meta":
        data[0:PAGE], data[PAGE:2 * PAGE] = data[PAGE:2 * PAGE], data[0:PAGE]
        description = "swap the meta pages of " + short
    elif kind == "stale-meta":
        ms = sorted(metas(data))
        old, new = ms[0][2], ms[-1][2]
        data[new * PAGE:(new + 1) * PAGE] = data[old * PAGE:(old + 1) * PAGE]
        description = "copy meta page %d over meta page %d of %s" % (old, new, short)
    elif kind == "flip-meta":
        target = r.randrange(2) * PAGE + r.randrange(16, 152)
        flip(data, target, r)
        description = "flip-meta byte %d of %s" % (target, short)
    open(path, "wb").write(data)
    return description

# ---- trials ----------------------------------------------------------------------------------
def trial(number):
    r = random.Random("%d-%d" % (seed, number))
    name = r.choice(sorted(bases))
    last, reference = references[name]
    directory = os.path.join(work, "trial-%d" % number)
    shutil.copytree(bases[name], directory)
    store = os.path.join(directory, "store")
    description = damage(store, r)
    if r.random() < 0.1:
        # Now and then several at once.
        description = "several: " + "; ".join([description] + [damage(store, r) for _ in range(r.randrange(1, 4))])
    results = []
    for command in commands(last):
        code, out, err = run(command + ["--store", "store"], directory)
        results.append((command, code, normalise(command, out), err))
    # Salvage must never die either; when it says nothing was lost (exit 0), the salvaged
    # store's state must be the undamaged store's.
    code, out, err = run(["salvage", "--store", "store", "--to", "salvaged"], directory)
    if code == 0:
        state_code, state_out, state_err = run(["state", "--json", "--store", "salvaged"], directory)
        results.append((["salvage"], code if state_code == 0 else state_code, state_out, err + state_err))
    else:
        results.append((["salvage"], code, out, err))
    code, out, err = run(["ingest", "--store", "store", "--format", "herald", os.path.join(work, "extra.jsonl")], directory)
    if code == 0:
        state_code, state_out, state_err = run(["state", "--json", "--store", "store"], directory)
        results.append((["ingest"], code if state_code == 0 else state_code, normalise(["state"], state_out), err + state_err))
    else:
        results.append((["ingest"], code, out, err))
    verdicts = []
    for command, code, out, err in results:
        expected_code, expected_out = reference[tuple(command)]
        if isinstance(code, str):
            verdicts.append((code.split()[0], command, code, err))
        elif code == 0 and (expected_code != 0 or out != expected_out):
            verdicts.append(("wrong", command, code, err))
        elif code == 0:
            verdicts.append(("same", command, code, err))
        elif code == 2 and (err.strip() or command[0] in ("verify", "salvage")):
            verdicts.append(("refused", command, code, err))
        elif code == expected_code:
            verdicts.append(("same", command, code, err))
        else:
            verdicts.append(("other", command, code, err))
    bad = [v for v in verdicts if v[0] in ("signal", "hang", "wrong", "other")]
    if not bad:
        shutil.rmtree(directory)
    return number, name, description, verdicts

start = time.time()
totals = {"signal": 0, "hang": 0, "wrong": 0, "other": 0, "refused": 0, "same": 0}
kinds = {}
failures = []
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    for number, name, description, verdicts in pool.map(trial, range(1, trials + 1)):
        kind = description.split()[0]
        kinds[kind] = kinds.get(kind, 0) + 1
        for verdict in verdicts:
            totals[verdict[0]] += 1
        for verdict in verdicts:
            if verdict[0] in ("signal", "hang", "wrong", "other"):
                failures.append((number, name, description, verdict))
runs = sum(totals.values())
print("damage test: %d trials (seed %d) on %d base stores, %d command runs in %.0f s" % (trials, seed, len(bases), runs, time.time() - start))
print("  damage kinds: " + ", ".join("%s %d" % kv for kv in sorted(kinds.items())))
print("  signals %d, hangs %d, silent wrong answers (exit 0, output differs) %d, other exit codes %d" % (
    totals["signal"], totals["hang"], totals["wrong"], totals["other"]))
print("  refused with exit 2 and a message %d, same answer as the undamaged store %d" % (totals["refused"], totals["same"]))
for number, name, description, (verdict, command, code, err) in failures[:40]:
    print("  FAIL trial %d (%s store, %s): herald %s -> %s %s" % (number, name, description, " ".join(command), code, err.decode(errors="replace").strip()[:300]))
print("  work directory: %s" % work)
if not failures and not keep:
    shutil.rmtree(work)
sys.exit(1 if totals["signal"] or totals["hang"] or totals["wrong"] else 0)
PYTHON
