// Binary and text I/O of legacy programs, with diagnostics that say where an input is broken.
#include "oldir/program_io.h"

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cctype>
#include <cstdint>
#include <regex>

#include "common/file_io.h"
#include "oldir/legacy_text_names.h"
#include "oldir/wire_check.h"

namespace irm::oldir {
namespace {

constexpr std::string_view kTextHeader =
    "# proto-file: oldir/proto/framework.proto\n"
    "# proto-message: paddle.framework.proto.ProgramDesc\n";

// blocks[0].ops[3].attrs[1] -> block 0, op 3, with the path itself as detail.
Location LocationFromPath(const std::string& file, const std::string& path) {
  Location loc = Location::File(file);
  static const std::regex kStep(R"((blocks|ops|vars)\[(\d+)\])");
  for (auto it = std::sregex_iterator(path.begin(), path.end(), kStep);
       it != std::sregex_iterator(); ++it) {
    const std::string kind = (*it)[1];
    const int index = std::stoi((*it)[2]);
    if (kind == "blocks") loc.block = index;
    if (kind == "ops") loc.op = index;
    if (kind == "vars" && loc.op < 0) loc.detail = fmt::format("var #{}", index);
  }
  return loc;
}

// Collects text-format syntax errors with their positions.
class TextErrors : public google::protobuf::io::ErrorCollector {
 public:
  TextErrors(std::string file, const LegacyNameRewrite& rewrite)
      : file_(std::move(file)), rewrite_(rewrite) {}
  void AddError(int line, int column, const std::string& message) override {
    if (first_) return;
    // Positions in the text as written, not as the old names were rewritten.
    if (rewrite_.changed()) column = rewrite_.OriginalColumn(line, column);
    // At the end of the input protobuf names the missing token as the empty string: "got: ".
    std::string text = message;
    if (text.size() >= 5 && text.compare(text.size() - 5, 5, "got: ") == 0) text += "end of input";
    first_ = Status(StatusCode::kParseError, Location::Text(file_, line + 1, column + 1), text);
  }
  void AddWarning(int, int, const std::string&) override {}
  std::optional<Status> first_;

 private:
  std::string file_;
  const LegacyNameRewrite& rewrite_;
};

// --- unknown-field scan: typed, because it runs on every load ---

class UnknownScan {
 public:
  // Stops recording after `limit` fields: a junk input of a few bytes per unknown field would
  // otherwise cost a path and a location (hundreds of bytes) for each.
  explicit UnknownScan(std::vector<UnknownField>* out, size_t limit = SIZE_MAX)
      : out_(out), limit_(limit) {}

  // Every unknown field counts, recorded or not.
  size_t total() const { return total_; }

  void Program(const proto::ProgramDesc& p) {
    Check(p);
    for (int b = 0; b < p.blocks_size(); ++b) {
      Push("blocks", b);
      Block(p.blocks(b));
      Pop();
    }
    if (p.has_legacy_version()) Nested("legacy_version", p.legacy_version());
    if (p.has_version()) Nested("version", p.version());
    if (p.has_op_version_map()) Generic("op_version_map", p.op_version_map());
    // The deprecated Paddle 1.x field, reached by reflection to keep its accessors' warnings out.
    const auto* legacy = proto::ProgramDesc::descriptor()->FindFieldByNumber(3);
    if (p.GetReflection()->HasField(p, legacy)) {
      Generic(legacy->name().c_str(), p.GetReflection()->GetMessage(p, legacy));
    }
  }

 private:
  struct Step {
    const char* name;
    int index;  // -1: not a repeated element
  };

  void Block(const proto::BlockDesc& block) {
    Check(block);
    for (int v = 0; v < block.vars_size(); ++v) {
      Push("vars", v);
      const proto::VarDesc& var = block.vars(v);
      Check(var);
      if (var.has_type()) VarType(var.type());
      for (int a = 0; a < var.attrs_size(); ++a) Leaf("attrs", a, var.attrs(a));
      Pop();
    }
    for (int o = 0; o < block.ops_size(); ++o) {
      Push("ops", o);
      const proto::OpDesc& op = block.ops(o);
      Check(op);
      for (int i = 0; i < op.inputs_size(); ++i) Leaf("inputs", i, op.inputs(i));
      for (int i = 0; i < op.outputs_size(); ++i) Leaf("outputs", i, op.outputs(i));
      for (int a = 0; a < op.attrs_size(); ++a) {
        const proto::OpDesc::Attr& attr = op.attrs(a);
        Push("attrs", a);
        Check(attr);
        if (attr.has_scalar()) Generic("scalar", attr.scalar());
        for (int s = 0; s < attr.scalars_size(); ++s) {
          Push("scalars", s);
          Generic(nullptr, attr.scalars(s));
          Pop();
        }
        Pop();
      }
      Pop();
    }
  }

