// The Python front end of ir-deadcode on a generated source tree: 2,000 modules in 20 packages,
// 150-300 lines each (imports, classes with methods, free functions, the guarded-branch shapes the
// front end recognizes — if/else, negated, elif, early return, guard variables, conditional
// expressions, raise-only else — and unguarded code), written once to a temporary folder.
// BM_AnalyzePythonTrees/<threads> runs AnalyzePythonTrees over the whole tree (reading the files
// included) at 1 and 2 threads and reports files/s and MB/s; BM_TreeToFindings/<threads> adds the
// analysis (reference resolution, removal, blocking, findings: what `ir-deadcode --python` does
// before it writes the report). After the runs it prints the rates and the target (>= 1,000
// files/s at the best thread count, front end and end to end), and exits 1 on a miss when run with
// --irm_check_targets. The tree is deleted at exit unless IRM_KEEP_BENCH_TREE is set.
// --irm_python=DIR measures a real tree instead (Paddle's python/paddle/distributed: the module
// names start above the outermost package holding DIR, as with ir-deadcode --python DIR).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "common/file_io.h"
#include "tools/deadcode/analysis.h"
#include "tools/deadcode/python_frontend.h"

namespace {

namespace fs = std::filesystem;

constexpr int kPackages = 20;
constexpr int kModulesPerPackage = 100;

// A small deterministic generator (the tree is the same on every run).
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
  int Below(int n) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state_ >> 33) % static_cast<uint64_t>(n));
  }

 private:
  uint64_t state_;
};

// One method body in one of the shapes, `n` making names unique.
std::string Method(int shape, int n) {
  switch (shape) {
    case 0:  // if/else
      return fmt::format(
          "    def run_{0}(self, feed, fetch_list=None):\n"
          "        program = self._prepare(feed)\n"
          "        if in_pir_mode():\n"
          "            out = self._run_pir_{0}(program, feed)\n"
          "        else:\n"
          "            out = self._run_legacy_{0}(program, feed)\n"
          "            out = core.convert(out, fetch_list)\n"
          "        return self._postprocess(out, fetch_list)\n\n",
          n);
    case 1:  // negated with else
      return fmt::format(
          "    def build_{0}(self, block):\n"
          "        if not paddle.framework.in_pir_mode():\n"
          "            op = block.append_op(type='scale_{0}', inputs={{'X': [self._x]}})\n"
          "            self._ops.append(op)\n"
          "        else:\n"
          "            op = paddle._C_ops.scale(self._x, 2.0, 0.0, True)\n"
          "        return op\n\n",
          n);
    case 2:  // elif chain
      return fmt::format(
          "    def lower_{0}(self, x, mode='auto'):\n"
          "        if mode == 'dygraph':\n"
          "            return helpers.eager_{0}(x)\n"
          "        elif use_pir_api():\n"
          "            return self._lower_pir_{0}(x)\n"
          "        else:\n"
          "            return self._lower_legacy_{0}(x)\n\n",
          n);
    case 3:  // early return
      return fmt::format(
          "    def create_{0}(self, name, shape, dtype='float32'):\n"
          "        if in_dynamic_or_pir_mode():\n"
          "            value = paddle.full(shape, 0.0, dtype)\n"
          "            return value\n"
          "        helper = LayerHelper('create_{0}', **locals())\n"
          "        var = helper.create_variable_for_type_inference(dtype)\n"
          "        helper.append_op(type='fill_constant', outputs={{'Out': [var]}})\n"
          "        return var\n\n",
          n);
    case 4:  // negated early return
      return fmt::format(
          "    def apply_{0}(self, main_program, startup_program):\n"
          "        if not get_flags('FLAGS_enable_pir_api')['FLAGS_enable_pir_api']:\n"
          "            self._apply_single_impl(main_program, startup_program, self._ctx)\n"
          "            return\n"
          "        self._apply_pir_single_impl(main_program, startup_program, self._ctx)\n\n",
          n);
    case 5:  // guard variable
      return fmt::format(
          "    def execute_{0}(self, scope):\n"
          "        use_pir = fw.in_pir_mode()\n"
          "        scope = scope or core.Scope()\n"
          "        if use_pir:\n"
          "            plan = self._build_pir_plan_{0}(scope)\n"
          "        else:\n"
          "            plan = self._build_legacy_plan_{0}(scope)\n"
          "        return plan.run(scope)\n\n",
          n);
    case 6:  // conditional expression, attribute guard
      return fmt::format(
          "    def pick_{0}(self, values):\n"
          "        fn = self._pir_pick_{0} if self._in_pir_mode else self._legacy_pick_{0}\n"
          "        return [fn(v) for v in values if v is not None]\n\n",
          n);
    case 7:  // raise-only else
      return fmt::format(
          "    def export_{0}(self, path):\n"
          "        if FLAGS_enable_pir_in_executor:\n"
          "            paddle.jit.save(self._layer, path)\n"
          "        else:\n"
          "            raise NotImplementedError('export_{0} needs the new IR')\n\n",
          n);
    default:  // no guard at all, and an if without else (a negative control)
      return fmt::format(
          "    def update_{0}(self, grads, lr=0.01):\n"
          "        for name, grad in grads.items():\n"
          "            param = self._params[name]\n"
          "            param.set_value(param - lr * grad)\n"
          "        if in_pir_mode():\n"
          "            self._sync_{0}()\n"
          "        return len(grads)\n\n",
          n);
  }
}

