#include "simkit/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace tessera::simkit {
namespace {

constexpr double kWidth = 640, kHeight = 260, kLeft = 60, kBottom = 40, kTop = 20, kRight = 20;

std::string Fixed(double v, int digits = 1) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;"; else if (c == '>') out += "&gt;"; else if (c == '&') out += "&amp;"; else out += c;
  }
  return out;
}

// A line chart of (x, y) points on linear or log-10 x axes.
std::string LineChart(const std::string& title, const std::vector<std::pair<double, double>>& points, const std::string& xlabel,
                      const std::string& ylabel, bool log_x, double y_max_hint = 0) {
  std::ostringstream svg;
  svg << "<figure><figcaption>" << Escape(title) << "</figcaption><svg viewBox='0 0 " << kWidth << ' ' << kHeight
      << "' width='" << kWidth << "' height='" << kHeight << "' role='img'>";
  if (points.empty()) return svg.str() + "<text x='20' y='40'>no data</text></svg></figure>";
  const auto fx = [&](double x) { return log_x ? std::log10(std::max(x, 1.0)) : x; };
  double x0 = fx(points.front().first), x1 = x0, y1 = y_max_hint;
  for (const auto& [x, y] : points) {
    x0 = std::min(x0, fx(x));
    x1 = std::max(x1, fx(x));
    y1 = std::max(y1, y);
  }
  if (x1 == x0) x1 = x0 + 1;
  if (y1 <= 0) y1 = 1;
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  const auto px = [&](double x) { return kLeft + (fx(x) - x0) / (x1 - x0) * w; };
  const auto py = [&](double y) { return kTop + h - y / y1 * h; };
  svg << "<rect x='" << kLeft << "' y='" << kTop << "' width='" << w << "' height='" << h << "' fill='none' stroke='#999'/>";
  for (int i = 0; i <= 4; ++i) {  // y grid and labels
    const double y = y1 * i / 4;
    svg << "<line x1='" << kLeft << "' x2='" << kLeft + w << "' y1='" << py(y) << "' y2='" << py(y) << "' stroke='#eee'/>"
        << "<text x='" << kLeft - 6 << "' y='" << py(y) + 4 << "' text-anchor='end'>" << Fixed(y, y1 < 10 ? 2 : 0) << "</text>";
  }
  for (int i = 0; i <= 4; ++i) {  // x labels
    const double v = x0 + (x1 - x0) * i / 4;
    const double label = log_x ? std::pow(10.0, v) : v;
    const char* anchor = i == 0 ? "start" : i == 4 ? "end" : "middle";  // keep the ends inside the frame
    svg << "<text x='" << kLeft + w * i / 4 << "' y='" << kTop + h + 16 << "' text-anchor='" << anchor << "'>" << Fixed(label, 0)
        << "</text>";
  }
  svg << "<text x='" << kLeft + w / 2 << "' y='" << kHeight - 4 << "' text-anchor='middle'>" << Escape(xlabel) << "</text>"
      << "<text x='14' y='" << kTop + h / 2 << "' transform='rotate(-90 14 " << kTop + h / 2 << ")' text-anchor='middle'>"
      << Escape(ylabel) << "</text><polyline fill='none' stroke='#2a6fdb' stroke-width='1.5' points='";
  const std::size_t step = std::max<std::size_t>(1, points.size() / 1500);  // at most ~1,500 vertices
  for (std::size_t i = 0; i < points.size(); i += step) svg << Fixed(px(points[i].first)) << ',' << Fixed(py(points[i].second)) << ' ';
  svg << Fixed(px(points.back().first)) << ',' << Fixed(py(points.back().second)) << "'/></svg></figure>";
  return svg.str();
}

