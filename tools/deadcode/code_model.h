// The language-neutral code model that ir-deadcode's front ends produce and its analysis reads:
// per source file, the functions and methods defined there, the references between them, the
// branches guarded by a new-IR predicate, and registrations by name. The Python front end
// (tree-sitter) and the C++ front end (Clang LibTooling) fill the same records; what differs by
// language is said at each field.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace irm::deadcode {

enum class Language { kPython, kCpp };

// 1-based lines and columns; the end is inclusive for lines, exclusive for columns (as SARIF's
// region.endColumn). Columns count bytes.
struct SourceRange {
  int start_line = 0;
  int start_column = 0;
  int end_line = 0;
  int end_column = 0;

  bool Contains(int line, int column) const {
    if (line < start_line || line > end_line) return false;
    if (line == start_line && column < start_column) return false;
    if (line == end_line && column >= end_column) return false;
    return true;
  }
  friend bool operator==(const SourceRange&, const SourceRange&) = default;
};

// A function or method definition.
struct FunctionUnit {
  // The unit's key, unique across the whole input. Python: the qualified name
  // ("paddle.distributed.passes.pipeline.PipelinePass._create_job_list"; nested functions as
  // "outer.<locals>.inner", as Python's __qualname__). C++: the USR of the definition (template
  // instantiations map to their pattern). A Python name defined twice in one scope (a property's
  // getter and setter) keeps its qualname; its key gets "#2", "#3"… from the second definition on.
  std::string key;
  std::string qualname;    // Python as `key`; C++ "ns::Class::method"
  std::string name;        // the last component: "_create_job_list"
  std::string scope;       // the enclosing class, else module (Python) / namespace (C++): qualname
  std::string class_name;  // the enclosing class's qualname, "" for a free function
  std::string file;        // as given to the front end (relative to the analysis root)
  SourceRange range;       // the whole definition, decorators / template header included

  // Python: decorator expressions as written, without '@' ("register_pass(\"x\")", "staticmethod").
  std::vector<std::string> decorators;

  // C++ only.
  std::vector<std::string> parameter_types;  // as spelled, fully qualified: "const pir::Program &"
  bool is_virtual = false;                   // declared virtual or overrides a virtual
  bool overrides = false;                    // overrides a base-class method (reached by dispatch)
  bool from_template = false;                // a template or a member of one
  bool from_macro = false;                   // its definition is written by a macro expansion
  bool is_main = false;                      // `main`, an entry point
};

// One reference from code to a function: a call, or a function named as a value (callback,
// function pointer, decorator, registration argument).
struct Reference {
  std::string from;  // key of the innermost enclosing function; "" at module / file top level
  // Python: the callee as written, dotted: "foo", "self.foo", "cls.foo", "mod.foo", "a.b.foo",
  // "super().foo" (resolution happens in the analysis, with the file's imports). C++: the USR of
  // the referenced declaration (resolved by Clang; calls through a virtual method name the
  // method's USR).
  std::string target;
  int line = 0;
  int column = 0;
  // Indices into FileModel::branches of every guarded branch whose *legacy* part contains this
  // reference (outermost first). Non-empty means the reference disappears when the legacy code
  // paths are removed.
  std::vector<int> legacy_branches;
};

// Code that runs only on the legacy path, next to its new-IR counterpart, selected by a guard.
struct GuardedBranch {
  std::string file;
  std::string enclosing;  // key of the function that holds it; "" at top level
  // The condition as written ("in_pir_mode()", "not paddle.framework.in_pir_mode()",
  // "FLAGS_enable_pir_in_executor", "use_pir"), and the vocabulary entry it matched
  // ("in_pir_mode"). For a guard stored in a variable first, guard_text is the variable's
  // condition and guard_name the entry its assignment matched.
  std::string guard_text;
  std::string guard_name;
  int guard_line = 0;
  bool negated = false;  // the condition is true on the legacy path ("if not in_pir_mode():")
  // What the legacy part is: "else-branch" (if pir: … else: <legacy>, elif chains included),
  // "if-body" (if not pir: <legacy>), "tail-after-early-return" (if pir: return … ; <legacy>).
  std::string legacy_kind;
  // How the guard was written: "if-else", "elif", "negated", "early-return", "guard-variable",
  // "ternary" (C++ / Python conditional expression).
  std::string shape;
  SourceRange legacy;               // the legacy part
  std::optional<SourceRange> twin;  // the new-IR part, when there is one as a block
  // The legacy part only raises / throws (an "unsupported in old IR" else): never a finding.
  bool legacy_only_raises = false;
};

// A name registered by a registration macro or decorator, legacy or new-IR
// (REGISTER_PASS(name, Cls) vs REGISTER_IR_PASS(name, Cls); @register_pass("name")).
struct Registration {
  std::string registry;  // the family from the configuration: "pass"
  std::string key;       // the registered name: "fuse_gemm_epilogue"
  bool legacy = false;   // registered through the family's legacy macro / decorator
  std::string macro;     // "REGISTER_PASS"
  std::string file;
  SourceRange range;
  // The registered function or class: its key (a C++ USR, "c:…") when resolved, else its name as
  // written in the macro call.
  std::string target;
};

// A class (Python) or record (C++), for method resolution and "same class" twin matching.
struct ClassUnit {
  std::string key;       // Python qualname; C++ USR
  std::string qualname;  // "pkg.mod.Class" / "ns::Class"
  std::string file;
  SourceRange range;
  std::vector<std::string> bases;  // as written (Python: dotted names; C++: qualified names)
  // Python: decorator expressions as written, without '@' ("register_pass(\"x\")").
  std::vector<std::string> decorators;
};

// A problem with one input file that did not stop the analysis of the others.
struct FileProblem {
  std::string file;
  int line = 0;  // 0 when the problem concerns the file as a whole
  int column = 0;
  std::string message;
};

// Everything a front end learnt about one source file (Python) or translation unit (C++; a TU
// also reports units defined in project headers it includes, each with its own `file`).
struct FileModel {
  Language language = Language::kPython;
  std::string file;
  std::string module;  // Python: the module's dotted name ("paddle.base.executor"); C++: ""
  std::vector<FunctionUnit> functions;
  std::vector<ClassUnit> classes;
  std::vector<GuardedBranch> branches;
  std::vector<Reference> references;
  std::vector<Registration> registrations;
  // Python: local name → what it names, from `import a.b as c` ("c" → "a.b") and
  // `from a.b import f as g` ("g" → "a.b.f"); relative imports resolved against `module`.
  std::vector<std::pair<std::string, std::string>> imports;
  std::vector<FileProblem> problems;
  double seconds = 0;  // front-end time for this file / TU
};

}  // namespace irm::deadcode
