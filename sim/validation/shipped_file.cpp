// Files that ship with trainsim (the vTrain base scenario), found from the executable rather
// than the working folder, so `trainsim compare` works from any folder.
#include <filesystem>
#include <system_error>

#include "sim/validation/compare.hpp"

namespace trainsim::validation {

namespace fs = std::filesystem;

std::vector<std::string> shipped_roots() {
  std::vector<std::string> roots;
  std::error_code ec;
  // A build folder sits inside the source tree (build/tools/trainsim): try its ancestors.
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (fs::path p = exe.parent_path(); !p.empty(); p = p.parent_path()) {
      roots.push_back(p.string());
      if (p == p.root_path() || roots.size() >= 4) break;
    }
#ifdef TRAINSIM_SOURCE_DIR
  roots.push_back(TRAINSIM_SOURCE_DIR);  // where it was built from, if the binary was moved
#endif
  return roots;
}

std::string find_shipped_file(const std::string& relative, const std::vector<std::string>& roots,
                              const std::string& hint) {
  std::string tried;
  for (const auto& root : roots) {
    std::error_code ec;
    const fs::path candidate = fs::path(root) / relative;
    if (fs::is_regular_file(candidate, ec)) return candidate.lexically_normal().string();
    tried += (tried.empty() ? "" : ", ") + root;
  }
  throw core::ConfigError({relative, 0, 0}, "",
                          "not found beside trainsim (looked under: " +
                              (tried.empty() ? std::string("nothing to look under") : tried) +
                              "); " + hint);
}

}  // namespace trainsim::validation
