// Tests of dist-attr sidecars: parsing (text and binary), and the checks against a program.
#include "oldir/dist_sidecar.h"

#include <gtest/gtest.h>

#include "oldir/editor.h"

namespace irm::oldir {
namespace {

Program TwoVarProgram() {
  proto::ProgramDesc desc;
  proto::BlockDesc* block = desc.add_blocks();
  block->set_idx(0);
  block->set_parent_idx(-1);
  proto::VarDesc* w = block->add_vars();
  w->set_name("w");
  VarEditor(w).SetDenseTensor(proto::VarType::FP32, {8, 4});
  OpEditor(block->add_ops()).SetType("relu").SetInput("X", {"w"}).SetOutput("Out", {"w"});
  return Program(std::move(desc));
}

constexpr const char* kGoodSidecar = R"(
vars {
  block_idx: 0
  var_name: "w"
  dist_attr { process_mesh { shape: 2 shape: 2 process_ids: 0 process_ids: 1 process_ids: 2
              process_ids: 3 dim_names: "dp" dim_names: "mp" } dims_mapping: -1 dims_mapping: 1 }
}
ops {
  block_idx: 0
  op_idx: 0
  op_type: "relu"
  dist_attr { process_mesh { shape: 4 process_ids: 0 process_ids: 1 process_ids: 2 process_ids: 3 }
              input_dist_attrs { name: "w" tensor_dist_attr { process_mesh { shape: 4
                process_ids: 0 process_ids: 1 process_ids: 2 process_ids: 3 }
                dims_mapping: 0 dims_mapping: -1 } } }
}
)";

TEST(DistSidecarTest, GoodSidecarHasNoFindings) {
  auto sidecar = ParseDistSidecar(kGoodSidecar, "s.prototxt");
  ASSERT_TRUE(sidecar.ok()) << sidecar.status().ToString();
  Diagnostics findings = CheckDistSidecar(*sidecar, TwoVarProgram(), "s.prototxt");
  EXPECT_TRUE(findings.empty()) << findings.Render();
}

TEST(DistSidecarTest, BinaryRoundTrip) {
  auto sidecar = ParseDistSidecar(kGoodSidecar, "s.prototxt");
  ASSERT_TRUE(sidecar.ok());
  std::string bytes = sidecar->SerializeAsString();
  auto again = ParseDistSidecar(bytes, "s.bin");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->SerializeAsString(), bytes);
}

TEST(DistSidecarTest, ReportsEveryProblem) {
  auto sidecar = ParseDistSidecar(R"(
vars { block_idx: 0 var_name: "w"
       dist_attr { process_mesh { shape: 2 shape: 2 process_ids: 0 process_ids: 1 process_ids: 1 }
                   dims_mapping: 1 dims_mapping: 1 dims_mapping: 5 } }
vars { block_idx: 3 var_name: "w" }
vars { block_idx: 0 var_name: "nope" }
ops { block_idx: 0 op_idx: 0 op_type: "gelu" }
ops { block_idx: 0 op_idx: 9 }
)",
                                  "s.prototxt");
  ASSERT_TRUE(sidecar.ok()) << sidecar.status().ToString();
  Diagnostics findings = CheckDistSidecar(*sidecar, TwoVarProgram(), "s.prototxt");
  EXPECT_EQ(findings.Render(),
            "s.prototxt: block 0, var 'w', sidecar vars[0]: error: process mesh of shape [2, 2] "
            "needs 4 process ids, has 3\n"
            "s.prototxt: block 0, var 'w', sidecar vars[0]: error: process id 1 appears twice in "
            "the mesh\n"
            "s.prototxt: block 0, var 'w', sidecar vars[0]: error: dims_mapping has 3 entries for "
            "a tensor of rank 2\n"
            "s.prototxt: block 0, var 'w', sidecar vars[0]: error: mesh dim 1 shards two tensor "
            "dims\n"
            "s.prototxt: block 0, var 'w', sidecar vars[0]: error: dims_mapping entry 5 is not -1 "
            "or a mesh dim (mesh rank 2)\n"
            "s.prototxt: sidecar vars[1]: error: block 3 does not exist\n"
            "s.prototxt: block 0, var 'nope', sidecar vars[2]: error: var is not declared in this "
            "block\n"
            "s.prototxt: block 0, op 0 (relu), sidecar ops[0]: error: sidecar expects op type "
            "'gelu'\n"
            "s.prototxt: block 0, sidecar ops[1]: error: op 9 does not exist (block has 1 ops)\n");
}

TEST(DistSidecarTest, MalformedInputsAreDiagnosed) {
  auto text = ParseDistSidecar("vars { block_idx: x }", "s.prototxt");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().ToString(), "s.prototxt:1:19: error: Expected integer, got: x");
  auto binary = ParseDistSidecar(std::string("\x0a\x05\x08", 3), "s.bin");
  ASSERT_FALSE(binary.ok());
  EXPECT_EQ(binary.status().code(), StatusCode::kParseError);
  EXPECT_EQ(binary.status().ToString(),
            "s.bin: byte 3: error: truncated varint in field 'block_idx' (input cut short: 'vars' "
            "claims 5 bytes, 1 remain)");
}

}  // namespace
}  // namespace irm::oldir
