// The fit/OOM map of `trainsim sweep --plot` on a hand-made result set: one rect per cell, the
// fastest fitting point per cell, OOM fills by cause, the boundary path, the legend, well-formed
// and deterministic output; choosing axes; reading OOM causes back from result files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/sweep/plot.hpp"
#include "tests/scenario/scenario_files.hpp"

using namespace trainsim;

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

// Tags balance (a small well-formedness check: every element closed in order, quotes closed).
bool balanced(const std::string& xml) {
  std::vector<std::string> open;
  for (std::size_t i = xml.find('<'); i != std::string::npos; i = xml.find('<', i + 1)) {
    std::size_t end = i + 1;
    char quote = 0;
    for (; end < xml.size(); ++end) {
      if (quote) {
        if (xml[end] == quote) quote = 0;
      } else if (xml[end] == '"' || xml[end] == '\'') {
        quote = xml[end];
      } else if (xml[end] == '>') {
        break;
      }
    }
    if (end >= xml.size()) return false;
    const std::string tag = xml.substr(i + 1, end - i - 1);
    if (tag.empty() || tag[0] == '?' || tag[0] == '!') continue;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return false;
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find_first_of(" \n")));
    }
    i = end;
  }
  return open.empty();
}

// x: pipeline 2, 4, 8; y: micro_batch 1, 2, 4, 8; a third axis with two values, so two points
// share each cell. A cell (i, j) fits when j <= i, except (2, 0) is invalid; (0, 2) OOMs on
// model states, the other OOMs on activations; cell (0, 3) has no results.
struct Fixture {
  sweep::SweepSpec spec;
  std::vector<sweep::Point> points;
  std::vector<sweep::PlotPoint> results;
  Fixture() {
    spec.file = "dir/my <grid>.yaml";
    spec.axes = {{"parallel.pipeline", {"2", "4", "8"}, {}, {}, true},
                 {"training.micro_batch", {"1", "2", "4", "8"}, {}, {}, true},
                 {"device", {"a100-80gb", "h100-80gb"}, {}, {}, true}};
    spec.dims = {{0}, {1}, {2}};
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 4; ++j)
        for (std::size_t z = 0; z < 2; ++z) {
          sweep::Point p;
          p.index = points.size();
          p.choice = {i, j, z};
          points.push_back(p);
          if (i == 0 && j == 3) continue;
          sweep::PlotPoint r;
          r.point = p.index;
          r.step_time_s = 1.0 + static_cast<double>(i) + 0.5 * static_cast<double>(j) - (z == 1 ? 0.5 : 0.0);
          if (i == 2 && j == 0) r.status = sweep::Status::invalid;
          else if (j <= i && !(i == 1 && j == 1 && z == 1)) r.status = sweep::Status::fits;
          else {
            r.status = sweep::Status::oom;
            r.oom_cause = i == 0 && j == 2 ? "model_states" : "activations";
          }
          results.push_back(r);
        }
  }
  std::string svg() const {
    std::ostringstream o;
    sweep::write_sweep_map_svg(o, spec, points, results, sweep::map_axes(spec, ""));
    return o.str();
  }
};

}  // namespace

TEST_CASE("the sweep map draws one rect per cell with fills by status and cause") {
  const Fixture f;
  const std::string s = f.svg();
  CHECK(balanced(s));
  CHECK(count(s, "<rect class=\"cell ") == 12);
  CHECK(count(s, "<rect class=\"cell fits\"") == 5);
  CHECK(count(s, "<rect class=\"cell oom activations\"") == 4);
  CHECK(count(s, "<rect class=\"cell oom model_states\"") == 1);
  CHECK(count(s, "<rect class=\"cell invalid\"") == 1);
  CHECK(count(s, "<rect class=\"cell none\"") == 1);
  CHECK(count(s, "fill=\"url(#oom-model_states)\"") == 2);  // the cell and its legend key
  // The title escapes the file name; the axis labels are the key paths.
  CHECK(s.find("<title>Fit / OOM map: my &lt;grid&gt;.yaml</title>") != std::string::npos);
  CHECK(s.find("font-weight=\"bold\">parallel.pipeline</text>") != std::string::npos);
  CHECK(s.find("rotate(-90)\" text-anchor=\"middle\" font-weight=\"bold\">training.micro_batch</text>") !=
        std::string::npos);
  // Ticks in sweep order.
  CHECK(s.find(">2</text>") < s.find(">4</text>"));
  CHECK(s.find(">4</text>") < s.find(">8</text>"));
}

