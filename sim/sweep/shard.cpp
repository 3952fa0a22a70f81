#include "sim/sweep/shard.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/version.hpp"

namespace trainsim::sweep {

namespace {

constexpr const char* kCsvTag = "# trainsim-shard ";
constexpr const char* kJsonTag = "{\"shard\":{";

std::uint64_t fnv1a(std::uint64_t h, const std::string& s) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull;  // a separator, so ("ab", "c") and ("a", "bc") differ
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text after `"key":` in a JSON tag line: a number or a quoted string's contents.
std::optional<std::string> json_value(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  const std::size_t at = line.find(k);
  if (at == std::string::npos) return std::nullopt;
  std::size_t from = at + k.size();
  if (from < line.size() && line[from] == '"') {
    const std::size_t end = line.find('"', ++from);
    if (end == std::string::npos) return std::nullopt;
    return line.substr(from, end - from);
  }
  const std::size_t end = line.find_first_of(",}", from);
  if (end == std::string::npos) return std::nullopt;
  return line.substr(from, end - from);
}

std::optional<std::size_t> count(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return static_cast<std::size_t>(std::stoull(s));
}

std::string part(const ShardTag& t) {
  return std::to_string(t.k) + "/" + std::to_string(t.n);
}

// "96-127, 160" for sorted indices: runs of consecutive ones as ranges, the first eight runs.
std::string ranges(const std::vector<std::size_t>& v) {
  std::string out;
  std::size_t runs = 0;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (++runs > 8) return out + " and " + std::to_string(v.size() - i) + " more";
    if (!out.empty()) out += ", ";
    out += std::to_string(v[i]) + (j > i ? "-" + std::to_string(v[j]) : "");
    i = j + 1;
  }
  return out;
}

}  // namespace

std::size_t ShardTag::expected_points() const {
  std::size_t c = 0;
  for (std::size_t first = (k - 1) * kShardBlock; first < points; first += n * kShardBlock)
    c += std::min(kShardBlock, points - first);
  return c;
}