std::string BarChart(const std::string& title, const std::vector<std::pair<std::string, double>>& bars, const std::string& ylabel) {
  std::ostringstream svg;
  svg << "<figure><figcaption>" << Escape(title) << "</figcaption><svg viewBox='0 0 " << kWidth << ' ' << kHeight
      << "' width='" << kWidth << "' height='" << kHeight << "' role='img'>";
  double top = 0;
  for (const auto& [label, value] : bars) top = std::max(top, value);
  if (top <= 0) top = 1;
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  const double slot = bars.empty() ? w : w / static_cast<double>(bars.size());
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double bh = bars[i].second / top * h;
    const double x = kLeft + slot * static_cast<double>(i);
    svg << "<rect x='" << Fixed(x + slot * 0.15) << "' y='" << Fixed(kTop + h - bh) << "' width='" << Fixed(slot * 0.7)
        << "' height='" << Fixed(bh) << "' fill='#2a6fdb'/><text x='" << Fixed(x + slot / 2) << "' y='" << Fixed(kTop + h - bh - 4)
        << "' text-anchor='middle'>" << Fixed(bars[i].second, bars[i].second < 10 ? 2 : 0) << "</text><text x='"
        << Fixed(x + slot / 2) << "' y='" << kTop + h + 16 << "' text-anchor='middle'>" << Escape(bars[i].first) << "</text>";
  }
  svg << "<text x='14' y='" << kTop + h / 2 << "' transform='rotate(-90 14 " << kTop + h / 2 << ")' text-anchor='middle'>"
      << Escape(ylabel) << "</text></svg></figure>";
  return svg.str();
}

std::string SizeBucket(std::int64_t gpu_milli) {
  if (gpu_milli < 1000) return "<1";
  if (gpu_milli == 1000) return "1";
  if (gpu_milli <= 4000) return "2-4";
  if (gpu_milli <= 8000) return "5-8";
  if (gpu_milli <= 64000) return "9-64";
  return ">64";
}

std::string PageHead(const std::string& title) {
  return "<!doctype html><html><head><meta charset='utf-8'><title>" + Escape(title) +
         "</title><style>body{font:14px system-ui,sans-serif;margin:24px;color:#222}figure{margin:16px 0}"
         "figcaption{font-weight:600;margin-bottom:4px}svg text{font-size:11px;fill:#444}table{border-collapse:collapse}"
         "td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}th{text-align:left;background:#f5f5f5}</style>"
         "</head><body><h1>" + Escape(title) + "</h1>";
}

std::string SummaryTable(const nlohmann::json& summary, std::initializer_list<const char*> keys) {
  std::string table = "<table>";
  for (const char* key : keys) {
    if (!summary.contains(key)) continue;
    const auto& v = summary[key];
    table += "<tr><th>" + std::string(key) + "</th><td>" +
             Escape(v.is_string() ? v.get<std::string>() : v.is_number_float() ? Fixed(v.get<double>(), 3) : v.dump()) +
             "</td></tr>";
  }
  return table + "</table>";
}

}  // namespace

Status WritePackingHtmlReport(const PackingResult& result, const nlohmann::json& summary, const std::string& path) {
  // Average the seeds on one demand grid, each seed's curve read as a step
  // function (allocation changes only when a pod arrives).
  double top = 0;
  for (const PackingCurve& c : result.seeds) {
    if (!c.points.empty()) top = std::max(top, c.points.back().first);
  }
  constexpr int kSteps = 100;
  std::vector<std::pair<double, double>> mean;
  for (int j = 0; j <= kSteps && !result.seeds.empty(); ++j) {
    const double demand = top * j / kSteps;
    double sum = 0;
    for (const PackingCurve& c : result.seeds) {
      const auto after = std::upper_bound(c.points.begin(), c.points.end(), demand,
                                          [](double d, const std::pair<double, double>& p) { return d < p.first; });
      sum += after == c.points.begin() ? 0.0 : std::prev(after)->second;
    }
    mean.emplace_back(100.0 * demand, 100.0 * sum / static_cast<double>(result.seeds.size()));
  }
  std::ofstream out(path);
  if (!out) return Internal("cannot write '" + path + "'");
  out << PageHead("Tessera packing report") << SummaryTable(summary, {"placement", "demand", "seeds", "mean_allocated", "wall_s"})
      << LineChart("Allocated GPU capacity as demand arrives (mean of the seeds)", mean, "arrived GPU demand (% of capacity)",
                   "% of GPU capacity allocated", false, 100)
      << "</body></html>\n";
  return out ? Status::Ok() : Internal("failed writing '" + path + "'");
}

