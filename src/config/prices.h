// The lab's GPU price table ([advice] prices, packaging/gpu-prices.csv): a dated CSV of cloud
// instances with their GPUs and hourly prices, which the admin may edit or replace. A bad row is
// named with its line and left out; the rest is used. Tested by prices_test.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/advice.h"
#include "core/status.h"

namespace rota::config {

struct PriceTable {
  std::vector<GpuPrice> rows;
  std::vector<std::string> problems;  // "gpu-prices.csv:7: gpu_count \"eight\" is not a whole number ..."
};

// Columns (any order, more allowed): provider, region, instance_type, gpu_model, gpu_count,
// price_per_hour, spot_price (may be empty), currency, date (YYYY-MM-DD). InvalidArgument when a
// column is missing or the text is no CSV at all.
StatusOr<PriceTable> ParsePrices(std::string_view text, const std::string& name);
StatusOr<PriceTable> LoadPrices(const std::string& path);

}  // namespace rota::config
