#include "sim/sweep/plot.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/report/svg.hpp"
#include "sim/sweep/output.hpp"
#include "sim/sweep/shard.hpp"

namespace trainsim::sweep {

using report::xml_escape;

namespace {

std::string px(double v) { return core::format_number("%.1f", v); }
std::string secs(double v) { return core::format_number("%.4g", v) + " s"; }

// What a cell shows, from the points that share its (x, y).
enum class CellKind { none, fits, oom_activations, oom_model_states, invalid };
const char* class_of(CellKind k) {
  switch (k) {
    case CellKind::fits:
      return "fits";
    case CellKind::oom_activations:
      return "oom activations";
    case CellKind::oom_model_states:
      return "oom model_states";
    case CellKind::invalid:
      return "invalid";
    case CellKind::none:
      break;
  }
  return "none";
}
bool is_oom(CellKind k) { return k == CellKind::oom_activations || k == CellKind::oom_model_states; }

struct Cell {
  CellKind kind = CellKind::none;
  std::size_t points = 0;    // points of the sweep (or shard) in the cell
  std::size_t finished = 0;  // of which have a result
  const PlotPoint* shown = nullptr;  // the fastest fitting point, else the first OOM / invalid one
};

// Viridis at five stops, slowest (dark) to fastest (light): sequential and colour-blind safe.
constexpr std::array<std::array<int, 3>, 5> kScale = {{{0x44, 0x01, 0x54},
                                                       {0x3b, 0x52, 0x8b},
                                                       {0x21, 0x91, 0x8c},
                                                       {0x5e, 0xc9, 0x62},
                                                       {0xfd, 0xe7, 0x25}}};
// t = 0 fastest .. 1 slowest.
std::array<int, 3> scale_rgb(double t) {
  const double u = (1 - std::clamp(t, 0.0, 1.0)) * (kScale.size() - 1);
  const std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(u), kScale.size() - 2);
  const double f = u - static_cast<double>(i);
  std::array<int, 3> c{};
  for (std::size_t k = 0; k < 3; ++k)
    c[k] = static_cast<int>(std::lround(kScale[i][k] + f * (kScale[i + 1][k] - kScale[i][k])));
  return c;
}
std::string hex(const std::array<int, 3>& c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}
bool dark(const std::array<int, 3>& c) { return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] < 140; }

std::string shorten(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}


// The dimension (zip group) holding an axis; each axis alone when the spec lists none.
std::size_t dim_of(const SweepSpec& spec, std::size_t axis) {
  for (std::size_t d = 0; d < spec.dims.size(); ++d)
    if (std::find(spec.dims[d].begin(), spec.dims[d].end(), axis) != spec.dims[d].end()) return d;
  return spec.dims.size() + axis;
}

}  // namespace

MapAxes map_axes(const SweepSpec& spec, const std::string& keys, const std::string& flag) {
  MapAxes m;
  if (keys.empty()) {
    if (!spec.axes.empty()) m.x = 0;
    if (spec.axes.size() > 1) m.y = 1;
    return m;
  }
  const std::size_t comma = keys.find(',');
  if (comma == std::string::npos || keys.find(',', comma + 1) != std::string::npos)
    throw core::ConfigError({flag, 0, 0}, "", "expected two axis keys KEY1,KEY2, got '" + keys + "'");
  auto find = [&](const std::string& key) {
    std::string known;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      if (spec.axes[a].key == key) return a;
      known += (a ? ", " : "") + spec.axes[a].key;
    }
    throw core::ConfigError({flag, 0, 0}, "", "'" + key + "' is not an axis of " + spec.file + " (axes: " + known + ")");
  };
  m.x = find(keys.substr(0, comma));
  m.y = find(keys.substr(comma + 1));
  if (m.x == m.y) throw core::ConfigError({flag, 0, 0}, "", "the two axes must differ, got '" + keys + "'");
  return m;
}

PlotPoint plot_point_of(const Brief& b, std::string oom_cause) {
  PlotPoint p;
  p.point = b.point;
  p.status = b.status;
  p.step_time_s = b.step_time_s;
  if (b.status == Status::oom) p.oom_cause = std::move(oom_cause);
  return p;
}

