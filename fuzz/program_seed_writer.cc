// Writes seed inputs for the program, translator and runtime fuzzers into a folder: the example
// program, small, in binary and text form, with and without call stacks; and two tiny model-zoo
// training programs with feed and fetch ops (an MLP with Adam, a 1-layer GPT with AdamW).
#include <iostream>
#include <string>

#include "examples/mlp_program.h"
#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
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
  irm::oldir::models::ModelPrograms mlp, gpt;
  irm::oldir::OptimizerOptions adam, adamw;
  adam.kind = irm::oldir::OptimizerKind::kAdam;
  adamw.kind = irm::oldir::OptimizerKind::kAdamW;
  irm::oldir::models::GptConfig tiny;
  tiny.hidden = 8;
  tiny.heads = 2;
  tiny.vocab = 16;
  tiny.seq = 4;
  for (irm::Status status :
       {irm::oldir::models::BuildMlp({}, &mlp), irm::oldir::models::AddTraining(&mlp, adam),
        irm::oldir::models::BuildGpt(tiny, &gpt), irm::oldir::models::AddTraining(&gpt, adamw),
        irm::oldir::SaveProgram(mlp.main.Build(), dir + "/zoo_mlp.pdmodel", ProgramFormat::kBinary),
        irm::oldir::SaveProgram(gpt.main.Build(), dir + "/zoo_gpt.pdmodel",
                                ProgramFormat::kBinary)}) {
    if (!status.ok()) {
      std::cerr << status.ToString() << "\n";
      return 1;
    }
  }
  return 0;
}
