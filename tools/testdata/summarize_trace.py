"""Summarizes a Chrome trace written by ir-migrate for file tests: per process (in pid order) its
name, job spans and op spans, then the flow arrows per process pair, each start matched to its end
by id (an unmatched one is printed as such)."""
import collections
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
spans = collections.Counter((e["pid"], e["tid"]) for e in events if e["ph"] == "X")
for pid in sorted(names):
    print(f"process {pid} '{names[pid]}': {spans[(pid, 0)]} jobs, {spans[(pid, 1)]} ops")
starts = {e["id"]: e for e in events if e["ph"] == "s"}
ends = {e["id"]: e for e in events if e["ph"] == "f"}
flows = collections.Counter()
for flow_id, start in starts.items():
    end = ends.get(flow_id)
    to = names[end["pid"]] if end else "nothing"
    flows[(start["name"], names[start["pid"]], to)] += 1
for id_ in ends.keys() - starts.keys():
    flows[("unmatched end", "", names[ends[id_]["pid"]])] += 1
for (kind, source, target), count in sorted(flows.items()):
    print(f"{kind} flow: '{source}' -> '{target}': {count}")
