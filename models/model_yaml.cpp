// Layer graphs from YAML. Two passes: the first creates every layer (expanding repeated
// groups) and wires default inputs (the previous layer); the second resolves explicit
// `inputs:` names, which may point forward, so a mistaken graph can loop and is then reported
// as a located cycle instead of being silently reordered.
#include "models/model_yaml.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include "models/hf_config.hpp"
#include "models/layer_yaml.hpp"
#include "models/presets.hpp"
#include "models/unique_keys.hpp"
#include "models/yaml_fields.hpp"
#include "sim/core/text_file.hpp"
#include "models/yaml_syntax.hpp"

namespace trainsim::models {

namespace {

using yamlio::MapReader;

// The refusal of a model past BuildOptions::max_layers: `what` would hold `would` layers (or
// more, when it does not fit in 64 bits: -1).
std::string too_many_layers(const std::string& what, std::int64_t would, std::int64_t max) {
  return what + " would hold " + (would < 0 ? "more than 2^63" : std::to_string(would)) +
         " layers in all, more than limits.max_layers = " + std::to_string(max) +
         "; raise it with limits: {max_layers: N} if you mean it (a run costs about 15 us of CPU "
         "per layer, a diagnosis about four times that)";
}

// `base` + `count` x `each`, or -1 past 64 bits.
std::int64_t layers_after(std::int64_t base, std::int64_t count, std::int64_t each) {
  std::int64_t n = 0;
  if (__builtin_mul_overflow(count, each, &n) || __builtin_add_overflow(n, base, &n)) return -1;
  return n;
}

// Refuses a transformer with more than opts.max_layers layers before its graph is built: a
// one-block and a two-block build (cheap) give the layers outside and per block.
void check_layers(TransformerConfig c, const BuildOptions& opts, const MapReader& r,
                  const char* key) {
  const std::int64_t blocks = c.layers;
  if (blocks <= 2) return;
  c.layers = 1;
  const auto one = static_cast<std::int64_t>(build_transformer(c, opts).order.size());
  c.layers = 2;
  const auto two = static_cast<std::int64_t>(build_transformer(c, opts).order.size());
  const std::int64_t would = layers_after(one - (two - one), blocks, two - one);
  if (would < 0 || would > opts.max_layers)
    r.fail_at(key, too_many_layers("this model's " + std::to_string(blocks) + " blocks of " +
                                       std::to_string(two - one) + " layers",
                                   would, opts.max_layers));
}

// Names visible to `inputs:` in one scope: the top level, or one copy of a group.
struct Scope {
  std::map<std::string, Vertex> names;
  std::optional<Vertex> block_input;  // what `input` means inside a group copy
  bool is_group = false;
};

// A layer whose explicit `inputs:` still need resolving.
struct Pending {
  Vertex vertex;
  YAML::Node inputs;
  std::string path;  // key path of the layer entry
  std::size_t scope;
};

struct GraphBuilder {
  const std::string& file;
  yamlio::LayerContext ctx;
  Model m;
  std::vector<Scope> scopes{Scope{}};                          // [0] is the top level
  std::map<std::string, Vertex> full_names;                    // every layer by its full name
  std::map<Vertex, std::pair<YAML::Node, std::string>> where;  // entry node, path
  std::vector<Pending> pending;
  std::int64_t max_layers = kDefaultMaxLayers;  // in the whole model (BuildOptions)

  void declare(Scope& scope, const std::string& local, Vertex v, const MapReader& entry) {
    if (!scope.names.emplace(local, v).second)
      entry.fail_at("name", "duplicate name '" + local + "'; names must be unique in their list");
  }

  // Creates one layer from its entry; returns its vertex.
  Vertex layer(const MapReader& entry, std::size_t scope, const std::string& prefix, int block,
               std::optional<Vertex> default_input) {
    const std::string local = entry.string("name");
    if (local == "input")
      entry.fail_at("name", "'input' is reserved for a group's input; choose another name");
    const YAML::Node kind_node = entry.require("kind", "one of: " + layer_kind_names());
    const auto kind =
        kind_node.IsScalar() ? layer_kind_from_string(kind_node.Scalar()) : std::nullopt;
    if (!kind)
      entry.fail_at("kind", "unknown layer kind " + yamlio::describe(kind_node) +
                                "; expected one of: " + layer_kind_names());
    Layer l = yamlio::parse_layer(entry, *kind, prefix + local, ctx);
    l.block = block;
    if (l.kind == LayerKind::attention && m.hidden == 0) m.hidden = entry.positive("hidden");
    const std::string full = l.name;
    const Vertex v = add_layer(m, std::move(l));
    declare(scopes[scope], local, v, entry);
    if (!full_names.emplace(full, v).second)
      entry.fail_at("name", "duplicate layer name '" + full +
                                "' (a group's layer is named "
                                "GROUP.COPY.NAME)");
    where[v] = {entry.node(), entry.path()};
    if (entry.has("inputs"))
      pending.push_back({v, entry.get("inputs"), entry.path(), scope});
    else if (default_input)
      add_edge(m, *default_input, v);
    return v;
  }