Status WriteHtmlReport(const SimResult& result, const nlohmann::json& summary, const std::string& path) {
  std::vector<std::pair<double, double>> utilization, pending, cdf;
  const double capacity = static_cast<double>(std::max<std::int64_t>(result.capacity_milli, 1));
  const double origin = result.series.empty() ? 0 : static_cast<double>(result.series.front().time);
  for (const Sample& s : result.series) {
    const double hours = (static_cast<double>(s.time) - origin) / 3600.0;
    utilization.emplace_back(hours, 100.0 * static_cast<double>(s.allocated_milli) / capacity);
    pending.emplace_back(hours, static_cast<double>(s.pending));
  }
  std::vector<double> jct;
  std::map<std::string, std::pair<double, int>> delay_by_size;  // sum, count
  std::map<std::string, double> gpu_hours_by_queue;
  for (const JobRecord& r : result.jobs) {
    gpu_hours_by_queue[r.queue] += static_cast<double>(r.gpu_milli) / 1000.0 * static_cast<double>(r.ran) / 3600.0;
    if (r.end < 0) continue;
    jct.push_back(static_cast<double>(r.end - r.submit));
    auto& [sum, count] = delay_by_size[SizeBucket(r.gpu_milli)];
    sum += static_cast<double>(r.first_start - r.submit);
    ++count;
  }
  std::sort(jct.begin(), jct.end());
  for (std::size_t i = 0; i < jct.size(); ++i) cdf.emplace_back(jct[i], static_cast<double>(i + 1) / static_cast<double>(jct.size()));
  std::vector<std::pair<std::string, double>> delays, shares;
  for (const char* bucket : {"<1", "1", "2-4", "5-8", "9-64", ">64"}) {
    const auto it = delay_by_size.find(bucket);
    if (it != delay_by_size.end()) delays.emplace_back(std::string(bucket) + " GPUs", it->second.first / it->second.second);
  }
  double total_hours = 0;
  for (const auto& [queue, hours] : gpu_hours_by_queue) total_hours += hours;
  for (const auto& [queue, hours] : gpu_hours_by_queue) shares.emplace_back(queue, total_hours > 0 ? 100.0 * hours / total_hours : 0);

  std::ofstream out(path);
  if (!out) return Internal("cannot write '" + path + "'");
  out << PageHead("Tessera simulation report")
      << SummaryTable(summary, {"policy", "workload", "load", "jobs", "unfinished_jobs", "avg_jct_s", "p50_jct_s",
                                "p99_jct_s", "avg_queue_delay_s", "avg_wait_s", "makespan_s", "gpu_alloc_ratio",
                                "goodput_ratio", "effective_time_ratio", "preemptions", "failures", "lost_gpu_hours",
                                "events", "wall_s"});
  out << LineChart("GPU allocation over time", utilization, "hours", "% of GPUs allocated", false, 100)
      << LineChart("Pending jobs over time", pending, "hours", "pending jobs", false)
      << LineChart("Job completion time, CDF", cdf, "JCT (s, log scale)", "share of jobs", true, 1)
      << BarChart("Average queueing delay by job size", delays, "seconds")
      << BarChart("Share of GPU time by queue", shares, "% of GPU-hours") << "</body></html>\n";
  return out ? Status::Ok() : Internal("failed writing '" + path + "'");
}

}  // namespace tessera::simkit
