#include "sim/sweep/output.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "sim/core/text_file.hpp"
#include "sim/core/output_file.hpp"
#include "sim/report/json_writer.hpp"
#include "sim/report/writers.hpp"
#include "sim/sweep/shard.hpp"

namespace trainsim::sweep {

namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// One record per line: a field with a separator, quote or line break is quoted, and line
// breaks inside (error messages) become spaces.
std::string csv_field(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}


Status status_of(const std::string& s, const std::string& file) {
  if (s == "fits") return Status::fits;
  if (s == "oom") return Status::oom;
  if (s == "invalid") return Status::invalid;
  throw core::ConfigError({file, 0, 0}, "", "unreadable status '" + s + "'; not a trainsim sweep file");
}

// Complete lines (ending in '\n') of a file with their end offsets; a cut last line is left out.
// Files a sweep wrote: any size, and a torn tail (NUL bytes after a crash) is not refused here.
std::vector<std::pair<std::string, std::size_t>> read_lines(const std::string& path) {
  const std::string text =
      core::read_text_file(path, {path, 0, 0}, "", {.max_bytes = -1, .check_text = false});
  std::vector<std::pair<std::string, std::size_t>> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.emplace_back(text.substr(start, nl - start), nl + 1);
  return lines;
}

std::size_t leading_index(const std::string& s, std::size_t from, const std::string& file) {
  char* end = nullptr;
  const char* begin = s.c_str() + from;
  const unsigned long long v = std::strtoull(begin, &end, 10);
  if (end == begin) throw core::ConfigError({file, 0, 0}, "", "a record without a point index; not a trainsim sweep file");
  return static_cast<std::size_t>(v);
}

std::size_t jsonl_index(const std::string& line, const std::string& file) {
  const std::string tag = "{\"point\":";
  if (line.rfind(tag, 0) != 0) throw core::ConfigError({file, 0, 0}, "", "a line that is not a sweep record");
  return leading_index(line, tag.size(), file);
}

double number_after(const std::string& line, const std::string& key, std::size_t from) {
  const std::size_t at = line.find("\"" + key + "\":", from);
  return at == std::string::npos ? 0 : std::strtod(line.c_str() + at + key.size() + 3, nullptr);
}

void check_order(std::size_t got, const std::vector<std::size_t>& expected, std::size_t k,
                 const std::string& path) {
  if (k >= expected.size() || expected[k] != got)
    throw core::ConfigError({path, static_cast<int>(k + 1), 1}, "",
                            "point " + std::to_string(got) + " is not the next point of this sweep" +
                                (k < expected.size() ? " (expected " + std::to_string(expected[k]) + ")" : "") +
                                "; the file was written by another sweep or shard, so --resume cannot continue it");
}

// A resumed shard's first line must be this run's tag: the same sweep, part and version.
void check_tag(const std::string& line, const std::string& tag, const std::string& path) {
  if (line + "\n" == tag) return;
  throw core::ConfigError(
      {path, 1, 1}, "",
      is_shard_line(line)
          ? "the shard tag differs from this run's (" + tag.substr(0, tag.size() - 1) +
                "): another sweep, shard or trainsim version; --resume continues only the same "
                "shard"
          : "no shard tag on the first line: not written by this sweep's --shard run");
}

}  // namespace

std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

Brief brief_of(std::size_t point, const PointResult& r) {
  Brief b;
  b.point = point;
  b.status = r.status;
  if (r.summary) {
    b.step_time_s = r.summary->step_time_s;
    b.peak_bytes = r.summary->peak.value;
    b.tokens = r.summary->sequence_model;
    b.throughput = b.tokens ? r.summary->tokens_per_s : r.summary->samples_per_s;
  }
  return b;
}

std::string csv_header(const SweepSpec& spec) {
  std::string h = "point";
  for (const auto& a : spec.axes) {
    h += ',';
    h += csv_field(a.key);
  }
  return h + ",status,fits,oom_cause,peak_bytes,step_time_s,samples_per_s,tokens_per_s,mfu,"
             "bubble_fraction,reason\n";
}

