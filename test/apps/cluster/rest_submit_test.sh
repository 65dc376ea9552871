#!/usr/bin/env bash
# Jobs through the REST API alone, as a Flink user scripts them: a job library uploaded with
# POST /jars/upload, run with POST /jars/:id/run, watched with GET /jobs/:id, cancelled with
# PATCH /jobs/:id?mode=cancel; a WordCount run that way counts exactly, also by a named entry
# (entryClass). Bad runs get Flink's
# error body: an unknown library (404), a malformed body (400), a file that is no library (400).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }

SLOTS=2 write_loopback_config
NODES="jm tm1 tm2"
start_jobmanager
for tm in tm1 tm2; do start_node "$tm" "" taskmanager --config "$WORK/flink-conf.yaml" >/dev/null; done
rest=$(ready_field jm rest_port)
[[ -n "$rest" && "$rest" != 0 ]] || fail "the JobManager serves no REST endpoint"
generate_text 2000000 "$WORK/input.txt"

python3 - "http://127.0.0.1:$rest" "$FLINT_JOBS" "$WORK" <<'PY' || fail "the REST-only job flow failed"
import json, sys, time, urllib.error, urllib.request, uuid
def check(ok, why):  # not `assert`, which PYTHONOPTIMIZE turns off
    if not ok:
        sys.exit(f"check failed: {why}")
base, jobs, work = sys.argv[1], sys.argv[2], sys.argv[3]

def call(method, path, body=None, headers=None):
    req = urllib.request.Request(base + path, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")

def upload(path, name):
    boundary = uuid.uuid4().hex
    data = open(path, "rb").read()
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"jarfile\"; filename=\"{name}\"\r\n"
            f"Content-Type: application/x-sharedlib\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    status, j = call("POST", "/jars/upload", body, {"Content-Type": f"multipart/form-data; boundary={boundary}"})
    check(status == 200 and j["status"] == "success", f"upload of {name}: {status} {j}")
    return j["filename"].rsplit("/", 1)[1]

def run(jar, body):
    return call("POST", f"/jars/{jar}/run", json.dumps(body).encode(), {"Content-Type": "application/json"})

def await_state(jid, states, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        status, j = call("GET", f"/jobs/{jid}")
        if status == 200 and j["state"] in states:
            return j
        time.sleep(0.1)
    check(False, f"job {jid} not in {states}: {j}")

def is_error(status, j, code):
    check(status == code, f"status {status}, not {code}: {j}")
    check(isinstance(j.get("errors"), list) and j["errors"], f"no errors list: {j}")

# A job submitted, watched and cancelled through REST alone.
endless = upload(f"{jobs}/endless.so", "endless.so")
status, j = call("GET", "/jars")
check(any(f["id"] == endless and f["name"] == "endless.so" for f in j["files"]), f"endless.so not listed: {j}")
status, j = run(endless, {"programArgsList": ["--rate", "500"], "parallelism": 2})
check(status == 200, f"{status} {j}")
jid = j["jobid"]
job = await_state(jid, {"RUNNING"})
deadline = time.time() + 30
while not all(v["status"] == "RUNNING" for v in job["vertices"]):
    check(time.time() < deadline, f"not every vertex RUNNING within 30 s: {job}")
    time.sleep(0.1)
    job = await_state(jid, {"RUNNING"})
check(all(v["parallelism"] == 2 for v in job["vertices"]), f"parallelism not 2: {job}")
status, j = call("PATCH", f"/jobs/{jid}?mode=cancel")
check(status == 202, f"cancel: {status} {j}")
await_state(jid, {"CANCELED"})
print(f"endless.so: submitted as {jid}, RUNNING, cancelled through REST")

# WordCount through REST, counted exactly below.
wordcount = upload(f"{jobs}/wordcount.so", "wordcount.so")
# Flink's JarListInfo entry: the library's entries as entryClass takes them, read from its
# symbol table (the default entry first).
status, j = call("GET", "/jars")
listed = [f for f in j["files"] if f["id"] == wordcount]
check(listed and [e["name"] for e in listed[0]["entry"]] == ["flint_job_main", "sequential"],
      f"wordcount.so's entries not listed: {listed}")
status, j = run(wordcount, {"programArgs": f"--input {work}/input.txt --output {work}/output", "parallelism": 2})
check(status == 200, f"{status} {j}")
done = await_state(j["jobid"], {"FINISHED", "FAILED", "CANCELED"})
check(done["state"] == "FINISHED", f"wordcount did not finish: {done}")
print(f"wordcount.so: {j['jobid']} FINISHED")

# Flink's entryClass: the library's named entry (FLINT_JOB_NAMED_ENTRY), which TaskManagers
# rebuild the job by; an entry the library lacks, or no entry name at all, is a 400.
status, j = run(wordcount, {"programArgs": f"--input {work}/input.txt --output {work}/output_seq",
                            "parallelism": 2, "entryClass": "sequential"})
check(status == 200, f"{status} {j}")
done = await_state(j["jobid"], {"FINISHED", "FAILED", "CANCELED"})
check(done["state"] == "FINISHED", f"the sequential entry did not finish: {done}")
check(done["name"] == "Streaming WordCount (sequential)", f"not the named entry's job: {done['name']}")
check(all(v["parallelism"] == 1 for v in done["vertices"]), f"not sequential: {done['vertices']}")
is_error(*run(wordcount, {"entryClass": "nope"}), 400)
is_error(*run(wordcount, {"entryClass": "org.apache.flink.WordCount"}), 400)
print(f"wordcount.so -c sequential: {j['jobid']} FINISHED at parallelism 1")

# Bad runs.
is_error(*run("no-such.so", {}), 404)
status, j = call("POST", f"/jars/{wordcount}/run", b"{\"programArgs\": ", {"Content-Type": "application/json"})
is_error(status, j, 400)
is_error(*run(wordcount, {"parallelism": "two"}), 400)
not_a_library = f"{work}/fake.so"
open(not_a_library, "wb").write(b"\x7fELF but not really")
fake = upload(not_a_library, "fake.so")
status, j = call("GET", "/jars")
check([f["entry"] for f in j["files"] if f["id"] == fake] == [[]], f"fake.so lists entries: {j}")
is_error(*run(fake, {}), 400)
status, j = call("DELETE", f"/jars/{fake}")
check(status == 200, f"{status} {j}")
status, j = call("GET", "/jars")
check(all(f["id"] != fake for f in j["files"]), f"fake.so still listed: {j}")
print("bad runs refused with Flink's error body")

# This JobManager was started without --log-file (its standard error goes to a file in the test's
# work directory): REST serves no log directory guessed from that, so none of the work
# directory's files can be listed or read.
status, j = call("GET", "/jobmanager/logs")
check(status == 404 or j.get("logs") == [], f"a guessed log directory is served: {status} {j}")
status, _ = call("GET", "/jobmanager/logs/input.txt")
check(status in (400, 404), f"a file of the work directory is served: {status}")
print("no log directory is guessed from standard error")
PY
check_wordcount "$WORK/input.txt" "$WORK/output"
check_wordcount "$WORK/input.txt" "$WORK/output_seq"
echo "PASS"