TEST_CASE("a shared cell shows its fastest fitting point and the caption says so") {
  const std::string s = Fixture().svg();
  CHECK(s.find("up to 2 points share a cell (device vary)") != std::string::npos);
  CHECK(s.find("23 of 24 points have results") == std::string::npos);
  CHECK(s.find("22 of 24 points have results") != std::string::npos);
  // Cell (1, 1): its faster point OOMs, so the slower one (2.5 s) stands for it.
  CHECK(s.find("parallel.pipeline=4 training.micro_batch=2: fits, step 2.5 s, point 10") != std::string::npos);
  // Cell (0, 0): the faster of 1 s and 0.5 s.
  CHECK(s.find("parallel.pipeline=2 training.micro_batch=1: fits, step 0.5 s, point 1") != std::string::npos);
  // The legend: the scale from the fastest to the slowest cell shown, and the OOM causes.
  CHECK(s.find(">min 0.5 s</text>") != std::string::npos);
  CHECK(s.find(">max 3.5 s</text>") != std::string::npos);
  CHECK(s.find("OOM: activations") != std::string::npos);
  CHECK(s.find("OOM: model states") != std::string::npos);
}

TEST_CASE("the boundary path follows every edge between fitting and OOM cells") {
  const std::string s = Fixture().svg();
  const std::size_t at = s.find("<path class=\"boundary\" d=\"");
  REQUIRE(at != std::string::npos);
  const std::string d = s.substr(at + 26, s.find('"', at + 26) - at - 26);
  CHECK(count(d, "M") == 5);
  CHECK(count(d, "V") == 2);  // (0,1)|(1,1) and (1,2)|(2,2)
  CHECK(count(d, "H") == 3);  // above (0,0), (1,1) and (2,2)
}

TEST_CASE("the sweep map is deterministic and drops the boundary when nothing fits") {
  Fixture f;
  CHECK(f.svg() == f.svg());
  for (auto& r : f.results)
    if (r.status == sweep::Status::fits) r.status = sweep::Status::invalid;
  const std::string s = f.svg();
  CHECK(balanced(s));
  CHECK(s.find("class=\"boundary\"") == std::string::npos);
  CHECK(s.find("no cell fits") != std::string::npos);
}

TEST_CASE("map axes default to the first two and --plot-axes picks others") {
  const Fixture f;
  const auto def = sweep::map_axes(f.spec, "");
  CHECK(def.x == 0);
  CHECK(def.y == 1);
  const auto picked = sweep::map_axes(f.spec, "device,parallel.pipeline");
  CHECK(picked.x == 2);
  CHECK(picked.y == 0);
  CHECK_THROWS_WITH(sweep::map_axes(f.spec, "device"), Catch::Contains("two axis keys"));
  CHECK_THROWS_WITH(sweep::map_axes(f.spec, "device,nope"), Catch::Contains("'nope' is not an axis"));
  CHECK_THROWS_WITH(sweep::map_axes(f.spec, "device,device"), Catch::Contains("must differ"));
  std::ostringstream o;
  sweep::write_sweep_map_svg(o, f.spec, f.points, f.results, picked);
  CHECK(balanced(o.str()));
  CHECK(count(o.str(), "<rect class=\"cell ") == 6);
  CHECK(o.str().find("up to 4 points share a cell (training.micro_batch vary)") != std::string::npos);
}

TEST_CASE("OOM causes are read back from CSV and JSON Lines result files") {
  const test::TempDir tmp;  // ctest runs test cases as parallel processes: a folder of its own
  const auto& dir = tmp.path();
  const auto csv = (dir / "r.csv").string(), jsonl = (dir / "r.jsonl").string();
  std::ofstream(csv) << "point,a,status,fits,oom_cause,peak_bytes,step_time_s,samples_per_s,tokens_per_s,mfu,"
                        "bubble_fraction,reason\n"
                        "0,1,fits,true,,10,1,1,,0.1,0,\n"
                        "1,\"2,3\",oom,false,model_states,10,1,1,,0.1,0,\n"
                        "2,4,oom,false,activations,10,1,1,,0.1,0,\n";
  std::ofstream(jsonl) << "{\"point\":0,\"set\":{},\"status\":\"fits\",\"report\":{\"oom\":[]}}\n"
                          "{\"point\":3,\"set\":{},\"status\":\"oom\",\"report\":{\"oom\":[{\"device\":0,"
                          "\"cause\":\"activations\"},{\"cause\":\"model_states\"}]}}\n";
  CHECK(sweep::read_oom_causes(csv) == std::map<std::size_t, std::string>{{1, "model_states"}, {2, "activations"}});
  CHECK(sweep::read_oom_causes(jsonl) == std::map<std::size_t, std::string>{{3, "activations"}});
  CHECK(sweep::read_oom_causes((dir / "missing.csv").string()).empty());
}
