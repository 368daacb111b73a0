// Tested by advice_test.cc.
#include "core/advice.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace rota {

namespace {

// Upper-case words, split at spaces, '-', '_' and '/'; "NVIDIA" and "GEFORCE" left out.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && word != "NVIDIA" && word != "GEFORCE") words.push_back(word);
    word.clear();
  };
  for (char c : text) {
    if (c == ' ' || c == '-' || c == '_' || c == '/' || c == '\t') {
      flush();
    } else {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  flush();
  return words;
}

}  // namespace

bool ModelMatches(std::string_view table_model, std::string_view card_name) {
  const std::vector<std::string> want = Words(table_model), have = Words(card_name);
  if (want.empty()) return false;
  for (const std::string& w : want) {
    if (std::find(have.begin(), have.end(), w) == have.end()) return false;
  }
  return true;
}

std::vector<RentOption> RentOptions(const std::vector<GpuPrice>& table, std::string_view card_name, int gpus,
                                    double hours, size_t limit) {
  std::vector<RentOption> options;
  if (gpus <= 0 || hours <= 0) return options;
  for (const GpuPrice& p : table) {
    if (p.gpu_count <= 0 || p.hourly < 0 || !ModelMatches(p.gpu_model, card_name)) continue;
    RentOption o;
    o.price = p;
    o.instances = (gpus + p.gpu_count - 1) / p.gpu_count;
    o.cost = o.instances * p.hourly * hours;
    o.spot_cost = p.spot >= 0 ? o.instances * p.spot * hours : -1;
    options.push_back(std::move(o));
  }
  std::stable_sort(options.begin(), options.end(), [](const RentOption& a, const RentOption& b) {
    if (a.price.currency != b.price.currency) return a.price.currency < b.price.currency;
    return a.cost < b.cost;
  });
  // The cheapest of each provider and currency.
  std::vector<RentOption> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (RentOption& o : options) {
    if (!seen.insert({o.price.provider, o.price.currency}).second) continue;
    out.push_back(std::move(o));
  }
  std::stable_sort(out.begin(), out.end(), [](const RentOption& a, const RentOption& b) {
    return a.price.currency == b.price.currency ? a.cost < b.cost : a.price.currency < b.price.currency;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace rota