std::map<std::size_t, std::string> read_oom_causes(const std::string& path) {
  std::map<std::size_t, std::string> out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;
  std::string line;
  std::size_t cause_col = 0;
  bool first = true, csv = false;
  while (std::getline(in, line)) {
    if (first && is_shard_line(line)) continue;  // a shard's tag comes before the header
    if (first) {
      first = false;
      csv = line.rfind("{", 0) != 0;
      if (csv) {
        const auto h = csv_split(line);
        const auto it = std::find(h.begin(), h.end(), "oom_cause");
        if (it == h.end()) return out;
        cause_col = static_cast<std::size_t>(it - h.begin());
        continue;
      }
    }
    char* end = nullptr;
    if (csv) {
      const auto f = csv_split(line);
      if (f.size() <= cause_col || f[0].empty()) continue;
      const unsigned long long idx = std::strtoull(f[0].c_str(), &end, 10);
      if (*end == '\0' && !f[cause_col].empty()) out[static_cast<std::size_t>(idx)] = f[cause_col];
    } else {
      const std::string tag = "{\"point\":";
      if (line.rfind(tag, 0) != 0) continue;
      const unsigned long long idx = std::strtoull(line.c_str() + tag.size(), &end, 10);
      const std::size_t list = line.find("\"oom\":[{");
      if (list == std::string::npos) continue;
      const std::string key = "\"cause\":\"";
      const std::size_t at = line.find(key, list);
      if (at == std::string::npos) continue;
      const std::size_t from = at + key.size();
      out[static_cast<std::size_t>(idx)] = line.substr(from, line.find('"', from) - from);
    }
  }
  return out;
}

namespace {

// The two plotted axes: their values (one empty value for a missing axis) and keys.
struct MapGrid {
  const std::vector<std::string>& xv;
  const std::vector<std::string>& yv;
  std::string xkey, ykey;
  bool has_x, has_y;
  std::size_t nx() const { return xv.size(); }
  std::size_t ny() const { return yv.size(); }
};

MapGrid grid_of(const SweepSpec& spec, const MapAxes& axes) {
  static const std::vector<std::string> kOne{""};
  const bool has_x = axes.x != kNoAxis, has_y = axes.y != kNoAxis;
  return {has_x ? spec.axes[axes.x].values : kOne,
          has_y ? spec.axes[axes.y].values : kOne,
          has_x ? spec.axes[axes.x].key : "",
          has_y ? spec.axes[axes.y].key : "",
          has_x,
          has_y};
}

// What the map shows, gathered from the points and their results.
struct MapData {
  std::vector<Cell> cells;  // row-major, y then x, in value (sweep) order
  std::size_t finished = 0;
  std::size_t counts[3] = {0, 0, 0};  // by Status
  bool any_fit = false;
  double t_min = 0, t_max = 0;  // step times of the fitting cells shown
  std::size_t most = 0;         // the most points in one cell
  std::string others;           // axes that move independently of x and y
};

CellKind kind_of(const PlotPoint& r) {
  return r.status == Status::fits      ? CellKind::fits
         : r.status == Status::invalid ? CellKind::invalid
         // A node out of host memory (offload) is no batch-size problem either.
         : r.oom_cause == "model_states" || r.oom_cause == "host_memory"
             ? CellKind::oom_model_states
             : CellKind::oom_activations;
}

int rank_of(CellKind x) {
  switch (x) {
    case CellKind::fits:
      return 0;
    case CellKind::oom_activations:
      return 1;
    case CellKind::oom_model_states:
      return 2;
    case CellKind::invalid:
      return 3;
    case CellKind::none:
      break;
  }
  return 4;
}

// Rank: fits (fastest first, then lowest index) > oom activations > oom model_states > invalid.
void offer(Cell& c, const PlotPoint& r) {
  const CellKind k = kind_of(r);
  const bool better = !c.shown || rank_of(k) < rank_of(c.kind) ||
                      (k == CellKind::fits && c.kind == CellKind::fits &&
                       (r.step_time_s < c.shown->step_time_s ||
                        (r.step_time_s == c.shown->step_time_s && r.point < c.shown->point)));
  if (better) {
    c.kind = k;
    c.shown = &r;
  }
}

std::string other_axes(const SweepSpec& spec, const MapAxes& axes) {
  std::string others;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    if (a == axes.x || a == axes.y || spec.axes[a].values.size() < 2) continue;
    if ((axes.x != kNoAxis && dim_of(spec, a) == dim_of(spec, axes.x)) ||
        (axes.y != kNoAxis && dim_of(spec, a) == dim_of(spec, axes.y)))
      continue;
    others += (others.empty() ? "" : ", ") + spec.axes[a].key;
  }
  return others;
}

