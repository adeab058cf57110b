// Explains malformed protobuf wire data: the first problem, where it is, and in which message.
#include "oldir/wire_check.h"

#include <fmt/format.h>

#include <map>

namespace irm::oldir {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

constexpr int kMaxDepth = 100;  // protobuf's own default recursion limit

const char* WireTypeName(int wire_type) {
  switch (wire_type) {
    case 0:
      return "varint";
    case 1:
      return "fixed64";
    case 2:
      return "length-delimited";
    case 3:
      return "start-group";
    case 4:
      return "end-group";
    case 5:
      return "fixed32";
    default:
      return "invalid";
  }
}

int ExpectedWireType(const FieldDescriptor* field) {
  switch (field->type()) {
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      return 1;
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
      return 5;
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_MESSAGE:
      return 2;
    case FieldDescriptor::TYPE_GROUP:
      return 3;
    default:
      return 0;
  }
}

class Walker {
 public:
  explicit Walker(std::string_view data) : data_(data) {}

  std::optional<WireProblem> Walk(size_t begin, size_t end, const Descriptor* descriptor,
                                  const std::string& path, int depth) {
    if (depth > kMaxDepth) return Problem(begin, path, "messages nested too deeply");
    std::map<int, int> seen;  // field number -> occurrences so far, for repeated-field paths
    size_t pos = begin;
    while (pos < end) {
      const size_t tag_at = pos;
      uint64_t tag = 0;
      if (!ReadVarint(&pos, end, &tag))
        return Problem(tag_at, path, "truncated or malformed field tag");
      const uint64_t number = tag >> 3;
      const int wire_type = static_cast<int>(tag & 7);
      if (number == 0 || number > 536870911) {
        return Problem(tag_at, path, fmt::format("invalid field number {}", number));
      }
      const FieldDescriptor* field =
          descriptor ? descriptor->FindFieldByNumber(static_cast<int>(number)) : nullptr;
      const std::string name = field ? field->name() : fmt::format("{}", number);
      const int occurrence = seen[static_cast<int>(number)]++;
      const std::string field_path =
          (path.empty() ? "" : path + ".") + name +
          (field && field->is_repeated() ? fmt::format("[{}]", occurrence) : "");

      if (field) {
        const int expected = ExpectedWireType(field);
        const bool packed_ok =
            wire_type == 2 && field->is_repeated() && expected != 2 && expected != 3;
        if (wire_type != expected && !packed_ok && wire_type <= 5) {
          return Problem(tag_at, path,
                         fmt::format("field '{}' ({}) has wire type {} ({}), expected {} ({})",
                                     field->name(), number, wire_type, WireTypeName(wire_type),
                                     expected, WireTypeName(expected)));
        }
      }

      switch (wire_type) {
        case 0: {
          const size_t value_at = pos;
          uint64_t value = 0;
          if (!ReadVarint(&pos, end, &value)) {
            return Problem(value_at, path,
                           fmt::format("{} in field '{}'", VarintError(pos, end), name));
          }
          if (field) {
            if (std::optional<std::string> bad = BadEnumValue(field, value)) {
              return Problem(value_at, path, std::move(*bad));
            }
          }
          break;
        }
        case 1:
        case 5: {
          const size_t width = wire_type == 1 ? 8 : 4;
          if (end - pos < width) {
            return Problem(pos, path,
                           fmt::format("truncated {}-byte value in field '{}'", width, name));
          }
          pos += width;
          break;
        }
        case 2: {
          const size_t len_at = pos;
          uint64_t length = 0;
          if (!ReadVarint(&pos, end, &length)) {
            return Problem(len_at, path, fmt::format("truncated length of field '{}'", name));
          }
          if (length > end - pos) {
            // A cut-off file: the deepest message the cut falls in says more than the outermost.
            if (field && field->type() == FieldDescriptor::TYPE_MESSAGE) {
              if (auto inner = Walk(pos, end, field->message_type(), field_path, depth + 1)) {
                if (!inner->cut_short) {
                  inner->message +=
                      fmt::format(" (input cut short: '{}' claims {} bytes, {} remain)", name,
                                  length, end - pos);
                  inner->cut_short = true;
                }
                return inner;
              }
            }
            return Problem(len_at, path,
                           fmt::format("field '{}' claims {} bytes but only {} remain", name,
                                       length, end - pos));
          }
          const size_t body = pos;
          pos += length;
          if (field && field->type() == FieldDescriptor::TYPE_MESSAGE) {
            if (auto problem = Walk(body, pos, field->message_type(), field_path, depth + 1)) {
              return problem;
            }
          } else if (field && ExpectedWireType(field) != 2) {
            if (auto problem = CheckPacked(body, pos, field, path)) return problem;
          }
          break;
        }
        case 3: {
          if (auto problem = SkipGroup(&pos, end, static_cast<int>(number), path, depth + 1)) {
            return problem;
          }
          break;
        }
        case 4:
          return Problem(tag_at, path, "end-group tag without a matching start-group");
        default:
          return Problem(tag_at, path, fmt::format("invalid wire type {}", wire_type));
      }
    }
    return std::nullopt;
  }