  // Expands a group ({name, repeat, layers}); returns the output of its last copy.
  std::optional<Vertex> group(const MapReader& g, std::optional<Vertex> before) {
    g.only({"name", "repeat", "layers"});
    const std::string name = g.string("name");
    const std::int64_t repeat = g.positive_or("repeat", 1);
    const YAML::Node items = g.get("layers");
    if (!items.IsSequence() || items.size() == 0)
      g.fail_at("layers", "expected a non-empty list of layers, got " + yamlio::describe(items));
    // The cap is on the whole model: ten groups just under a per-group cap took 15 s.
    const auto held = static_cast<std::int64_t>(boost::num_vertices(m.graph));
    const std::int64_t would = layers_after(held, repeat, static_cast<std::int64_t>(items.size()));
    if (would < 0 || would > max_layers)
      g.fail_at("repeat",
                too_many_layers("the model, with this group's " + std::to_string(repeat) +
                                    " copies of " + std::to_string(items.size()) + " layers,",
                                would, max_layers));
    std::optional<Vertex> x = before;
    for (std::int64_t copy = 0; copy < repeat; ++copy) {
      scopes.push_back(Scope{{}, x, true});
      const std::size_t scope = scopes.size() - 1;
      const std::string prefix = name + "." + std::to_string(copy) + ".";
      for (std::size_t j = 0; j < items.size(); ++j) {
        MapReader entry(items[j], file, yamlio::index(g.path_of("layers"), j));
        if (entry.has("layers"))
          entry.fail_here("groups cannot be nested; list the layers of a block directly");
        x = layer(entry, scope, prefix, m.num_blocks, x);
      }
      ++m.num_blocks;
    }
    if (!scopes[0].names.emplace(name, *x).second)
      g.fail_at("name", "duplicate name '" + name + "'; names must be unique in their list");
    return x;
  }

  Vertex resolve(const Pending& p, const YAML::Node& item, const std::string& path) {
    if (!item.IsScalar())
      yamlio::fail(item, file, path, "expected a layer name, got " + yamlio::describe(item));
    const std::string& n = item.Scalar();
    const Scope& s = scopes[p.scope];
    if (n == "input" && s.is_group) {
      if (!s.block_input)
        yamlio::fail(item, file, path,
                     "'input' is the group's input, but this group is the "
                     "first entry of the model and has none");
      return *s.block_input;
    }
    if (auto it = s.names.find(n); it != s.names.end()) return it->second;
    if (auto it = scopes[0].names.find(n); it != scopes[0].names.end()) return it->second;
    if (auto it = full_names.find(n); it != full_names.end()) return it->second;
    yamlio::fail(item, file, path,
                 "unknown input '" + n + "'; expected the name of a layer in this list" +
                     (s.is_group ? ", 'input', a top-level name" : ", a group name") +
                     " or a full layer name such as 'block.0.attn'");
  }

  void wire() {
    for (const auto& p : pending) {
      const std::string path = yamlio::join(p.path, "inputs");
      if (!p.inputs.IsSequence())
        yamlio::fail(p.inputs, file, path,
                     "expected a list of layer names, got " + yamlio::describe(p.inputs));
      std::vector<Vertex> seen;
      for (std::size_t i = 0; i < p.inputs.size(); ++i) {
        const Vertex from = resolve(p, p.inputs[i], yamlio::index(path, i));
        if (std::find(seen.begin(), seen.end(), from) != seen.end())
          yamlio::fail(p.inputs[i], file, yamlio::index(path, i), "input listed twice");
        seen.push_back(from);
        add_edge(m, from, p.vertex);
      }
    }
  }