MapData gather(const SweepSpec& spec, const std::vector<Point>& points,
               const std::vector<PlotPoint>& results, const MapAxes& axes, const MapGrid& g) {
  MapData m;
  std::map<std::size_t, const PlotPoint*> by_point;
  for (const auto& r : results) by_point.emplace(r.point, &r);
  m.cells.resize(g.nx() * g.ny());
  for (const auto& p : points) {
    const std::size_t xi = axes.x == kNoAxis ? 0 : p.choice[axes.x];
    const std::size_t yi = axes.y == kNoAxis ? 0 : p.choice[axes.y];
    Cell& c = m.cells[yi * g.nx() + xi];
    ++c.points;
    const auto it = by_point.find(p.index);
    if (it == by_point.end()) continue;
    const PlotPoint& r = *it->second;
    ++c.finished;
    ++m.finished;
    ++m.counts[static_cast<int>(r.status)];
    offer(c, r);
  }
  for (const Cell& c : m.cells)
    if (c.kind == CellKind::fits) {
      const double t = c.shown->step_time_s;
      m.t_min = m.any_fit ? std::min(m.t_min, t) : t;
      m.t_max = m.any_fit ? std::max(m.t_max, t) : t;
      m.any_fit = true;
    }
  for (const Cell& c : m.cells) m.most = std::max(m.most, c.points);
  m.others = other_axes(spec, axes);
  return m;
}

// Where everything goes, in SVG user units.
struct MapLayout {
  double cw = 0, ch = 0;  // cell width and height
  bool rotate = false;    // x tick labels at 45 degrees
  double x_label_h = 0, x0 = 0, legend_y = 0, y0 = 0, grid_w = 0, grid_h = 0, width = 0, height = 0;
  double cx(std::size_t i) const { return x0 + cw * static_cast<double>(i); }
  // The first y value at the bottom: sweep order runs left to right and bottom to top.
  double cy(std::size_t j) const { return y0 + grid_h - ch * static_cast<double>(j + 1); }
};

MapLayout layout_of(const MapGrid& g, bool note_shared, bool note_missing) {
  const std::size_t nx = g.nx(), ny = g.ny();
  MapLayout l;
  l.cw = std::clamp(std::floor(640.0 / static_cast<double>(nx)), 16.0, 90.0);
  // Rows tall enough together for the rotated y label.
  l.ch = std::max(
      std::clamp(std::floor(420.0 / static_cast<double>(ny)), 14.0, 40.0),
      std::ceil((6.8 * static_cast<double>(g.ykey.size()) + 12) / static_cast<double>(ny)));
  std::size_t ylen = 0, xlen = 0;
  for (const auto& v : g.yv) ylen = std::max(ylen, std::min<std::size_t>(v.size(), 20));
  for (const auto& v : g.xv) xlen = std::max(xlen, std::min<std::size_t>(v.size(), 20));
  l.rotate = 6.5 * static_cast<double>(xlen) > l.cw - 4;
  l.x_label_h = l.rotate ? 4.7 * static_cast<double>(xlen) + 18 : 18;
  l.x0 = 40 + 6.5 * static_cast<double>(ylen) + 8;
  const double caption_h = 18.0 * (1 + (note_shared ? 1 : 0) + (note_missing ? 1 : 0));
  l.legend_y = 30 + caption_h;
  l.y0 = l.legend_y + 46;
  l.grid_w = l.cw * static_cast<double>(nx);
  l.grid_h = l.ch * static_cast<double>(ny);
  l.width = std::max(l.x0 + l.grid_w + 24, 900.0);
  l.height = l.y0 + l.grid_h + l.x_label_h + 30;
  return l;
}

