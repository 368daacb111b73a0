// Rent or wait (issue 29): what renting cloud GPUs for a waiting job would cost, from a dated
// price table the lab keeps (packaging/gpu-prices.csv; no network, ever). Pure: the table, the
// job's request and the plan's expected start come in as values. Tested by advice_test.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"

namespace rota {

// One row of the price table: an instance type with `gpu_count` cards of `gpu_model`.
struct GpuPrice {
  std::string provider, region, instance, gpu_model;
  int gpu_count = 0;
  double hourly = 0;  // on demand, per instance-hour
  double spot = -1;   // per instance-hour; negative = none listed
  std::string currency, date;
  int line = 0;  // in the table, for messages
};

// Whether a table's model ("A100 80GB") names a card (NVML's "NVIDIA A100-SXM4-80GB"): every
// word of the table's is a word of the card's, case and "NVIDIA" aside.
bool ModelMatches(std::string_view table_model, std::string_view card_name);

// One way to rent: enough instances of a row for `gpus` cards over `hours`.
struct RentOption {
  GpuPrice price;
  int instances = 0;
  double cost = 0;       // on demand
  double spot_cost = -1;  // negative = no spot price
};

// The cheapest rows for `gpus` cards of `card_name` over `hours` (a request of fewer cards than an
// instance has pays the whole instance): the cheapest row of each provider, grouped by currency
// and cheapest first, at most `limit` of them.
std::vector<RentOption> RentOptions(const std::vector<GpuPrice>& table, std::string_view card_name, int gpus,
                                    double hours, size_t limit);

}  // namespace rota
