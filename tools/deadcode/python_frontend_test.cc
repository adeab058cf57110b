// The Python front end: module names, definitions with qualified names and ranges, references,
// imports, registrations, syntax errors and bad bytes, the tree walk, and the grammar's ABI check.
// Sources start on line 1 right after the opening R"py( line; ranges are counted by hand.
#include "tools/deadcode/python_frontend.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "tools/deadcode/python_syntax.h"

namespace irm::deadcode {
namespace {

using Strings = std::vector<std::string>;

FileModel Analyze(std::string_view source, const std::string& file = "pkg/mod.py",
                  const std::string& module = "pkg.mod",
                  const DeadcodeConfig& config = DefaultConfig()) {
  if (source.starts_with('\n')) source.remove_prefix(1);
  return AnalyzePythonSource(source, file, module, config);
}

std::string Range(const SourceRange& r) {
  return fmt::format("{}:{}-{}:{}", r.start_line, r.start_column, r.end_line, r.end_column);
}

std::string Describe(const FunctionUnit& u) {
  return fmt::format("{} ({}) name={} scope={} class={} {} [{}]", u.key, u.qualname, u.name,
                     u.scope, u.class_name, Range(u.range), fmt::join(u.decorators, "|"));
}

std::string Describe(const ClassUnit& c) {
  return fmt::format("{} ({}) {} [{}]", c.key, c.qualname, Range(c.range), fmt::join(c.bases, "|"));
}

std::string Describe(const Reference& r) {
  return fmt::format("{}@{}:{}<-{}", r.target, r.line, r.column, r.from);
}

template <typename T>
Strings DescribeAll(const std::vector<T>& items) {
  Strings out;
  for (const T& item : items) out.push_back(Describe(item));
  return out;
}

Strings Imports(const FileModel& model) {
  Strings out;
  for (const auto& [local, target] : model.imports) out.push_back(local + "=" + target);
  return out;
}

// Everything a model holds but its timing, for comparing runs.
std::string Summary(const FileModel& m) {
  std::string out = fmt::format("{} {} {}\n", m.file, m.module, static_cast<int>(m.language));
  for (const std::string& s : DescribeAll(m.functions)) out += s + "\n";
  for (const std::string& s : DescribeAll(m.classes)) out += s + "\n";
  for (const Reference& r : m.references) {
    out += Describe(r) + fmt::format(" [{}]\n", fmt::join(r.legacy_branches, ","));
  }
  for (const GuardedBranch& b : m.branches) {
    out += fmt::format("{} {} {} {} {} {} {}\n", b.guard_text, b.shape, b.legacy_kind,
                       Range(b.legacy), b.twin ? Range(*b.twin) : "-", b.negated, b.enclosing);
  }
  for (const std::string& s : Imports(m)) out += s + "\n";
  for (const FileProblem& p : m.problems) {
    out += fmt::format("{}:{}:{}: {}\n", p.file, p.line, p.column, p.message);
  }
  return out;
}

TEST(PythonFrontendTest, ModuleNamesFollowTheFolders) {
  EXPECT_EQ(PythonModuleName("paddle/base/executor.py"), "paddle.base.executor");
  EXPECT_EQ(PythonModuleName("paddle/base/__init__.py"), "paddle.base");
  EXPECT_EQ(PythonModuleName("setup.py"), "setup");
  EXPECT_EQ(PythonModuleName("__init__.py"), "");
}

TEST(PythonFrontendTest, DefinitionsGetQualifiedNamesAndRangesWithDecorators) {
  FileModel model = Analyze(R"py(
import functools


@functools.lru_cache()
def top(a, b=default_b()):
    def inner():
        return helper(a)
    return inner


class Base(object):
    pass


class Pass(Base, mixins.Mixin, metaclass=Meta):
    @staticmethod
    @register("x")
    async def run(self, x):
        class Local:
            def m(self):
                pass
        return Local

    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, value):
        self._name = value
)py");
  ASSERT_TRUE(model.problems.empty());
  EXPECT_EQ(model.file, "pkg/mod.py");
  EXPECT_EQ(model.module, "pkg.mod");
  EXPECT_EQ(model.language, Language::kPython);
  EXPECT_EQ(DescribeAll(model.functions),
            (Strings{
                "pkg.mod.top (pkg.mod.top) name=top scope=pkg.mod class= 4:1-8:17 "
                "[functools.lru_cache()]",
                "pkg.mod.top.<locals>.inner (pkg.mod.top.<locals>.inner) name=inner scope=pkg.mod "
                "class= 6:5-7:25 []",
                "pkg.mod.Pass.run (pkg.mod.Pass.run) name=run scope=pkg.mod.Pass "
                "class=pkg.mod.Pass 16:5-22:21 [staticmethod|register(\"x\")]",
                "pkg.mod.Pass.run.<locals>.Local.m (pkg.mod.Pass.run.<locals>.Local.m) name=m "
                "scope=pkg.mod.Pass.run.<locals>.Local class=pkg.mod.Pass.run.<locals>.Local "
                "20:13-21:21 []",
                "pkg.mod.Pass.name (pkg.mod.Pass.name) name=name scope=pkg.mod.Pass "
                "class=pkg.mod.Pass 24:5-26:26 [property]",
                "pkg.mod.Pass.name#2 (pkg.mod.Pass.name) name=name scope=pkg.mod.Pass "
                "class=pkg.mod.Pass 28:5-30:27 [name.setter]",
            }));
  EXPECT_EQ(DescribeAll(model.classes),
            (Strings{"pkg.mod.Base (pkg.mod.Base) 11:1-12:9 [object]",
                     "pkg.mod.Pass (pkg.mod.Pass) 15:1-30:27 [Base|mixins.Mixin]",
                     "pkg.mod.Pass.run.<locals>.Local (pkg.mod.Pass.run.<locals>.Local) "
                     "19:9-21:21 []"}));
  for (const FunctionUnit& unit : model.functions) EXPECT_EQ(unit.file, "pkg/mod.py");
  // Decorators, defaults and bases are read in the enclosing scope.
  EXPECT_EQ(DescribeAll(model.references),
            (Strings{"functools.lru_cache@4:2<-", "default_b@5:14<-",
                     "helper@7:16<-pkg.mod.top.<locals>.inner",
                     "a@7:23<-pkg.mod.top.<locals>.inner", "inner@8:12<-pkg.mod.top",
                     "object@11:12<-", "Base@15:12<-", "mixins.Mixin@15:18<-", "Meta@15:42<-",
                     "staticmethod@16:6<-", "register@17:6<-", "Local@22:16<-pkg.mod.Pass.run",
                     "property@24:6<-", "self._name@26:16<-pkg.mod.Pass.name", "name.setter@28:6<-",
                     "value@30:22<-pkg.mod.Pass.name#2"}));
}

TEST(PythonFrontendTest, InitModulesAreTheirPackage) {
  FileModel model = Analyze(R"py(
def f():
    pass
)py",
                            "pkg/sub/__init__.py", PythonModuleName("pkg/sub/__init__.py"));
  EXPECT_EQ(DescribeAll(model.functions),
            Strings{"pkg.sub.f (pkg.sub.f) name=f scope=pkg.sub class= 1:1-2:9 []"});
}