// The document head: size, the hatch patterns and step-time gradient, background and title.
void write_head(std::ostream& out, const MapLayout& l, const std::string& file) {
  const std::string w = core::format_number("%.0f", l.width),
                    h = core::format_number("%.0f", l.height);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"sweep-map\" width=\"" << w
      << "\" height=\"" << h << "\" viewBox=\"0 0 " << w << ' ' << h
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<title>Fit / OOM map: " << xml_escape(file) << "</title>\n"
      << "<defs>\n"
      << "<pattern id=\"oom-activations\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
         "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fdd0a2\"/>"
         "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#e6550d\" "
         "stroke-width=\"2.5\"/></pattern>\n"
      << "<pattern id=\"oom-model_states\" width=\"6\" height=\"6\" "
         "patternUnits=\"userSpaceOnUse\">"
         "<rect width=\"6\" height=\"6\" fill=\"#fcbba1\"/><path d=\"M0 0H6M0 0V6\" "
         "stroke=\"#a50f15\" "
         "stroke-width=\"1.5\"/></pattern>\n"
      << "<linearGradient id=\"step-scale\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">";
  for (std::size_t k = 0; k < kScale.size(); ++k)
    out << "<stop offset=\""
        << core::format_number("%.2f", static_cast<double>(k) / (kScale.size() - 1))
        << "\" stop-color=\"" << hex(kScale[kScale.size() - 1 - k]) << "\"/>";
  out << "</linearGradient>\n</defs>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
      << "<text class=\"title\" x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Fit / OOM map: "
      << xml_escape(file) << "</text>\n";
}

// Counts per status, then a line each when cells share points or results are missing.
void write_caption(std::ostream& out, const MapGrid& g, const MapData& m, std::size_t points) {
  double ty = 38;
  out << "<text class=\"caption\" x=\"8\" y=\"" << px(ty) << "\" fill=\"#333\">" << m.counts[0]
      << " fit, " << m.counts[1] << " out of memory, " << m.counts[2] << " invalid; "
      << (!g.has_y ? xml_escape(g.xkey) : xml_escape(g.xkey) + " \xC3\x97 " + xml_escape(g.ykey))
      << " (" << g.nx() << " \xC3\x97 " << g.ny()
      << " cells); the thick line separates fitting from OOM cells</text>\n";
  if (m.most > 1) {
    ty += 18;
    out << "<text class=\"caption shared\" x=\"8\" y=\"" << px(ty) << "\" fill=\"#333\">up to "
        << m.most << " points share a cell"
        << (m.others.empty() ? "" : " (" + xml_escape(m.others) + " vary)")
        << ": a cell shows the fastest point that fits, else OOM (activations before "
           "model_states), "
           "else invalid</text>\n";
  }
  if (m.finished < points) {
    ty += 18;
    out << "<text class=\"caption missing\" x=\"8\" y=\"" << px(ty) << "\" fill=\"#b35806\">"
        << m.finished << " of " << points << " points have results; blank cells have none</text>\n";
  }
}

// The step-time scale, then the swatches and the boundary's key.
void write_legend(std::ostream& out, const MapData& m, double ly) {
  out << "<g class=\"legend\">\n";
  if (m.any_fit) {
    out << "<text x=\"8\" y=\"" << px(ly + 10) << "\">step time (fits):</text>"
        << "<rect class=\"scale\" x=\"120\" y=\"" << px(ly)
        << "\" width=\"200\" height=\"12\" "
           "fill=\"url(#step-scale)\" stroke=\"#888\" stroke-width=\"0.5\"/>\n"
        << "<text class=\"min\" x=\"120\" y=\"" << px(ly + 26) << "\">min " << secs(m.t_min)
        << "</text>"
        << "<text class=\"max\" x=\"320\" y=\"" << px(ly + 26) << "\" text-anchor=\"end\">max "
        << secs(m.t_max) << "</text>\n";
  } else {
    out << "<text x=\"8\" y=\"" << px(ly + 10) << "\">no cell fits</text>\n";
  }
  double lx = 340;
  auto swatch = [&](const char* cls, const std::string& fill, const std::string& stroke,
                    const char* label) {
    out << "<rect class=\"key " << cls << "\" x=\"" << px(lx) << "\" y=\"" << px(ly)
        << "\" width=\"14\" "
        << "height=\"12\" fill=\"" << fill << "\" stroke=\"" << stroke
        << "\" stroke-width=\"0.5\"/><text x=\"" << px(lx + 18) << "\" y=\"" << px(ly + 10) << "\">"
        << label << "</text>\n";
    lx += 30 + 6.2 * static_cast<double>(std::char_traits<char>::length(label));
  };
  swatch("oom activations", "url(#oom-activations)", "#888", "OOM: activations");
  swatch("oom model_states", "url(#oom-model_states)", "#888", "OOM: model states");
  swatch("invalid", "#bdbdbd", "#888", "invalid");
  swatch("none", "#fff", "#bbb", "no result");
  out << "<line x1=\"" << px(lx) << "\" x2=\"" << px(lx + 22) << "\" y1=\"" << px(ly + 6)
      << "\" y2=\"" << px(ly + 6) << "\" stroke=\"#d62728\" stroke-width=\"3\"/><text x=\""
      << px(lx + 26) << "\" y=\"" << px(ly + 10) << "\">fit / OOM boundary</text>\n</g>\n";
}