  void check_acyclic() {
    const auto cycle = find_cycle(m);
    if (cycle.empty()) return;
    std::string loop;
    for (Vertex v : cycle) loop += m.graph[v].name + " -> ";
    loop += m.graph[cycle.front()].name;
    const auto& [node, path] = where.at(cycle.front());
    const YAML::Node inputs = node["inputs"];
    yamlio::fail(inputs.IsDefined() ? inputs : node, file,
                 inputs.IsDefined() ? yamlio::join(path, "inputs") : path,
                 "inputs must not form a cycle, but " + loop + " does");
  }
};

}  // namespace

Model build_layer_graph(const YAML::Node& model_map, const std::string& file,
                        const std::string& key_path, const BuildOptions& opts) {
  MapReader root(model_map, file, key_path);
  root.only({"name", "sequence_model", "layers"});
  const bool sequence = root.boolean_or("sequence_model", true);
  if (sequence && opts.seq_len <= 0)
    root.fail_here("a sequence model needs a positive seq_len, got " +
                   std::to_string(opts.seq_len));
  GraphBuilder b{
      file,    {sequence ? opts.seq_len : 1, opts.activation_dtype, opts.flash_attention},
      Model{}, {},
      {},      {},
      {}};
  b.scopes.assign(1, Scope{});
  b.max_layers = opts.max_layers;
  b.m.name = root.string("name");
  b.m.sequence_model = sequence;
  b.m.seq_len = sequence ? opts.seq_len : 0;
  const YAML::Node items = root.require("layers", "a list of layers");
  if (!items.IsSequence() || items.size() == 0)
    root.fail_at("layers", "expected a non-empty list of layers, got " + yamlio::describe(items));
  std::optional<Vertex> x;
  for (std::size_t i = 0; i < items.size(); ++i) {
    MapReader entry(items[i], file, yamlio::index(root.path_of("layers"), i));
    const auto held = static_cast<std::int64_t>(boost::num_vertices(b.m.graph));
    if (!entry.has("layers") && held >= b.max_layers)
      entry.fail_here(too_many_layers("the model", held + 1, b.max_layers));
    x = entry.has("layers") ? b.group(entry, x) : b.layer(entry, 0, "", -1, x);
  }
  b.wire();
  b.check_acyclic();
  finalize(b.m, file);
  return std::move(b.m);
}

namespace {

// `capacity_factor` next to a preset or an hf_config: every MoE layer's (Layer::capacity_factor).
Model with_capacity_factor(const MapReader& r, Model m) {
  if (!r.has("capacity_factor")) return m;
  const double f = r.number_or("capacity_factor", 0);
  if (!(f > 0) || f > 1e6)
    r.fail_at("capacity_factor",
              "expected a number > 0 (each expert's buffer over its balanced share of the routed "
              "tokens), got " + yamlio::describe(r.get("capacity_factor")));
  bool moe = false;
  for (const auto v : m.order)
    if (m.graph[v].experts > 1) {
      m.graph[v].capacity_factor = f;
      moe = true;
    }
  if (!moe)
    r.fail_at("capacity_factor", "a capacity factor needs a mixture-of-experts model; '" + m.name +
                                     "' has no MoE layers (leave capacity_factor out)");
  return m;
}

// {preset: NAME, overrides...}: transformer presets take shape overrides, others only a name.
Model build_preset_map(const MapReader& r, const BuildOptions& opts) {
  const std::string name = r.string("preset");
  const Preset* p = find_preset(name);
  if (!p)
    r.fail_at("preset", "unknown model preset '" + name + "'; known presets: " + preset_names());
  auto config = p->config;
  if (auto* t = std::get_if<TransformerConfig>(&config)) {
    r.only({"preset", "name", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab",
            "max_positions", "experts", "top_k", "capacity_factor", "dropout"});
    t->name = r.optional_string("name").value_or(t->name);
    const std::int64_t layers = r.positive_or("layers", t->layers);
    if (layers > std::numeric_limits<int>::max())
      r.fail_at("layers", too_many_layers("this model's " + std::to_string(layers) + " blocks", -1,
                                          opts.max_layers));
    t->layers = static_cast<int>(layers);
    t->hidden = r.positive_or("hidden", t->hidden);
    t->heads = r.positive_or("heads", t->heads);
    t->kv_heads = r.positive_or("kv_heads", t->kv_heads);
    t->ffn = r.positive_or("ffn", t->ffn);
    t->vocab = r.positive_or("vocab", t->vocab);
    t->max_positions = r.positive_or("max_positions", t->max_positions);
    t->experts = r.positive_or("experts", t->experts);
    t->top_k = r.positive_or("top_k", t->top_k);
    t->dropout = r.boolean_or("dropout", t->dropout);
    try {
      check_layers(*t, opts, r, "layers");
    } catch (const std::invalid_argument&) {
      // Not a valid model at all: build_config below says why.
    }
  } else {
    r.only({"preset", "name"});
    std::visit([&](auto& c) { c.name = r.optional_string("name").value_or(c.name); }, config);
  }
  Model m;
  try {
    m = build_config(config, opts);
  } catch (const std::invalid_argument& e) {
    r.fail_here("invalid model '" + name + "' after overrides: " + e.what());
  }
  return with_capacity_factor(r, std::move(m));
}

// {hf_config: PATH, name?}: a Hugging Face config.json, relative to base_dir. Errors in the
// JSON are located in that file; a missing file and a model that does not build (seq_len past
// learned positions) at the `hf_config` value.
Model build_hf_model(const MapReader& r, const BuildOptions& opts, const std::string& base_dir) {
  r.only({"hf_config", "name", "capacity_factor"});
  const YAML::Node at = r.get("hf_config");
  std::filesystem::path p = r.string("hf_config");
  if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
  const std::string path = p.string();
  const std::string key = r.path_of("hf_config");
  const std::string text = core::read_text_file(path, yamlio::location(at, r.file()), key);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw yaml_syntax_error(e, path, {}, key, "not valid JSON: ");
  }
  check_unique_keys(root, path, key);
  TransformerConfig c = hf_transformer_config(root, path, key);
  // Default name: the folder holding config.json (HF layout), else the file's stem.
  c.name = p.filename() == "config.json" && p.has_parent_path()
               ? p.parent_path().filename().string()
               : p.stem().string();
  c.name = r.optional_string("name").value_or(c.name);
  try {
    check_layers(c, opts, r, "hf_config");
    return with_capacity_factor(r, build_transformer(c, opts));
  } catch (const std::invalid_argument& e) {
    yamlio::fail(at, r.file(), key, "invalid model from '" + path + "': " + e.what());
  } catch (const core::OverflowError&) {
    yamlio::fail(at, r.file(), key, "the model's sizes overflow 64-bit counts");
  }
}

Model load_file(const std::string& path, const BuildOptions& opts, const YAML::Node* from,
                const std::string& from_file, const std::string& from_path) {
  const std::string text =
      from ? core::read_text_file(path, yamlio::location(*from, from_file), from_path)
           : core::read_text_file(path, {path, 0, 0}, "");
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw yaml_syntax_error(e, path, {}, "", "not valid YAML: ");
  }
  check_unique_keys(root, path);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  // {file: ...} chains nest; a file that names itself (or a loop of files) must not recurse
  // until the stack overflows.
  constexpr int kMaxFileDepth = 16;
  static thread_local int depth = 0;
  if (depth >= kMaxFileDepth) {
    const std::string detail = "model files nest more than " + std::to_string(kMaxFileDepth) +
                               " deep; does '" + path + "' include itself?";
    if (from) yamlio::fail(*from, from_file, from_path, detail);
    throw core::ConfigError(core::SourceLocation{path, 0, 0}, "", detail);
  }
  ++depth;
  struct Leave {
    ~Leave() { --depth; }
  } leave;
  return build_model(root, path, "", opts, dir);
}

}  // namespace

