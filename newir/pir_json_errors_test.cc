// Malformed PIR JSON documents and the exact diagnostic each gets: structure errors located by
// the JSON pointer of the offending element, syntax errors by line:col. One test per part of the
// document: the header, the program / region / block shape, value ids, op names and dialect ids,
// the data of every type and attribute kind, compressed parameters, and the nesting cap.
#include <gtest/gtest.h>

#include <string>

#include "newir/pir_json.h"

namespace irm::newir {
namespace {

// A document whose top block holds `ops` (a comma-separated list of op objects).
std::string Doc(const std::string& ops) {
  return R"({"base_code":{"magic":"pir","version":1,"trainable":true},"program":{"regions":[)"
         R"({"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[)" +
         ops + "]}]}]}}";
}
// A document with the given top block (the object in "blocks").
std::string BlockDoc(const std::string& block) {
  return R"({"base_code":{"magic":"pir"},"program":{"regions":[{"#":"region_0","blocks":[)" +
         block + "]}]}}";
}
// One op whose only attribute "x" is `attr`, and one whose only result has type `type`.
std::string AttrDoc(const std::string& attr) {
  return Doc(R"({"#":"1.x","A":[{"N":"x","AT":)" + attr + "}]}");
}
std::string TypeDoc(const std::string& type) {
  return Doc(R"({"#":"1.x","O":[{"%":1,"TT":)" + type + "}]}");
}

constexpr char kF32[] = R"({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]})";
constexpr char kMesh[] = R"({"#":"4.a_process_mesh","D":[[2],[0,1],["x"]]})";

// Where the errors of the documents above are.
const std::string kOp0 = "bad.json: /program/regions/0/blocks/0/ops/0";
const std::string kAttr = kOp0 + "/A/0/AT";
const std::string kType = kOp0 + "/O/0/TT";

std::string ReadError(const std::string& text) {
  StatusOr<Program> program = ReadPirJson(text, "bad.json");
  if (program.ok()) return "OK";
  return program.status().ToString();
}

TEST(PirJsonErrorsTest, Header) {
  EXPECT_EQ(ReadError(R"({"program":{"regions":[]}})"),
            "bad.json: /base_code/magic: error: not a PIR JSON file: no magic");
  EXPECT_EQ(ReadError(R"({"base_code":1,"program":{}})"),
            "bad.json: /base_code/magic: error: not a PIR JSON file: no magic");
  EXPECT_EQ(ReadError(R"({"base_code":{"magic":"pdmodel"},"program":{}})"),
            "bad.json: /base_code/magic: error: not a PIR JSON file: magic is \"pdmodel\", "
            "expected \"pir\"");
  EXPECT_EQ(ReadError(R"({"base_code":{"magic":7},"program":{}})"),
            "bad.json: /base_code/magic: error: not a PIR JSON file: magic is 7, expected \"pir\"");
  EXPECT_EQ(ReadError(R"({"base_code":{"magic":"pir","version":"1"},"program":{}})"),
            "bad.json: /base_code/version: error: expected an integer, found a string");
  EXPECT_EQ(ReadError(R"({"base_code":{"magic":"pir","version":1.5},"program":{}})"),
            "bad.json: /base_code/version: error: expected an integer, found a float");
  EXPECT_EQ(ReadError(R"({"base_code":{"magic":"pir","trainable":1},"program":{}})"),
            "bad.json: /base_code/trainable: error: expected a boolean, found an integer");
  EXPECT_EQ(ReadError(R"({"base_code":{"magic":"pir","patch":{}},"program":{}})"),
            "bad.json: /base_code/patch: error: unknown key 'patch'");
  EXPECT_EQ(ReadError("[1]"), "bad.json: /: error: expected an object, found an array");
}

TEST(PirJsonErrorsTest, ProgramShape) {
  EXPECT_EQ(ReadError(R"({"base_code":{"magic":"pir"}})"),
            "bad.json: /: error: missing key 'program'");
  EXPECT_EQ(ReadError(R"({"base_code":{"magic":"pir"},"program":[]})"),
            "bad.json: /program: error: expected an object, found an array");
  EXPECT_EQ(ReadError(R"({"base_code":{"magic":"pir"},"program":{"regions":[]}})"),
            "bad.json: /program/regions: error: expected 1 region (the top module's), found 0");
  EXPECT_EQ(ReadError(R"({"base_code":{"magic":"pir"},"program":{"regions":[{},{}]}})"),
            "bad.json: /program/regions: error: expected 1 region (the top module's), found 2");
  EXPECT_EQ(ReadError(R"({"base_code":{"magic":"pir"},"program":{"regions":[{"#":"r"}]}})"),
            "bad.json: /program/regions/0: error: missing key 'blocks'");
  EXPECT_EQ(ReadError(BlockDoc("")),
            "bad.json: /program/regions/0/blocks: error: expected 1 block (the top block), found "
            "0");
  EXPECT_EQ(ReadError(BlockDoc("7")),
            "bad.json: /program/regions/0/blocks/0: error: expected an object, found an integer");
  EXPECT_EQ(ReadError(BlockDoc(R"({"#":"block_0","ops":{}})")),
            "bad.json: /program/regions/0/blocks/0/ops: error: expected an array, found an "
            "object");
  EXPECT_EQ(ReadError(BlockDoc(R"({"#":"block_0","op":[]})")),
            "bad.json: /program/regions/0/blocks/0/op: error: unknown key 'op'");
  EXPECT_EQ(ReadError(Doc("[]")),
            "bad.json: /program/regions/0/blocks/0/ops/0: error: expected an object, found an "
            "array");
  EXPECT_EQ(ReadError(Doc("{}")), kOp0 + ": error: missing key '#'");
  EXPECT_EQ(ReadError(Doc(R"({"#":1})")), kOp0 + "/#: error: expected a string, found an integer");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.relu","I":[],"X":1})")), kOp0 + "/X: error: unknown key 'X'");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.relu","I":[7]})")),
            kOp0 + "/I/0: error: expected an object, found an integer");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.relu","I":[{"%":1,"TT":{}}]})")),
            kOp0 + "/I/0/TT: error: unknown key 'TT'");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.relu","O":{}})")),
            kOp0 + "/O: error: expected an array, found an object");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.relu","O":[{"%":1}]})")),
            kOp0 + "/O/0: error: missing key 'TT'");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.if","regions":{}})")),
            kOp0 + "/regions: error: expected an array, found an object");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.if","regions":[{"#":"region_1","blocks":[1]}]})")),
            kOp0 + "/regions/0/blocks/0: error: expected an object, found an integer");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.if","regions":[{"#":"region_1","blocks":[],"x":0}]})")),
            kOp0 + "/regions/0/x: error: unknown key 'x'");
}

