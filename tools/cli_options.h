// The option helpers the subcommands of ir-migrate share when they register themselves with
// CLI11 (command_*.cc): program formats, the new-IR read and print flags, options naming one of a
// fixed set of values, and integer bounds that say what is wanted.
#pragma once

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "oldir/optimizer.h"
#include "tools/ir_format.h"

namespace irm::tools {

// Adds --from/--to style format options: binary|text (legacy), pir|json (new IR).
CLI::Option* AddFormatOption(CLI::App* app, const std::string& name,
                             std::optional<IrFormat>* target, const std::string& help);

void AddAllowUnregistered(CLI::App* app, bool* target);

// How new-IR programs are read and printed.
void AddNewIrOptions(CLI::App* app, NewIrOptions* o);

// Adds an option whose value is one of `names` and is turned into T by `parse`.
template <typename T, typename Parse>
void AddNamedOption(CLI::App* app, const std::string& name, T* target,
                    std::vector<std::string> names, Parse parse, const std::string& help) {
  app->add_option_function<std::string>(
         name, [target, parse](const std::string& value) { *target = *parse(value); }, help)
      ->check(CLI::IsMember(names))
      ->type_name(fmt::format("{}", fmt::join(names, "|")));
}

// The optimizer of a model-zoo program: --optimizer, --lr, --clip-norm (build, engine).
void AddOptimizerOptions(CLI::App* app, oldir::OptimizerOptions* o);

// Integer options with a lower bound: CLI11's PositiveNumber and NonNegativeNumber would say
// "Value 0 not in range 2.225074e-308 to 1.797693e+308"; this one says what is wanted. Shown in
// --help as INT:POSITIVE (min 1) or INT:NONNEGATIVE (min 0).
CLI::Validator AtLeast(int min);

}  // namespace irm::tools
