// Isolated re-execution of one new-IR op (isolate.h).
#include "diff_tests/isolate.h"

#include <fmt/format.h>

#include "newir/builder.h"
#include "newir/program.h"
#include "reference_runtime/op_trace.h"
#include "reference_runtime/pir_executor.h"

namespace irm::diff {
namespace {

IsolationReport NotRun(std::string detail) {
  IsolationReport r;
  r.verdict = IsolationReport::Verdict::kNotRun;
  r.detail = std::move(detail);
  return r;
}

// Builds the isolated program's operands.
class OperandBuilder {
 public:
  OperandBuilder(newir::Builder& builder, const LegacyValue& inputs, rt::FeedMap& feeds)
      : builder_(builder), inputs_(inputs), feeds_(feeds) {}

  // The value standing for `value` in the isolated program, or an error saying why none can.
  StatusOr<newir::Value*> Map(newir::Value& value) {
    if (newir::Value* done = mapping_.Contains(&value) ? mapping_.Lookup(&value) : nullptr) {
      return done;
    }
    const newir::Operation* producer = value.defining_op();
    std::string name;
    if (producer != nullptr) {
      name = LegacyNameOf(*producer, value.index());
    } else {
      auto attr = value.attributes().find("legacy_var_name");
      if (attr != value.attributes().end() && attr->second.AsString() != nullptr) {
        name = *attr->second.AsString();
      }
    }
    if (!name.empty()) return Feed(value, name);
    if (producer != nullptr && producer->name() == "builtin.combine") {
      std::vector<newir::Value*> elements;
      for (size_t i = 0; i < producer->num_operands(); ++i) {
        IRM_ASSIGN_OR_RETURN(newir::Value * element, Map(*producer->operand(i)));
        elements.push_back(element);
      }
      newir::Operation* combine =
          builder_.Create("builtin.combine", elements, {value.type()}, producer->attributes());
      mapping_.Map(&value, combine->result(0));
      return combine->result(0);
    }
    // A constant (pd_op.full, full_int_array, ...) is copied along; inputs of the program are not.
    if (producer != nullptr && producer->num_operands() == 0 && producer->num_regions() == 0 &&
        producer->name() != "pd_op.data" && producer->name() != "pd_op.feed" &&
        producer->name() != "builtin.parameter") {
      newir::Operation* copy = builder_.Clone(*producer, mapping_);
      return copy->result(value.index());
    }
    return Status(StatusCode::kNotFound, Location{},
                  producer != nullptr
                      ? fmt::format("the value '{}' makes has no legacy name", producer->name())
                      : fmt::format("block argument {} has no legacy name", value.index()));
  }

  newir::IrMapping& mapping() { return mapping_; }

 private:
  StatusOr<newir::Value*> Feed(newir::Value& value, const std::string& name) {
    const rt::Tensor* tensor = inputs_(name);
    if (tensor == nullptr) {
      return Status(StatusCode::kNotFound, Location{},
                    fmt::format("the legacy run kept no value of '{}'", name));
    }
    const std::string feed = fmt::format("isolated_{}", feeds_.size());
    const std::optional<newir::DataType> dtype =
        newir::DataTypeFromName(DTypeName(tensor->dtype()));
    newir::Operation* data = builder_.Create(
        "pd_op.data", {}, {value.type()},
        {{"name", newir::Attribute::String(feed)},
         {"shape", newir::Attribute::IntArrayAttr(value.type().dims())},
         {"dtype", newir::Attribute::DataTypeAttr(dtype.value_or(newir::DataType::kFloat32))},
         {"place", newir::Attribute::PlaceAttr(newir::Place{})}});
    feeds_[feed] = tensor->Clone();
    mapping_.Map(&value, data->result(0));
    return data->result(0);
  }

  newir::Builder& builder_;
  const LegacyValue& inputs_;
  rt::FeedMap& feeds_;
  newir::IrMapping mapping_;
};

}  // namespace

std::string LegacyNameOf(const newir::Operation& op, size_t result) {
  if (const newir::AttributeSpan* names = op.attribute("legacy_var_names").AsArray()) {
    if (result < names->size()) {
      if (const std::string_view* name = (*names)[result].AsString()) return std::string(*name);
    }
  }
  return "";
}

IsolationReport IsolateNewOp(const newir::Operation& op, const LegacyValue& inputs,
                             const LegacyValue& outputs, Tier tier,
                             const rt::ExecutorOptions& options) {
  if (op.num_regions() > 0) return NotRun(fmt::format("'{}' has regions", op.name()));
  newir::Program program;
  newir::Builder builder(program.block());
  rt::FeedMap feeds;
  OperandBuilder operands(builder, inputs, feeds);
  for (size_t i = 0; i < op.num_operands(); ++i) {
    if (op.operand(i) == nullptr) continue;
    StatusOr<newir::Value*> mapped = operands.Map(*op.operand(i));
    if (!mapped.ok()) return NotRun(fmt::format("operand {}: {}", i, mapped.status().message()));
  }
  const newir::Operation* copy = builder.Clone(op, operands.mapping());

  rt::OpTraceRecorder recorder(rt::KeepAll());
  rt::ExecutorOptions isolated = options;
  isolated.observer = recorder.observer();
  isolated.file = "isolated " + op.name();
  rt::PirExecutor executor(program, isolated);
  rt::Scope scope;
  StatusOr<std::vector<rt::Fetch>> ran = executor.Run(scope, feeds);
  if (!ran.ok()) return NotRun(fmt::format("the isolated op failed: {}", ran.status().message()));
  const rt::OpRecord& record = recorder.records().back();  // the copy runs last

  IsolationReport report;
  report.verdict = IsolationReport::Verdict::kInheritedDrift;
  int compared = 0;
  for (size_t r = 0; r < copy->num_results(); ++r) {
    const std::string name = LegacyNameOf(*copy, r);
    const rt::Tensor* expected = name.empty() ? nullptr : outputs(name);
    if (expected == nullptr || r >= record.outputs.size() || !record.outputs[r].tensor) continue;
    const Comparison c = CompareTensors(*record.outputs[r].tensor, *expected, tier);
    ++compared;
    if (!c.pass && report.verdict != IsolationReport::Verdict::kOpDiffers) {
      report.verdict = IsolationReport::Verdict::kOpDiffers;
      report.comparison = c;
      report.detail =
          fmt::format("on the legacy op's inputs, '{}' still differs: {}", name, c.reason);
    } else if (compared == 1 && c.pass) {
      report.comparison = c;
    }
  }
  if (compared == 0) return NotRun("no result of the op has a legacy value to compare with");
  if (report.verdict == IsolationReport::Verdict::kInheritedDrift) {
    report.detail = fmt::format("on the legacy op's inputs its {} result{} match{}", compared,
                                compared == 1 ? "" : "s", compared == 1 ? "es" : "");
  }
  return report;
}

}  // namespace irm::diff