// The hover text of the cell at value indices (i, j).
std::string tip_of(const MapGrid& g, const Cell& c, std::size_t i, std::size_t j) {
  std::string tip;
  if (g.has_x) tip += g.xkey + "=" + g.xv[i];
  if (g.has_y) tip += " " + g.ykey + "=" + g.yv[j];
  if (c.points == 0)
    return tip + ": no point of this run (dropped by where or zip, or another shard's)";
  if (!c.shown) return tip + ": no result";
  tip += std::string(": ") + (c.kind == CellKind::fits ? "fits, step " + secs(c.shown->step_time_s)
                              : is_oom(c.kind) ? "out of memory (" + c.shown->oom_cause + ")"
                                               : "invalid");
  tip += ", point " + std::to_string(c.shown->point);
  if (c.points > 1)
    tip += " (" + std::to_string(c.finished) + " of " + std::to_string(c.points) +
           " points with results)";
  return tip;
}

void write_cell(std::ostream& out, const MapGrid& g, const MapData& m, const MapLayout& l,
                std::size_t i, std::size_t j) {
  const Cell& c = m.cells[j * g.nx() + i];
  std::string fill = "#fff", label, ink = "#000";
  switch (c.kind) {
    case CellKind::fits: {
      const double t_min = m.t_min, t_max = m.t_max;
      const auto rgb =
          scale_rgb(t_max > t_min ? (c.shown->step_time_s - t_min) / (t_max - t_min) : 0);
      fill = hex(rgb);
      ink = dark(rgb) ? "#fff" : "#000";
      label = core::format_number("%.3g", c.shown->step_time_s);
      break;
    }
    case CellKind::oom_activations:
      fill = "url(#oom-activations)";
      label = "OOM";
      break;
    case CellKind::oom_model_states:
      fill = "url(#oom-model_states)";
      label = "OOM";
      break;
    case CellKind::invalid:
      fill = "#bdbdbd";
      label = "invalid";
      break;
    case CellKind::none:
      break;
  }
  out << "<rect class=\"cell " << class_of(c.kind) << "\" x=\"" << px(l.cx(i)) << "\" y=\""
      << px(l.cy(j)) << "\" width=\"" << px(l.cw) << "\" height=\"" << px(l.ch) << "\" fill=\""
      << fill << "\"";
  if (c.kind == CellKind::none) out << " stroke=\"#ddd\" stroke-dasharray=\"2 2\"";
  out << "><title>" << xml_escape(tip_of(g, c, i, j)) << "</title></rect>";
  const bool room = l.cw >= 44 && l.ch >= 16;
  if (room && !label.empty())
    out << "<text x=\"" << px(l.cx(i) + l.cw / 2) << "\" y=\"" << px(l.cy(j) + l.ch / 2 + 4)
        << "\" text-anchor=\"middle\" stroke=\"none\" fill=\"" << ink << "\""
        << (is_oom(c.kind) ? " font-weight=\"bold\"" : "") << ">" << label << "</text>";
  out << "\n";
}

