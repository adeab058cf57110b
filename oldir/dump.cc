// The human-readable dump of a legacy program (see dump.h for the format). Everything is appended
// to one std::string with fmt::format_to, straight from the protobuf fields: no AttrValue copies,
// no temporary strings per attribute, because the dump is used on programs with tens of thousands
// of ops. Nesting is walked with an explicit stack so that a malformed program (a block cycle, a
// block referenced twice, an index out of range, a chain of thousands of nested blocks) can
// neither loop forever nor overflow the call stack.
#include "oldir/dump.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>
#include <vector>

namespace irm::oldir {
namespace {

constexpr std::string_view kIndent = "    ";  // one nesting level

void AppendIndent(int depth, std::string* out) {
  for (int i = 0; i < depth; ++i) out->append(kIndent);
}

bool NeedsEscape(char c) {
  auto byte = static_cast<unsigned char>(c);
  // Bytes >= 0x80 pass through: UTF-8 names stay readable, as in Python.
  return c == '\'' || c == '\\' || byte < 0x20 || byte == 0x7f;
}

// Python's repr of a str, always single-quoted (Python would switch to double quotes when the
// text holds a single quote; we escape it instead so that every string looks the same).
void AppendQuoted(std::string_view text, std::string* out) {
  out->push_back('\'');
  size_t run = 0;  // start of the characters not yet appended
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!NeedsEscape(c)) continue;  // names almost never need one: append whole runs
    out->append(text.substr(run, i - run));
    run = i + 1;
    switch (c) {
      case '\'':
        out->append("\\'");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        fmt::format_to(std::back_inserter(*out), "\\x{:02x}", static_cast<unsigned char>(c));
    }
  }
  out->append(text.substr(run));
  out->push_back('\'');
}

// fmt's "{}" is the shortest decimal that reads back to the same value; NaN is printed without
// its sign bit, which carries no meaning here and would make "-nan" appear at random.
template <typename Float>
void AppendFloat(Float value, std::string* out, bool integral_point = true) {
  if (std::isnan(value)) {
    out->append("nan");
    return;
  }
  const size_t start = out->size();
  fmt::format_to(std::back_inserter(*out), "{}", value);
  // Python's float repr keeps a point on integral values (1.0, not 1); its complex repr does not.
  if (integral_point && out->find_first_not_of("-0123456789", start) == std::string::npos) {
    out->append(".0");
  }
}

void AppendBool(bool value, std::string* out) { out->append(value ? "True" : "False"); }

template <typename Range, typename AppendOne>
void AppendList(const Range& values, AppendOne append_one, std::string* out) {
  out->push_back('[');
  bool first = true;
  for (const auto& v : values) {
    if (!first) out->append(", ");
    first = false;
    append_one(v, out);
  }
  out->push_back(']');
}

void AppendInt(int64_t value, std::string* out) {
  fmt::format_to(std::back_inserter(*out), "{}", value);
}

void AppendBlockRef(int32_t index, std::string* out) {
  fmt::format_to(std::back_inserter(*out), "block[{}]", index);
}

void AppendScalar(const proto::Scalar& scalar, std::string* out) {
  out->append("Scalar(");
  switch (scalar.type()) {
    case proto::Scalar::BOOLEAN:
      AppendBool(scalar.b(), out);
      break;
    case proto::Scalar::LONG:
      AppendInt(scalar.i(), out);
      break;
    case proto::Scalar::FLOAT64:
      AppendFloat(scalar.r(), out);
      break;
    case proto::Scalar::COMPLEX128: {
      // Python's complex repr without its parentheses: 1+2j, 1-2j.
      double imag = scalar.c().i();
      AppendFloat(scalar.c().r(), out, /*integral_point=*/false);
      out->push_back(std::signbit(imag) && !std::isnan(imag) ? '-' : '+');
      AppendFloat(std::fabs(imag), out, /*integral_point=*/false);
      out->push_back('j');
      break;
    }
    default:  // only reachable through a setter that skips the enum check
      AppendInt(static_cast<int>(scalar.type()), out);
  }
  out->push_back(')');
}

void AppendMissing(const proto::OpDesc::Attr& attr, std::string* out) {
  fmt::format_to(std::back_inserter(*out), "<no {} value>", AttrTypeName(attr.type()));
}

