#pragma once
// Command lines a user can paste into a POSIX shell (bash, zsh, sh) to reproduce a result.
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::report {

// `word` as one shell word: unchanged when it holds only characters no shell treats specially
// (letters, digits and -_.,/:=+@%), else in single quotes with each ' written as '\''.
std::string shell_quote(std::string_view word);

// "trainsim run FILE --set k=v --set k2=v2", one --set per override, each word quoted as needed.
std::string run_command(std::string_view file, const std::vector<std::string>& sets);

}  // namespace trainsim::report