// Every shared edge between a fitting and an OOM cell, as one path; then the grid's frame.
void write_boundary(std::ostream& out, const MapGrid& g, const MapData& m, const MapLayout& l) {
  const std::size_t nx = g.nx(), ny = g.ny();
  auto splits = [](CellKind a, CellKind b) {
    return (a == CellKind::fits && is_oom(b)) || (is_oom(a) && b == CellKind::fits);
  };
  std::string d;
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i) {
      const CellKind a = m.cells[j * nx + i].kind;
      if (i + 1 < nx && splits(a, m.cells[j * nx + i + 1].kind))
        d += "M" + px(l.cx(i + 1)) + "," + px(l.cy(j)) + "V" + px(l.cy(j) + l.ch);
      if (j + 1 < ny && splits(a, m.cells[(j + 1) * nx + i].kind))
        d += "M" + px(l.cx(i)) + "," + px(l.cy(j)) + "H" + px(l.cx(i) + l.cw);
    }
  if (!d.empty())
    out << "<path class=\"boundary\" d=\"" << d
        << "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"3\" stroke-linecap=\"square\"/>\n";
  out << "<rect class=\"frame\" x=\"" << px(l.x0) << "\" y=\"" << px(l.y0) << "\" width=\""
      << px(l.grid_w) << "\" height=\"" << px(l.grid_h)
      << "\" fill=\"none\" stroke=\"#888\" stroke-width=\"0.5\"/>\n";
}

// Ticks evenly spaced, one per value, in sweep order; then the axis labels.
void write_axes(std::ostream& out, const MapGrid& g, const MapLayout& l) {
  out << "<g class=\"ticks\">\n";
  const double by = l.y0 + l.grid_h;
  for (std::size_t i = 0; i < g.nx() && g.has_x; ++i) {
    const double x = l.cx(i) + l.cw / 2;
    out << "<line x1=\"" << px(x) << "\" x2=\"" << px(x) << "\" y1=\"" << px(by) << "\" y2=\""
        << px(by + 3) << "\" stroke=\"#888\"/><text x=\"" << px(x) << "\" y=\"" << px(by + 14)
        << "\"";
    if (l.rotate)
      out << " text-anchor=\"end\" transform=\"rotate(-45 " << px(x) << ' ' << px(by + 14) << ")\"";
    else
      out << " text-anchor=\"middle\"";
    out << ">" << xml_escape(shorten(g.xv[i], 20)) << "</text>\n";
  }
  for (std::size_t j = 0; j < g.ny() && g.has_y; ++j) {
    const double y = l.cy(j) + l.ch / 2;
    out << "<line x1=\"" << px(l.x0 - 3) << "\" x2=\"" << px(l.x0) << "\" y1=\"" << px(y)
        << "\" y2=\"" << px(y) << "\" stroke=\"#888\"/><text x=\"" << px(l.x0 - 5) << "\" y=\""
        << px(y + 3.5) << "\" text-anchor=\"end\">" << xml_escape(shorten(g.yv[j], 20))
        << "</text>\n";
  }
  out << "</g>\n";
  if (g.has_x)
    out << "<text class=\"axis-label x\" x=\"" << px(l.x0 + l.grid_w / 2) << "\" y=\""
        << px(by + l.x_label_h + 12) << "\" text-anchor=\"middle\" font-weight=\"bold\">"
        << xml_escape(g.xkey) << "</text>\n";
  if (g.has_y)
    out << "<text class=\"axis-label y\" x=\"0\" y=\"0\" transform=\"translate(16 "
        << px(l.y0 + l.grid_h / 2) << ") rotate(-90)\" text-anchor=\"middle\" font-weight=\"bold\">"
        << xml_escape(g.ykey) << "</text>\n";
}

}  // namespace

void write_sweep_map_svg(std::ostream& out, const SweepSpec& spec, const std::vector<Point>& points,
                         const std::vector<PlotPoint>& results, const MapAxes& axes) {
  const MapGrid g = grid_of(spec, axes);
  const MapData m = gather(spec, points, results, axes, g);
  const MapLayout l = layout_of(g, m.most > 1, m.finished < points.size());
  write_head(out, l, std::filesystem::path(spec.file).filename().string());
  write_caption(out, g, m, points.size());
  write_legend(out, m, l.legend_y);
  out << "<g class=\"cells\" stroke=\"#fff\" stroke-width=\"1\">\n";
  for (std::size_t j = 0; j < g.ny(); ++j)
    for (std::size_t i = 0; i < g.nx(); ++i) write_cell(out, g, m, l, i, j);
  out << "</g>\n";
  write_boundary(out, g, m, l);
  write_axes(out, g, l);
  out << "</svg>\n";
}

}  // namespace trainsim::sweep
