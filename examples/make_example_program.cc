// irm-make-example: writes the example MLP training program (examples/mlp_program.h) to a file, in
// the format the file's extension names (.pdmodel binary, .prototxt text).
#include <cstdlib>
#include <iostream>
#include <string>

#include "examples/mlp_program.h"
#include "oldir/program_io.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: irm-make-example OUTPUT(.pdmodel|.prototxt) [LAYERS]\n";
    return 2;
  }
  const std::string output = argv[1];
  irm::examples::MlpOptions options;
  if (argc == 3) options.layers = std::atoi(argv[2]);
  if (options.layers < 1) {
    std::cerr << "irm-make-example: LAYERS must be a positive number\n";
    return 2;
  }
  auto format =
      irm::oldir::ProgramFormatFromPath(output).value_or(irm::oldir::ProgramFormat::kBinary);
  irm::Status status =
      irm::oldir::SaveProgram(irm::examples::MakeMlpTrainingProgram(options), output, format);
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 2;
  }
  return 0;
}
