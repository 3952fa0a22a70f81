#pragma once
// The half of a located config reader that JSON (DeepSpeed) and OmegaConf YAML (torchtune,
// LitGPT, llm-foundry) share: one parsed mapping, the file it came from, its dotted path for
// messages, and the keys read so far, so `ignore_rest` can list every key no mapping took.
#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/importers/draft.hpp"

namespace trainsim::importers {

class LocatedMap {
 public:
  LocatedMap(YAML::Node node, std::string file, std::string path);

  core::SourceLocation at(const YAML::Node& n) const;
  std::string name(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  // Present and not null.
  bool has(const std::string& key) const;
  // Where `key`'s value is (the mapping itself when the key is absent).
  core::SourceLocation where(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  // Lists every key not read as ignored in `d`.
  void ignore_rest(Draft& d) const;

 protected:
  // The value of `key`, marked read, undefined when absent or null; never inserts the key.
  YAML::Node lookup(const std::string& key);
  const YAML::Node& node() const { return node_; }
  const std::string& file() const { return file_; }

 private:
  YAML::Node node_;
  std::string file_, path_;
  std::set<std::string> read_;
};

}  // namespace trainsim::importers