TEST(PirJsonErrorsTest, ValueIds) {
  EXPECT_EQ(ReadError(Doc(std::string(R"({"#":"1.full","O":[{"%":1,"TT":)") + kF32 +
                          R"(}]},{"#":"1.relu","I":[{"%":1},{"%":7}]})")),
            "bad.json: /program/regions/0/blocks/0/ops/1/I/1: error: undefined value id 7");
  // Defined twice: by two ops, by one op, by two block arguments, by an argument and a result.
  EXPECT_EQ(ReadError(Doc(std::string(R"({"#":"1.full","O":[{"%":1,"TT":)") + kF32 +
                          R"(}]},{"#":"1.full","O":[{"%":1,"TT":)" + kF32 + "}]}")),
            "bad.json: /program/regions/0/blocks/0/ops/1/O/0/%: error: value id 1 is defined "
            "twice");
  EXPECT_EQ(ReadError(Doc(std::string(R"({"#":"1.split","O":[{"%":2,"TT":)") + kF32 +
                          R"(},{"%":2,"TT":)" + kF32 + "}]}")),
            kOp0 + "/O/1/%: error: value id 2 is defined twice");
  EXPECT_EQ(ReadError(BlockDoc(std::string(R"({"#":"b","args":[{"%":-1,"TT":)") + kF32 +
                               R"(},{"%":-1,"TT":)" + kF32 + "}]}")),
            "bad.json: /program/regions/0/blocks/0/args/1/%: error: value id -1 is defined twice");
  EXPECT_EQ(
      ReadError(Doc(std::string(R"({"#":"1.while","O":[{"%":3,"TT":)") + kF32 +
                    R"(}],"regions":[{"#":"region_1","blocks":[{"#":"block_1","args":[{"%":-1,)"
                    R"("TT":{"#":"0.t_f32"}}],"ops":[{"#":"1.x","O":[{"%":3,"TT":)" +
                    kF32 + "}]}]}]}]}")),
      kOp0 + "/regions/0/blocks/0/ops/0/O/0/%: error: value id 3 is defined twice");
  // Signs: results count up from 1, block arguments down from -1, 0 is the empty slot.
  EXPECT_EQ(ReadError(Doc(std::string(R"({"#":"1.full","O":[{"%":0,"TT":)") + kF32 + "}]}")),
            kOp0 + "/O/0/%: error: result ids must be positive, found 0");
  EXPECT_EQ(ReadError(BlockDoc(std::string(R"({"#":"b","args":[{"%":3,"TT":)") + kF32 + "}]}")),
            "bad.json: /program/regions/0/blocks/0/args/0/%: error: block argument ids must be "
            "negative, found 3");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.full","I":[{"%":"1"}]})")),
            kOp0 + "/I/0/%: error: expected an integer, found a string");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.full","I":[{"%":18446744073709551615}]})")),
            kOp0 + "/I/0/%: error: integer 18446744073709551615 is out of range");
  // An op's results are not visible inside its own regions.
  EXPECT_EQ(ReadError(Doc(std::string(R"({"#":"1.if","O":[{"%":1,"TT":)") + kF32 +
                          R"(}],"regions":[{"#":"region_1","blocks":[{"#":"block_1","ops":[)"
                          R"({"#":"2.yield","I":[{"%":1}]}]}]}]})")),
            kOp0 + "/regions/0/blocks/0/ops/0/I/0: error: undefined value id 1");
  EXPECT_EQ(
      ReadError(Doc(R"({"#":"1.if","regions":[{"#":"region_1","blocks":[)"
                    R"({"#":"block_1","args":[],"ops":[]},)"
                    R"({"#":"block_2","args":[],"ops":[{"#":"2.yield","I":[{"%":-3}]}]}]}]})")),
      kOp0 + "/regions/0/blocks/1/ops/0/I/0: error: undefined value id -3");
}

TEST(PirJsonErrorsTest, BlockArguments) {
  EXPECT_EQ(ReadError(BlockDoc(R"({"#":"b","args":{}})")),
            "bad.json: /program/regions/0/blocks/0/args: error: expected an array, found an "
            "object");
  EXPECT_EQ(ReadError(BlockDoc(R"({"#":"b","args":[{"%":-1}]})")),
            "bad.json: /program/regions/0/blocks/0/args/0: error: missing key 'TT'");
  EXPECT_EQ(ReadError(BlockDoc(R"({"#":"b","args":[{"%":-1,"TT":{"#":"0.t_f32"},"N":1}]})")),
            "bad.json: /program/regions/0/blocks/0/args/0/N: error: unknown key 'N'");
  EXPECT_EQ(ReadError(BlockDoc(R"({"#":"b","kwargs":[{"%":-1,"TT":{"#":"0.t_f32"},"key":2}]})")),
            "bad.json: /program/regions/0/blocks/0/kwargs/0/key: error: expected a string, "
            "found an integer");
  EXPECT_EQ(ReadError(BlockDoc(R"({"#":"b","kwargs":[{"%":-1,"TT":{"#":"0.t_f32"},"key":"k"},)"
                               R"({"%":-2,"TT":{"#":"0.t_f32"},"key":"k"}]})")),
            "bad.json: /program/regions/0/blocks/0/kwargs/1/key: error: block already has a "
            "keyword argument 'k'");
  EXPECT_EQ(ReadError(BlockDoc(R"({"#":"b","args":[{"%":-1,"TT":{"#":"0.t_f32"},)"
                               R"("A":[{"N":"stop_gradient","AT":{"#":"0.a_bool"}}]}]})")),
            "bad.json: /program/regions/0/blocks/0/args/0/A/0/AT: error: missing key 'D'");
}

TEST(PirJsonErrorsTest, OpNamesAndDialectIds) {
  EXPECT_EQ(ReadError(Doc(R"({"#":"9.relu"})")),
            kOp0 + "/#: error: unknown dialect id 9 in '9.relu'");
  EXPECT_EQ(ReadError(Doc(R"({"#":"-1.relu"})")),
            kOp0 + "/#: error: unknown dialect id -1 in '-1.relu'");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1234567.relu"})")),
            kOp0 + "/#: error: unknown dialect id in '1234567.relu'");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"7.t_f32"})")),
            kType + "/#: error: unknown dialect id 7 in '7.t_f32'");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"t_f32"})")), kType + "/#: error: 't_f32' has no dialect id");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"123456.t_f32"})")),
            kType + "/#: error: '123456.t_f32' has no dialect id");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"8.a_i32","D":1})")),
            kAttr + "/#: error: unknown dialect id 8 in '8.a_i32'");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"a_i32","D":1})")),
            kAttr + "/#: error: 'a_i32' has no dialect id");
}

TEST(PirJsonErrorsTest, UnknownTypesAndAttributes) {
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_f33"})")), kType + "/#: error: unknown type '0.t_f33'");
  // A known name under the wrong dialect.
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"1.t_dtensor","D":[]})")),
            kType + "/#: error: unknown type '1.t_dtensor'");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_sparse_coo_tensor","D":[]})")),
            kType + "/#: error: unknown type '0.t_sparse_coo_tensor'");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_c64","D":[1.0,2.0]})")),
            kAttr + "/#: error: unknown attribute '0.a_c64'");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"4.a_intarray","D":[]})")),
            kAttr + "/#: error: unknown attribute '4.a_intarray'");
  EXPECT_EQ(ReadError(TypeDoc("[]")), kType + ": error: expected an object, found an array");
  EXPECT_EQ(ReadError(TypeDoc("{}")), kType + ": error: missing key '#'");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_f32","VD":1})")),
            kType + "/VD: error: unknown key 'VD'");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_i32","D":1,"TT":1})")),
            kAttr + "/TT: error: unknown key 'TT'");
}

