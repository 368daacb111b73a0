// Tested by prices_test.cc.
#include "config/prices.h"

#include <cstdlib>

#include "sim/csv.h"

namespace rota::config {

namespace {

constexpr const char* kColumns[] = {"provider", "region",     "instance_type", "gpu_model", "gpu_count",
                                    "price_per_hour", "spot_price", "currency",      "date"};

bool ParseNumber(std::string_view text, double* out) {
  if (text.empty() || text.size() > 32) return false;
  std::string s(text);
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && *out >= 0 && *out < 1e9;
}

bool IsDate(std::string_view text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  for (size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u}) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  const int month = (text[5] - '0') * 10 + (text[6] - '0'), day = (text[8] - '0') * 10 + (text[9] - '0');
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

}  // namespace

StatusOr<PriceTable> ParsePrices(std::string_view text, const std::string& name) {
  sim::CsvReader reader(text, name);
  if (Status s = reader.ReadHeader(); !s.ok()) return s;
  size_t at[std::size(kColumns)];
  for (size_t i = 0; i < std::size(kColumns); ++i) {
    auto index = reader.ColumnIndex(kColumns[i]);
    if (!index) {
      return InvalidArgument(name + ": no column \"" + kColumns[i] + "\" (the table's columns: provider, region, "
                             "instance_type, gpu_model, gpu_count, price_per_hour, spot_price, currency, date)");
    }
    at[i] = *index;
  }
  PriceTable table;
  while (true) {
    StatusOr<bool> more = reader.Next();
    if (!more.ok()) {
      // A row with too many or too few fields is named and skipped; broken quoting ends the table.
      table.problems.push_back(more.status().message());
      if (more.status().message().find("fields as in the header") == std::string::npos) break;
      continue;
    }
    if (!*more) break;
    const auto& f = reader.fields();
    const std::string where = name + ":" + std::to_string(reader.line()) + ": ";
    GpuPrice p;
    p.provider = f[at[0]];
    p.region = f[at[1]];
    p.instance = f[at[2]];
    p.gpu_model = f[at[3]];
    p.currency = f[at[7]];
    p.date = f[at[8]];
    p.line = static_cast<int>(reader.line());
    double count = 0, spot = -1;
    std::string why;
    if (p.provider.empty() || p.instance.empty() || p.gpu_model.empty()) {
      why = "provider, instance_type and gpu_model must not be empty";
    } else if (!ParseNumber(f[at[4]], &count) || count < 1 || count > 64 || count != static_cast<int>(count)) {
      why = "gpu_count \"" + std::string(f[at[4]]) + "\" is not a whole number from 1 to 64";
    } else if (!ParseNumber(f[at[5]], &p.hourly)) {
      why = "price_per_hour \"" + std::string(f[at[5]]) + "\" is not a price (a number such as 32.77)";
    } else if (!f[at[6]].empty() && !ParseNumber(f[at[6]], &spot)) {
      why = "spot_price \"" + std::string(f[at[6]]) + "\" is not a price (or leave it empty)";
    } else if (p.currency.size() != 3) {
      why = "currency \"" + p.currency + "\" is not a three-letter code such as USD or CNY";
    } else if (!IsDate(p.date)) {
      why = "date \"" + p.date + "\" is not YYYY-MM-DD (the day the price was read)";
    }
    if (!why.empty()) {
      table.problems.push_back(where + why);
      continue;
    }
    p.gpu_count = static_cast<int>(count);
    p.spot = spot;
    table.rows.push_back(std::move(p));
  }
  return table;
}

StatusOr<PriceTable> LoadPrices(const std::string& path) {
  StatusOr<std::string> text = sim::ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ParsePrices(*text, path);
}

}  // namespace rota::config
