// The idioms of Paddle's distributed Python code, end to end: sources written here in the style of
// python/paddle/distributed (PaddlePaddle/Paddle at ccd49a3de4, 2025-02-17) go through the
// tree-sitter front end and the analysis, and the findings are checked one by one. The shapes
// follow passes/pipeline_scheduler_pass/pipeline_pass_base.py (state guard set from
// FLAGS_enable_pir_api in __init__, abstract legacy stubs, _apply_single_impl /
// _apply_pir_single_impl), pipeline_1f1b.py (early return to _create_job_list_in_pir),
// pipeline_eager_1f1b.py (a legacy-only override), pass_utils.py (_pir_x / x twins,
// _x_in_pir / _x_in_old_ir, legacy-only helpers), auto_parallel/api.py (three-way chains) and
// pass_base.py (PassBase._apply_impl, which PipelinePassBase replaces).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tools/deadcode/analysis.h"
#include "tools/deadcode/python_frontend.h"

namespace irm::deadcode {
namespace {

using ::testing::Contains;
using ::testing::Not;

struct Source {
  std::string file;  // "paddle/distributed/passes/pass_utils.py"
  std::string text;
};

DeadcodeReport AnalyzeSources(const std::vector<Source>& sources,
                              const EvidenceLookup& evidence = nullptr,
                              const DeadcodeConfig& config = DefaultConfig()) {
  std::vector<FileModel> models;
  for (const Source& source : sources) {
    std::string_view text = source.text;
    if (text.starts_with('\n')) text.remove_prefix(1);
    models.push_back(AnalyzePythonSource(text, source.file, PythonModuleName(source.file), config));
    EXPECT_TRUE(models.back().problems.empty()) << source.file;
  }
  const EvidenceLookup none = [](const std::string&, const std::string&) {
    return std::vector<Evidence>{};
  };
  return Analyze(models, config, evidence ? evidence : none);
}

// "kind qualname:line status", qualnames without the "paddle.distributed." prefix.
std::vector<std::string> Lines(const DeadcodeReport& report) {
  std::vector<std::string> out;
  for (const Finding& f : report.findings) {
    std::string name = f.unit.qualname;
    std::string status = f.status;
    for (std::string* text : {&name, &status}) {
      for (size_t at; (at = text->find("paddle.distributed.")) != std::string::npos;) {
        text->erase(at, 19);
      }
    }
    out.push_back(fmt::format("{} {}:{} {}{}", f.kind, name, f.unit.range.start_line, status,
                              f.deletable ? " deletable" : ""));
  }
  return out;
}

const Finding* Find(const DeadcodeReport& report, const std::string& kind,
                    const std::string& qualname, int line = 0) {
  for (const Finding& f : report.findings) {
    if (f.kind == kind && f.unit.qualname == qualname &&
        (line == 0 || f.unit.range.start_line == line)) {
      return &f;
    }
  }
  return nullptr;
}

// A three-way chain: dynamic mode, then PIR, then the legacy static graph, with the mode
// predicates imported bare and written qualified.
TEST(PythonIdiomsTest, ThreeWayChainsMakeTheFinalElseLegacy) {
  const DeadcodeReport report = AnalyzeSources({{"paddle/distributed/auto_parallel/api.py", R"py(
import paddle
from paddle.framework import in_dynamic_mode, in_pir_mode


def shard(x):
    if paddle.in_dynamic_mode():
        return x.shard()
    elif paddle.framework.in_pir_mode():
        return paddle._C_ops.shard(x)
    else:
        op = x.block.append_op(type="shard")
        return op


def reshard(x):
    if in_dynamic_mode():
        return x.reshard()
    elif in_pir_mode():
        return paddle._C_ops.reshard(x)
    else:
        return x.block.append_op(type="reshard")


def local(x):
    if paddle.framework.in_dynamic_mode():
        return x.local()
    elif in_pir_mode():
        return paddle._C_ops.local(x)
    else:
        raise RuntimeError("local() supports dynamic or PIR mode only")
)py"}});
  EXPECT_EQ(Lines(report),
            (std::vector<std::string>{"branch auto_parallel.api.shard:11 twin-untested",
                                      "branch auto_parallel.api.reshard:21 twin-untested"}));
  const Finding* shard = Find(report, "branch", "paddle.distributed.auto_parallel.api.shard");
  ASSERT_NE(shard, nullptr);
  EXPECT_EQ(shard->legacy_kind, "else-branch");
  ASSERT_TRUE(shard->guard.has_value());
  EXPECT_EQ(shard->guard->text, "paddle.framework.in_pir_mode()");
  EXPECT_EQ(shard->guard->shape, "elif");
  EXPECT_EQ(shard->unit.range.end_line, 12);
}

// Guards through state and flags: self._in_pir_mode set from FLAGS_enable_pir_api in __init__,
// use_pir_api(), get_flags(...)[...] inline, FLAGS_enable_pir_in_executor through a variable, and
// their negated forms.
TEST(PythonIdiomsTest, GuardsThroughStateAndFlags) {
  const DeadcodeReport report = AnalyzeSources({{"paddle/distributed/auto_parallel/engine.py", R"py(
import paddle
from paddle.base.framework import use_pir_api


class Engine:
    def __init__(self):
        self._in_pir_mode = paddle.base.framework.get_flags(
            "FLAGS_enable_pir_api"
        )["FLAGS_enable_pir_api"]

    def state_dict(self):
        if use_pir_api():
            return self._pir_state()
        else:
            return self._legacy_state()

    def build(self):
        if not paddle.base.framework.get_flags("FLAGS_enable_pir_api")[
            "FLAGS_enable_pir_api"
        ]:
            self._build_desc()
        else:
            self._build_pir()

    def convert(self, programs):
        enable_pir_in_executor = paddle.framework.get_flags(
            "FLAGS_enable_pir_in_executor"
        )["FLAGS_enable_pir_in_executor"]
        if enable_pir_in_executor:
            return paddle.pir.translate_to_pir(programs)
        else:
            return programs.desc

    def fetch(self):
        if not self._in_pir_mode:
            return self._fetch_desc()
        return self._fetch_pir()

    def _pir_state(self):
        return 1

    def _legacy_state(self):
        return 2

    def _build_desc(self):
        pass

    def _build_pir(self):
        pass

    def _fetch_desc(self):
        pass

    def _fetch_pir(self):
        pass
)py"}});
  // The helpers only the legacy parts call go with them (closure).
  EXPECT_EQ(Lines(report), (std::vector<std::string>{
                               "branch auto_parallel.engine.Engine.state_dict:15 twin-untested",
                               "branch auto_parallel.engine.Engine.build:21 twin-untested",
                               "branch auto_parallel.engine.Engine.convert:32 twin-untested",
                               "branch auto_parallel.engine.Engine.fetch:36 twin-untested",
                               "method auto_parallel.engine.Engine._legacy_state:42 twin-untested",
                               "method auto_parallel.engine.Engine._build_desc:45 twin-untested",
                               "method auto_parallel.engine.Engine._fetch_desc:51 twin-untested"}));
  const Finding* build =
      Find(report, "branch", "paddle.distributed.auto_parallel.engine.Engine.build");
  ASSERT_NE(build, nullptr);
  EXPECT_EQ(build->legacy_kind, "if-body");
  EXPECT_TRUE(build->guard->negated);
  EXPECT_EQ(build->guard->name, "FLAGS_enable_pir_api");
  const Finding* convert =
      Find(report, "branch", "paddle.distributed.auto_parallel.engine.Engine.convert");
  ASSERT_NE(convert, nullptr);
  EXPECT_EQ(convert->guard->shape, "guard-variable");
  EXPECT_EQ(convert->guard->name, "FLAGS_enable_pir_in_executor");
  const Finding* fetch =
      Find(report, "branch", "paddle.distributed.auto_parallel.engine.Engine.fetch");
  ASSERT_NE(fetch, nullptr);
  EXPECT_EQ(fetch->guard->name, "_in_pir_mode");
  EXPECT_TRUE(fetch->guard->negated);
}

// The pipeline passes: a base class with a state guard, abstract legacy stubs and both
// single-program paths; one subclass with both halves, one with an early return to its PIR job
// list, one (Eager1F1B) that overrides only the legacy half; shared helpers in pass_utils.
const std::vector<Source>& PipelineSources() {
  static const std::vector<Source> sources = {
      {"paddle/distributed/passes/pass_base.py", R"py(
class PassBase:
    def apply(self, main_programs, startup_programs, context):
        self._apply_impl(main_programs, startup_programs, context)

    def _apply_impl(self, main_programs, startup_programs, context):
        for main_program, startup_program in zip(main_programs, startup_programs):
            self._apply_single_impl(main_program, startup_program, context)

    def _apply_single_impl(self, main_program, startup_program, context):
        raise NotImplementedError()


class GradientMergePass(PassBase):
    def _apply_single_impl(self, main_program, startup_program, context):
        main_program.merge()
)py"},
      {"paddle/distributed/passes/pass_utils.py", R"py(
import paddle


def _split_program(program):
    return [program]


def _overlap_send_recv(program):
    return program


def _program_for_fthenb_and_1f1b(program, overlap=False):
    if overlap:
        _overlap_send_recv(program)
    return _split_program(program)


def _split_program_into_forward_backward_optimize(program, overlap=False):
    return [program]


def _pir_get_backward_op_type(op):
    return op.name()


def _get_backward_op_type(op):
    return op.type


def set_skip_gc_vars(num_micro_batches, job_types, sub_programs, jobs):
    if paddle.base.framework.get_flags("FLAGS_enable_pir_api")["FLAGS_enable_pir_api"]:
        return _set_skip_gc_vars_in_pir(num_micro_batches, job_types, sub_programs, jobs)
    else:
        return _set_skip_gc_vars_in_old_ir(num_micro_batches, job_types, sub_programs, jobs)


def _set_skip_gc_vars_in_old_ir(num_micro_batches, job_types, sub_programs, jobs):
    return {t: _get_backward_op_type(p) for t, p in zip(job_types, sub_programs)}


def _set_skip_gc_vars_in_pir(num_micro_batches, job_types, sub_programs, jobs):
    return {t: _pir_get_backward_op_type(p) for t, p in zip(job_types, sub_programs)}
)py"},
      {"paddle/distributed/passes/pipeline_pass_base.py", R"py(
import paddle

from .pass_base import PassBase
from .pass_utils import set_skip_gc_vars


class PipelinePassBase(PassBase):
    def __init__(self):
        super().__init__()
        self._in_pir_mode = paddle.base.framework.get_flags(
            "FLAGS_enable_pir_api"
        )["FLAGS_enable_pir_api"]

    def _create_job_list(self):
        """An interface that subclasses implement."""
        pass

    def _partial_programs(self, program):
        """An interface that subclasses implement."""
        pass

    def _apply_impl(self, main_programs, startup_programs, context):
        for main_program, startup_program in zip(main_programs, startup_programs):
            if self._in_pir_mode:
                self._apply_pir_single_impl(main_program, startup_program, context)
            else:
                self._apply_single_impl(main_program, startup_program, context)

    def _partial_pir_programs(self, program):
        """An interface that subclasses implement."""
        pass

    def _apply_single_impl(self, main_program, startup_program, context):
        job_types, sub_programs = self._partial_programs(main_program)
        jobs = self._create_job_list()
        context.plan = set_skip_gc_vars(1, job_types, sub_programs, jobs)

    def _apply_pir_single_impl(self, main_program, startup_program, context):
        job_types, sub_programs = self._partial_pir_programs(main_program)
        jobs = self._create_job_list()
        context.plan = set_skip_gc_vars(1, job_types, sub_programs, jobs)
)py"},
      {"paddle/distributed/passes/pipeline_fthenb.py", R"py(
from .pass_utils import (
    _program_for_fthenb_and_1f1b,
    _split_program_into_forward_backward_optimize,
)
from .pipeline_pass_base import PipelinePassBase


class PipelineFThenBPass(PipelinePassBase):
    def _create_job_list(self):
        return ["forward", "backward", "optimizer"]

    def _partial_programs(self, program):
        return ["forward"], _program_for_fthenb_and_1f1b(program)

    def _partial_pir_programs(self, program):
        return ["forward"], _split_program_into_forward_backward_optimize(program)
)py"},
      {"paddle/distributed/passes/pipeline_1f1b.py", R"py(
from .pass_utils import (
    _program_for_fthenb_and_1f1b,
    _split_program_into_forward_backward_optimize,
)
from .pipeline_pass_base import PipelinePassBase


class Pipeline1F1BPass(PipelinePassBase):
    def _create_job_list(self):
        if self._in_pir_mode:
            return self._create_job_list_in_pir()
        jobs = ["forward"]
        jobs.append("backward")
        return jobs

    def _create_job_list_in_pir(self):
        return ["forward", "backward"]

    def _partial_programs(self, program):
        return ["forward"], _program_for_fthenb_and_1f1b(program, True)

    def _partial_pir_programs(self, program):
        return ["forward"], _split_program_into_forward_backward_optimize(program, True)
)py"},
      {"paddle/distributed/passes/pipeline_eager_1f1b.py", R"py(
from .pass_utils import _program_for_fthenb_and_1f1b
from .pipeline_pass_base import PipelinePassBase


class PipelineEager1F1BPass(PipelinePassBase):
    def _create_job_list(self):
        return ["forward", "forward", "backward"]

    def _partial_programs(self, program):
        # The same split as FThenB and 1F1B; no PIR version yet.
        return ["forward"], _program_for_fthenb_and_1f1b(program)
)py"},
  };
  return sources;
}

// Name twins with no guard at the call site, the abstract legacy stubs and their overrides, and
// the legacy-only helper reachable from legacy code alone (closure).
TEST(PythonIdiomsTest, PipelinePassesTwinsStubsAndOverrides) {
  const DeadcodeReport report = AnalyzeSources(PipelineSources());
  EXPECT_EQ(
      Lines(report),
      (std::vector<std::string>{
          "function passes.pass_utils._program_for_fthenb_and_1f1b:12 "
          "blocked-by:passes.pipeline_eager_1f1b.PipelineEager1F1BPass._partial_programs",
          "function passes.pass_utils._get_backward_op_type:26 twin-untested",
          "branch passes.pass_utils.set_skip_gc_vars:34 twin-untested",
          "function passes.pass_utils._set_skip_gc_vars_in_old_ir:37 twin-untested",
          "method passes.pipeline_1f1b.Pipeline1F1BPass._create_job_list:9 "
          "blocked-by:passes.pipeline_pass_base.PipelinePassBase._apply_pir_single_impl",
          "branch passes.pipeline_1f1b.Pipeline1F1BPass._create_job_list:12 twin-untested",
          "method passes.pipeline_1f1b.Pipeline1F1BPass._partial_programs:19 twin-untested",
          "method passes.pipeline_eager_1f1b.PipelineEager1F1BPass._partial_programs:9 "
          "blocked-by:passes.pipeline_eager_1f1b.PipelineEager1F1BPass",
          "method passes.pipeline_fthenb.PipelineFThenBPass._partial_programs:12 twin-untested",
          "method passes.pipeline_pass_base.PipelinePassBase._partial_programs:18 twin-untested",
          "branch passes.pipeline_pass_base.PipelinePassBase._apply_impl:27 twin-untested",
          "method passes.pipeline_pass_base.PipelinePassBase._apply_single_impl:33 "
          "twin-untested",
      }));
  // _overlap_send_recv is no finding: only kept legacy code (the blocked helper) calls it, so it
  // stays with that code and nothing removed reaches it.
  const Finding* eager =
      Find(report, "method",
           "paddle.distributed.passes.pipeline_eager_1f1b.PipelineEager1F1BPass._partial_programs");
  ASSERT_NE(eager, nullptr);
  EXPECT_FALSE(eager->twin.has_value());
  EXPECT_EQ(eager->reason,
            "paddle.distributed.passes.pipeline_eager_1f1b.PipelineEager1F1BPass overrides the "
            "legacy _partial_programs but not its twin _partial_pir_programs: deleting it leaves "
            "the class with no implementation of its own");
  const Finding* split =
      Find(report, "function", "paddle.distributed.passes.pass_utils._program_for_fthenb_and_1f1b");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->reason, "removed legacy code calls it, and so does kept legacy code");
  // The _x_in_pir / _x_in_old_ir pair and the _pir_x / x pair.
  const Finding* in_old_ir =
      Find(report, "function", "paddle.distributed.passes.pass_utils._set_skip_gc_vars_in_old_ir");
  ASSERT_NE(in_old_ir, nullptr);
  EXPECT_EQ(in_old_ir->twin_rule, "{}_in_pir");
  // A base method that the subclass replaces without super() never runs its subclass's
  // _apply_single_impl: PassBase._apply_impl does not keep PipelinePassBase's alive.
  const Finding* single =
      Find(report, "method",
           "paddle.distributed.passes.pipeline_pass_base.PipelinePassBase._apply_single_impl");
  ASSERT_NE(single, nullptr);
  for (const Caller& caller : single->callers) {
    EXPECT_NE(caller.qualname, "paddle.distributed.passes.pass_base.PassBase._apply_impl");
  }
}

// With evidence for every twin, the legacy halves with no kept caller become deletable; the
// legacy-only override, the helper it keeps and the dispatcher of both job lists never do.
TEST(PythonIdiomsTest, EvidenceNeverMakesALegacyOnlyOverrideDeletable) {
  const DeadcodeReport report =
      AnalyzeSources(PipelineSources(), [](const std::string&, const std::string&) {
        return std::vector<Evidence>{{"test", "test/auto_parallel/pir/test_pipeline.py", ""}};
      });
  const std::vector<std::string> lines = Lines(report);
  EXPECT_THAT(lines,
              Contains("method passes.pipeline_fthenb.PipelineFThenBPass._partial_programs:12 "
                       "verified deletable"));
  EXPECT_THAT(lines, Contains("method passes.pipeline_eager_1f1b.PipelineEager1F1BPass."
                              "_partial_programs:9 blocked-by:passes.pipeline_eager_1f1b."
                              "PipelineEager1F1BPass"));
  EXPECT_THAT(lines, Contains("function passes.pass_utils._program_for_fthenb_and_1f1b:12 "
                              "blocked-by:passes.pipeline_eager_1f1b.PipelineEager1F1BPass."
                              "_partial_programs"));
  for (const Finding& f : report.findings) {
    if (f.deletable) {
      EXPECT_EQ(f.status, "verified") << f.unit.qualname;
    }
    EXPECT_THAT(f.unit.qualname,
                Not(::testing::HasSubstr("PipelineEager1F1BPass._create_job_list")));
  }
}

// The override rule needs a pair in a base class: an override of a method that is no legacy
// unit, and an override beside its own twin, are not findings of that kind.
TEST(PythonIdiomsTest, OverridesWithTheirTwinOrOfOrdinaryMethodsAreNotBlocked) {
  const DeadcodeReport report = AnalyzeSources({{"paddle/distributed/passes/zb.py", R"py(
class Base:
    def _partial_programs(self, program):
        pass

    def _partial_pir_programs(self, program):
        pass

    def _create_job_list(self):
        pass


class WithBoth(Base):
    def _partial_programs(self, program):
        return program

    def _partial_pir_programs(self, program):
        return program

    def _create_job_list(self):
        return []


class TwinInTheMiddle(Base):
    def _partial_pir_programs(self, program):
        return program


class Below(TwinInTheMiddle):
    def _partial_programs(self, program):
        return program


class Orphan(Base):
    def _partial_programs(self, program):
        return program


class BelowOrphan(Orphan):
    def _partial_programs(self, program):
        return program
)py"}});
  const std::vector<std::string> lines = Lines(report);
  EXPECT_THAT(lines, Contains("method passes.zb.Orphan._partial_programs:34 "
                              "blocked-by:passes.zb.Orphan"));
  EXPECT_THAT(lines, Contains("method passes.zb.BelowOrphan._partial_programs:39 "
                              "blocked-by:passes.zb.BelowOrphan"));
  for (const std::string& line : lines) {
    EXPECT_EQ(line.find("Below._partial"), std::string::npos) << line;
    EXPECT_EQ(line.find("_create_job_list"), std::string::npos) << line;
  }
  EXPECT_THAT(lines, Contains("method passes.zb.WithBoth._partial_programs:13 twin-untested"));
}

// A public name that a package exports (DistModel, re-exported by paddle/distributed/__init__.py)
// is API: users call DistModel.predict, so it stays even when only a legacy branch in the tree
// calls it. A public name of a module no package exports (pass_utils' split_program) is internal
// and goes with the legacy code that alone calls it, as a private helper does.
TEST(PythonIdiomsTest, ExportedPublicNamesStayInternalOnesGoWithTheirLegacyCallers) {
  const DeadcodeReport report = AnalyzeSources({{"paddle/distributed/__init__.py", R"py(
from .auto_parallel.api import DistModel
)py"},
                                                {"paddle/distributed/auto_parallel/api.py", R"py(
import paddle
from ..passes.pass_utils import split_program


class DistModel:
    def __init__(self, loss):
        self._in_pir_mode = paddle.base.framework.get_flags(
            "FLAGS_enable_pir_api"
        )["FLAGS_enable_pir_api"]
        if not self._in_pir_mode:
            self.predict()
            self._prepare_desc()
            split_program(loss)

    def predict(self):
        self._mode = "predict"

    def _prepare_desc(self):
        self._desc = 1
)py"},
                                                {"paddle/distributed/passes/pass_utils.py", R"py(
def split_program(program):
    return [program]
)py"}});
  EXPECT_EQ(Lines(report), (std::vector<std::string>{
                               "branch auto_parallel.api.DistModel.__init__:11 twin-untested",
                               "method auto_parallel.api.DistModel._prepare_desc:18 twin-untested",
                               "function passes.pass_utils.split_program:1 twin-untested"}));
}

// A subclass that replaces the calling method but extends it through super() still runs the
// base's body, so the base's `self.f()` still reaches the subclass's f.
TEST(PythonIdiomsTest, ASubclassExtendingTheCallerThroughSuperStillDispatches) {
  const DeadcodeReport report = AnalyzeSources({{"paddle/distributed/passes/base.py", R"py(
class PassBase:
    def _apply_impl(self, program):
        self._apply_single_impl(program)


class Extending(PassBase):
    def _apply_impl(self, program):
        super()._apply_impl(program)

    def _apply_single_impl(self, program):
        return program

    def _apply_pir_single_impl(self, program):
        return program


class Replacing(PassBase):
    def _apply_impl(self, program):
        self._apply_pir_single_impl(program)

    def _apply_single_impl(self, program):
        return program

    def _apply_pir_single_impl(self, program):
        return program
)py"}});
  EXPECT_EQ(Lines(report),
            (std::vector<std::string>{
                "method passes.base.Extending._apply_single_impl:10 "
                "blocked-by:passes.base.PassBase._apply_impl",
                "method passes.base.Replacing._apply_single_impl:21 twin-untested"}));
}

// The pass registry of python/paddle/distributed/passes/pass_base.py: @register_pass("x") files a
// class under "x", new_pass("x", attrs) makes the instance, and callers use PassBase's protocol
// (apply, which calls _check_self and _apply_impl, which calls _apply_single_impl). The classes
// are exported (passes/__init__.py imports them, as Paddle's does), so that only the registry
// rule can make a public method a helper.
std::vector<Source> RegistrySources() {
  return {{"paddle/distributed/passes/__init__.py", R"py(
from .pass_base import new_pass, PassBase
from .pipeline_1f1b import Pipeline1F1BPass
from .others import PlainPass, RegisteredBase, ExternalPass, ProtocolPass, ShadowingPass
)py"},
          {"paddle/distributed/passes/pass_base.py", R"py(
from abc import ABC, abstractmethod


class PassBase(ABC):
    _REGISTERED_PASSES = {}

    def __init__(self):
        self._attrs = {}

    def set_attr(self, key, value):
        self._attrs[key] = value
        return self

    def apply(self, main_programs, startup_programs):
        if not self._check_self():
            return
        self._apply_impl(main_programs, startup_programs)

    def _apply_impl(self, main_programs, startup_programs):
        for main, startup in zip(main_programs, startup_programs):
            self._apply_single_impl(main, startup)

    @abstractmethod
    def _check_self(self):
        pass

    @abstractmethod
    def _apply_single_impl(self, main_program, startup_program):
        pass


def register_pass(name):
    def impl(cls):
        PassBase._REGISTERED_PASSES[name] = cls
        cls.name = name
        return cls

    return impl


def new_pass(name, pass_attrs={}):
    pass_obj = PassBase._REGISTERED_PASSES[name]()
    for k, v in pass_attrs.items():
        pass_obj.set_attr(k, v)
    return pass_obj
)py"},
          {"paddle/distributed/passes/pipeline_1f1b.py", R"py(
import paddle

from .pass_base import PassBase, register_pass


@register_pass("pipeline_scheduler_1F1B")
class Pipeline1F1BPass(PassBase):
    def _check_self(self):
        return True

    def _apply_single_impl(self, main_program, startup_program):
        if not paddle.framework.in_pir_mode():
            self._backward_forward_overlap(main_program)

    def _backward_forward_overlap(self, program):
        for op in program.ops:
            if self.is_comm_op_valid_to_overlap(op):
                op.overlap = True

    def is_comm_op_valid_to_overlap(self, op):
        return op.dist_attr.execution_stream != "default"
)py"},
          {"paddle/distributed/passes/others.py", R"py(
import paddle
from paddle.base.framework import ExternalBase, ShadowingPass

from .pass_base import PassBase, register_pass


class PlainPass(PassBase):
    def _check_self(self):
        return True

    def _apply_single_impl(self, main_program, startup_program):
        if not paddle.framework.in_pir_mode():
            self.plain_helper(main_program)

    def plain_helper(self, program):
        return program


@register_pass("registered_base")
class RegisteredBase(PassBase):
    def _check_self(self):
        return True

    def _apply_single_impl(self, main_program, startup_program):
        if not paddle.framework.in_pir_mode():
            self.base_helper(main_program)

    def base_helper(self, program):
        return program


class UnregisteredSubclass(RegisteredBase):
    pass


@register_pass("external")
class ExternalPass(ExternalBase):
    def _apply_single_impl(self, main_program, startup_program):
        if not paddle.framework.in_pir_mode():
            self.external_helper(main_program)

    def external_helper(self, program):
        return program


@register_pass("protocol")
class ProtocolPass(PassBase):
    def _check_self(self):
        return True

    def _apply_single_impl(self, main_program, startup_program):
        if not paddle.framework.in_pir_mode():
            self.set_attr("overlap", True)
            self.static_helper(main_program)

    def set_attr(self, key, value):
        self._attrs[key] = not value
        return self

    @staticmethod
    def static_helper(program):
        return program


@register_pass("shadowing")
class ShadowingPass(ShadowingPass):
    def _apply_single_impl(self, main_program, startup_program):
        if not paddle.framework.in_pir_mode():
            self.shadowing_helper(main_program)

    def shadowing_helper(self, program):
        return program
)py"}};
}

// Pipeline1F1BPass.is_comm_op_valid_to_overlap (pipeline_1f1b.py 445 at ccd49a3de4): a public
// method that only the legacy _partial_programs' helpers call. Its class is registered and every
// user reaches it through new_pass, so it goes with the helper that calls it. Every other public
// method here stays API: the class is not registered (PlainPass), a subclass of it is not
// (RegisteredBase), an ancestor is outside the tree (ExternalPass; ShadowingPass, which derives
// from the class of its own name that it imports), the method overrides the
// protocol (ProtocolPass.set_attr), a staticmethod is reached through the class
// (ProtocolPass.static_helper).
TEST(PythonIdiomsTest, ARegisteredPassAddsNoApiBeyondItsProtocol) {
  const DeadcodeReport report = AnalyzeSources(RegistrySources());
  EXPECT_EQ(Lines(report),
            (std::vector<std::string>{
                "branch passes.others.PlainPass._apply_single_impl:13 twin-untested",
                "branch passes.others.RegisteredBase._apply_single_impl:26 twin-untested",
                "branch passes.others.ExternalPass._apply_single_impl:40 twin-untested",
                "branch passes.others.ProtocolPass._apply_single_impl:53 twin-untested",
                "branch passes.others.ShadowingPass._apply_single_impl:69 twin-untested",
                "branch passes.pipeline_1f1b.Pipeline1F1BPass._apply_single_impl:13 "
                "twin-untested",
                "method passes.pipeline_1f1b.Pipeline1F1BPass._backward_forward_overlap:15 "
                "twin-untested",
                "method passes.pipeline_1f1b.Pipeline1F1BPass.is_comm_op_valid_to_overlap:20 "
                "twin-untested",
            }));
  const Finding* valid =
      Find(report, "method",
           "paddle.distributed.passes.pipeline_1f1b.Pipeline1F1BPass.is_comm_op_valid_to_overlap");
  ASSERT_NE(valid, nullptr);
  EXPECT_EQ(valid->reason,
            "only removed legacy code calls it, but some of that code's twins have no evidence "
            "yet");
  ASSERT_EQ(valid->callers.size(), 1u);
  EXPECT_EQ(valid->callers[0].qualname,
            "paddle.distributed.passes.pipeline_1f1b.Pipeline1F1BPass._backward_forward_overlap");
  EXPECT_FALSE(valid->callers[0].kept);
}

// Without a registry decorator in the configuration, a registered class is exported API like any
// other: the method stays.
TEST(PythonIdiomsTest, WithoutRegistryDecoratorsARegisteredPassMethodStaysApi) {
  DeadcodeConfig config = DefaultConfig();
  config.registry_decorators.clear();
  const DeadcodeReport report = AnalyzeSources(RegistrySources(), nullptr, config);
  EXPECT_THAT(Lines(report), Not(Contains("method passes.pipeline_1f1b.Pipeline1F1BPass."
                                          "is_comm_op_valid_to_overlap:20 twin-untested")));
  EXPECT_THAT(Lines(report), Contains("method passes.pipeline_1f1b.Pipeline1F1BPass."
                                      "_backward_forward_overlap:15 twin-untested"));
}

}  // namespace
}  // namespace irm::deadcode
