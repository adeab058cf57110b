// Walking source trees for the Python front end: every *.py file under the given folders, in a
// deterministic order, analyzed on a pool of threads into a result list sorted by file.
#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "common/file_io.h"
#include "common/input_limit.h"
#include "tools/deadcode/python_frontend.h"

namespace irm::deadcode {

namespace fs = std::filesystem;

namespace {

struct SourceFile {
  std::string path;      // as found (dir + relative part)
  std::string relative;  // to the analysis root
  std::string module;
  uintmax_t size = 0;  // bytes, to hand out the largest files first
};

// Identity of a folder, to see a symbolic link lead back to a folder being walked.
using DirId = std::pair<uintmax_t, uintmax_t>;  // device, inode

bool DirIdentity(const fs::path& dir, DirId* id) {
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0) return false;
  *id = {static_cast<uintmax_t>(info.st_dev), static_cast<uintmax_t>(info.st_ino)};
  return true;
}

std::string RelativeTo(const fs::path& path, const fs::path& base) {
  fs::path relative = path.lexically_relative(base);
  return relative.empty() ? path.generic_string() : relative.generic_string();
}

class Walker {
 public:
  Walker(fs::path root, fs::path module_base, std::vector<SourceFile>* files,
         std::vector<FileModel>* problems)
      : root_(std::move(root)),
        module_base_(std::move(module_base)),
        files_(*files),
        problems_(*problems) {}

  void Walk(const fs::path& dir, std::vector<DirId>* ancestors) {
    DirId id;
    if (!DirIdentity(dir, &id)) {
      Problem(dir, fmt::format("cannot read folder: {}", std::strerror(errno)));
      return;
    }
    if (std::find(ancestors->begin(), ancestors->end(), id) != ancestors->end()) {
      Problem(dir, "symbolic link loop: this folder contains itself; not followed");
      return;
    }
    std::error_code error;
    fs::directory_iterator it(dir, error);
    if (error) {
      Problem(dir, fmt::format("cannot read folder: {}", error.message()));
      return;
    }
    std::vector<fs::path> entries;
    for (; it != fs::directory_iterator(); it.increment(error)) {
      if (error) break;
      entries.push_back(it->path());
    }
    if (error) {
      Problem(dir, fmt::format("cannot read folder: {}", error.message()));
      return;
    }
    std::sort(entries.begin(), entries.end());
    ancestors->push_back(id);
    for (const fs::path& entry : entries) {
      std::error_code status_error;
      fs::file_status status = fs::status(entry, status_error);  // follows links
      if (fs::is_directory(status)) {
        Walk(entry, ancestors);
      } else if (entry.extension() == ".py") {
        if (fs::is_regular_file(status)) {
          std::error_code size_error;
          const uintmax_t size = fs::file_size(entry, size_error);
          files_.push_back({entry.generic_string(), RelativeTo(entry, root_),
                            PythonModuleName(RelativeTo(entry, module_base_)),
                            size_error ? 0 : size});
        } else if (status_error) {
          Problem(entry, fmt::format("cannot read: {}", status_error.message()));
        } else {
          Problem(entry, "not a regular file");
        }
      }
    }
    ancestors->pop_back();
  }

 private:
  void Problem(const fs::path& path, std::string message) {
    FileModel model;
    model.file = RelativeTo(path, root_);
    model.problems.push_back({model.file, 0, 0, std::move(message)});
    problems_.push_back(std::move(model));
  }

  fs::path root_;
  fs::path module_base_;
  std::vector<SourceFile>& files_;
  std::vector<FileModel>& problems_;
};

fs::path Normal(const std::string& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (error) absolute = path;
  absolute = absolute.lexically_normal();
  // "x/paddle/" normalizes to "x/paddle/" (an empty last part): drop it so parent_path is "x".
  if (!absolute.has_filename() && absolute.has_parent_path() && absolute != absolute.root_path()) {
    absolute = absolute.parent_path();
  }
  return absolute;
}

}  // namespace

StatusOr<std::vector<FileModel>> AnalyzePythonTrees(
    const std::vector<std::string>& dirs, const std::string& root, const DeadcodeConfig& config,
    int threads, const std::function<void(int done, int total)>& progress) {
  IRM_RETURN_IF_ERROR(CheckPythonGrammar());
  fs::path root_path = Normal(root);
  std::vector<SourceFile> files;
  std::vector<FileModel> results;
  for (const std::string& dir : dirs) {
    std::error_code error;
    if (!fs::is_directory(dir, error)) {
      return Status(StatusCode::kNotFound, Location::File(dir),
                    "Python source folder not found (or not a folder)");
    }
    fs::path dir_path = Normal(dir);
    // A folder inside a package (python/paddle/distributed: python/paddle has an __init__.py)
    // keeps its full module names (paddle.distributed.…), so that absolute imports of the
    // package resolve: module names start above the outermost package holding the folder.
    fs::path module_base = dir_path.parent_path();
    while (!module_base.empty() && module_base != module_base.root_path() &&
           fs::is_regular_file(module_base / "__init__.py", error)) {
      module_base = module_base.parent_path();
    }
    std::vector<DirId> ancestors;
    Walker(root_path, module_base, &files, &results).Walk(dir_path, &ancestors);
  }

  // A file under two of the dirs (one inside the other) is analyzed once, as found first.
  std::stable_sort(files.begin(), files.end(), [](const SourceFile& a, const SourceFile& b) {
    return a.relative < b.relative;
  });
  files.erase(std::unique(files.begin(), files.end(),
                          [](const SourceFile& a, const SourceFile& b) {
                            return a.relative == b.relative;
                          }),
              files.end());

  // Largest first: a large file taken last would leave the other threads idle while it parses.
  std::vector<size_t> order(files.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&files](size_t a, size_t b) { return files[a].size > files[b].size; });

  std::vector<FileModel> models(files.size());
  std::atomic<size_t> next{0};
  std::mutex progress_mutex;
  int done = 0;
  const int total = static_cast<int>(files.size());
  auto work = [&] {
    while (true) {
      const size_t taken = next.fetch_add(1);
      if (taken >= files.size()) return;
      const size_t i = order[taken];
      const SourceFile& file = files[i];
      StatusOr<std::string> source = ReadFile(file.path);
      if (source.ok()) {
        models[i] = AnalyzePythonSource(*source, file.relative, file.module, config);
      } else {
        models[i].file = file.relative;
        models[i].module = file.module;
        models[i].problems.push_back({file.relative, 0, 0, source.status().message()});
      }
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        progress(++done, total);
      }
    }
  };
  int workers = std::clamp(threads, 1, std::max(1, total));
  std::vector<std::thread> pool;
  for (int t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();

  for (FileModel& model : models) results.push_back(std::move(model));
  std::stable_sort(results.begin(), results.end(),
                   [](const FileModel& a, const FileModel& b) { return a.file < b.file; });
  return results;
}

}  // namespace irm::deadcode
