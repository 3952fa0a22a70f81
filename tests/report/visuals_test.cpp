// Trace, SVG and HTML writers: exact numbers, determinism, escaping, and the plot's helpers.
#include <catch2/catch.hpp>

#include <sstream>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/html.hpp"
#include "sim/report/writers.hpp"
#include "sim/report/svg.hpp"
#include "sim/report/trace.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {
std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
    ++n;
  return n;
}

struct Played {
  scenario::Scenario s;
  parallel::Plan plan;
  exec::Timeline tl;
  std::vector<report::MemorySeries> series;
  report::Summary summary;
};

Played play(const std::string& file, const std::vector<std::string>& sets = {}) {
  Played p;
  p.s = scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/" + file, sets);
  p.plan = parallel::lower(p.s);
  p.tl = exec::play(p.plan);
  p.series = report::memory_series(p.plan, p.tl);
  p.summary = report::summarize(p.s, p.plan, p.tl, false);
  return p;
}

report::MemorySeries series_of(
    std::vector<std::pair<std::int64_t, std::int64_t>> time_and_activations) {
  report::MemorySeries s;
  for (auto [t, a] : time_and_activations) {
    report::MemorySample m;
    m.time = core::TimePoint{t};
    m.in_use[hw::MemCategory::activations] = core::Bytes{a};
    s.samples.push_back(m);
    s.peak = std::max(s.peak, core::Bytes{a});
  }
  return s;
}
}  // namespace

TEST_CASE("trace timestamps are exact microseconds from integer nanoseconds", "[report][trace]") {
  CHECK(report::trace_us(0) == "0.000");
  CHECK(report::trace_us(5) == "0.005");
  CHECK(report::trace_us(1234567) == "1234.567");
  CHECK(report::trace_us(7588734817) == "7588734.817");
  CHECK(report::trace_us(-1500) == "-1.500");
}

TEST_CASE("a pipeline trace names processes per stage and ops by phase layer and micro-batch",
          "[report][trace]") {
  const Played p = play("scenarios/parallel/04_pipeline_fits.yaml");
  std::ostringstream a, b;
  report::write_trace(a, p.s, p.plan, p.tl, p.series);
  report::write_trace(b, p.s, p.plan, p.tl, p.series);
  const std::string t = a.str();
  CHECK(t == b.str());  // deterministic
  CHECK(count(t, "\"process_name\"") == p.plan.programs.size());
  CHECK(t.find("\"stage 3 (x 1 device)\"") != std::string::npos);
  CHECK(t.find("\"name\":\"forward block.0.attn mb2\"") != std::string::npos);
  CHECK(t.find("\"name\":\"compute\"") != std::string::npos);
  CHECK(t.find("\"name\":\"p2p\"") != std::string::npos);
  std::size_t ops = 0;
  for (const auto& P : p.plan.programs) ops += P.ops.size();
  CHECK(count(t, "\"ph\":\"X\"") == ops);
  CHECK(count(t, "\"ph\":\"i\"") == 0);
  CHECK(t.front() == '{');
  CHECK(t.substr(t.size() - 4) == "\n]}\n");
}

TEST_CASE("an OOM shows in the trace as a process-scoped instant event", "[report][trace]") {
  const Played p = play("scenarios/single_gpu/02_activation_oom.yaml");
  std::ostringstream o;
  report::write_trace(o, p.s, p.plan, p.tl, p.series);
  CHECK(count(o.str(), "\"ph\":\"i\",\"s\":\"p\"") == p.tl.ooms.size());
  CHECK(o.str().find("\"name\":\"OOM: forward block.12.attn mb0\"") != std::string::npos);
}

TEST_CASE("nice tick steps are 1 2 2.5 or 5 times a power of ten", "[report][svg]") {
  CHECK(report::nice_step(100, 5) == Approx(20));
  CHECK(report::nice_step(96.14 * 1.08, 5) == Approx(25));
  CHECK(report::nice_step(7.59, 8) == Approx(1));
  CHECK(report::nice_step(0.35, 5) == Approx(0.1));
  CHECK(report::nice_step(1750, 8) == Approx(250));
  CHECK(report::nice_step(0, 5) == 1);
}

TEST_CASE("downsampling keeps a one-nanosecond spike as its bucket's value", "[report][svg]") {
  const auto s = series_of({{0, 10}, {500'000, 1000}, {500'001, 10}, {999'999, 20}});
  const auto b = report::downsample_max(s, core::TimePoint{1'000'000}, 10);
  REQUIRE(b.size() == 10);
  CHECK(b[0].total().value == 10);
  CHECK(b[5].total().value == 1000);
  CHECK(b[6].total().value == 10);
  CHECK(b[9].total().value == 20);
}

TEST_CASE("with more stages than panels the plot keeps the first the last and the fullest",
          "[report][svg]") {
  std::vector<report::MemorySeries> many(40);
  for (std::size_t i = 0; i < many.size(); ++i)
    many[i].peak = core::Bytes{static_cast<std::int64_t>(i % 7)};
  many[20].peak = core::Bytes{100};
  const auto pick = report::plotted_panels(many, 16);
  REQUIRE(pick.size() == 8);
  CHECK(pick.front() == 0);
  CHECK(pick.back() == 39);
  CHECK(std::find(pick.begin(), pick.end(), 20) != pick.end());
  CHECK(report::plotted_panels(std::vector<report::MemorySeries>(3), 16).size() == 3);
}

TEST_CASE("the SVG has one panel per stage with its capacity line", "[report][svg]") {
  const Played p = play("scenarios/parallel/04_pipeline_fits.yaml");
  std::ostringstream o;
  report::write_memory_svg(o, p.summary, p.series);
  const std::string svg = o.str();
  CHECK(count(svg, "<g class=\"panel\"") == 4);
  CHECK(count(svg, "class=\"capacity\"") == 4);
  CHECK(count(svg, "class=\"oom\"") == 0);
  CHECK(svg.find("time (s)") != std::string::npos);
  CHECK(svg.find("class=\"area activations\"") != std::string::npos);
}

TEST_CASE("the HTML report escapes the scenario name and has every section", "[report][html]") {
  Played p = play("scenarios/single_gpu/02_activation_oom.yaml");
  p.summary.name = "<script>alert(1)</script> & co";
  std::ostringstream o;
  report::write_html(o, p.summary, p.series);
  const std::string html = o.str();
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; co") != std::string::npos);
  for (const char* id : {"verdict", "summary", "stages", "ooms", "comm", "memory-plot"})
    CHECK(html.find(std::string("id=\"") + id + "\"") != std::string::npos);
  CHECK(html.find("<h1>OUT OF MEMORY</h1>") != std::string::npos);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(report::xml_escape("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&#39;");
}

TEST_CASE("the HTML and text reports name each stage's device when stages differ", "[report][html]") {
  Played p = play("scenarios/parallel/04_pipeline_fits.yaml",
                  {"parallel.stage_devices=[{stages: [1], device: h100-80gb}]"});
  std::ostringstream html, text;
  report::write_html(html, p.summary, p.series);
  report::write_text(text, p.summary);
  CHECK(html.str().find("mixed (stage 0 " + p.s.device.name + ", stage 1 h100-80gb") != std::string::npos);
  CHECK(text.str().find("mixed (stage 0 " + p.s.device.name + ", stage 1 h100-80gb") != std::string::npos);
}
