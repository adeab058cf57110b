// Writes seed inputs for program_fuzzer into a folder: the example program, small, in binary and
// text form, with and without call stacks.
#include <iostream>
#include <string>

#include "examples/mlp_program.h"
#include "oldir/program_io.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: program_seed_writer DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  using irm::oldir::ProgramFormat;
  for (bool callstack : {false, true}) {
    irm::examples::MlpOptions options;
    options.with_callstack = callstack;
    irm::oldir::Program program = irm::examples::MakeMlpTrainingProgram(options);
    const std::string stem = dir + "/mlp" + (callstack ? "_callstack" : "");
    for (auto [format, ext] : {std::pair{ProgramFormat::kBinary, ".pdmodel"},
                               std::pair{ProgramFormat::kText, ".prototxt"}}) {
      irm::Status status = irm::oldir::SaveProgram(program, stem + ext, format);
      if (!status.ok()) {
        std::cerr << status.ToString() << "\n";
        return 1;
      }
    }
  }
  return 0;
}