// The value of one attribute, read from the field its type names (as ReadAttrValue does).
void AppendAttrValue(const proto::OpDesc::Attr& attr, std::string* out) {
  const auto append_float = [](double v, std::string* o) { AppendFloat(v, o); };
  const auto append_float32 = [](float v, std::string* o) { AppendFloat(v, o); };
  const auto append_int = [](int64_t v, std::string* o) { AppendInt(v, o); };
  const auto append_quoted = [](const std::string& v, std::string* o) { AppendQuoted(v, o); };
  switch (attr.type()) {
    case proto::INT:
      if (!attr.has_i()) return AppendMissing(attr, out);
      return AppendInt(attr.i(), out);
    case proto::FLOAT:
      if (!attr.has_f()) return AppendMissing(attr, out);
      return AppendFloat(attr.f(), out);
    case proto::STRING:
      if (!attr.has_s()) return AppendMissing(attr, out);
      return AppendQuoted(attr.s(), out);
    case proto::INTS:
      return AppendList(attr.ints(), append_int, out);
    case proto::FLOATS:
      return AppendList(attr.floats(), append_float32, out);
    case proto::STRINGS:
      return AppendList(attr.strings(), append_quoted, out);
    case proto::BOOLEAN:
      if (!attr.has_b()) return AppendMissing(attr, out);
      return AppendBool(attr.b(), out);
    case proto::BOOLEANS:
      return AppendList(
          attr.bools(), [](bool v, std::string* o) { AppendBool(v, o); }, out);
    case proto::BLOCK:
      if (!attr.has_block_idx()) return AppendMissing(attr, out);
      return AppendBlockRef(attr.block_idx(), out);
    case proto::LONG:
      if (!attr.has_l()) return AppendMissing(attr, out);
      return AppendInt(attr.l(), out);
    case proto::BLOCKS:
      return AppendList(
          attr.blocks_idx(), [](int32_t v, std::string* o) { AppendBlockRef(v, o); }, out);
    case proto::LONGS:
      return AppendList(attr.longs(), append_int, out);
    case proto::FLOAT64S:
      return AppendList(attr.float64s(), append_float, out);
    case proto::VAR:
      if (!attr.has_var_name()) return AppendMissing(attr, out);
      return AppendQuoted(attr.var_name(), out);
    case proto::VARS:
      return AppendList(attr.vars_name(), append_quoted, out);
    case proto::FLOAT64:
      if (!attr.has_float64()) return AppendMissing(attr, out);
      return AppendFloat(attr.float64(), out);
    case proto::SCALAR:
      if (!attr.has_scalar()) return AppendMissing(attr, out);
      return AppendScalar(attr.scalar(), out);
    case proto::SCALARS:
      return AppendList(
          attr.scalars(), [](const proto::Scalar& v, std::string* o) { AppendScalar(v, o); }, out);
  }
  fmt::format_to(std::back_inserter(*out), "<AttrType {}>", static_cast<int>(attr.type()));
}

// {X=['x'], Y=['w']}: slots in stored order.
void AppendSlots(const google::protobuf::RepeatedPtrField<proto::OpDesc::Var>& slots,
                 std::string* out) {
  out->push_back('{');
  for (int i = 0; i < slots.size(); ++i) {
    if (i > 0) out->append(", ");
    out->append(slots[i].parameter());
    out->push_back('=');
    AppendList(
        slots[i].arguments(), [](const std::string& v, std::string* o) { AppendQuoted(v, o); },
        out);
  }
  out->push_back('}');
}

bool IsCommonAttr(const std::string& name) {
  return name == kOpRoleAttr || name == kOpRoleVarAttr || name == kOpNamescopeAttr ||
         name == kOpCallstackAttr || name == kOpDeviceAttr || name == "with_quant_attr";
}