  // Typed for the common tensor descriptions: this runs for every var of every program loaded.
  void VarType(const proto::VarType& type) {
    Push("type", -1);
    Check(type);
    if (type.has_dense_tensor()) {
      Push("dense_tensor", -1);
      Check(type.dense_tensor());
      if (type.dense_tensor().has_tensor()) Nested("tensor", type.dense_tensor().tensor());
      Pop();
    }
    if (type.has_selected_rows()) Nested("selected_rows", type.selected_rows());
    if (type.has_tensor_array()) {
      Push("tensor_array", -1);
      Check(type.tensor_array());
      if (type.tensor_array().has_tensor()) Nested("tensor", type.tensor_array().tensor());
      Pop();
    }
    if (type.has_reader()) Generic("reader", type.reader());
    if (type.has_tuple()) Generic("tuple", type.tuple());
    if (type.has_string()) Nested("string", type.string());
    if (type.has_strings()) Nested("strings", type.strings());
    if (type.has_vocab()) Nested("vocab", type.vocab());
    if (type.has_sparse_coo()) Nested("sparse_coo", type.sparse_coo());
    if (type.has_sparse_csr()) Nested("sparse_csr", type.sparse_csr());
    Pop();
  }

  template <typename M>
  void Leaf(const char* name, int index, const M& message) {
    if (message.unknown_fields().empty()) return;
    Push(name, index);
    Check(message);
    Pop();
  }

  template <typename M>
  void Nested(const char* name, const M& message) {
    Push(name, -1);
    Check(message);
    Pop();
  }

  // Rare messages: walk with reflection.
  void Generic(const char* name, const google::protobuf::Message& message) {
    if (name) Push(name, -1);
    Check(message);
    const auto* reflection = message.GetReflection();
    std::vector<const google::protobuf::FieldDescriptor*> fields;
    reflection->ListFields(message, &fields);
    for (const auto* field : fields) {
      if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          Push(field->name().c_str(), i);
          Generic(nullptr, reflection->GetRepeatedMessage(message, field, i));
          Pop();
        }
      } else {
        Generic(field->name().c_str(), reflection->GetMessage(message, field));
      }
    }
    if (name) Pop();
  }

  template <typename M>
  void Check(const M& message) {
    if (message.unknown_fields().empty()) return;  // inline bit test, no virtual call
    Report(message.unknown_fields());
  }

  void Check(const google::protobuf::Message& message) {
    Report(message.GetReflection()->GetUnknownFields(message));
  }

  void Report(const google::protobuf::UnknownFieldSet& unknown) {
    total_ += static_cast<size_t>(unknown.field_count());
    for (int i = 0; i < unknown.field_count() && out_->size() < limit_; ++i) {
      UnknownField field;
      field.path = Path();
      field.number = unknown.field(i).number();
      field.location = LocationFromPath("", field.path);
      out_->push_back(std::move(field));
    }
  }

  void Push(const char* name, int index) { stack_.push_back({name, index}); }
  void Pop() { stack_.pop_back(); }
  std::string Path() const {
    std::string path;
    for (const Step& step : stack_) {
      if (step.name) {
        if (!path.empty()) path += '.';
        path += step.name;
      }
      if (step.index >= 0) path += fmt::format("[{}]", step.index);
    }
    return path;
  }

  std::vector<UnknownField>* out_;
  size_t limit_;
  size_t total_ = 0;
  std::vector<Step> stack_;
};

bool HasUnknownFields(const proto::ProgramDesc& desc) {
  std::vector<UnknownField> first;
  UnknownScan(&first, 1).Program(desc);
  return !first.empty();
}

Status MissingRequired(const proto::ProgramDesc& desc, const std::string& file) {
  std::vector<std::string> missing;
  desc.FindInitializationErrors(&missing);
  Status status(StatusCode::kParseError, LocationFromPath(file, missing.empty() ? "" : missing[0]),
                fmt::format("required field '{}' is missing", missing.empty() ? "?" : missing[0]));
  for (size_t i = 1; i < missing.size() && i < 20; ++i) {
    status.AddNote(fmt::format("required field '{}' is also missing", missing[i]));
  }
  if (missing.size() > 20) status.AddNote(fmt::format("... and {} more", missing.size() - 20));
  return status;
}