TEST(PythonFrontendTest, ReferencesAreDottedLoadsNotBindings) {
  FileModel model = Analyze(R"py(
def f(self, cb=None):
    x = self._foo
    run(callback=self.on_done, items=[g for g in gs])
    super().f(a[0].g(), h().k())
    obj.attr.method(x)
    self.y, z = compute()
    y: int = 3
)py");
  const std::string from = "<-pkg.mod.f";
  EXPECT_EQ(DescribeAll(model.references),
            (Strings{"self._foo@2:9" + from, "run@3:5" + from, "self.on_done@3:18" + from,
                     "g@3:39" + from, "gs@3:50" + from, "super().f@4:5" + from, "a@4:15" + from,
                     "h@4:25" + from, "obj.attr.method@5:5" + from, "x@5:21" + from,
                     "compute@6:17" + from}));
  for (const Reference& r : model.references) EXPECT_TRUE(r.legacy_branches.empty());
}

TEST(PythonFrontendTest, ClassBodiesAndLambdasBelongToTheEnclosingFunction) {
  FileModel model = Analyze(R"py(
class A:
    handler = make_handler()
    def m(self):
        key = lambda item: order(item)
        return sorted(self.items, key=key)
)py");
  EXPECT_EQ(DescribeAll(model.references),
            (Strings{"make_handler@2:15<-", "order@4:28<-pkg.mod.A.m", "item@4:34<-pkg.mod.A.m",
                     "sorted@5:16<-pkg.mod.A.m", "self.items@5:23<-pkg.mod.A.m",
                     "key@5:39<-pkg.mod.A.m"}));
}