void AppendOp(const proto::OpDesc& op, const DumpOptions& options,
              std::vector<const proto::OpDesc::Attr*>* sorted_attrs, std::string* out) {
  AppendSlots(op.outputs(), out);
  out->append(" = ");
  out->append(op.type());
  out->append("(inputs=");
  AppendSlots(op.inputs(), out);

  // The op's own attrs first, then the ones every op carries (op_role, op_namescope, ...), each
  // group sorted by name: what distinguishes the op comes first, as in the example.
  // Stable, so duplicate names keep their stored order.
  sorted_attrs->clear();
  for (const proto::OpDesc::Attr& attr : op.attrs()) {
    if (!options.show_callstack && attr.name() == kOpCallstackAttr) continue;
    sorted_attrs->push_back(&attr);
  }
  std::stable_sort(sorted_attrs->begin(), sorted_attrs->end(),
                   [](const proto::OpDesc::Attr* a, const proto::OpDesc::Attr* b) {
                     const bool a_common = IsCommonAttr(a->name());
                     const bool b_common = IsCommonAttr(b->name());
                     if (a_common != b_common) return b_common;
                     return a->name() < b->name();
                   });
  for (const proto::OpDesc::Attr* attr : *sorted_attrs) {
    out->append(", ");
    out->append(attr->name());
    out->push_back('=');
    AppendAttrValue(*attr, out);
  }
  out->push_back(')');
}

// Element types by the names Paddle's Python side uses (paddle.float32, ...); nullptr when the
// code is not an element type.
const char* DtypeName(proto::VarType::Type type) {
  switch (type) {
    case proto::VarType::BOOL:
      return "bool";
    case proto::VarType::INT16:
      return "int16";
    case proto::VarType::INT32:
      return "int32";
    case proto::VarType::INT64:
      return "int64";
    case proto::VarType::FP16:
      return "float16";
    case proto::VarType::FP32:
      return "float32";
    case proto::VarType::FP64:
      return "float64";
    case proto::VarType::UINT8:
      return "uint8";
    case proto::VarType::INT8:
      return "int8";
    case proto::VarType::BF16:
      return "bfloat16";
    case proto::VarType::COMPLEX64:
      return "complex64";
    case proto::VarType::COMPLEX128:
      return "complex128";
    case proto::VarType::FP8_E4M3FN:
      return "float8_e4m3fn";
    case proto::VarType::FP8_E5M2:
      return "float8_e5m2";
    case proto::VarType::SIZE_T:
      return "size_t";
    case proto::VarType::UINT32:
      return "uint32";
    case proto::VarType::UINT64:
      return "uint64";
    default:
      return nullptr;
  }
}

void AppendVar(const Var& var, std::string* out) {
  if (var.persistable()) out->append("persist ");
  out->append(var.is_parameter() ? "trainable param " : "var ");
  out->append(var.name());
  out->append(" : ");
  const proto::VarType::Type type = var.type();
  if (proto::VarType::Type_IsValid(type)) {
    out->append(proto::VarType::Type_Name(type));
  } else {
    AppendInt(static_cast<int>(type), out);
  }
  const proto::VarType::TensorDesc* tensor = var.tensor_desc();
  if (tensor == nullptr) return;  // feed, fetch, scopes, readers...: the type says it all

  // A Python tuple, as Paddle prints var.shape: (), (3,), (-1, 3).
  out->append(".shape(");
  for (int i = 0; i < tensor->dims_size(); ++i) {
    if (i > 0) out->append(", ");
    AppendInt(tensor->dims(i), out);
  }
  if (tensor->dims_size() == 1) out->push_back(',');
  out->append(").dtype(");
  if (const char* name = DtypeName(tensor->data_type())) {
    out->append(name);
  } else {
    AppendInt(static_cast<int>(tensor->data_type()), out);
  }
  out->push_back(')');
  if (int32_t lod_level = var.lod_level(); lod_level != 0) {
    fmt::format_to(std::back_inserter(*out), ".lod_level({})", lod_level);
  }
  out->append(".stop_gradient(");
  AppendBool(var.stop_gradient(), out);
  out->push_back(')');
}

// What a block's header, vars and ops take, roughly: enough to avoid most reallocations.
size_t EstimateSize(const proto::ProgramDesc& desc) {
  size_t size = 64;
  for (const proto::BlockDesc& block : desc.blocks()) {
    size += 64 + static_cast<size_t>(block.vars_size()) * 96 +
            static_cast<size_t>(block.ops_size()) * 192;
  }
  return size;
}

class Dumper {
 public:
  Dumper(const Program& program, const DumpOptions& options, std::string* out)
      : program_(program), options_(options), out_(out), printed_(program.num_blocks(), false) {}