std::string Module(int package, int module) {
  Random random(static_cast<uint64_t>(package * 1000 + module));
  const int target_lines = 150 + random.Below(151);
  std::string text = fmt::format(
      "\"\"\"Executors and passes of pkg{0}.mod{1} (generated benchmark input).\"\"\"\n"
      "import os\n"
      "import paddle\n"
      "from paddle.base import core, framework as fw\n"
      "from paddle.base.framework import in_pir_mode, use_pir_api, in_dynamic_or_pir_mode\n"
      "from paddle.base.layer_helper import LayerHelper\n"
      "from ..common import helpers\n"
      "from . import mod{2}\n\n"
      "FLAGS_enable_pir_in_executor = os.environ.get('FLAGS_enable_pir_in_executor') == '1'\n\n\n"
      "def get_flags(names):\n"
      "    return paddle.get_flags(names)\n\n\n",
      package, module, (module + 1) % kModulesPerPackage);
  int n = 0;
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  while (lines < target_lines) {
    std::string block = fmt::format(
        "class Worker{0}(mod{1}.WorkerBase):\n"
        "    \"\"\"Runs one part of the program.\"\"\"\n\n"
        "    def __init__(self, program, place=None):\n"
        "        super().__init__(program)\n"
        "        self._program = program\n"
        "        self._place = place or paddle.CPUPlace()\n"
        "        self._in_pir_mode = fw.in_pir_mode()\n\n",
        n, (module + 1) % kModulesPerPackage);
    const int methods = 3 + random.Below(5);
    for (int m = 0; m < methods; ++m) block += Method(random.Below(9), n * 10 + m);
    block +=
        fmt::format("\n\ndef make_worker_{0}(program):\n    return Worker{0}(program)\n\n\n", n);
    lines += static_cast<int>(std::count(block.begin(), block.end(), '\n'));
    text += block;
    ++n;
  }
  return text;
}

struct Tree {
  fs::path root;
  std::string dir;  // what --python names
  int files = 0;
  uint64_t bytes = 0;
  bool generated = true;
};

std::string& RealTreeFlag() {
  static std::string dir;  // --irm_python
  return dir;
}

const Tree& SharedTree() {
  static const Tree* tree = [] {
    auto* t = new Tree;
    if (!RealTreeFlag().empty()) {
      t->generated = false;
      t->dir = RealTreeFlag();
      t->root = ".";
      for (const auto& entry : fs::recursive_directory_iterator(t->dir)) {
        if (entry.is_regular_file() && entry.path().extension() == ".py") {
          ++t->files;
          t->bytes += entry.file_size();
        }
      }
      return t;
    }
    t->root = fs::temp_directory_path() / fmt::format("irm_deadcode_python_bench_{}", getpid());
    fs::remove_all(t->root);
    for (int p = 0; p < kPackages; ++p) {
      fs::path dir = t->root / "paddle" / fmt::format("pkg{}", p);
      fs::create_directories(dir);
      std::string init = fmt::format("from .mod0 import Worker0\n");
      if (!irm::WriteFileAtomically((dir / "__init__.py").string(), init).ok()) std::abort();
      t->bytes += init.size();
      ++t->files;
      for (int m = 0; m < kModulesPerPackage; ++m) {
        std::string text = Module(p, m);
        if (!irm::WriteFileAtomically((dir / fmt::format("mod{}.py", m)).string(), text).ok()) {
          std::abort();  // a broken benchmark setup, not user input
        }
        t->bytes += text.size();
        ++t->files;
      }
    }
    t->dir = (t->root / "paddle").string();
    return t;
  }();
  return *tree;
}