TEST(PirJsonErrorsTest, MalformedTypeData) {
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW"]})")),
            kType +
                "/D: error: '0.t_dtensor' data must have 5 elements (dtype, dims, layout, "
                "lod, offset), found 3");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_dtensor"})")), kType + ": error: missing key 'D'");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_dtensor","D":{}})")),
            kType + "/D: error: expected an array, found an object");
  EXPECT_EQ(ReadError(TypeDoc(std::string(R"({"#":"0.t_dtensor","D":[)") + kF32 +
                              R"(,[2],"NCHW",[],0]})")),
            kType + "/D/0: error: a tensor's dtype must be a builtin scalar type");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2.0],"NCHW",[],0]})")),
            kType + "/D/1/0: error: expected an integer, found a float");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCWH",[],0]})")),
            kType + "/D/2: error: unknown data layout 'NCWH'");
  EXPECT_EQ(
      ReadError(TypeDoc(R"({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[[0,-2]],0]})")),
      kType + "/D/3/0/1: error: LoD offsets must not be negative");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[0],0]})")),
            kType + "/D/3/0: error: expected an array, found an integer");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],-1]})")),
            kType + "/D/4: error: the offset must not be negative");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_vec","D":[{"#":"0.t_f32"},{"#":"0.t_x"}]})")),
            kType + "/D/1/#: error: unknown type '0.t_x'");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"0.t_vec","D":"f32"})")),
            kType + "/D: error: expected an array, found a string");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"1.t_selected_rows","D":[{"#":"0.t_f32"},[2]]})")),
            kType +
                "/D: error: '1.t_selected_rows' data must have 5 elements (dtype, dims, "
                "layout, lod, offset), found 2");
  EXPECT_EQ(
      ReadError(TypeDoc(R"({"#":"1.t_dense_tensor_array","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]})")),
      kType +
          "/D: error: '1.t_dense_tensor_array' data must have 3 elements (dtype, dims, "
          "layout), found 5");
  EXPECT_EQ(ReadError(TypeDoc(R"({"#":"1.t_dense_tensor_array","D":[{"#":"0.t_vec","D":[]},)"
                              R"([2],"NCHW"]})")),
            kType + "/D/0: error: a tensor's dtype must be a builtin scalar type");
}

TEST(PirJsonErrorsTest, MalformedDistType) {
  const std::string dist = R"({"#":"4.t_dist_dtensor","D":[)";
  EXPECT_EQ(ReadError(TypeDoc(dist + kF32 + "]}")),
            kType +
                "/D: error: '4.t_dist_dtensor' data must have 3 elements (dense tensor, "
                "tensor dist, local dims), found 1");
  EXPECT_EQ(ReadError(TypeDoc(dist + kF32 + "," + kMesh + ",[1]]}")),
            kType + "/D/1: error: expected a 4.a_tensor_dist attribute");
  EXPECT_EQ(ReadError(TypeDoc(dist + R"({"#":"0.t_f32"},{"#":"4.a_tensor_dist","D":[)" + kMesh +
                              ",[],[]]},[]]}")),
            kType + ": error: dist tensor type wraps 'f32', not a dense tensor");
  EXPECT_EQ(ReadError(TypeDoc(dist + kF32 + R"(,{"#":"4.a_tensor_dist","D":[)" + kMesh +
                              ",[0,0],[]]},[1]]}")),
            kType + ": error: dims_mapping has 2 entries but the tensor has rank 1");
  EXPECT_EQ(ReadError(TypeDoc(dist + kF32 + R"(,{"#":"4.a_tensor_dist","D":[)" + kMesh +
                              ",[1],[]]},[1]]}")),
            kType + ": error: dims_mapping[0] = 1 is not a mesh dim (mesh rank 1)");
  EXPECT_EQ(ReadError(TypeDoc(dist + kF32 + R"(,{"#":"4.a_tensor_dist","D":[)" + kMesh +
                              ",[0],[[0,0]]]},[1]]}")),
            kType + ": error: mesh dim 0 is both partial and sharding tensor dim 0");
  EXPECT_EQ(ReadError(TypeDoc(dist + kF32 + R"(,{"#":"4.a_tensor_dist","D":[)" + kMesh +
                              ",[0],[]]},[1,1]]}")),
            kType + ": error: local dims have 2 entries but the tensor has rank 1");
  EXPECT_EQ(ReadError(TypeDoc(dist + kF32 + R"(,{"#":"4.a_tensor_dist","D":[)" + kMesh +
                              ",[0],[]]},{}]}")),
            kType + "/D/2: error: expected an array, found an object");
}

TEST(PirJsonErrorsTest, MalformedBuiltinAttributeData) {
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_bool","D":"true"})")),
            kAttr + "/D: error: expected a boolean, found a string");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_bool"})")), kAttr + ": error: missing key 'D'");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_i32","D":2147483648})")),
            kAttr + "/D: error: integer 2147483648 is out of the int32 range");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_i32","D":-2147483649})")),
            kAttr + "/D: error: integer -2147483649 is out of the int32 range");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_i64","D":1.5})")),
            kAttr + "/D: error: expected an integer, found a float");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_i64","D":9223372036854775808})")),
            kAttr + "/D: error: integer 9223372036854775808 is out of range");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_index","D":true})")),
            kAttr + "/D: error: expected an integer, found a boolean");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_f32","D":"0.5"})")),
            kAttr + "/D: error: expected a number, found a string");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_f64"})")), kAttr + ": error: missing key 'D'");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_f64","VD":"nan"})")),
            kAttr + "/VD: error: unknown special float 'nan' (expected NaN, INF or -INF)");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_f32","VD":0})")),
            kAttr + "/VD: error: expected a string, found an integer");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_str","D":1})")),
            kAttr + "/D: error: expected a string, found an integer");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_array","D":{}})")),
            kAttr + "/D: error: expected an array, found an object");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_array","D":[{"#":"0.a_i32","D":1},)"
                              R"({"#":"0.a_array","D":[{"#":"0.a_i32","D":"2"}]}]})")),
            kAttr + "/D/1/D/0/D: error: expected an integer, found a string");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_type","D":"f32"})")),
            kAttr + "/D: error: expected an object, found a string");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_type","D":{"#":"0.t_vec","D":[1]}})")),
            kAttr + "/D/D/0: error: expected an object, found an integer");
}