Status WireError(std::string_view bytes, const std::string& file, const char* fallback) {
  std::optional<WireProblem> problem = FindWireProblem(bytes, proto::ProgramDesc::descriptor());
  if (!problem) return Status(StatusCode::kParseError, Location::File(file), fallback);
  Location loc = LocationFromPath(file, problem->path);
  loc.detail = problem->path.empty()
                   ? fmt::format("byte {}", problem->offset)
                   : fmt::format("byte {}, in {}", problem->offset, problem->path);
  return Status(StatusCode::kParseError, std::move(loc), problem->message);
}

// Whether the top level of `bytes` holds a declared message field sent with another wire type,
// or cannot be walked at all. protobuf keeps such a field as an unknown field (16 bytes or more
// each): junk such as 200 MB of spaces, two bytes per field, would take gigabytes before the
// wire check below explains it. Only the top-level fields are walked (a length-delimited field is
// skipped whole): O(top-level fields), a handful for a real program.
bool TopLevelLooksCorrupt(std::string_view bytes) {
  const google::protobuf::Descriptor* descriptor = proto::ProgramDesc::descriptor();
  size_t at = 0;
  const auto varint = [&](uint64_t* out) {
    *out = 0;
    for (int shift = 0; shift < 64 && at < bytes.size(); shift += 7) {
      const auto byte = static_cast<uint8_t>(bytes[at++]);
      *out |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  };
  while (at < bytes.size()) {
    uint64_t tag = 0;
    if (!varint(&tag)) return true;
    const int wire_type = static_cast<int>(tag & 7);
    const google::protobuf::FieldDescriptor* field =
        tag >> 3 <= INT32_MAX ? descriptor->FindFieldByNumber(static_cast<int>(tag >> 3)) : nullptr;
    if (field != nullptr && field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE &&
        wire_type != 2) {
      return true;
    }
    uint64_t value = 0;
    switch (wire_type) {
      case 0:
        if (!varint(&value)) return true;
        break;
      case 1:
        at += 8;
        break;
      case 2:
        if (!varint(&value) || value > bytes.size() - at) return true;
        at += static_cast<size_t>(value);
        break;
      case 5:
        at += 4;
        break;
      default:  // groups (long deprecated) and invalid wire types
        return true;
    }
  }
  return at > bytes.size();
}

// Both parsers fill `desc`, which lives on the target Program's arena.
Status ParseBinary(std::string_view bytes, const std::string& file, proto::ProgramDesc* desc) {
  if (TopLevelLooksCorrupt(bytes)) {
    // The wire check names the problem, usually at once (it stops at the first). When it finds
    // none after all, protobuf decides.
    if (FindWireProblem(bytes, proto::ProgramDesc::descriptor())) {
      return WireError(bytes, file, "");
    }
  }
  // The size check comes first: protobuf takes an int, and a cast of a larger size would wrap.
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !desc->ParsePartialFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return WireError(bytes, file, "not a valid binary ProgramDesc");
  }
  // protobuf keeps a declared field sent with the wrong wire type, and an out-of-range enum value,
  // as unknown fields; both mean the file is corrupt, not from a newer schema.
  if (HasUnknownFields(*desc) && FindWireProblem(bytes, proto::ProgramDesc::descriptor())) {
    return WireError(bytes, file, "");
  }
  return Status::Ok();
}

Status ParseText(std::string_view bytes, const std::string& file, proto::ProgramDesc* desc) {
  // Text written before Paddle 3.0 names enum values and fields the old way (LOD_TENSOR,
  // lod_tensor, ...): accepted, and read as the current names.
  const LegacyNameRewrite rewrite(bytes);
  google::protobuf::TextFormat::Parser parser;
  TextErrors errors(file, rewrite);
  parser.RecordErrorsTo(&errors);
  parser.AllowPartialMessage(true);  // missing required fields get our own diagnostic below
  if (!parser.ParseFromString(rewrite.changed() ? rewrite.text() : std::string(bytes), desc)) {
    if (errors.first_) return *errors.first_;
    return Status(StatusCode::kParseError, Location::File(file), "not a valid text ProgramDesc");
  }
  return Status::Ok();
}

}  // namespace

const char* ProgramFormatName(ProgramFormat format) {
  return format == ProgramFormat::kText ? "text" : "binary";
}

std::optional<ProgramFormat> ProgramFormatFromName(std::string_view name) {
  if (name == "text" || name == "prototxt") return ProgramFormat::kText;
  if (name == "binary" || name == "pdmodel") return ProgramFormat::kBinary;
  return std::nullopt;
}