TEST(PythonFrontendTest, ImportsResolveRelativeNamesAgainstTheModule) {
  FileModel model = Analyze(R"py(
from __future__ import annotations
import os
import a.b.c
import a.b as ab, numpy as np
from paddle.base import core, framework as fw
from . import sibling
from .. import up
from ..x.y import z as w
from .m import *
def f():
    from paddle import nn
)py",
                            "pkg/sub/mod.py", "pkg.sub.mod");
  EXPECT_EQ(Imports(model), (Strings{"os=os", "a=a", "ab=a.b", "np=numpy", "core=paddle.base.core",
                                     "fw=paddle.base.framework", "sibling=pkg.sub.sibling",
                                     "up=pkg.up", "w=pkg.x.y.z", "*=pkg.sub.m", "nn=paddle.nn"}));
  EXPECT_TRUE(model.references.empty());
}

TEST(PythonFrontendTest, RelativeImportsInAnInitModuleStartAtThePackage) {
  FileModel model = Analyze(R"py(
from . import a
from ..b import c
from ... import d
)py",
                            "pkg/sub/__init__.py", "pkg.sub");
  // Three dots go above the top package: kept as written.
  EXPECT_EQ(Imports(model), (Strings{"a=pkg.sub.a", "c=pkg.b.c", "d=...d"}));
}

TEST(PythonFrontendTest, RegistrationDecoratorsOfAConfiguredFamily) {
  DeadcodeConfig config = DefaultConfig();
  config.registrations = {{"pass", {"register_pass"}, {"register_pir_pass"}}};
  FileModel model = Analyze(R"py(
@register_pass("fuse_gemm")
class FuseGemm(PassBase):
    pass
@passes.register_pir_pass('fuse_gemm')
def fuse_gemm_pir(program):
    pass
@other("x")
def g():
    pass
)py",
                            "pkg/mod.py", "pkg.mod", config);
  ASSERT_EQ(model.registrations.size(), 2u);
  const Registration& legacy = model.registrations[0];
  EXPECT_EQ(legacy.registry, "pass");
  EXPECT_EQ(legacy.key, "fuse_gemm");
  EXPECT_TRUE(legacy.legacy);
  EXPECT_EQ(legacy.macro, "register_pass");
  EXPECT_EQ(legacy.target, "pkg.mod.FuseGemm");
  EXPECT_EQ(legacy.file, "pkg/mod.py");
  EXPECT_EQ(Range(legacy.range), "1:1-3:9");
  const Registration& pir = model.registrations[1];
  EXPECT_EQ(pir.key, "fuse_gemm");
  EXPECT_FALSE(pir.legacy);
  EXPECT_EQ(pir.macro, "register_pir_pass");
  EXPECT_EQ(pir.target, "pkg.mod.fuse_gemm_pir");
  EXPECT_EQ(Range(pir.range), "4:1-6:9");
  // A class keeps its decorators as written (the registry rule of python_api.h reads them).
  ASSERT_EQ(model.classes.size(), 1u);
  EXPECT_EQ(model.classes[0].decorators, (Strings{"register_pass(\"fuse_gemm\")"}));
}

TEST(PythonFrontendTest, SyntaxErrorGivesOneProblemAndNoRecords) {
  FileModel model = Analyze(R"py(
def ok():
    if in_pir_mode():
        a()
    else:
        b()
x = )
)py");
  ASSERT_EQ(model.problems.size(), 1u);
  EXPECT_EQ(model.problems[0].file, "pkg/mod.py");
  // The error node starts at the statement that could not be parsed.
  EXPECT_EQ(model.problems[0].line, 6);
  EXPECT_EQ(model.problems[0].column, 1);
  EXPECT_EQ(model.problems[0].message, "syntax error");
  EXPECT_TRUE(model.functions.empty());
  EXPECT_TRUE(model.classes.empty());
  EXPECT_TRUE(model.branches.empty());
  EXPECT_TRUE(model.references.empty());
  EXPECT_TRUE(model.imports.empty());
}

