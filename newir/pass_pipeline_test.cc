// Tests of the pass registry and of textual pipelines: registration checks, the --list-passes
// text, the global registry, pipelines that parse (options of every kind, whitespace, quoting,
// the builtin.module wrapper, the canonical text form) and every pipeline error with its exact
// diagnostic.
#include "newir/pass_pipeline.h"

#include <gtest/gtest.h>

#include "newir/pass_registry.h"

namespace irm::newir {
namespace {

class NoopPass : public Pass {
 public:
  explicit NoopPass(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  StatusOr<IrChange> Run(Program&) override { return IrChange::kUnchanged; }

 private:
  std::string name_;
};

PassFactory NoopFactory(std::string name) {
  return [name](const PassOptions&) { return std::make_unique<NoopPass>(name); };
}

// dce and canonicalize as the built-in ones declare them, and a pass with one option of each kind.
PassRegistry TestRegistry() {
  PassRegistry registry;
  EXPECT_TRUE(
      registry
          .Register({.name = "dce", .summary = "erases dead ops", .factory = NoopFactory("dce")})
          .ok());
  EXPECT_TRUE(registry
                  .Register({.name = "canonicalize",
                             .summary = "folds trivial ops",
                             .options = {{.name = "max-iterations",
                                          .default_value = int64_t{10},
                                          .help = "rounds at most",
                                          .min = 1},
                                         {.name = "test-convergence",
                                          .default_value = false,
                                          .help = "fail without a fixpoint"}},
                             .factory = NoopFactory("canonicalize")})
                  .ok());
  EXPECT_TRUE(
      registry
          .Register(
              {.name = "test-opts",
               .summary = "has one option of each kind",
               .options = {{.name = "flag", .default_value = false, .help = "a bool"},
                           {.name = "count",
                            .default_value = int64_t{0},
                            .help = "an int",
                            .min = -5,
                            .max = 5},
                           {.name = "label", .default_value = std::string(""), .help = "a string"}},
               .factory = NoopFactory("test-opts")})
          .ok());
  return registry;
}

const PassRegistry& Registry() {
  static const PassRegistry* const kRegistry = new PassRegistry(TestRegistry());
  return *kRegistry;
}

// The pipeline's passes with every option, as "name{key=value ...}" (all options, to show
// defaults too).
std::string Describe(std::string_view text) {
  StatusOr<std::vector<PassPipelineElement>> pipeline = ParsePassPipeline(text, Registry());
  if (!pipeline.ok()) return "ERROR: " + pipeline.status().ToString();
  std::string out;
  for (const PassPipelineElement& element : *pipeline) {
    if (!out.empty()) out += ",";
    out += element.info->name + "@" + std::to_string(element.column) + "{";
    std::string options;
    for (const auto& [name, value] : element.options.values()) {
      if (!options.empty()) options += " ";
      options += name + "=" + PassOptionValueToString(value);
    }
    out += options + "}";
  }
  return out;
}

std::string ErrorOf(std::string_view text, const std::string& source = "<pipeline>") {
  StatusOr<std::vector<PassPipelineElement>> pipeline = ParsePassPipeline(text, Registry(), source);
  if (pipeline.ok()) return "parsed";
  EXPECT_EQ(pipeline.status().code(), StatusCode::kInvalidArgument);
  return pipeline.status().ToString();
}

std::string Canonical(std::string_view text) {
  StatusOr<std::vector<PassPipelineElement>> pipeline = ParsePassPipeline(text, Registry());
  if (!pipeline.ok()) return "ERROR: " + pipeline.status().ToString();
  return PassPipelineToString(*pipeline);
}

// ---- registry ---------------------------------------------------------------------------------

TEST(PassRegistryTest, ListPasses) {
  EXPECT_EQ(Registry().ListPasses(),
            "canonicalize: folds trivial ops\n"
            "  max-iterations=<int> (default: 10, at least 1): rounds at most\n"
            "  test-convergence=<bool> (default: false): fail without a fixpoint\n"
            "dce: erases dead ops\n"
            "test-opts: has one option of each kind\n"
            "  flag=<bool> (default: false): a bool\n"
            "  count=<int> (default: 0, from -5 to 5): an int\n"
            "  label=<string> (default: \"\"): a string\n");
}

TEST(PassRegistryTest, GlobalRegistryHoldsTheBuiltInPasses) {
  const PassRegistry& global = PassRegistry::Global();
  EXPECT_EQ(&global, &PassRegistry::Global());
  EXPECT_EQ(global.ListPasses(),
            "canonicalize: folds ops that pass their input through unchanged (scale by 1, cast "
            "to the same dtype, reshape to the same shape, assign) and erases what became dead\n"
            "  max-iterations=<int> (default: 10, at least 1): fold-and-erase rounds at most\n"
            "  test-convergence=<bool> (default: false): fail when the last round still changed "
            "the IR\n"
            "dce: erases ops whose results are unused and that have no side effects\n"
            "dist-to-dense: makes one rank's dense program: local types, no dist ops, no "
            "op_dist_attr\n"
            "  rank=<int> (default: 0, at least 0): the rank whose program to make\n"
            "gradient-merge: accumulates every gradient into a @GRAD@MERGE buffer and runs the "
            "optimizer every k-steps-th step inside a pd_op.if (Paddle's PIR gradient merge)\n"
            "  k-steps=<int> (default: 1, at least 1): executor steps merged into one optimizer "
            "update (gradient_merge.k_steps)\n"
            "  avg=<bool> (default: true): scale the merged gradients by 1/k-steps "
            "(gradient_merge.avg)\n"
            "  test-fault=<string> (default: \"\"): tests only: break the pass on purpose "
            "(scale-by-k-plus-1, drop-if)\n"
            "lower-reshard: lowers every dist_op.reshard to one rank's collectives, as Paddle's "
            "reshard functions do\n"
            "  rank=<int> (default: 0, at least 0): the rank whose program to make\n"
            "  world-size=<int> (default: 0, at least 0): ranks in the world (ring 0); 0: the "
            "largest process id of the program's meshes plus one\n"
            "remove-other-ranks: erases the ops of meshes without the rank, and the dense ops "
            "only they read (Paddle's remove_other_rank_op_pass)\n"
            "  rank=<int> (default: 0, at least 0): the rank whose program to make\n"
            "spmd-completion: decides every op's layouts by its SPMD rule (op_dist_attr, "
            "distributed result types) and inserts dist_op.reshard where an operand needs "
            "another layout\n");
  ASSERT_NE(global.Lookup("dce"), nullptr);
  EXPECT_EQ(global.Lookup("dce")->Create()->name(), "dce");
  ASSERT_NE(global.Lookup("canonicalize"), nullptr);
  EXPECT_EQ(global.Lookup("canonicalize")->Create()->name(), "canonicalize");
  EXPECT_EQ(global.Lookup("cse"), nullptr);
}

TEST(PassRegistryTest, LookupAndDefaults) {
  const PassInfo* info = Registry().Lookup("test-opts");
  ASSERT_NE(info, nullptr);
  const PassOptions defaults = info->DefaultOptions();
  EXPECT_EQ(defaults.values().size(), 3u);
  EXPECT_FALSE(defaults.GetBool("flag"));
  EXPECT_EQ(defaults.GetInt("count"), 0);
  EXPECT_EQ(defaults.GetString("label"), "");
  ASSERT_NE(info->FindOption("count"), nullptr);
  EXPECT_EQ(info->FindOption("count")->kind(), PassOptionKind::kInt);
  EXPECT_EQ(info->FindOption("nope"), nullptr);
  // Getters of an absent name or of another kind fall back.
  EXPECT_EQ(defaults.GetInt("flag"), 0);
  EXPECT_EQ(defaults.GetString("nope"), "");
  std::vector<std::string> names;
  for (const PassInfo* pass : Registry().passes()) names.push_back(pass->name);
  EXPECT_EQ(names, (std::vector<std::string>{"canonicalize", "dce", "test-opts"}));
}

TEST(PassRegistryTest, KebabCase) {
  EXPECT_TRUE(IsKebabCase("dce"));
  EXPECT_TRUE(IsKebabCase("max-iterations"));
  EXPECT_TRUE(IsKebabCase("pass-2"));
  EXPECT_FALSE(IsKebabCase(""));
  EXPECT_FALSE(IsKebabCase("Dce"));
  EXPECT_FALSE(IsKebabCase("dce_pass"));
  EXPECT_FALSE(IsKebabCase("-dce"));
  EXPECT_FALSE(IsKebabCase("dce-"));
  EXPECT_FALSE(IsKebabCase("a--b"));
  EXPECT_FALSE(IsKebabCase("a.b"));
}

std::string RegisterError(PassInfo info) {
  PassRegistry registry = TestRegistry();
  const size_t before = registry.size();
  Status status = registry.Register(std::move(info));
  EXPECT_EQ(registry.size(), before);
  return status.ToString();
}

TEST(PassRegistryTest, RegistrationErrors) {
  EXPECT_EQ(RegisterError({.name = "dce", .summary = "again", .factory = NoopFactory("dce")}),
            "error: pass 'dce' is registered twice");
  EXPECT_EQ(RegisterError({.name = "My_Pass", .summary = "s", .factory = NoopFactory("x")}),
            "error: pass name 'My_Pass' is not kebab-case");
  EXPECT_EQ(RegisterError({.name = "p", .summary = "", .factory = NoopFactory("p")}),
            "error: pass 'p' needs a one-line summary");
  EXPECT_EQ(RegisterError({.name = "p", .summary = "two\nlines", .factory = NoopFactory("p")}),
            "error: pass 'p' needs a one-line summary");
  EXPECT_EQ(RegisterError({.name = "p", .summary = "s"}), "error: pass 'p' has no factory");
  EXPECT_EQ(RegisterError({.name = "p",
                           .summary = "s",
                           .options = {{.name = "x"}, {.name = "x"}},
                           .factory = NoopFactory("p")}),
            "error: option 'x' of pass 'p' is declared twice");
  EXPECT_EQ(RegisterError({.name = "p",
                           .summary = "s",
                           .options = {{.name = "maxIter"}},
                           .factory = NoopFactory("p")}),
            "error: option name 'maxIter' of pass 'p' is not kebab-case");
  EXPECT_EQ(RegisterError({.name = "p",
                           .summary = "s",
                           .options = {{.name = "n", .default_value = int64_t{0}, .min = 1}},
                           .factory = NoopFactory("p")}),
            "error: option 'n' of pass 'p' has default 0 outside its range [1, "
            "9223372036854775807]");
  EXPECT_EQ(
      RegisterError({.name = "p",
                     .summary = "s",
                     .options = {{.name = "n", .default_value = int64_t{3}, .min = 5, .max = 1}},
                     .factory = NoopFactory("p")}),
      "error: option 'n' of pass 'p' has default 3 outside its range [5, 1]");
}

// ---- pipelines that parse ---------------------------------------------------------------------

TEST(PassPipelineTest, PassesInOrderWithDefaults) {
  EXPECT_EQ(Describe("dce,canonicalize"),
            "dce@1{},canonicalize@5{max-iterations=10 test-convergence=false}");
  EXPECT_EQ(Describe("canonicalize,dce,canonicalize"),
            "canonicalize@1{max-iterations=10 test-convergence=false},dce@14{},"
            "canonicalize@18{max-iterations=10 test-convergence=false}");
}

TEST(PassPipelineTest, EmptyPipeline) {
  EXPECT_EQ(Describe(""), "");
  EXPECT_EQ(Describe("  \n "), "");
  EXPECT_EQ(Describe("builtin.module()"), "");
}

TEST(PassPipelineTest, Options) {
  EXPECT_EQ(Describe("canonicalize{max-iterations=3}"),
            "canonicalize@1{max-iterations=3 test-convergence=false}");
  EXPECT_EQ(Describe("canonicalize{max-iterations=3 test-convergence=true}"),
            "canonicalize@1{max-iterations=3 test-convergence=true}");
  EXPECT_EQ(Describe("dce{}"), "dce@1{}");
  // A bool option alone means true; 1 and 0 are bools too.
  EXPECT_EQ(Describe("test-opts{flag}"), "test-opts@1{count=0 flag=true label=}");
  EXPECT_EQ(Describe("test-opts{flag=1 count=-5}"), "test-opts@1{count=-5 flag=true label=}");
  EXPECT_EQ(Describe("test-opts{flag=0 count=5}"), "test-opts@1{count=5 flag=false label=}");
  EXPECT_EQ(Describe("test-opts{label=abc}"), "test-opts@1{count=0 flag=false label=abc}");
}

TEST(PassPipelineTest, QuotedValues) {
  EXPECT_EQ(Describe("test-opts{label=\"a b,{c}\"}"),
            "test-opts@1{count=0 flag=false label=a b,{c}}");
  EXPECT_EQ(Describe("test-opts{label='say \"hi\"'}"),
            "test-opts@1{count=0 flag=false label=say \"hi\"}");
  EXPECT_EQ(Describe("test-opts{label=\"\"}"), "test-opts@1{count=0 flag=false label=}");
  EXPECT_EQ(Describe("test-opts{count=\"3\"}"), "test-opts@1{count=3 flag=false label=}");
}

TEST(PassPipelineTest, WhitespaceAroundEverything) {
  EXPECT_EQ(Describe("  dce ,\n\tcanonicalize { max-iterations=3\n test-convergence }  "),
            "dce@3{},canonicalize@2{max-iterations=3 test-convergence=true}");
}

TEST(PassPipelineTest, BuiltinModuleWrapper) {
  EXPECT_EQ(Describe("builtin.module(dce,canonicalize{max-iterations=2})"),
            "dce@16{},canonicalize@20{max-iterations=2 test-convergence=false}");
  EXPECT_EQ(Describe(" builtin.module ( dce ) "), "dce@19{}");
}

TEST(PassPipelineTest, GlobalRegistry) {
  StatusOr<std::vector<PassPipelineElement>> pipeline =
      ParsePassPipeline("dce,canonicalize{max-iterations=3}");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().ToString();
  ASSERT_EQ(pipeline->size(), 2u);
  EXPECT_EQ((*pipeline)[0].info, PassRegistry::Global().Lookup("dce"));
  EXPECT_EQ((*pipeline)[1].options.GetInt("max-iterations"), 3);
}

TEST(PassPipelineTest, CanonicalText) {
  EXPECT_EQ(Canonical(" dce , canonicalize{ max-iterations=3 }"),
            "dce,canonicalize{max-iterations=3}");
  // Defaults are left out, options follow their declaration order.
  EXPECT_EQ(Canonical("canonicalize{test-convergence max-iterations=10}"),
            "canonicalize{test-convergence=true}");
  EXPECT_EQ(Canonical("test-opts{label=x count=2 flag}"), "test-opts{flag=true count=2 label=x}");
  EXPECT_EQ(Canonical("test-opts{label=\"a b\"}"), "test-opts{label=\"a b\"}");
  EXPECT_EQ(Canonical("test-opts{label='say \"hi\"'}"), "test-opts{label='say \"hi\"'}");
  EXPECT_EQ(Canonical("builtin.module(dce)"), "dce");
  EXPECT_EQ(Canonical(""), "");
  // The canonical text parses back to itself.
  const std::string text = Canonical("test-opts{label='a,b' count=-1},dce");
  EXPECT_EQ(text, "test-opts{count=-1 label=\"a,b\"},dce");
  EXPECT_EQ(Canonical(text), text);
}

TEST(PassPipelineTest, ClosestName) {
  const std::vector<std::string_view> names = {"canonicalize", "dce"};
  EXPECT_EQ(ClosestName("dcee", names), "dce");
  EXPECT_EQ(ClosestName("canonicalise", names), "canonicalize");
  EXPECT_EQ(ClosestName("cannonicalize", names), "canonicalize");
  EXPECT_EQ(ClosestName("dc", names), "dce");
  EXPECT_EQ(ClosestName("cse", names), "");  // two edits from dce: too far for a 3-letter name
  EXPECT_EQ(ClosestName("canon", names), "");
  EXPECT_EQ(ClosestName("inline", names), "");
  EXPECT_EQ(ClosestName("x", {}), "");
}

// ---- pipeline errors --------------------------------------------------------------------------

TEST(PassPipelineErrorTest, UnknownPass) {
  EXPECT_EQ(ErrorOf("dcee"), "<pipeline>:1:1: error: unknown pass 'dcee' (did you mean 'dce'?)");
  EXPECT_EQ(ErrorOf("dce,cannonicalize{max-iterations=2}"),
            "<pipeline>:1:5: error: unknown pass 'cannonicalize' (did you mean 'canonicalize'?)");
  EXPECT_EQ(ErrorOf("dce,inline"), "<pipeline>:1:5: error: unknown pass 'inline'");
  EXPECT_EQ(ErrorOf("dce,\n  inline"), "<pipeline>:2:3: error: unknown pass 'inline'");
  EXPECT_EQ(ErrorOf("inline", "--passes"), "--passes:1:1: error: unknown pass 'inline'");
}

TEST(PassPipelineErrorTest, MissingOrBadPassName) {
  EXPECT_EQ(ErrorOf("dce,"),
            "<pipeline>:1:5: error: expected a pass name at the end of the "
            "pipeline");
  EXPECT_EQ(ErrorOf("dce,,canonicalize"), "<pipeline>:1:5: error: expected a pass name, found ','");
  EXPECT_EQ(ErrorOf("{max-iterations=1}"),
            "<pipeline>:1:1: error: expected a pass name, found '{'");
  EXPECT_EQ(ErrorOf("dce;canonicalize"),
            "<pipeline>:1:4: error: expected ',' between passes, found ';'");
  EXPECT_EQ(ErrorOf("dce canonicalize"),
            "<pipeline>:1:5: error: expected ',' between passes, found 'c'");
  EXPECT_EQ(ErrorOf("dce\x01"),
            "<pipeline>:1:4: error: expected ',' between passes, found byte 0x01");
}

TEST(PassPipelineErrorTest, UnknownOption) {
  EXPECT_EQ(ErrorOf("canonicalize{max-iteration=3}"),
            "<pipeline>:1:14: error: pass 'canonicalize' has no option 'max-iteration' (did you "
            "mean 'max-iterations'?)");
  EXPECT_EQ(ErrorOf("canonicalize{verbose}"),
            "<pipeline>:1:14: error: pass 'canonicalize' has no option 'verbose' (its options: "
            "max-iterations, test-convergence)");
  EXPECT_EQ(ErrorOf("dce{x=1}"),
            "<pipeline>:1:5: error: pass 'dce' has no option 'x' (it takes none)");
}

TEST(PassPipelineErrorTest, BadValues) {
  EXPECT_EQ(ErrorOf("canonicalize{max-iterations=ten}"),
            "<pipeline>:1:29: error: option 'max-iterations' of pass 'canonicalize' expects an "
            "integer, not 'ten'");
  EXPECT_EQ(ErrorOf("canonicalize{max-iterations=3x}"),
            "<pipeline>:1:29: error: option 'max-iterations' of pass 'canonicalize' expects an "
            "integer, not '3x'");
  EXPECT_EQ(ErrorOf("canonicalize{max-iterations=+3}"),
            "<pipeline>:1:29: error: option 'max-iterations' of pass 'canonicalize' expects an "
            "integer, not '+3'");
  EXPECT_EQ(ErrorOf("canonicalize{max-iterations=0}"),
            "<pipeline>:1:29: error: option 'max-iterations' of pass 'canonicalize' must be at "
            "least 1, not 0");
  EXPECT_EQ(ErrorOf("test-opts{count=6}"),
            "<pipeline>:1:17: error: option 'count' of pass 'test-opts' must be at most 5, not 6");
  EXPECT_EQ(ErrorOf("canonicalize{max-iterations=99999999999999999999}"),
            "<pipeline>:1:29: error: option 'max-iterations' of pass 'canonicalize' value "
            "'99999999999999999999' does not fit in 64 bits");
  EXPECT_EQ(ErrorOf("canonicalize{test-convergence=yes}"),
            "<pipeline>:1:31: error: option 'test-convergence' of pass 'canonicalize' expects "
            "true or false, not 'yes'");
  EXPECT_EQ(ErrorOf("canonicalize{max-iterations}"),
            "<pipeline>:1:14: error: option 'max-iterations' of pass 'canonicalize' needs a "
            "value: max-iterations=<int>");
  EXPECT_EQ(ErrorOf("canonicalize{max-iterations= test-convergence}"),
            "<pipeline>:1:29: error: option 'max-iterations' of pass 'canonicalize' needs a "
            "value after '='");
  EXPECT_EQ(ErrorOf("test-opts{label=\"abc}"),
            "<pipeline>:1:17: error: unterminated quoted value of option 'label' of pass "
            "'test-opts'");
}

TEST(PassPipelineErrorTest, OptionSyntax) {
  EXPECT_EQ(ErrorOf("canonicalize{max-iterations=3"),
            "<pipeline>:1:30: error: expected '}' to close the options of pass 'canonicalize'");
  EXPECT_EQ(ErrorOf("canonicalize{max-iterations=3,test-convergence}"),
            "<pipeline>:1:30: error: options of pass 'canonicalize' are separated by spaces, "
            "not ','");
  EXPECT_EQ(ErrorOf("canonicalize{max-iterations=3 max-iterations=4}"),
            "<pipeline>:1:31: error: option 'max-iterations' of pass 'canonicalize' is given "
            "twice");
  EXPECT_EQ(ErrorOf("canonicalize{=3}"),
            "<pipeline>:1:14: error: expected an option name in the options of pass "
            "'canonicalize', found '='");
  EXPECT_EQ(ErrorOf("canonicalize{max-iterations:3}"),
            "<pipeline>:1:28: error: expected '=' after option 'max-iterations' of pass "
            "'canonicalize', found ':'");
  EXPECT_EQ(ErrorOf("test-opts{label=a\"b\"}"),
            "<pipeline>:1:18: error: expected a space or '}' after option 'label' of pass "
            "'test-opts', found '\"'");
}

TEST(PassPipelineErrorTest, BuiltinModuleWrapper) {
  EXPECT_EQ(ErrorOf("builtin.module(dce"),
            "<pipeline>:1:19: error: expected ')' to close 'builtin.module('");
  EXPECT_EQ(ErrorOf("builtin.module(dce) dce"),
            "<pipeline>:1:21: error: unexpected 'd' after the ')' that closes 'builtin.module('");
  EXPECT_EQ(ErrorOf("dce,builtin.module(dce)"),
            "<pipeline>:1:5: error: 'builtin.module(…)' may only wrap the whole pipeline");
  EXPECT_EQ(ErrorOf("builtin.module"),
            "<pipeline>:1:1: error: 'builtin.module(…)' may only wrap the whole pipeline");
}

}  // namespace
}  // namespace irm::newir