Model load_model_file(const std::string& path, const BuildOptions& opts) {
  return load_file(path, opts, nullptr, "", "");
}

namespace {

Model build_any(const YAML::Node& node, const std::string& file, const std::string& key_path,
                const BuildOptions& opts, const std::string& base_dir) {
  if (node.IsScalar()) {
    const Preset* p = find_preset(node.Scalar());
    if (!p)
      yamlio::fail(node, file, key_path,
                   "unknown model preset '" + node.Scalar() + "'; known presets: " +
                       preset_names() + " (or use {file: path.yaml} or an inline {name, layers})");
    try {
      return build_preset(*p, opts);
    } catch (const std::invalid_argument& e) {
      yamlio::fail(node, file, key_path, "invalid model '" + p->name + "': " + e.what());
    }
  }
  if (!node.IsMap())
    yamlio::fail(node, file, key_path,
                 "expected a preset name, {preset: NAME, ...}, {file: PATH} or {name: ..., layers: "
                 "[...]}, got " +
                     yamlio::describe(node));
  MapReader r(node, file, key_path);
  if (r.has("preset")) return build_preset_map(r, opts);
  if (r.has("hf_config")) return build_hf_model(r, opts, base_dir);
  if (r.has("file")) {
    r.only({"file"});
    std::filesystem::path p = r.string("file");
    if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
    const YAML::Node file_node = r.get("file");
    return load_file(p.string(), opts, &file_node, file, r.path_of("file"));
  }
  if (r.has("layers")) return build_layer_graph(node, file, key_path, opts);
  r.fail_here(
      "expected one of the keys 'preset', 'file', 'hf_config' or 'layers' (a model is a preset "
      "name, {preset: NAME, ...}, {file: PATH}, {hf_config: config.json} or {name: ..., "
      "layers: [...]})");
}

}  // namespace

Model build_model(const YAML::Node& node, const std::string& file, const std::string& key_path,
                  const BuildOptions& opts, const std::string& base_dir) {
  // A layer whose own sizes overflow (the builders' checked products and sums throw), or layers
  // that each fit but whose sum does not: refused here, where the model's text can be named.
  Model m;
  try {
    m = build_any(node, file, key_path, opts, base_dir);
  } catch (const core::OverflowError&) {
    yamlio::fail(node, file, key_path, "the model's sizes overflow 64-bit counts");
  }
  try {
    (void)m.parameters();
  } catch (const core::OverflowError&) {
    yamlio::fail(node, file, key_path, "the model's parameters add up to more than 64-bit counts hold");
  }
  return m;
}

}  // namespace trainsim::models