ProgramFormat DetectProgramFormat(std::string_view bytes) {
  // Binary ProgramDescs hold control bytes (every BlockDesc starts with tag 0x08); text has none.
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && u != '\t' && u != '\n' && u != '\r' && u != '\f' && u != '\v') {
      return ProgramFormat::kBinary;
    }
    if (u == 0x7f) return ProgramFormat::kBinary;
  }
  // Printable: text if it starts (after blanks and # comments) with a field name.
  size_t i = 0;
  bool comment = false;
  while (i < bytes.size()) {
    const auto u = static_cast<unsigned char>(bytes[i]);
    if (std::isspace(u)) {
      ++i;
    } else if (u == '#') {
      comment = true;
      while (i < bytes.size() && bytes[i] != '\n') ++i;
    } else {
      return std::isalpha(u) || u == '_' || u == '[' ? ProgramFormat::kText
                                                     : ProgramFormat::kBinary;
    }
  }
  // Empty or only comments: an empty program. Blanks alone are not: 0x0a (the blocks tag)
  // followed by a length such as 0x0d or 0x20 is a binary program cut short, which must fail
  // rather than read as an empty text program.
  return bytes.empty() || comment ? ProgramFormat::kText : ProgramFormat::kBinary;
}

std::optional<ProgramFormat> ProgramFormatFromPath(std::string_view path) {
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
  };
  for (std::string_view ext : {".prototxt", ".pbtxt", ".txtpb", ".textproto", ".txt"}) {
    if (ends_with(ext)) return ProgramFormat::kText;
  }
  for (std::string_view ext : {".pdmodel", ".pb", ".bin", "__model__"}) {
    if (ends_with(ext)) return ProgramFormat::kBinary;
  }
  return std::nullopt;
}

StatusOr<Program> ParseProgram(std::string_view bytes, const std::string& file,
                               std::optional<ProgramFormat> format) {
  const ProgramFormat actual = format.value_or(DetectProgramFormat(bytes));
  Program program;
  proto::ProgramDesc* desc = program.mutable_desc();
  IRM_RETURN_IF_ERROR(actual == ProgramFormat::kText ? ParseText(bytes, file, desc)
                                                     : ParseBinary(bytes, file, desc));
  if (!desc->IsInitialized()) return MissingRequired(*desc, file);
  program.Reindex();
  return program;
}

StatusOr<Program> LoadProgram(const std::string& path, std::optional<ProgramFormat> format) {
  IRM_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseProgram(bytes, path == "-" ? "<stdin>" : path, format);
}

StatusOr<std::string> SerializeProgram(const Program& program, ProgramFormat format,
                                       const SerializeOptions& options) {
  if (format == ProgramFormat::kBinary) {
    std::string bytes;
    // Partial: a program under construction may lack required fields; writing it must not abort.
    if (!program.desc().SerializePartialToString(&bytes)) {
      return Status(StatusCode::kInternal, Location{}, "cannot serialize the program");
    }
    return bytes;
  }
  const proto::ProgramDesc* desc = &program.desc();
  proto::ProgramDesc stripped;
  std::vector<UnknownField> unknown = FindUnknownFields(*desc);
  if (!unknown.empty()) {
    if (!options.drop_unknown_fields_in_text) {
      Status status(
          StatusCode::kInvalid, unknown[0].location,
          fmt::format("the text form cannot carry unknown field {} (at {}); {} unknown "
                      "field(s) in all",
                      unknown[0].number, unknown[0].path.empty() ? "ProgramDesc" : unknown[0].path,
                      unknown.size()));
      status.AddNote("write the binary form to keep them, or drop them explicitly");
      return status;
    }
    stripped = *desc;
    stripped.DiscardUnknownFields();
    desc = &stripped;
  }
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  if (!printer.PrintToString(*desc, &text)) {
    return Status(StatusCode::kInternal, Location{}, "cannot print the program as text");
  }
  return std::string(kTextHeader) + text;
}

Status SaveProgram(const Program& program, const std::string& path, ProgramFormat format,
                   const SerializeOptions& options) {
  IRM_ASSIGN_OR_RETURN(std::string bytes, SerializeProgram(program, format, options));
  return WriteFileAtomically(path, bytes);
}

std::vector<UnknownField> FindUnknownFields(const proto::ProgramDesc& desc) {
  std::vector<UnknownField> out;
  UnknownScan(&out).Program(desc);
  return out;
}

std::vector<UnknownField> FindUnknownFields(const proto::ProgramDesc& desc, size_t limit,
                                            size_t* total) {
  std::vector<UnknownField> out;
  UnknownScan scan(&out, limit);
  scan.Program(desc);
  *total = scan.total();
  return out;
}

}  // namespace irm::oldir
