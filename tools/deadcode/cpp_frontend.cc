// The C++ front end's driver (cpp_frontend.h): reads the compile database, parses the selected TUs
// on a pool of threads (cpp_translation_unit.h) and merges their models: a unit defined in a header
// that several TUs include appears once, references are kept from every TU, and everything is
// sorted so that the result does not depend on the thread count.
#include "tools/deadcode/cpp_frontend.h"

#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "tools/deadcode/cpp_translation_unit.h"

namespace irm::deadcode {
namespace {

std::string RealPath(const std::string& path) {
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real)) return real.str().str();
  llvm::SmallString<256> normal(path);
  llvm::sys::path::remove_dots(normal, /*remove_dot_dot=*/true);
  return normal.str().str();
}

bool Selected(const std::string& relative, const std::vector<std::string>& globs) {
  if (globs.empty()) return true;
  for (const std::string& glob : globs) {
    if (fnmatch(glob.c_str(), relative.c_str(), 0) == 0) return true;
  }
  return false;
}

StatusOr<std::vector<TuCommand>> ReadCompileCommands(const std::string& path,
                                                     const std::vector<std::string>& globs,
                                                     const std::string& root) {
  if (!llvm::sys::fs::exists(path)) {
    return Status(StatusCode::kNotFound, Location::File(path), "compile database not found");
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!text) {
    return Status(StatusCode::kIoError, Location::File(path),
                  "cannot read the compile database: " + text.getError().message());
  }
  std::string error;
  std::unique_ptr<clang::tooling::JSONCompilationDatabase> database =
      clang::tooling::JSONCompilationDatabase::loadFromBuffer(
          (*text)->getBuffer(), error, clang::tooling::JSONCommandLineSyntax::AutoDetect);
  if (database == nullptr) {
    return Status(StatusCode::kParseError, Location::File(path),
                  "not a compile database: " + error);
  }
  // A relative "directory" is read from the database's own folder, as a relative path inside the
  // database would be: read from the tool's working directory, its files would fall outside the
  // root and a missing one would go unreported.
  llvm::SmallString<256> database_dir(path);
  llvm::sys::fs::make_absolute(database_dir);
  llvm::sys::path::remove_filename(database_dir);
  std::map<std::string, TuCommand> by_file;  // the first command of each file, sorted
  for (clang::tooling::CompileCommand& command : database->getAllCompileCommands()) {
    llvm::SmallString<256> directory(command.Directory);
    llvm::sys::fs::make_absolute(database_dir, directory);
    llvm::sys::path::remove_dots(directory, /*remove_dot_dot=*/true);
    llvm::SmallString<256> file(command.Filename);
    llvm::sys::fs::make_absolute(directory, file);
    const std::string absolute = RealPath(file.str().str());
    const std::optional<std::string> relative = RelativeTo(absolute, root);
    if (!relative || !Selected(*relative, globs) || by_file.count(*relative) != 0) continue;
    by_file[*relative] =
        TuCommand{directory.str().str(), absolute, *relative, std::move(command.CommandLine)};
  }
  std::vector<TuCommand> commands;
  for (auto& [file, command] : by_file) commands.push_back(std::move(command));
  return commands;
}

// The models of all TUs for one file, deduplicated.
struct FileMerge {
  FileModel model;
  std::map<std::string, FunctionUnit> functions;
  std::map<std::string, ClassUnit> classes;
  std::map<std::tuple<int, int, int, int, int, std::string, std::string>, GuardedBranch> branches;
  std::map<std::tuple<int, int, std::string, std::string>, Reference> references;
  std::map<std::tuple<int, int, std::string, std::string>, Registration> registrations;
};

void Add(FileMerge& merge, FileModel& model) {
  merge.model.seconds += model.seconds;
  for (FunctionUnit& unit : model.functions) merge.functions.try_emplace(unit.key, std::move(unit));
  for (ClassUnit& unit : model.classes) merge.classes.try_emplace(unit.key, std::move(unit));
  for (GuardedBranch& branch : model.branches) {
    const SourceRange& r = branch.legacy;
    merge.branches.try_emplace(std::tuple(branch.guard_line, r.start_line, r.start_column,
                                          r.end_line, r.end_column, branch.shape, branch.enclosing),
                               std::move(branch));
  }
  for (Reference& reference : model.references) {
    merge.references.try_emplace(
        std::tuple(reference.line, reference.column, reference.target, reference.from),
        std::move(reference));
  }
  for (Registration& registration : model.registrations) {
    merge.registrations.try_emplace(
        std::tuple(registration.range.start_line, registration.range.start_column,
                   registration.macro, registration.key),
        std::move(registration));
  }
}