TEST(PythonFrontendTest, MissingTokenIsASyntaxErrorWhereItIsMissing) {
  FileModel model = Analyze("def f():\n    return g(1\n");
  ASSERT_EQ(model.problems.size(), 1u);
  EXPECT_EQ(model.problems[0].message, "syntax error");
  EXPECT_EQ(model.problems[0].line, 2);
  EXPECT_TRUE(model.functions.empty());
}

TEST(PythonFrontendTest, BadBytesDoNotCrash) {
  EXPECT_TRUE(Summary(Analyze("")) == "pkg/mod.py pkg.mod 0\n");
  FileModel latin1 = Analyze("def f():\n    return '\xff\xfe caf\xe9'\n");
  EXPECT_TRUE(latin1.problems.empty());
  EXPECT_EQ(latin1.functions.size(), 1u);
  std::string with_nul("def f():\n    a\0b()\n", 18);
  FileModel nul = Analyze(with_nul);
  EXPECT_EQ(nul.problems.size(), 1u);
  std::string wide = "x = [";
  for (int i = 0; i < 100000; ++i) wide += "f(i), ";
  wide += "]\n";
  FileModel flat = Analyze(wide);
  EXPECT_TRUE(flat.problems.empty());
  EXPECT_EQ(flat.references.size(), 200000u);
}

TEST(PythonFrontendTest, TooDeepNestingIsRefusedNotWalked) {
  std::string deep = "x = a";
  for (int i = 0; i < 5000; ++i) deep += " + a";
  deep += "\n";
  FileModel model = Analyze(deep);
  ASSERT_EQ(model.problems.size(), 1u);
  EXPECT_EQ(model.problems[0].line, 0);
  EXPECT_EQ(model.problems[0].message, "syntax tree nested deeper than 400 levels; not analyzed");
  EXPECT_TRUE(model.references.empty());
}

TEST(PythonFrontendTest, GrammarVersionIsChecked) {
  EXPECT_TRUE(CheckPythonGrammar().ok());
  EXPECT_EQ(ts_language_version(tree_sitter_python()), 14u);
  EXPECT_TRUE(python::CheckLanguageVersion(14).ok());
  EXPECT_TRUE(python::CheckLanguageVersion(13).ok());
  Status newer = python::CheckLanguageVersion(15);
  EXPECT_EQ(newer.code(), StatusCode::kInvalid);
  EXPECT_EQ(newer.message(),
            "the tree-sitter-python grammar has language version 15, but this tree-sitter "
            "library loads versions 13 to 14: build with tree-sitter-python 0.23.x "
            "(scripts/setup fetches 0.23.6)");
  EXPECT_FALSE(python::CheckLanguageVersion(12).ok());
}

// A parsed source and its node table.
class PythonNodeTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<const python::Syntax*> syntax = python::Syntax::Get();
    ASSERT_TRUE(syntax.ok());
    syntax_ = *syntax;
    parser_ = ts_parser_new();
    ASSERT_TRUE(ts_parser_set_language(parser_, syntax_->language()));
  }
  void TearDown() override {
    if (tree_ != nullptr) ts_tree_delete(tree_);
    if (parser_ != nullptr) ts_parser_delete(parser_);
  }
  TSNode Parse(const std::string& source) {
    if (tree_ != nullptr) ts_tree_delete(tree_);
    source_ = source;
    tree_ = ts_parser_parse_string(parser_, nullptr, source_.data(),
                                   static_cast<uint32_t>(source_.size()));
    return ts_tree_root_node(tree_);
  }

  const python::Syntax* syntax_ = nullptr;
  TSParser* parser_ = nullptr;
  TSTree* tree_ = nullptr;
  std::string source_;
  python::NodeTable table_;
};

TEST_F(PythonNodeTableTest, DepthCountsEveryLevelAnonymousNodesIncluded) {
  // module > expression_statement > assignment > x, =, a: three levels below the root.
  TSNode root = Parse("x = a\n");
  EXPECT_TRUE(table_.Build(*syntax_, root, 3));
  EXPECT_FALSE(table_.Build(*syntax_, root, 2));
  EXPECT_EQ(table_.root(), nullptr);
  // module > expression_statement > call > argument_list > ( ): the deepest nodes are anonymous.
  root = Parse("f()\n");
  EXPECT_TRUE(table_.Build(*syntax_, root, 4));
  EXPECT_FALSE(table_.Build(*syntax_, root, 3));
}