std::string csv_row(const SweepSpec& spec, const Point& p, const PointResult& r) {
  std::string row = std::to_string(p.index);
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    row += ',';
    row += csv_field(spec.axes[a].values[p.choice[a]]);
  }
  row += ",";
  row += to_string(r.status);
  if (const auto& s = r.summary) {
    row += s->fits ? ",true," : ",false,";
    row += s->ooms.empty() ? "" : csv_field(s->ooms.front().cause);
    for (const std::string& f : {std::to_string(s->peak.value), num(s->step_time_s), num(s->samples_per_s),
                                  s->sequence_model ? num(s->tokens_per_s) : std::string(), num(s->mfu),
                                  num(s->bubble_fraction)}) {
      row += ',';
      row += f;
    }
    row += ',';
  } else {
    row += ",false,,,,,,,,";
  }
  row += csv_field(r.reason);
  row += '\n';
  return row;
}

std::string jsonl_line(const SweepSpec& spec, const Point& p, const PointResult& r) {
  std::ostringstream o;
  o << "{\"point\":" << p.index << ",\"set\":";
  {
    report::JsonWriter j(o, false);
    j.begin_object();
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      const std::string& v = spec.axes[a].values[p.choice[a]];
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (!v.empty() && *end == '\0' && std::to_string(n) == v) j.field(spec.axes[a].key, static_cast<std::int64_t>(n));
      else j.field(spec.axes[a].key, v);
    }
    j.end_object();
  }
  o << ",\"status\":\"" << to_string(r.status) << "\"";
  if (!r.reason.empty()) o << ",\"reason\":\"" << report::json_escape(r.reason) << "\"";
  o << ",\"report\":";
  if (r.summary) report::write_json(o, *r.summary, false);
  else o << "null";
  o << "}\n";
  return o.str();
}

std::vector<Brief> resume_csv(const std::string& path, const std::string& header,
                              const std::vector<std::size_t>& expected, const std::string& tag) {
  if (!std::filesystem::exists(path)) return {};
  const auto lines = read_lines(path);
  const std::size_t h = tag.empty() ? 0 : 1;  // the header's line
  if (lines.size() <= h) {
    std::filesystem::resize_file(path, 0);
    return {};
  }
  if (h == 1) check_tag(lines[0].first, tag, path);
  if (lines[h].first + "\n" != header)
    throw core::ConfigError(
        {path, static_cast<int>(h + 1), 1}, "",
        "the header differs from this sweep's; --resume continues only the same sweep");
  const std::size_t axes = csv_split(header.substr(0, header.size() - 1)).size() - 11;
  std::vector<Brief> out;
  std::size_t keep = lines[h].second;
  for (std::size_t k = h + 1; k < lines.size(); ++k) {
    const auto f = csv_split(lines[k].first);
    if (f.size() != axes + 11) break;  // a damaged record: redo from here
    Brief b;
    b.point = leading_index(f[0], 0, path);
    check_order(b.point, expected, out.size(), path);
    b.status = status_of(f[axes + 1], path);
    b.peak_bytes = std::strtoll(f[axes + 4].c_str(), nullptr, 10);
    b.step_time_s = std::strtod(f[axes + 5].c_str(), nullptr);
    b.tokens = !f[axes + 7].empty();
    b.throughput = std::strtod(f[axes + (b.tokens ? 7 : 6)].c_str(), nullptr);
    out.push_back(b);
    keep = lines[k].second;
  }
  std::filesystem::resize_file(path, keep);
  return out;
}

