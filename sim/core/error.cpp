#include "sim/core/error.hpp"

#include <sstream>
#include <string_view>

namespace trainsim::core {

namespace {
std::string format(const SourceLocation& w, const std::string& key, const std::string& detail) {
  std::ostringstream out;
  out << (w.file.empty() ? std::string_view("<input>") : std::string_view(w.file));
  if (w.line > 0) out << ':' << w.line << ':' << w.column;
  out << ": ";
  if (!key.empty()) out << key << ": ";
  out << detail;
  return out.str();
}
}  // namespace

ConfigError::ConfigError(SourceLocation where, std::string key_path, std::string detail)
    : std::runtime_error(format(where, key_path, detail)),
      where_(std::move(where)),
      key_path_(std::move(key_path)),
      detail_(std::move(detail)) {}

}  // namespace trainsim::core