TEST_F(PythonNodeTableTest, BuildAgreesWithTheCursorWalkAtEveryLimit) {
  std::string source = "x = ";
  for (int i = 0; i < 60; ++i) source += "f(a, [b, ";
  source += "c";
  for (int i = 0; i < 60; ++i) source += "])";
  source += "\ny = 1\n";
  TSNode root = Parse(source);
  ASSERT_FALSE(ts_node_has_error(root));
  int analyzed = 0;
  for (int limit = 0; limit < 400; ++limit) {
    const bool deeper = python::DeeperThan(root, limit);
    EXPECT_EQ(table_.Build(*syntax_, root, limit), !deeper) << "limit " << limit;
    analyzed += deeper ? 0 : 1;
  }
  EXPECT_GT(analyzed, 0);
  EXPECT_LT(analyzed, 400);
}

TEST_F(PythonNodeTableTest, ChildrenAreTheNamedOnesWithTheirFields) {
  const std::string source = "def f(a, b=1):  # c\n    return a\n";
  ASSERT_TRUE(table_.Build(*syntax_, Parse(source), 400));
  const python::Fields& f = syntax_->fields();
  const python::Node* module = table_.root();
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->kind, python::Kind::kModule);
  ASSERT_EQ(python::NamedChildren(module).size(), 1u);
  const python::Node* def = &python::NamedChildren(module)[0];
  EXPECT_EQ(def->kind, python::Kind::kFunctionDefinition);
  std::vector<std::string> children;
  for (const python::Node& child : python::NamedChildren(def)) {
    children.push_back(fmt::format("{}:{}", python::Text(source, &child),
                                   child.field == f.name         ? "name"
                                   : child.field == f.parameters ? "parameters"
                                   : child.field == f.body       ? "body"
                                   : child.field == 0            ? "-"
                                                                 : "?"));
  }
  EXPECT_EQ(children, (Strings{"f:name", "(a, b=1):parameters", "# c:-", "return a:body"}));
  const python::Node* parameters = python::FieldChild(def, f.parameters);
  ASSERT_NE(parameters, nullptr);
  ASSERT_EQ(python::NamedChildren(parameters).size(), 2u);
  const python::Node& b = python::NamedChildren(parameters)[1];
  EXPECT_EQ(b.kind, python::Kind::kDefaultParameter);
  EXPECT_EQ(python::Text(source, python::FieldChild(&b, f.value)), "1");
  EXPECT_EQ(python::FieldChild(&b, f.body), nullptr);
  EXPECT_EQ(python::FieldChild(nullptr, f.body), nullptr);
  EXPECT_TRUE(python::NamedChildren(nullptr).empty());
  EXPECT_EQ(python::KindOf(nullptr), python::Kind::kOther);
}

class PythonTreesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            fmt::format("irm_python_trees_{}", ::testing::UnitTest::GetInstance()->random_seed());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "x/paddle/base");
    Write("x/paddle/__init__.py", "from .base import executor\n");
    Write("x/paddle/base/__init__.py", "");
    Write("x/paddle/base/executor.py",
          "def run():\n    if in_pir_mode():\n        a()\n    else:\n        b()\n");
    Write("x/paddle/bad.py", "def f(:\n");
    Write("x/paddle/notes.txt", "not python\n");
    std::filesystem::create_symlink("../paddle", root_ / "x/paddle/loop");
    std::filesystem::create_symlink("missing.py", root_ / "x/paddle/broken.py");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& relative, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomically((root_ / relative).string(), text).ok());
  }

  std::filesystem::path root_;
};