std::vector<Brief> resume_jsonl(const std::string& path, const std::vector<std::size_t>& expected,
                                const std::string& tag) {
  if (!std::filesystem::exists(path)) return {};
  auto lines = read_lines(path);
  std::vector<Brief> out;
  std::size_t keep = 0;
  if (!tag.empty() && !lines.empty()) {
    check_tag(lines[0].first, tag, path);
    keep = lines[0].second;
    lines.erase(lines.begin());
  }
  for (const auto& [line, end] : lines) {
    if (line.empty() || line.back() != '}') break;
    Brief b;
    b.point = jsonl_index(line, path);
    check_order(b.point, expected, out.size(), path);
    const std::size_t st = line.find(",\"status\":\"");
    if (st == std::string::npos) break;
    b.status = status_of(line.substr(st + 11, line.find('"', st + 11) - st - 11), path);
    const std::size_t rep = line.find(",\"report\":");
    b.step_time_s = number_after(line, "step_time_s", rep);
    b.peak_bytes = static_cast<std::int64_t>(number_after(line, "peak_bytes", rep));
    b.throughput = number_after(line, "tokens_per_s", rep);
    b.tokens = line.find("\"tokens_per_s\":", rep) != std::string::npos;
    if (!b.tokens) b.throughput = number_after(line, "samples_per_s", rep);
    out.push_back(b);
    keep = end;
  }
  std::filesystem::resize_file(path, keep);
  return out;
}

void truncate_records(const std::string& path, std::size_t lead, std::size_t n) {
  const auto lines = read_lines(path);
  const std::size_t k = n + lead;
  if (k == 0) std::filesystem::resize_file(path, 0);
  else if (k <= lines.size()) std::filesystem::resize_file(path, lines[k - 1].second);
}

std::size_t merge_files(const std::string& out, const std::vector<std::string>& inputs) {
  if (inputs.empty()) throw core::ConfigError({out, 0, 0}, "", "no input files to merge");
  std::string header;
  bool jsonl = false;
  std::map<std::size_t, std::string> records;
  std::vector<ShardInput> shards;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string& in = inputs[i];
    if (!std::filesystem::exists(in)) throw core::ConfigError({in, 0, 0}, "", "does not exist");
    if (std::filesystem::is_directory(in))
      throw core::ConfigError({in, 0, 0}, "",
                              "is a directory; merge takes the shard files themselves");
    const auto lines = read_lines(in);
    // A last line without its '\n' was cut mid-write: the shard did not finish.
    const std::size_t whole = lines.empty() ? 0 : lines.back().second;
    if (std::filesystem::file_size(in) != whole)
      throw core::ConfigError({in, static_cast<int>(lines.size() + 1), 1}, "",
                              "the last line is cut short: the shard was interrupted or truncated; "
                              "finish it with `trainsim sweep --shard K/N --resume`");
    const std::optional<ShardTag> tag =
        lines.empty() ? std::nullopt : parse_shard_line(lines[0].first);
    if (!tag)
      throw core::ConfigError(
          {in, 1, 1}, "",
          "no shard tag on the first line: not a `trainsim sweep --shard K/N` output "
          "(each shard starts with '# trainsim-shard' or {\"shard\":...})");
    const bool is_jsonl = lines[0].first.rfind("{", 0) == 0;
    if (i > 0 && is_jsonl != jsonl)
      throw core::ConfigError({in, 1, 1}, "", "cannot merge CSV and JSON Lines files together");
    jsonl = is_jsonl;
    std::size_t first = 1;
    if (!jsonl) {
      if (lines.size() < 2) throw core::ConfigError({in, 2, 1}, "", "the CSV header is missing");
      if (!header.empty() && header != lines[1].first)
        throw core::ConfigError(
            {in, 2, 1}, "",
            "the header differs from " + inputs[0] + "'s: shards of different sweeps");
      header = lines[1].first;
      first = 2;
    }
    ShardInput shard{in, *tag, {}, static_cast<int>(first + 1)};
    for (std::size_t k = first; k < lines.size(); ++k) {
      const std::size_t idx = jsonl ? jsonl_index(lines[k].first, in) : leading_index(lines[k].first, 0, in);
      shard.points.push_back(idx);
      records.emplace(idx, lines[k].first);  // (check_shards refuses a point given twice)
    }
    shards.push_back(std::move(shard));
  }
  check_shards(shards);
  core::OutputFile file(out, "OUT");
  std::ostream& o = file.stream();
  if (!jsonl && !header.empty()) o << header << '\n';
  for (const auto& [idx, line] : records) o << line << '\n';
  file.close();
  return records.size();
}

}  // namespace trainsim::sweep