TEST(PirJsonErrorsTest, MalformedOperatorAttributeData) {
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_intarray","D":[1,"2"]})")),
            kAttr + "/D/1: error: expected an integer, found a string");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_dtype","D":"float33"})")),
            kAttr + "/D: error: unknown data type 'float33'");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_dtype","D":5})")),
            kAttr + "/D: error: expected a string, found an integer");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_layout","D":"NWHC"})")),
            kAttr + "/D: error: unknown data layout 'NWHC'");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_place","D":[1,0]})")),
            kAttr +
                "/D: error: '1.a_place' data must have 3 elements (allocation type, device, "
                "device type), found 2");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_place","D":[6,0,""]})")),
            kAttr + "/D/0: error: unknown allocation type 6");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_place","D":[2,"0",""]})")),
            kAttr + "/D/1: error: expected an integer, found a string");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_place","D":[9,0,null]})")),
            kAttr + "/D/2: error: expected a string, found null");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_scalar","D":["float32"]})")),
            kAttr + "/D: error: '1.a_scalar' data must have 2 elements (dtype, value), found 1");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_scalar","D":["float128",1]})")),
            kAttr + "/D/0: error: unknown data type 'float128'");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_scalar","D":["float32","1"]})")),
            kAttr + "/D/1: error: expected a scalar value, found a string");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"1.a_scalar","D":["float32",null]})")),
            kAttr +
                "/D/1: error: a null scalar value (how Paddle's writer saves NaN and "
                "infinities) cannot be read back");
}

