#include "web/metrics_text.h"

#include <gtest/gtest.h>

namespace rota::web {
namespace metrics_text_test {
namespace {

TEST(MetricsText, FamilySamplesAndEscaping) {
  MetricsWriter w;
  w.Family("rota_gpu_temperature_celsius", "gauge", "Card temperature.");
  w.Sample("rota_gpu_temperature_celsius", {{"gpu", "0"}, {"modelName", "A \"100\"\\x\n"}}, 41);
  w.Sample("rota_up", {}, 0.5);
  EXPECT_EQ(w.text(),
            "# HELP rota_gpu_temperature_celsius Card temperature.\n"
            "# TYPE rota_gpu_temperature_celsius gauge\n"
            "rota_gpu_temperature_celsius{gpu=\"0\",modelName=\"A \\\"100\\\"\\\\x\\n\"} 41\n"
            "rota_up 0.5\n");
}

TEST(MetricsText, HistogramIsCumulative) {
  Histogram h({1, 10});
  h.Observe(0.5);
  h.Observe(5);
  h.Observe(5);
  h.Observe(100);
  MetricsWriter w;
  w.HistogramSamples("x", {{"a", "b"}}, h);
  EXPECT_EQ(w.text(),
            "x_bucket{a=\"b\",le=\"1\"} 1\n"
            "x_bucket{a=\"b\",le=\"10\"} 3\n"
            "x_bucket{a=\"b\",le=\"+Inf\"} 4\n"
            "x_sum{a=\"b\"} 110.5\n"
            "x_count{a=\"b\"} 4\n");
}

TEST(MetricsText, Values) {
  EXPECT_EQ(FormatValue(3), "3");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
}

}  // namespace
}  // namespace metrics_text_test
}  // namespace rota::web