  void Run() {
    // Blocks reached through an op are printed there; the rest (all of them without nesting,
    // unreferenced or orphaned blocks with it) at top level, in position order.
    for (int b = 0; b < program_.num_blocks(); ++b) {
      if (!printed_[b]) PrintBlockFrom(b);
    }
  }

 private:
  struct Frame {
    int block;
    int depth;
    int next_op = 0;
    std::vector<int32_t> sub_blocks;  // of the op just printed, still to print
    size_t next_sub_block = 0;
  };

  void OpenBlock(int position, int depth) {
    printed_[position] = true;
    const Block block = program_.block(position);
    AppendIndent(depth, out_);
    fmt::format_to(std::back_inserter(*out_), "{{ // block_idx:{}  parent_idx:{}  forward_idx:{}",
                   block.index(), block.parent_index(), block.forward_block_index());
    // Only a malformed program stores a block where its idx does not say; make that visible,
    // since block[N] references mean positions.
    if (block.index() != position) {
      fmt::format_to(std::back_inserter(*out_), "  (at position {})", position);
    }
    out_->push_back('\n');
    if (options_.show_vars) {
      for (int v = 0; v < block.num_vars(); ++v) {
        AppendIndent(depth + 1, out_);
        AppendVar(block.var(v), out_);
        out_->push_back('\n');
      }
      out_->push_back('\n');
    }
    stack_.push_back(Frame{
        .block = position, .depth = depth, .next_op = 0, .sub_blocks = {}, .next_sub_block = 0});
  }

  // Prints block `root` and, with nesting, every not yet printed block it reaches.
  void PrintBlockFrom(int root) {
    OpenBlock(root, 0);
    while (!stack_.empty()) {
      Frame& frame = stack_.back();
      if (frame.next_sub_block < frame.sub_blocks.size()) {
        const int32_t sub = frame.sub_blocks[frame.next_sub_block++];
        const int depth = frame.depth + 2;  // one level deeper than the op
        if (sub < 0 || sub >= program_.num_blocks()) {
          AppendIndent(depth, out_);
          fmt::format_to(std::back_inserter(*out_), "block[{}] (missing)\n", sub);
        } else if (printed_[sub]) {  // referenced twice, or a cycle back to an open block
          AppendIndent(depth, out_);
          fmt::format_to(std::back_inserter(*out_), "block[{}] (printed above)\n", sub);
        } else {
          OpenBlock(sub, depth);  // invalidates `frame`
        }
        continue;
      }
      const proto::BlockDesc& block = program_.desc().blocks(frame.block);
      if (frame.next_op < block.ops_size()) {
        const proto::OpDesc& op = block.ops(frame.next_op++);
        AppendIndent(frame.depth + 1, out_);
        AppendOp(op, options_, &sorted_attrs_, out_);
        out_->push_back('\n');
        if (options_.nest_sub_blocks) {
          frame.sub_blocks = Op(&op).SubBlocks();
          frame.next_sub_block = 0;
        }
        continue;
      }
      AppendIndent(frame.depth, out_);
      out_->append("}\n");
      stack_.pop_back();
    }
  }

  const Program& program_;
  const DumpOptions& options_;
  std::string* out_;
  std::vector<bool> printed_;  // by block position
  std::vector<Frame> stack_;
  std::vector<const proto::OpDesc::Attr*> sorted_attrs_;  // reused across ops
};

}  // namespace

std::string DumpProgram(const Program& program, const DumpOptions& options) {
  std::string out;
  out.reserve(EstimateSize(program.desc()));
  out.append("// ProgramDesc ");
  if (std::optional<int64_t> version = program.version()) {
    fmt::format_to(std::back_inserter(out), "version {}, ", *version);
  }
  fmt::format_to(std::back_inserter(out), "{} blocks, {} ops\n", program.num_blocks(),
                 program.num_ops());
  Dumper(program, options, &out).Run();
  return out;
}

std::string DumpOp(const Op& op, const DumpOptions& options) {
  std::string out;
  std::vector<const proto::OpDesc::Attr*> sorted_attrs;
  AppendOp(op.desc(), options, &sorted_attrs, &out);
  return out;
}

std::string DumpVar(const Var& var) {
  std::string out;
  AppendVar(var, &out);
  return out;
}

}  // namespace irm::oldir
