// The Prometheus text exposition format (version 0.0.4), written by hand: families with HELP and
// TYPE lines, samples with escaped label values, cumulative histograms. Tested by
// metrics_text_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rota::web {

using Labels = std::vector<std::pair<std::string, std::string>>;

// A histogram's state: counts per upper bound (not cumulative), the +Inf count, sum and count.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size(), 0) {}
  void Observe(double value);
  const std::vector<double>& bounds() const { return bounds_; }
  const std::vector<std::uint64_t>& counts() const { return counts_; }
  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  double sum_ = 0;
};

class MetricsWriter {
 public:
  // Starts a family: "# HELP name help" and "# TYPE name type" (gauge, counter, histogram).
  void Family(std::string_view name, std::string_view type, std::string_view help);
  // One sample: name{labels} value.
  void Sample(std::string_view name, const Labels& labels, double value);
  // A histogram family's samples: name_bucket{le=...} (cumulative), name_sum, name_count.
  void HistogramSamples(std::string_view name, const Labels& labels, const Histogram& h);
  const std::string& text() const { return out_; }

 private:
  std::string out_;
};

// A label value escaped for the format: backslash, double quote and newline.
std::string EscapeLabel(std::string_view value);
// A sample value: integers without a decimal point, +Inf, NaN.
std::string FormatValue(double value);

}  // namespace rota::web