TEST_F(PythonTreesTest, WalksSortedWithModulesFromTheDirsParentAndReportsBadEntries) {
  std::vector<std::pair<int, int>> calls;
  StatusOr<std::vector<FileModel>> models =
      AnalyzePythonTrees({(root_ / "x/paddle/").string()}, root_.string(), DefaultConfig(), 1,
                         [&](int done, int total) { calls.emplace_back(done, total); });
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  Strings files;
  for (const FileModel& m : *models) {
    files.push_back(m.file + " " + m.module + " " +
                    (m.problems.empty() ? std::string("ok") : m.problems[0].message));
  }
  EXPECT_EQ(files,
            (Strings{"x/paddle/__init__.py paddle ok", "x/paddle/bad.py paddle.bad syntax error",
                     "x/paddle/base/__init__.py paddle.base ok",
                     "x/paddle/base/executor.py paddle.base.executor ok",
                     "x/paddle/broken.py  cannot read: No such file or directory",
                     "x/paddle/loop  symbolic link loop: this folder contains itself; not "
                     "followed"}));
  EXPECT_EQ(calls, (std::vector<std::pair<int, int>>{{1, 4}, {2, 4}, {3, 4}, {4, 4}}));
  const FileModel& executor = (*models)[3];
  ASSERT_EQ(executor.functions.size(), 1u);
  EXPECT_EQ(executor.functions[0].key, "paddle.base.executor.run");
  EXPECT_EQ(executor.branches.size(), 1u);
  EXPECT_EQ(Imports((*models)[0]), Strings{"executor=paddle.base.executor"});
}

TEST_F(PythonTreesTest, TwoThreadsGiveTheSameModelsAsOne) {
  for (int i = 0; i < 40; ++i) {
    Write(fmt::format("x/paddle/base/m{:02}.py", i),
          fmt::format("import os\nclass C{}:\n    def f(self):\n        if not in_pir_mode():\n"
                      "            return self.g{}()\n        return os.path.join()\n",
                      i, i));
  }
  auto run = [&](int threads) {
    int last = 0;
    StatusOr<std::vector<FileModel>> models =
        AnalyzePythonTrees({(root_ / "x/paddle").string()}, root_.string(), DefaultConfig(),
                           threads, [&](int done, int total) {
                             EXPECT_EQ(done, last + 1);
                             EXPECT_EQ(total, 44);
                             last = done;
                           });
    EXPECT_EQ(last, 44);
    std::string all;
    for (const FileModel& m : *models) all += Summary(m);
    return all;
  };
  std::string one = run(1);
  EXPECT_EQ(run(2), one);
  EXPECT_EQ(run(8), one);
  EXPECT_NE(one.find("not in_pir_mode() early-return if-body 5:13-5:29 6:9-6:30 true "
                     "paddle.base.m07.C7.f"),
            std::string::npos)
      << one;
}

TEST_F(PythonTreesTest, AFileUnderTwoDirsIsAnalyzedOnceAsFoundFirst) {
  StatusOr<std::vector<FileModel>> models =
      AnalyzePythonTrees({(root_ / "x/paddle").string(), (root_ / "x/paddle/base").string()},
                         root_.string(), DefaultConfig(), 2, nullptr);
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  Strings files;
  for (const FileModel& m : *models) files.push_back(m.file + " " + m.module);
  EXPECT_EQ(files, (Strings{"x/paddle/__init__.py paddle", "x/paddle/bad.py paddle.bad",
                            "x/paddle/base/__init__.py paddle.base",
                            "x/paddle/base/executor.py paddle.base.executor", "x/paddle/broken.py ",
                            "x/paddle/loop "}));
}

// `--python python/paddle/distributed` on Paddle's tree: python/paddle is a package, so the
// modules keep their full names and `from paddle.base import executor` still resolves.
TEST_F(PythonTreesTest, AFolderInsideAPackageKeepsTheFullModuleNames) {
  StatusOr<std::vector<FileModel>> models = AnalyzePythonTrees(
      {(root_ / "x/paddle/base").string()}, root_.string(), DefaultConfig(), 1, nullptr);
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  Strings modules;
  for (const FileModel& m : *models) modules.push_back(m.file + " " + m.module);
  EXPECT_EQ(modules, (Strings{"x/paddle/base/__init__.py paddle.base",
                              "x/paddle/base/executor.py paddle.base.executor"}));
  ASSERT_EQ((*models)[1].functions.size(), 1u);
  EXPECT_EQ((*models)[1].functions[0].key, "paddle.base.executor.run");
}

TEST_F(PythonTreesTest, MissingFolderIsAnError) {
  StatusOr<std::vector<FileModel>> models =
      AnalyzePythonTrees({(root_ / "nope").string()}, root_.string(), DefaultConfig(), 1, nullptr);
  ASSERT_FALSE(models.ok());
  EXPECT_EQ(models.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(models.status().message(), "Python source folder not found (or not a folder)");
  EXPECT_EQ(models.status().location().file, (root_ / "nope").string());
}

}  // namespace
}  // namespace irm::deadcode
