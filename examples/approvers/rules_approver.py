#!/usr/bin/env python3
"""A scripted guardfs approver: answers ask verdicts by its own rules.

guardfs runs it once and keeps it running (design section 6): a JSON question per line on
stdin, a JSON answer per line on stdout, matched by "id". Standard library only.

Usage:
  guardfs mount --approver "python3 examples/approvers/rules_approver.py RULES.json" WORKSPACE

RULES.json (the first matching rule answers; no match -> deny):
  {
    "rules": [
      {"path_glob": "*/.claude/skills/*", "verdict": "allow", "remember": "mount", "scope": "dir"},
      {"op": "unlink", "verdict": "deny"},
      {"rule": ".env.*", "verdict": "allow", "remember": "persist", "scope": "path"},
      {"command_contains": "npm install", "verdict": "allow"}
    ],
    "log": "/tmp/guardfs-approver.log"
  }

Each rule may name: "op" (open_write, create, unlink, rename, ...), "path_glob" (fnmatch on the
asking path), "rule" (the guardfs rule that asked, exactly), "tier", "command_contains" (a
substring of the requesting process's command line), "uid". "remember" is once (default),
mount or persist; "scope" is path (default), dir or rule.
"""
import fnmatch
import json
import sys


def load_rules(path):
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    rules = cfg.get("rules", [])
    for r in rules:
        if r.get("verdict") not in ("allow", "deny"):
            raise SystemExit(f"rules_approver: every rule needs verdict allow or deny: {r}")
    return rules, cfg.get("log")


def matches(rule, q):
    if "op" in rule and rule["op"] != q.get("op"):
        return False
    if "path_glob" in rule and not fnmatch.fnmatchcase(q.get("path", ""), rule["path_glob"]):
        return False
    if "rule" in rule and rule["rule"] != q.get("rule"):
        return False
    if "tier" in rule and rule["tier"] != q.get("tier"):
        return False
    if "uid" in rule and rule["uid"] != q.get("uid"):
        return False
    if "command_contains" in rule and rule["command_contains"] not in q.get("command", ""):
        return False
    return True


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: rules_approver.py RULES.json")
    rules, log = load_rules(sys.argv[1])
    for line in sys.stdin:
        try:
            q = json.loads(line)
        except json.JSONDecodeError:
            continue
        answer = {"id": q["id"], "verdict": "deny"}
        for rule in rules:
            if matches(rule, q):
                answer = {"id": q["id"], "verdict": rule["verdict"],
                          "remember": rule.get("remember", "once"),
                          "scope": rule.get("scope", "path")}
                break
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"question": q, "answer": answer}) + "\n")
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