TEST(PirJsonErrorsTest, MalformedDistAttributeData) {
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"4.a_process_mesh","D":[[2],[0,1]]})")),
            kAttr +
                "/D: error: '4.a_process_mesh' data must have 3 elements (shape, process ids, "
                "dim names), found 2");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"4.a_process_mesh","D":[[2],[0,"1"],[]]})")),
            kAttr + "/D/1/1: error: expected an integer, found a string");
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"4.a_process_mesh","D":[[2],[0,1],[0]]})")),
            kAttr + "/D/2/0: error: expected a string, found an integer");
  const std::string tdist = R"({"#":"4.a_tensor_dist","D":[)";
  EXPECT_EQ(ReadError(AttrDoc(tdist + kMesh + ",[0]]}")),
            kAttr +
                "/D: error: '4.a_tensor_dist' data must have 3 or 4 elements (mesh, dims "
                "mapping, partial status[, placements]), found 2");
  EXPECT_EQ(ReadError(AttrDoc(tdist + R"({"#":"0.a_i32","D":1},[0],[]]})")),
            kAttr + "/D/0: error: expected a 4.a_process_mesh attribute");
  EXPECT_EQ(ReadError(AttrDoc(tdist + kMesh + ",[0],[[0,0,1]]]}")),
            kAttr +
                "/D/2/0: error: a partial status entry must be [mesh dim, reduce type], found "
                "3 elements");
  EXPECT_EQ(ReadError(AttrDoc(tdist + kMesh + ",[-1],[[0,7]]]}")),
            kAttr + "/D/2/0/1: error: unknown reduce type 7");
  EXPECT_EQ(ReadError(AttrDoc(tdist + kMesh + R"(,[0],[],[["S",0],["X"]]]})")),
            kAttr +
                "/D/3/1: error: a placement must be [\"R\"], [\"S\", dim] or [\"P\", reduce "
                "type]");
  EXPECT_EQ(ReadError(AttrDoc(tdist + kMesh + R"(,[0],[],[["P",-1]]]})")),
            kAttr + "/D/3/0/1: error: unknown reduce type -1");
  EXPECT_EQ(ReadError(AttrDoc(tdist + kMesh + R"(,[0],[],[["S","0"]]]})")),
            kAttr + "/D/3/0/1: error: expected an integer, found a string");
  const std::string opdist = R"({"#":"4.a_op_dist","D":[)";
  EXPECT_EQ(ReadError(AttrDoc(opdist + kMesh + ",[],[]]}")),
            kAttr +
                "/D: error: '4.a_op_dist' data must have 4 elements (mesh, operands, results, "
                "chunk id), found 3");
  EXPECT_EQ(ReadError(AttrDoc(opdist + kMesh + R"(,[{"#":"0.a_i32","D":1}],[],-1]})")),
            kAttr +
                "/D/1/0: error: an op dist entry must be a tensor dist, an array or NULL, not "
                "int32");
  EXPECT_EQ(ReadError(AttrDoc(opdist + kMesh + R"(,[],{},-1]})")),
            kAttr + "/D/2: error: expected an array, found an object");
  EXPECT_EQ(ReadError(AttrDoc(opdist + kMesh + R"(,[],[],"-1"]})")),
            kAttr + "/D/3: error: expected an integer, found a string");
}

TEST(PirJsonErrorsTest, NamedAttributeLists) {
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.x","A":{}})")),
            kOp0 + "/A: error: expected an array, found an object");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.x","A":[{"AT":{"#":"0.a_i32","D":1}}]})")),
            kOp0 + "/A/0: error: missing key 'N'");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.x","A":[{"N":"x"}]})")),
            kOp0 + "/A/0: error: missing key 'AT'");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.x","A":[{"N":"x","AT":{"#":"0.a_i32","D":1},"T":0}]})")),
            kOp0 + "/A/0/T: error: unknown key 'T'");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.x","A":[{"N":"x","AT":{"#":"0.a_i32","D":1}}],)"
                          R"("OA":[{"N":"x","AT":{"#":"0.a_i32","D":2}}]})")),
            kOp0 + "/OA/0/N: error: attribute 'x' given twice");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.x","DA":[{"N":"op_role","AT":{"#":"0.a_i32","D":"1"}}]})")),
            kOp0 + "/DA/0/AT/D: error: expected an integer, found a string");
  EXPECT_EQ(ReadError(Doc(R"({"#":"1.x","QA":{"N":"struct_name"}})")),
            kOp0 + "/QA: error: expected an array, found an object");
}

TEST(PirJsonErrorsTest, CompressedParameters) {
  const std::string out = R"("O":{"%":1,"TT":{"#":"0.t_f32"}})";
  EXPECT_EQ(ReadError(Doc(R"({"#":"p","A":[0,1,"w"],)" + out + "}")),
            kOp0 +
                "/A: error: a compressed parameter's A must have 4 elements (is_distributed, "
                "is_parameter, need_clip, name), found 3");
  EXPECT_EQ(ReadError(Doc(R"({"#":"p",)" + out + "}")), kOp0 + ": error: missing key 'A'");
  EXPECT_EQ(ReadError(Doc(R"({"#":"p","A":[0,2,1,"w"],)" + out + "}")),
            kOp0 + "/A/1: error: expected 0 or 1, found 2");
  EXPECT_EQ(ReadError(Doc(R"({"#":"p","A":[false,1,1,"w"],)" + out + "}")),
            kOp0 + "/A/0: error: expected an integer, found a boolean");
  EXPECT_EQ(ReadError(Doc(R"({"#":"p","A":[0,1,1,7],)" + out + "}")),
            kOp0 + "/A/3: error: expected a string, found an integer");
  EXPECT_EQ(ReadError(Doc(R"({"#":"p","A":[0,1,1,"w"],"OA":[1,1],)" + out + "}")),
            kOp0 +
                "/OA: error: a compressed parameter's OA must have 3 elements (persistable, "
                "stop_gradient, trainable), found 2");
  EXPECT_EQ(ReadError(Doc(R"({"#":"p","A":[0,1,1,"w"],"OA":[1,1,-1],)" + out + "}")),
            kOp0 + "/OA/2: error: expected 0 or 1, found -1");
  // Paddle's `O` of a parameter is one value object, not a list.
  EXPECT_EQ(ReadError(Doc(R"({"#":"p","A":[0,1,1,"w"],"O":[{"%":1,"TT":{"#":"0.t_f32"}}]})")),
            kOp0 + "/O: error: expected an object, found an array");
  EXPECT_EQ(ReadError(Doc(R"({"#":"p","A":[0,1,1,"w"],"O":{"%":-1,"TT":{"#":"0.t_f32"}}})")),
            kOp0 + "/O/%: error: result ids must be positive, found -1");
  EXPECT_EQ(ReadError(Doc(R"({"#":"p","A":[0,1,1,"w"],"I":[],)" + out + "}")),
            kOp0 + "/I: error: unknown key 'I'");
  EXPECT_EQ(ReadError(Doc(R"({"#":"p","A":[0,1,1,"w"],"DA":{"#":"4.a_op_dist"},)" + out + "}")),
            kOp0 + "/DA: error: expected an array, found an object");
  // DA and QA hold attributes other than the flags: naming a flag again is an error.
  EXPECT_EQ(ReadError(Doc(R"({"#":"p","A":[0,1,1,"w"],)" + out +
                          R"(,"DA":[{"N":"is_parameter","AT":{"#":"0.a_bool","D":true}}]})")),
            kOp0 + "/DA/0/N: error: attribute 'is_parameter' given twice");
}

TEST(PirJsonErrorsTest, SyntaxErrorsHaveLineAndColumn) {
  EXPECT_EQ(ReadError("{\"base_code\": {\"magic\": \"pir\"},\n  \"program\": [1, }"),
            "bad.json:2:18: error: syntax error while parsing value - unexpected '}'; expected "
            "'[', '{', or a literal");
  EXPECT_EQ(ReadError(""),
            "bad.json:1:1: error: syntax error while parsing value - unexpected end of input; "
            "expected '[', '{', or a literal");
  EXPECT_EQ(ReadError("{\n\"a\": 1\n"),
            "bad.json:3:1: error: syntax error while parsing object - unexpected end of input; "
            "expected '}'");
  EXPECT_EQ(ReadError("{\"a\": \"\xff\"}"),
            "bad.json:1:8: error: syntax error while parsing value - invalid string: ill-formed "
            "UTF-8 byte; last read: '\"\xff'");
}

TEST(PirJsonErrorsTest, NestingCap) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(ReadError(deep), "bad.json:1:513: error: JSON nested deeper than 512 levels");
  const std::string deep_on_line_2 = "\n  " + std::string(600, '{');
  EXPECT_EQ(ReadError(deep_on_line_2), "bad.json:2:515: error: JSON nested deeper than 512 levels");
  // Deep but within the cap: nlohmann parses it, the reader rejects its shape.
  const std::string ok_depth = std::string(500, '[') + std::string(500, ']');
  EXPECT_EQ(ReadError(ok_depth), "bad.json: /: error: expected an object, found an array");
  // Brackets inside strings (escaped quotes included) are not nesting.
  EXPECT_EQ(ReadError(AttrDoc(R"({"#":"0.a_str","D":"\")" + std::string(1000, '[') + "\"}")), "OK");
  // Regions nest six JSON levels per op (op, regions, region, blocks, block, ops): 90 nested
  // pd_op.if ops pass the cap.
  std::string nested = R"({"#":"1.x"})";
  for (int i = 0; i < 90; ++i) {
    nested = R"({"#":"1.if","regions":[{"#":"r","blocks":[{"#":"b","ops":[)" + nested + "]}]}]}";
  }
  EXPECT_EQ(ReadError(Doc(nested)), "bad.json:1:5033: error: JSON nested deeper than 512 levels");
}

}  // namespace
}  // namespace irm::newir
