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

void write_sweep_map_svg(std::ostream& out, const SweepSpec& spec, const std::vector<Point>& points,
                         const std::vector<PlotPoint>& results, const MapAxes& axes) {
  static const std::vector<std::string> kOne{""};
  const std::vector<std::string>& xv = axes.x == kNoAxis ? kOne : spec.axes[axes.x].values;
  const std::vector<std::string>& yv = axes.y == kNoAxis ? kOne : spec.axes[axes.y].values;
  const std::string xkey = axes.x == kNoAxis ? "" : spec.axes[axes.x].key;
  const std::string ykey = axes.y == kNoAxis ? "" : spec.axes[axes.y].key;
  const std::size_t nx = xv.size(), ny = yv.size();

  // Gather the cells: row-major, y then x, in value (sweep) order.
  std::map<std::size_t, const PlotPoint*> by_point;
  for (const auto& r : results) by_point.emplace(r.point, &r);
  std::vector<Cell> cells(nx * ny);
  std::size_t finished = 0, counts[3] = {0, 0, 0};
  for (const auto& p : points) {
    const std::size_t xi = axes.x == kNoAxis ? 0 : p.choice[axes.x];
    const std::size_t yi = axes.y == kNoAxis ? 0 : p.choice[axes.y];
    Cell& c = cells[yi * nx + xi];
    ++c.points;
    const auto it = by_point.find(p.index);
    if (it == by_point.end()) continue;
    const PlotPoint& r = *it->second;
    ++c.finished;
    ++finished;
    ++counts[static_cast<int>(r.status)];
    // Rank: fits (fastest first, then lowest index) > oom activations > oom model_states > invalid.
    CellKind k = r.status == Status::fits      ? CellKind::fits
                 : r.status == Status::invalid ? CellKind::invalid
                 // A node out of host memory (offload) is no batch-size problem either.
                 : r.oom_cause == "model_states" || r.oom_cause == "host_memory" ? CellKind::oom_model_states
                                                 : CellKind::oom_activations;
    auto rank = [](CellKind x) {
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
    };
    const bool better = !c.shown || rank(k) < rank(c.kind) ||
                        (k == CellKind::fits && c.kind == CellKind::fits &&
                         (r.step_time_s < c.shown->step_time_s ||
                          (r.step_time_s == c.shown->step_time_s && r.point < c.shown->point)));
    if (better) {
      c.kind = k;
      c.shown = &r;
    }
  }
  double t_min = 0, t_max = 0;
  bool any_fit = false;
  for (const Cell& c : cells)
    if (c.kind == CellKind::fits) {
      const double t = c.shown->step_time_s;
      t_min = any_fit ? std::min(t_min, t) : t;
      t_max = any_fit ? std::max(t_max, t) : t;
      any_fit = true;
    }
  std::size_t most = 0;
  for (const Cell& c : cells) most = std::max(most, c.points);
  std::string others;  // axes that move independently of x and y
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    if (a == axes.x || a == axes.y || spec.axes[a].values.size() < 2) continue;
    if ((axes.x != kNoAxis && dim_of(spec, a) == dim_of(spec, axes.x)) ||
        (axes.y != kNoAxis && dim_of(spec, a) == dim_of(spec, axes.y)))
      continue;
    others += (others.empty() ? "" : ", ") + spec.axes[a].key;
  }

  // Layout.
  const double cw = std::clamp(std::floor(640.0 / static_cast<double>(nx)), 16.0, 90.0);
  // Rows tall enough together for the rotated y label.
  const double ch = std::max(std::clamp(std::floor(420.0 / static_cast<double>(ny)), 14.0, 40.0),
                             std::ceil((6.8 * static_cast<double>(ykey.size()) + 12) / static_cast<double>(ny)));
  std::size_t ylen = 0, xlen = 0;
  for (const auto& v : yv) ylen = std::max(ylen, std::min<std::size_t>(v.size(), 20));
  for (const auto& v : xv) xlen = std::max(xlen, std::min<std::size_t>(v.size(), 20));
  const bool rotate = 6.5 * static_cast<double>(xlen) > cw - 4;
  const double x_label_h = rotate ? 4.7 * static_cast<double>(xlen) + 18 : 18;
  const double x0 = 40 + 6.5 * static_cast<double>(ylen) + 8;
  const bool note_shared = most > 1, note_missing = finished < points.size();
  const double caption_h = 18.0 * (1 + (note_shared ? 1 : 0) + (note_missing ? 1 : 0));
  const double legend_y = 30 + caption_h;
  const double y0 = legend_y + 46;
  const double grid_w = cw * static_cast<double>(nx), grid_h = ch * static_cast<double>(ny);
  const double width = std::max(x0 + grid_w + 24, 900.0);
  const double height = y0 + grid_h + x_label_h + 30;
  auto cx = [&](std::size_t i) { return x0 + cw * static_cast<double>(i); };
  // The first y value at the bottom: sweep order runs left to right and bottom to top.
  auto cy = [&](std::size_t j) { return y0 + grid_h - ch * static_cast<double>(j + 1); };
  const std::string file = std::filesystem::path(spec.file).filename().string();

  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"sweep-map\" width=\"" << core::format_number("%.0f", width)
      << "\" height=\"" << core::format_number("%.0f", height) << "\" viewBox=\"0 0 " << core::format_number("%.0f", width) << ' '
      << core::format_number("%.0f", height) << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<title>Fit / OOM map: " << xml_escape(file) << "</title>\n"
      << "<defs>\n"
      << "<pattern id=\"oom-activations\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
         "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fdd0a2\"/>"
         "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#e6550d\" stroke-width=\"2.5\"/></pattern>\n"
      << "<pattern id=\"oom-model_states\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
         "<rect width=\"6\" height=\"6\" fill=\"#fcbba1\"/><path d=\"M0 0H6M0 0V6\" stroke=\"#a50f15\" "
         "stroke-width=\"1.5\"/></pattern>\n"
      << "<linearGradient id=\"step-scale\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">";
  for (std::size_t k = 0; k < kScale.size(); ++k)
    out << "<stop offset=\"" << core::format_number("%.2f", static_cast<double>(k) / (kScale.size() - 1)) << "\" stop-color=\""
        << hex(kScale[kScale.size() - 1 - k]) << "\"/>";
  out << "</linearGradient>\n</defs>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
      << "<text class=\"title\" x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Fit / OOM map: "
      << xml_escape(file) << "</text>\n";

  // Caption.
  double ty = 38;
  out << "<text class=\"caption\" x=\"8\" y=\"" << px(ty) << "\" fill=\"#333\">" << counts[0] << " fit, "
      << counts[1] << " out of memory, " << counts[2] << " invalid; "
      << (axes.y == kNoAxis ? xml_escape(xkey) : xml_escape(xkey) + " \xC3\x97 " + xml_escape(ykey))
      << " (" << nx << " \xC3\x97 " << ny << " cells); the thick line separates fitting from OOM cells</text>\n";
  if (note_shared) {
    ty += 18;
    out << "<text class=\"caption shared\" x=\"8\" y=\"" << px(ty) << "\" fill=\"#333\">up to " << most
        << " points share a cell" << (others.empty() ? "" : " (" + xml_escape(others) + " vary)")
        << ": a cell shows the fastest point that fits, else OOM (activations before model_states), else invalid</text>\n";
  }
  if (note_missing) {
    ty += 18;
    out << "<text class=\"caption missing\" x=\"8\" y=\"" << px(ty) << "\" fill=\"#b35806\">" << finished
        << " of " << points.size() << " points have results; blank cells have none</text>\n";
  }

  // Legend: the step-time scale, then the swatches.
  const double ly = legend_y;
  out << "<g class=\"legend\">\n";
  if (any_fit) {
    out << "<text x=\"8\" y=\"" << px(ly + 10) << "\">step time (fits):</text>"
        << "<rect class=\"scale\" x=\"120\" y=\"" << px(ly) << "\" width=\"200\" height=\"12\" "
           "fill=\"url(#step-scale)\" stroke=\"#888\" stroke-width=\"0.5\"/>\n"
        << "<text class=\"min\" x=\"120\" y=\"" << px(ly + 26) << "\">min " << secs(t_min) << "</text>"
        << "<text class=\"max\" x=\"320\" y=\"" << px(ly + 26) << "\" text-anchor=\"end\">max " << secs(t_max)
        << "</text>\n";
  } else {
    out << "<text x=\"8\" y=\"" << px(ly + 10) << "\">no cell fits</text>\n";
  }
  double lx = 340;
  auto swatch = [&](const char* cls, const std::string& fill, const std::string& stroke, const char* label) {
    out << "<rect class=\"key " << cls << "\" x=\"" << px(lx) << "\" y=\"" << px(ly) << "\" width=\"14\" "
        << "height=\"12\" fill=\"" << fill << "\" stroke=\"" << stroke << "\" stroke-width=\"0.5\"/><text x=\""
        << px(lx + 18) << "\" y=\"" << px(ly + 10) << "\">" << label << "</text>\n";
    lx += 30 + 6.2 * static_cast<double>(std::char_traits<char>::length(label));
  };
  swatch("oom activations", "url(#oom-activations)", "#888", "OOM: activations");
  swatch("oom model_states", "url(#oom-model_states)", "#888", "OOM: model states");
  swatch("invalid", "#bdbdbd", "#888", "invalid");
  swatch("none", "#fff", "#bbb", "no result");
  out << "<line x1=\"" << px(lx) << "\" x2=\"" << px(lx + 22) << "\" y1=\"" << px(ly + 6) << "\" y2=\""
      << px(ly + 6) << "\" stroke=\"#d62728\" stroke-width=\"3\"/><text x=\"" << px(lx + 26) << "\" y=\""
      << px(ly + 10) << "\">fit / OOM boundary</text>\n</g>\n";

  // Cells.
  out << "<g class=\"cells\" stroke=\"#fff\" stroke-width=\"1\">\n";
  const bool room = cw >= 44 && ch >= 16;
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i) {
      const Cell& c = cells[j * nx + i];
      std::string fill = "#fff", label, ink = "#000";
      switch (c.kind) {
        case CellKind::fits: {
          const auto rgb = scale_rgb(t_max > t_min ? (c.shown->step_time_s - t_min) / (t_max - t_min) : 0);
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
      std::string tip;
      if (axes.x != kNoAxis) tip += xkey + "=" + xv[i];
      if (axes.y != kNoAxis) tip += " " + ykey + "=" + yv[j];
      if (c.points == 0) tip += ": no point of this run (dropped by where or zip, or another shard's)";
      else if (!c.shown) tip += ": no result";
      else {
        tip += std::string(": ") + (c.kind == CellKind::fits ? "fits, step " + secs(c.shown->step_time_s)
                                    : is_oom(c.kind) ? "out of memory (" + c.shown->oom_cause + ")"
                                                     : "invalid");
        tip += ", point " + std::to_string(c.shown->point);
        if (c.points > 1) tip += " (" + std::to_string(c.finished) + " of " + std::to_string(c.points) + " points with results)";
      }
      out << "<rect class=\"cell " << class_of(c.kind) << "\" x=\"" << px(cx(i)) << "\" y=\"" << px(cy(j))
          << "\" width=\"" << px(cw) << "\" height=\"" << px(ch) << "\" fill=\"" << fill << "\"";
      if (c.kind == CellKind::none) out << " stroke=\"#ddd\" stroke-dasharray=\"2 2\"";
      out << "><title>" << xml_escape(tip) << "</title></rect>";
      if (room && !label.empty())
        out << "<text x=\"" << px(cx(i) + cw / 2) << "\" y=\"" << px(cy(j) + ch / 2 + 4)
            << "\" text-anchor=\"middle\" stroke=\"none\" fill=\"" << ink << "\""
            << (is_oom(c.kind) ? " font-weight=\"bold\"" : "") << ">" << label << "</text>";
      out << "\n";
    }
  out << "</g>\n";

  // Boundary: every shared edge between a fitting and an OOM cell, as one path.
  std::string d;
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i) {
      const CellKind a = cells[j * nx + i].kind;
      if (i + 1 < nx) {
        const CellKind b = cells[j * nx + i + 1].kind;
        if ((a == CellKind::fits && is_oom(b)) || (is_oom(a) && b == CellKind::fits))
          d += "M" + px(cx(i + 1)) + "," + px(cy(j)) + "V" + px(cy(j) + ch);
      }
      if (j + 1 < ny) {
        const CellKind b = cells[(j + 1) * nx + i].kind;
        if ((a == CellKind::fits && is_oom(b)) || (is_oom(a) && b == CellKind::fits))
          d += "M" + px(cx(i)) + "," + px(cy(j)) + "H" + px(cx(i) + cw);
      }
    }
  if (!d.empty())
    out << "<path class=\"boundary\" d=\"" << d
        << "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"3\" stroke-linecap=\"square\"/>\n";
  out << "<rect class=\"frame\" x=\"" << px(x0) << "\" y=\"" << px(y0) << "\" width=\"" << px(grid_w)
      << "\" height=\"" << px(grid_h) << "\" fill=\"none\" stroke=\"#888\" stroke-width=\"0.5\"/>\n";

  // Ticks: evenly spaced, one per value, in sweep order.
  out << "<g class=\"ticks\">\n";
  const double by = y0 + grid_h;
  for (std::size_t i = 0; i < nx && axes.x != kNoAxis; ++i) {
    const double x = cx(i) + cw / 2;
    out << "<line x1=\"" << px(x) << "\" x2=\"" << px(x) << "\" y1=\"" << px(by) << "\" y2=\"" << px(by + 3)
        << "\" stroke=\"#888\"/><text x=\"" << px(x) << "\" y=\"" << px(by + 14) << "\"";
    if (rotate)
      out << " text-anchor=\"end\" transform=\"rotate(-45 " << px(x) << ' ' << px(by + 14) << ")\"";
    else
      out << " text-anchor=\"middle\"";
    out << ">" << xml_escape(shorten(xv[i], 20)) << "</text>\n";
  }
  for (std::size_t j = 0; j < ny && axes.y != kNoAxis; ++j) {
    const double y = cy(j) + ch / 2;
    out << "<line x1=\"" << px(x0 - 3) << "\" x2=\"" << px(x0) << "\" y1=\"" << px(y) << "\" y2=\"" << px(y)
        << "\" stroke=\"#888\"/><text x=\"" << px(x0 - 5) << "\" y=\"" << px(y + 3.5)
        << "\" text-anchor=\"end\">" << xml_escape(shorten(yv[j], 20)) << "</text>\n";
  }
  out << "</g>\n";
  if (axes.x != kNoAxis)
    out << "<text class=\"axis-label x\" x=\"" << px(x0 + grid_w / 2) << "\" y=\"" << px(by + x_label_h + 12)
        << "\" text-anchor=\"middle\" font-weight=\"bold\">" << xml_escape(xkey) << "</text>\n";
  if (axes.y != kNoAxis)
    out << "<text class=\"axis-label y\" x=\"0\" y=\"0\" transform=\"translate(16 " << px(y0 + grid_h / 2)
        << ") rotate(-90)\" text-anchor=\"middle\" font-weight=\"bold\">" << xml_escape(ykey) << "</text>\n";
  out << "</svg>\n";
}

}  // namespace trainsim::sweep
