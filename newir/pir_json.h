// The JSON form of the new IR, following Paddle PIR's save layout
// (paddle/fluid/pir/serialize_deserialize/): a `base_code` header
// (magic "pir", version, trainable) and the top module's region as compact-keyed objects (`#`, `%`,
// `I`, `O`, `A`, `OA`, `TT`, `D`, ...), with dialect ids in op, type and attribute names
// ("1.matmul", "0.t_dtensor", "1.a_intarray"), results numbered from 1 up, block arguments from -1
// down and 0 for an empty operand slot, and builtin.parameter compressed to a `p` op (its dist
// and quant attributes in `DA` and `QA` lists). As in Paddle, only dialect names are compressed:
// dist ops keep their "dist_op." names.
//
// Where Paddle's writer is lossy this one is not, so that write ∘ read is the identity: every
// attribute is written (not only a pd_op op's yaml signature), a parameter's `OA` flags are written
// even when not trainable, block-argument attributes go in an `A` list of the argument, and a
// TensorDist attribute's placements (which Paddle does not save) go in an optional fourth element
// of its `D`. The reader accepts Paddle's own files too (newir/testdata/json/), including its
// writer's `kwargs` quirk.
//
// Files: pir_json_names (shared names), pir_json_out (the text writer), pir_json_access (checked
// reads with JSON-pointer diagnostics), pir_json_attributes (types and attributes both ways),
// pir_json_writer, pir_json_reader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "newir/program.h"

namespace irm::newir {

// The PIR version written in base_code.version.
inline constexpr uint64_t kPirJsonVersion = 1;

struct PirJsonWriteOptions {
  // base_code.trainable. When set, each op's `stop_gradient` and `persistable` attributes go to its
  // `OA` list (as Paddle writes them); when not, they are dropped, as Paddle does for inference.
  bool trainable = true;
  // nlohmann's dump indent: -1 for one line, 4 for Paddle's `readable` form.
  int indent = -1;
};

// Never fails: null types and attributes are written as {"#":"NULL"}, empty operand slots as id 0,
// and a string that is not valid UTF-8 with U+FFFD in place of each invalid sequence.
std::string WritePirJson(const Program& program, const PirJsonWriteOptions& options = {});

// Reads a document written by WritePirJson or by Paddle. `file` names the input in diagnostics.
// Every error is located by the JSON pointer of the offending element
// (`f.json: /program/regions/0/blocks/0/ops/3/I/0: undefined value id 7`), or by line:col for a
// JSON syntax error. Op names the registry does not know are kept opaquely; the verifier decides
// about them. Documents nested deeper than a fixed cap are rejected before parsing.
StatusOr<Program> ReadPirJson(std::string_view text, const std::string& file = "<json>");

}  // namespace irm::newir
