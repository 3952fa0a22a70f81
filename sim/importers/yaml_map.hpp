#pragma once
// Located reads of a YAML config as OmegaConf and jsonargparse write them (torchtune's recipe
// configs, LitGPT's, llm-foundry's): every key keeps its line and column, booleans are true /
// false in any case, a value that is one OmegaConf interpolation (`${max_seq_len}`,
// `${variables.max_seq_len}`) reads the value it names, and each mapping remembers the keys
// read so `ignore_rest` lists the others.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/importers/located_map.hpp"

namespace trainsim::importers {

class Map : public LocatedMap {
 public:
  Map(YAML::Node node, std::string file, std::string path, YAML::Node root = YAML::Node());
  // The text of `file` as a mapping: syntax errors and keys written twice are located errors;
  // anything but a mapping is an error saying `what` was expected.
  static Map parse(const std::string& text, const std::string& file, const std::string& what);

  // The value of `key`, marked read, an interpolation resolved; undefined when absent or null.
  YAML::Node get(const std::string& key);

  // Typed reads; absent (or null) -> nullopt (an empty list).
  std::optional<std::string> string(const std::string& key);
  std::optional<bool> boolean(const std::string& key);
  std::optional<std::int64_t> integer(const std::string& key, std::int64_t min);  // up to 2^30
  std::optional<double> number(const std::string& key);                            // finite, >= 0
  std::vector<std::string> strings(const std::string& key);
  std::optional<Map> object(const std::string& key);

 private:
  YAML::Node resolve(YAML::Node n, const std::string& key) const;

  YAML::Node root_;
};

}  // namespace trainsim::importers
