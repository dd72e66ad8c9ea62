#!/usr/bin/env python3
"""An approver double for guardfs's integration tests (design section 6 protocol).

Reads one JSON question per line on stdin, writes one JSON answer per line on stdout.
Behaviour comes from the environment, so one script plays every part:

  APPROVER_LOG       file that gets one line per question received (questions are counted there)
  APPROVER_MODE      allow | deny | silent (never answers) | garbage (junk, then the answer)
                     | crash (exits on the first question, without answering)
                     | crash-once (crashes on the first question of its first life only)
                     | path-then-deny (allows paths ending in APPROVER_ALLOW_SUFFIX, denies others)
  APPROVER_REMEMBER  once | mount | persist        (default once)
  APPROVER_SCOPE     path | dir | rule             (default path)
  APPROVER_DELAY     seconds to wait before each answer (default 0)
  APPROVER_ALLOW_SUFFIX  see path-then-deny
  APPROVER_STATE     a file whose existence marks "already crashed once" (crash-once)
"""
import json
import os
import sys
import time

mode = os.environ.get("APPROVER_MODE", "allow")
log = os.environ.get("APPROVER_LOG")
remember = os.environ.get("APPROVER_REMEMBER", "once")
scope = os.environ.get("APPROVER_SCOPE", "path")
delay = float(os.environ.get("APPROVER_DELAY", "0"))
suffix = os.environ.get("APPROVER_ALLOW_SUFFIX", ".md")
state = os.environ.get("APPROVER_STATE", "")


def answer(q, verdict):
    line = json.dumps({"id": q["id"], "verdict": verdict, "remember": remember, "scope": scope})
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    q = json.loads(line)
    if log:
        with open(log, "a") as f:
            f.write(line if line.endswith("\n") else line + "\n")
    if mode == "crash":
        os._exit(3)
    if mode == "crash-once" and state and not os.path.exists(state):
        open(state, "w").close()
        os._exit(3)
    if delay:
        time.sleep(delay)
    if mode == "silent":
        continue
    if mode == "garbage":
        sys.stdout.write("this is not json\n{\"id\": \"x\"}\n{\"id\": 999999, \"verdict\": \"allow\"}\n")
        sys.stdout.write(json.dumps({"id": q["id"]}) + "\n")  # no verdict: ignored
        sys.stdout.flush()
        answer(q, "allow")
        continue
    if mode == "deny":
        answer(q, "deny")
    elif mode == "path-then-deny":
        answer(q, "allow" if q["path"].endswith(suffix) else "deny")
    else:
        answer(q, "allow")
