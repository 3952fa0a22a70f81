#include "sim/report/command_line.hpp"

#include <algorithm>
#include <cctype>

namespace trainsim::report {

std::string shell_quote(std::string_view word) {
  const auto plain = [](unsigned char c) {
    return std::isalnum(c) || std::string_view("-_.,/:=+@%").find(static_cast<char>(c)) != std::string_view::npos;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), plain)) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string run_command(std::string_view file, const std::vector<std::string>& sets) {
  std::string out = "trainsim run " + shell_quote(file);
  for (const auto& s : sets) out += " --set " + shell_quote(s);
  return out;
}

}  // namespace trainsim::report