 private:
  bool ReadVarint(size_t* pos, size_t end, uint64_t* value) const {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (*pos >= end) return false;
      const uint8_t byte = static_cast<uint8_t>(data_[(*pos)++]);
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *value = result;
        return true;
      }
    }
    return false;  // more than 10 bytes
  }

  // Why ReadVarint stopped at `pos`: the data ended, or the varint ran past 10 bytes.
  static const char* VarintError(size_t pos, size_t end) {
    return pos >= end ? "truncated varint" : "varint longer than 10 bytes";
  }

  // protobuf keeps an enum number the enum does not declare as an unknown field (proto2).
  static std::optional<std::string> BadEnumValue(const FieldDescriptor* field, uint64_t value) {
    if (field->type() != FieldDescriptor::TYPE_ENUM ||
        field->enum_type()->FindValueByNumber(static_cast<int32_t>(value)) != nullptr) {
      return std::nullopt;
    }
    return fmt::format("field '{}': {} is not a value of enum {}", field->name(),
                       static_cast<int64_t>(value), field->enum_type()->full_name());
  }

  std::optional<WireProblem> CheckPacked(size_t begin, size_t end, const FieldDescriptor* field,
                                         const std::string& path) const {
    const int expected = ExpectedWireType(field);
    if (expected == 1 || expected == 5) {
      const size_t width = expected == 1 ? 8 : 4;
      if ((end - begin) % width != 0) {
        return Problem(begin, path,
                       fmt::format("packed field '{}' has {} bytes, not a multiple of {}",
                                   field->name(), end - begin, width));
      }
      return std::nullopt;
    }
    size_t pos = begin;
    while (pos < end) {
      uint64_t value = 0;
      const size_t at = pos;
      if (!ReadVarint(&pos, end, &value)) {
        return Problem(
            at, path, fmt::format("{} in packed field '{}'", VarintError(pos, end), field->name()));
      }
      if (std::optional<std::string> bad = BadEnumValue(field, value)) {
        return Problem(at, path, std::move(*bad));
      }
    }
    return std::nullopt;
  }

  std::optional<WireProblem> SkipGroup(size_t* pos, size_t end, int number, const std::string& path,
                                       int depth) {
    if (depth > kMaxDepth) return Problem(*pos, path, "groups nested too deeply");
    while (*pos < end) {
      const size_t tag_at = *pos;
      uint64_t tag = 0;
      if (!ReadVarint(pos, end, &tag)) return Problem(tag_at, path, "truncated tag inside a group");
      const int wire_type = static_cast<int>(tag & 7);
      // protobuf rejects these inside groups as anywhere else.
      if ((tag >> 3) == 0 || (tag >> 3) > 536870911) {
        return Problem(tag_at, path,
                       fmt::format("invalid field number {} inside a group", tag >> 3));
      }
      const int field = static_cast<int>(tag >> 3);
      uint64_t value = 0;
      const size_t value_at = *pos;
      switch (wire_type) {
        case 0:
          if (!ReadVarint(pos, end, &value)) {
            return Problem(value_at, path,
                           fmt::format("{} inside a group", VarintError(*pos, end)));
          }
          break;
        case 1:
        case 5: {
          const size_t width = wire_type == 1 ? 8 : 4;
          if (end - *pos < width) return Problem(*pos, path, "truncated value inside a group");
          *pos += width;
          break;
        }
        case 2:
          if (!ReadVarint(pos, end, &value) || value > end - *pos) {
            return Problem(tag_at, path, "truncated length-delimited value inside a group");
          }
          *pos += value;
          break;
        case 3:
          if (auto problem = SkipGroup(pos, end, field, path, depth + 1)) return problem;
          break;
        case 4:
          if (field != number) return Problem(tag_at, path, "mismatched end-group tag");
          return std::nullopt;
        default:
          return Problem(tag_at, path, fmt::format("invalid wire type {}", wire_type));
      }
    }
    return Problem(end, path, fmt::format("group {} is not closed", number));
  }

  static std::optional<WireProblem> Problem(size_t offset, const std::string& path,
                                            std::string message) {
    return WireProblem{offset, path, std::move(message)};
  }

  std::string_view data_;
};

}  // namespace

std::optional<WireProblem> FindWireProblem(std::string_view bytes, const Descriptor* descriptor) {
  return Walker(bytes).Walk(0, bytes.size(), descriptor, "", 0);
}

}  // namespace irm::oldir
