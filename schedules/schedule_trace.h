// A simulated run of a schedule as a Chrome trace (the Trace Event Format that Perfetto and
// chrome://tracing open), the way PyTorch's `_dump_chrometrace` draws a schedule: one track per
// rank (process "rank r"), one complete event per step, ticks as the time unit (1 tick = 1 µs on
// the trace's clock). A compute step spans the ticks it ran; a send or a receive spans the tick it
// completed, and each matched pair is joined by a flow arrow from the send to the receive. Events
// carry the step's kind, job, micro-batch, chunk, op and message as args. (The runtime's own
// traces of real runs are reference_runtime/chrome_trace.h; this one draws no kernel.)
#pragma once

#include <string>

#include "schedules/comm_program.h"
#include "schedules/simulator.h"

namespace irm::schedules {

// The trace JSON ({"traceEvents": [...], "displayTimeUnit": "ms"}, ending in a newline) of
// `result`, a Simulate run of `program`. A failed run is drawn up to where it stopped, and where
// it stopped as instant events: the step each stuck rank waits in, at the tick nothing moved
// ("waits in <step>"), or the receive of a wrong match, at its tick ("wrong match: <step>").
std::string ScheduleTraceJson(const CommProgram& program, const SimResult& result);

}  // namespace irm::schedules
