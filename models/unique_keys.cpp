#include "models/unique_keys.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"

namespace trainsim::models {

namespace {

// The way down to a node; the key path is spelled only when an error needs it.
struct Step {
  const Step* up = nullptr;
  const std::string* key = nullptr;  // a mapping's key, else
  std::size_t index = 0;             // a sequence's index
};

std::string spell(const Step* s, const std::string& root_path) {
  if (!s) return root_path;
  std::string up = spell(s->up, root_path);
  if (s->key) return up.empty() ? *s->key : up + "." + *s->key;
  return up + "[" + std::to_string(s->index) + "]";
}

class Walk {
 public:
  Walk(const std::string& file, const std::string& root_path) : file_(file), root_(root_path) {}

  void node(const YAML::Node& n, const Step* at) {
    if (!n.IsMap() && !n.IsSequence()) return;
    // An alias is the anchored node itself (same mark): check it once. Parsed containers have
    // distinct start positions except a block mapping and its first key, which is never walked.
    const YAML::Mark m = n.Mark();
    if (!m.is_null() && !seen_.insert(m.pos).second) return;
    if (n.IsSequence()) {
      std::size_t i = 0;
      for (const YAML::Node& item : n) {
        const Step s{at, nullptr, i++};
        node(item, &s);
      }
      return;
    }
    map(n, at);
  }

 private:
  struct Key {
    const std::string* text;
    YAML::Mark mark;
    std::size_t order;
  };

  void map(const YAML::Node& n, const Step* at) {
    std::vector<Key> keys;
    keys.reserve(n.size());
    for (auto it = n.begin(); it != n.end(); ++it)
      if (it->first.IsScalar())
        keys.push_back({&it->first.Scalar(), it->first.Mark(), keys.size()});
    check(keys, at);
    for (auto it = n.begin(); it != n.end(); ++it) {
      const Step s{at, it->first.IsScalar() ? &it->first.Scalar() : &kComplexKey, 0};
      node(it->second, &s);
    }
  }

  // Small mappings (almost all) compare pairwise; large ones sort. Either way the error names
  // the repeat that comes first in the file and the key's first occurrence.
  void check(std::vector<Key>& keys, const Step* at) const {
    const Key* first = nullptr;
    const Key* again = nullptr;
    if (keys.size() <= 16) {
      for (std::size_t j = 1; j < keys.size() && !again; ++j)
        for (std::size_t i = 0; i < j; ++i)
          if (*keys[i].text == *keys[j].text) {
            first = &keys[i], again = &keys[j];
            break;
          }
    } else {
      std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
        return *a.text != *b.text ? *a.text < *b.text : a.order < b.order;
      });
      for (std::size_t j = 1; j < keys.size(); ++j) {
        if (*keys[j].text != *keys[j - 1].text) continue;
        if (again && again->order < keys[j].order) continue;
        std::size_t i = j - 1;
        while (i > 0 && *keys[i - 1].text == *keys[j].text) --i;
        first = &keys[i], again = &keys[j];
      }
    }
    if (!again) return;
    throw core::ConfigError({file_, again->mark.line + 1, again->mark.column + 1}, spell(at, root_),
                            "duplicate key '" + *again->text + "' (first at line " +
                                std::to_string(first->mark.line + 1) + ", column " +
                                std::to_string(first->mark.column + 1) + ")");
  }

  static inline const std::string kComplexKey = "?";
  const std::string& file_;
  const std::string& root_;
  std::unordered_set<int> seen_;
};

}  // namespace

void check_unique_keys(const YAML::Node& root, const std::string& file,
                       const std::string& root_path) {
  Walk(file, root_path).node(root, nullptr);
}

}  // namespace trainsim::models