std::string sweep_fingerprint(const SweepSpec& spec) {
  std::uint64_t h = 14695981039346656037ull;
  h = fnv1a(h, core::kVersion);
  h = fnv1a(h, file_text(spec.file));
  h = fnv1a(h, spec.base.text);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string shard_line(const ShardTag& t, bool jsonl) {
  if (jsonl)
    return std::string(kJsonTag) + "\"k\":" + std::to_string(t.k) +
           ",\"n\":" + std::to_string(t.n) + ",\"points\":" + std::to_string(t.points) +
           ",\"fingerprint\":\"" + t.fingerprint + "\",\"trainsim\":\"" + t.version + "\"}}\n";
  return std::string(kCsvTag) + part(t) + " points=" + std::to_string(t.points) +
         " fingerprint=" + t.fingerprint + " trainsim=" + t.version + "\n";
}

bool is_shard_line(const std::string& line) {
  return line.rfind(kCsvTag, 0) == 0 || line.rfind(kJsonTag, 0) == 0;
}

std::optional<ShardTag> parse_shard_line(const std::string& line) {
  ShardTag t;
  std::optional<std::size_t> k, n, points;
  if (line.rfind(kJsonTag, 0) == 0) {
    const auto kk = json_value(line, "k"), nn = json_value(line, "n"),
               pp = json_value(line, "points");
    const auto f = json_value(line, "fingerprint"), v = json_value(line, "trainsim");
    if (!kk || !nn || !pp || !f || !v) return std::nullopt;
    k = count(*kk), n = count(*nn), points = count(*pp);
    t.fingerprint = *f;
    t.version = *v;
  } else if (line.rfind(kCsvTag, 0) == 0) {
    std::istringstream in(line.substr(std::string(kCsvTag).size()));
    std::string kn, p, f, v;
    if (!(in >> kn >> p >> f >> v) || p.rfind("points=", 0) != 0 ||
        f.rfind("fingerprint=", 0) != 0 || v.rfind("trainsim=", 0) != 0)
      return std::nullopt;
    const std::size_t slash = kn.find('/');
    if (slash == std::string::npos) return std::nullopt;
    k = count(kn.substr(0, slash)), n = count(kn.substr(slash + 1)), points = count(p.substr(7));
    t.fingerprint = f.substr(12);
    t.version = v.substr(9);
  } else {
    return std::nullopt;
  }
  if (!k || !n || !points || *n < 1 || *k < 1 || *k > *n) return std::nullopt;
  t.k = *k, t.n = *n, t.points = *points;
  return t;
}

void check_shards(const std::vector<ShardInput>& inputs) {
  if (inputs.empty()) return;
  const ShardInput& a = inputs.front();
  std::map<std::size_t, const ShardInput*> by_part;
  for (const ShardInput& in : inputs) {
    const core::SourceLocation tag_at{in.file, 1, 1};
    if (in.tag.version != a.tag.version)
      throw core::ConfigError(tag_at, "",
                              "written by trainsim " + in.tag.version + ", " + a.file +
                                  " by trainsim " + a.tag.version +
                                  "; the shards of one sweep come from one trainsim");
    if (in.tag.fingerprint != a.tag.fingerprint)
      throw core::ConfigError(tag_at, "",
                              "shard " + part(in.tag) + " of another sweep: fingerprint " +
                                  in.tag.fingerprint + ", " + a.file + "'s is " +
                                  a.tag.fingerprint +
                                  " (the sweep file or its base scenario differ)");
    if (in.tag.n != a.tag.n || in.tag.points != a.tag.points)
      throw core::ConfigError(tag_at, "",
                              "shard " + part(in.tag) + " of " + std::to_string(in.tag.points) +
                                  " points, " + a.file + " is shard " + part(a.tag) + " of " +
                                  std::to_string(a.tag.points) + ": not parts of one split");
    const auto [it, fresh] = by_part.emplace(in.tag.k, &in);
    if (!fresh)
      throw core::ConfigError(
          tag_at, "", "shard " + part(in.tag) + " is given twice (also " + it->second->file + ")");
  }
  for (const ShardInput& in : inputs) {
    std::vector<bool> seen(in.tag.points, false);
    std::size_t held = 0;
    for (std::size_t r = 0; r < in.points.size(); ++r) {
      const std::size_t idx = in.points[r];
      const core::SourceLocation at{in.file, in.first_line + static_cast<int>(r), 1};
      if (idx >= in.tag.points || !in_shard(idx, in.tag.k, in.tag.n))
        throw core::ConfigError(at, "",
                                "point " + std::to_string(idx) + " does not belong to shard " +
                                    part(in.tag) + " of " + std::to_string(in.tag.points) +
                                    " points");
      if (seen[idx])
        throw core::ConfigError(at, "", "point " + std::to_string(idx) + " appears twice");
      seen[idx] = true;
      ++held;
    }
    if (held == in.tag.expected_points()) continue;
    std::vector<std::size_t> missing;
    for (std::size_t idx = 0; idx < in.tag.points; ++idx)
      if (in_shard(idx, in.tag.k, in.tag.n) && !seen[idx]) missing.push_back(idx);
    throw core::ConfigError({in.file, 0, 0}, "",
                            "shard " + part(in.tag) + " holds " + std::to_string(held) +
                                " of its " + std::to_string(in.tag.expected_points()) +
                                " points (missing points " + ranges(missing) +
                                "); it was cut short: finish it with `trainsim sweep --shard " +
                                part(in.tag) + " --resume`");
  }
  std::vector<std::size_t> absent;
  for (std::size_t k = 1; k <= a.tag.n; ++k)
    if (!by_part.count(k)) absent.push_back(k);
  if (absent.empty()) return;
  std::string list;
  for (std::size_t k : absent)
    list += (list.empty() ? "" : ", ") + std::to_string(k) + "/" + std::to_string(a.tag.n);
  throw core::ConfigError({a.file, 0, 0}, "",
                          "the sweep of this shard is missing shard" +
                              std::string(absent.size() > 1 ? "s " : " ") + list + " (" +
                              std::to_string(inputs.size()) + " of " + std::to_string(a.tag.n) +
                              " given); merge needs every part");
}

}  // namespace trainsim::sweep
