// Tested by metrics_text_test.cc.
#include "web/metrics_text.h"

#include <cmath>
#include <cstdio>

namespace rota::web {

void Histogram::Observe(double value) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) {
      ++counts_[i];
      break;
    }
  }
  ++count_;
  sum_ += value;
}

std::string EscapeLabel(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
  } else {
    std::snprintf(buf, sizeof buf, "%.17g", value);
  }
  return buf;
}

void MetricsWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out_.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void MetricsWriter::Sample(std::string_view name, const Labels& labels, double value) {
  out_.append(name);
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i) out_ += ',';
      out_.append(labels[i].first).append("=\"").append(EscapeLabel(labels[i].second)).append("\"");
    }
    out_ += '}';
  }
  out_.append(" ").append(FormatValue(value)).append("\n");
}

void MetricsWriter::HistogramSamples(std::string_view name, const Labels& labels, const Histogram& h) {
  const std::string bucket = std::string(name) + "_bucket";
  std::uint64_t cumulative = 0;
  for (size_t i = 0; i < h.bounds().size(); ++i) {
    cumulative += h.counts()[i];
    Labels l = labels;
    l.emplace_back("le", FormatValue(h.bounds()[i]));
    Sample(bucket, l, static_cast<double>(cumulative));
  }
  Labels inf = labels;
  inf.emplace_back("le", "+Inf");
  Sample(bucket, inf, static_cast<double>(h.count()));
  Sample(std::string(name) + "_sum", labels, h.sum());
  Sample(std::string(name) + "_count", labels, static_cast<double>(h.count()));
}

}  // namespace rota::web
