#pragma once
// YAML syntax errors as located messages, for every reader of YAML text (scenarios, --set
// values, model files, sweeps).
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"

namespace trainsim::models {

// A parse failure of `text` (the file's contents; empty when not at hand) read from `file`.
// yaml-cpp stops nesting at 500 levels instead of overflowing the stack, reporting "bad file"
// at the end of what it scanned; that becomes "nesting too deep", at the bracket that went
// past the limit when the nesting is written with brackets. Other failures keep yaml-cpp's
// message after `prefix` ("malformed YAML: ").
core::ConfigError yaml_syntax_error(const YAML::Exception& e, const std::string& file,
                                    std::string_view text, const std::string& key_path,
                                    const std::string& prefix);

}  // namespace trainsim::models