template <typename Unit>
void SortByPosition(std::vector<Unit>& units) {
  std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) {
    return std::tie(a.range.start_line, a.range.start_column, a.key) <
           std::tie(b.range.start_line, b.range.start_column, b.key);
  });
}

FileModel Finish(FileMerge& merge) {
  FileModel model = std::move(merge.model);
  for (auto& [key, unit] : merge.functions) model.functions.push_back(std::move(unit));
  for (auto& [key, unit] : merge.classes) model.classes.push_back(std::move(unit));
  for (auto& [key, branch] : merge.branches) model.branches.push_back(std::move(branch));
  for (auto& [key, reference] : merge.references) model.references.push_back(std::move(reference));
  for (auto& [key, registration] : merge.registrations) {
    model.registrations.push_back(std::move(registration));
  }
  SortByPosition(model.functions);
  SortByPosition(model.classes);
  // Outermost first: a branch that starts earlier, or as early and ends later, holds the other.
  std::vector<int> order(model.branches.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const SourceRange& x = model.branches[a].legacy;
    const SourceRange& y = model.branches[b].legacy;
    return std::tie(x.start_line, x.start_column, y.end_line, y.end_column, a) <
           std::tie(y.start_line, y.start_column, x.end_line, x.end_column, b);
  });
  for (Reference& reference : model.references) {
    for (int index : order) {
      if (model.branches[index].legacy.Contains(reference.line, reference.column)) {
        reference.legacy_branches.push_back(index);
      }
    }
  }
  return model;
}

}  // namespace

StatusOr<CppAnalysis> AnalyzeCompileCommands(const std::string& compile_commands,
                                             const std::vector<std::string>& source_globs,
                                             const std::string& root, const DeadcodeConfig& config,
                                             int threads, const CppProgress& progress) {
  if (!llvm::sys::fs::is_directory(root)) {
    return Status(StatusCode::kNotFound, Location::File(root),
                  "the analysis root is not a directory");
  }
  const std::string real_root = RealPath(root);
  IRM_ASSIGN_OR_RETURN(std::vector<TuCommand> commands,
                       ReadCompileCommands(compile_commands, source_globs, real_root));

  std::vector<TuResult> results(commands.size());
  std::atomic<size_t> next{0};
  std::mutex mutex;
  int done = 0;
  auto work = [&] {
    for (size_t i = next++; i < commands.size(); i = next++) {
      results[i] = AnalyzeTranslationUnit(commands[i], real_root, config);
      std::lock_guard<std::mutex> lock(mutex);
      ++done;
      if (progress) progress(done, static_cast<int>(commands.size()), commands[i].relative);
    }
  };
  const size_t workers = std::min(commands.size(), static_cast<size_t>(std::max(threads, 1)));
  if (workers <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (size_t i = 0; i < workers; ++i) pool.emplace_back(work);
    for (std::thread& thread : pool) thread.join();
  }

  CppAnalysis analysis;
  std::map<std::string, FileMerge> merged;
  for (size_t i = 0; i < commands.size(); ++i) {
    TuResult& result = results[i];
    analysis.units.push_back({commands[i].relative, result.seconds, !result.problem});
    if (result.problem) analysis.problems.push_back(std::move(*result.problem));
    for (FileModel& model : result.files) {
      FileMerge& merge = merged[model.file];
      if (merge.model.file.empty()) {
        merge.model.file = model.file;
        merge.model.language = Language::kCpp;
      }
      Add(merge, model);
    }
  }
  for (auto& [file, merge] : merged) analysis.files.push_back(Finish(merge));
  std::sort(analysis.problems.begin(), analysis.problems.end(),
            [](const FileProblem& a, const FileProblem& b) {
              return std::tie(a.file, a.line, a.column, a.message) <
                     std::tie(b.file, b.line, b.column, b.message);
            });
  return analysis;
}

}  // namespace irm::deadcode