void BM_AnalyzePythonTrees(benchmark::State& state) {
  const Tree& tree = SharedTree();
  const irm::deadcode::DeadcodeConfig config = irm::deadcode::DefaultConfig();
  const int threads = static_cast<int>(state.range(0));
  size_t branches = 0;
  for (auto _ : state) {
    auto models =
        irm::deadcode::AnalyzePythonTrees({tree.dir}, tree.root.string(), config, threads, nullptr);
    if (!models.ok() || models->size() != static_cast<size_t>(tree.files)) {
      state.SkipWithError("analysis failed");
      return;
    }
    branches = 0;
    for (const auto& model : *models) {
      if (!model.problems.empty() && tree.generated) {
        state.SkipWithError("a generated file has a problem");
        return;
      }
      branches += model.branches.size();
    }
    benchmark::DoNotOptimize(branches);
  }
  state.SetItemsProcessed(state.iterations() * tree.files);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(tree.bytes));
  state.counters["branches"] = static_cast<double>(branches);
}
BENCHMARK(BM_AnalyzePythonTrees)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The front end and the analysis, as `ir-deadcode --python DIR -j <threads>` runs them.
void BM_TreeToFindings(benchmark::State& state) {
  const Tree& tree = SharedTree();
  const irm::deadcode::DeadcodeConfig config = irm::deadcode::DefaultConfig();
  const int threads = static_cast<int>(state.range(0));
  const irm::deadcode::EvidenceLookup no_evidence = [](const std::string&, const std::string&) {
    return std::vector<irm::deadcode::Evidence>();
  };
  size_t findings = 0;
  for (auto _ : state) {
    auto models =
        irm::deadcode::AnalyzePythonTrees({tree.dir}, tree.root.string(), config, threads, nullptr);
    if (!models.ok()) {
      state.SkipWithError("analysis failed");
      return;
    }
    findings = irm::deadcode::Analyze(*models, config, no_evidence, threads).findings.size();
    benchmark::DoNotOptimize(findings);
  }
  state.SetItemsProcessed(state.iterations() * tree.files);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(tree.bytes));
  state.counters["findings"] = static_cast<double>(findings);
}
BENCHMARK(BM_TreeToFindings)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    constexpr const char* kFlag = "--irm_python=";
    if (std::strncmp(argv[i], kFlag, std::strlen(kFlag)) == 0) {
      RealTreeFlag() = argv[i] + std::strlen(kFlag);
    } else {
      rest.push_back(argv[i]);
    }
  }
  irm::bench::BenchmarkRun run =
      irm::bench::RunBenchmarks(static_cast<int>(rest.size()), rest.data());
  const Tree& tree = SharedTree();
  fmt::print("tree: {} ({} files, {:.1f} MB)\n", tree.dir, tree.files,
             static_cast<double>(tree.bytes) / 1e6);
  bool ok = true;
  for (const char* benchmark : {"BM_AnalyzePythonTrees", "BM_TreeToFindings"}) {
    double best = 0;
    bool ran = false;
    for (const char* threads : {"/1", "/2"}) {
      const std::string bm = std::string(benchmark) + threads;
      if (!run.Has(bm)) continue;
      ran = true;
      const double files_per_second = tree.files / run.seconds[bm];
      best = std::max(best, files_per_second);
      fmt::print("  {}: {:.0f} files/s, {:.1f} MB/s\n", bm, files_per_second,
                 static_cast<double>(tree.bytes) / 1e6 / run.seconds[bm]);
    }
    if (!ran) continue;
    ok = ok && best >= 1000;
    fmt::print("  {} best: {:.0f} files/s (target >= 1000) {}\n", benchmark, best,
               best >= 1000 ? "PASS" : "MISS");
  }
  benchmark::Shutdown();
  std::error_code error;
  if (tree.generated && std::getenv("IRM_KEEP_BENCH_TREE") == nullptr) {
    fs::remove_all(tree.root, error);
  }
  return run.check_targets && !ok ? 1 : 0;
}
