"""Prints an ir-deadcode JSON report's findings one per line, as corpus/expected-findings.txt holds
them (written by hand, so that the golden report is checked against something the tool did not
write): "file:start-end kind unit -> twin status [deletable]"."""
import json
import sys

report = json.load(open(sys.argv[1]))
for f in report["findings"]:
    r = f["unit"]["range"]
    twin = f["twin"]["qualname"] if f["twin"] else "-"
    line = (f"{f['unit']['file']}:{r['start_line']}-{r['end_line']} {f['kind']} "
            f"{f['unit']['qualname']} -> {twin} {f['status']}")
    print(line + (" deletable" if f["deletable"] else ""))
