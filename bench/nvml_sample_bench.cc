// Benchmarks of one NVML sample (MakeNvmlDevices(...)->Sample()) against the fake libnvidia-ml
// (src/testing/fake_nvml), on 1, 8 and 16 cards with 4 processes each, every fourth card in MIG
// mode with two slices, cards paired by NVLink. Results go to docs/benchmarks.md ("GPU sampling
// (issue 4)") with the command line.
//
// What the numbers mean: the fake parses its JSON state file once and answers from memory while
// the file is unchanged (as a driver answers from its own state), so BM_NvmlSample's time is
// Rota's cost plus the fake's lookups in the parsed tree and the worker thread started per sample.
// BM_NvmlSample still counts how many times one Sample() opened the state file (inotify IN_OPEN on
// it: exact), to show the cache works (0 once warm):
//   state_reads     loads of the state file per Sample()
//   fake_parse_us   state_reads x one load (BM_FakeStateLoad: one ifstream + json::parse), the
//                   cost a fake without the cache would add per sample.
//
// Sample() runs on a worker thread, so times are wall time (UseRealTime); the CPU column is the
// whole process's CPU time (MeasureProcessCPUTime).
#include <benchmark/benchmark.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "device/nvml_devices.h"

namespace {

using nlohmann::json;

constexpr int kProcessesPerCard = 4;

json Process(int pid, int used_mib, int sm_util) {
  return {{"pid", pid}, {"used_mib", used_mib}, {"sm_util", sm_util}};
}

// `cards` A100-80GB cards; card i % 4 == 3 is in MIG mode with two 3g.40gb slices holding two
// processes each, the others hold four processes themselves; cards 2k and 2k+1 share two links.
json State(int cards) {
  json list = json::array();
  for (int i = 0; i < cards; ++i) {
    char pci[32], peer[32];
    std::snprintf(pci, sizeof pci, "00000000:%02X:00.0", 0x10 + i);
    std::snprintf(peer, sizeof peer, "00000000:%02X:00.0", 0x10 + (i ^ 1));
    json card = {{"uuid", "GPU-bench-" + std::to_string(i)},
                 {"name", "NVIDIA A100-SXM4-80GB"},
                 {"pci", pci},
                 {"memory_total_mib", 81920},
                 {"memory_used_mib", 4 * 2048},
                 {"util_gpu", 60},
                 {"util_memory", 30},
                 {"temperature", 55},
                 {"power_mw", 280000},
                 {"mig_mode", i % 4 == 3 ? 1 : 0}};
    if (cards > 1) card["nvlink"] = {peer, peer};
    const int pid0 = 10000 + i * 100;
    if (i % 4 == 3) {
      json migs = json::array();
      for (int m = 0; m < 2; ++m) {
        migs.push_back(
            {{"uuid", "MIG-bench-" + std::to_string(i) + "-" + std::to_string(m)},
             {"profile", "3g.40gb"},
             {"memory_total_mib", 40192},
             {"memory_used_mib", 2 * 2048},
             {"processes", {Process(pid0 + 2 * m, 2048, 40), Process(pid0 + 2 * m + 1, 2048, 20)}}});
      }
      card["mig"] = migs;
    } else {
      json procs = json::array();
      for (int p = 0; p < kProcessesPerCard; ++p) procs.push_back(Process(pid0 + p, 2048, 15));
      card["processes"] = procs;
    }
    list.push_back(card);
  }
  return {{"driver_version", "550.54.15"}, {"cards", list}};
}

// Writes the state for `cards` and points $FAKE_NVML_STATE at it. Benchmarks run one at a time.
std::string WriteState(int cards) {
  std::string path =
      (std::filesystem::temp_directory_path() /
       ("rota-nvml-bench-" + std::to_string(::getpid()) + "-" + std::to_string(cards) + ".json"))
          .string();
  std::ofstream(path) << State(cards).dump();
  setenv("FAKE_NVML_STATE", path.c_str(), 1);
  return path;
}

// What the fake does when its state file changed (LoadState in fake_nvml.cc).
bool LoadLikeTheFake(json& state) {
  const char* path = std::getenv("FAKE_NVML_STATE");
  if (path == nullptr) return false;
  std::ifstream in(path);
  if (!in) return false;
  try {
    state = json::parse(in);
  } catch (const std::exception&) {
    return false;
  }
  return state.is_object();
}

// Mean seconds of one LoadLikeTheFake over enough repetitions to be stable.
double LoadSeconds() {
  json state;
  for (int i = 0; i < 20; ++i) LoadLikeTheFake(state);  // warm the page cache and allocator
  const int n = 500;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    LoadLikeTheFake(state);
    benchmark::DoNotOptimize(state);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / n;
}

// How many times one Sample() opens the state file: every open is one full load in the fake.
// IN_CLOSE_NOWRITE is watched too because the kernel merges identical consecutive unread events:
// open, close, open, close... never merges, and each IN_OPEN then counts one load.
long StateReadsPerSample(rota::device::Devices& devices, const std::string& path) {
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return -1;
  long opens = 0;
  bool ok = inotify_add_watch(fd, path.c_str(), IN_OPEN | IN_CLOSE_NOWRITE) >= 0;
  constexpr int kSamples = 4;
  for (int i = 0; ok && i < kSamples; ++i) {
    (void)devices.Sample();
    // Drained after every sample so the queue (16,384 events by default) cannot overflow.
    alignas(inotify_event) char buf[64 * 1024];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(buf + at);
        if (ev->mask & IN_Q_OVERFLOW) ok = false;
        if (ev->mask & IN_OPEN) ++opens;
        at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      }
    }
  }
  close(fd);
  return ok ? opens / kSamples : -1;
}

void BM_NvmlSample(benchmark::State& st) {
  const int cards = static_cast<int>(st.range(0));
  const std::string path = WriteState(cards);
  rota::device::NvmlOptions options;
  options.library_path = ROTA_FAKE_NVML;
  // Generous: under valgrind (the callgrind measurement) a 16-card pass takes seconds, and an
  // abandoned pass would end the benchmark; the deadline itself is not what is measured.
  options.deadline = std::chrono::seconds(120);
  auto devices = rota::device::MakeNvmlDevices(options);
  auto first = devices->Sample();  // loads and initialises the library: not part of a steady sample
  if (!first.ok() || static_cast<int>(first->gpus.size()) != cards) {
    st.SkipWithError(first.ok() ? "wrong card count" : first.status().ToString().c_str());
    return;
  }
  const long reads = StateReadsPerSample(*devices, path);
  size_t processes = 0;
  for (auto _ : st) {
    auto snap = devices->Sample();
    if (!snap.ok()) {
      st.SkipWithError(snap.status().ToString().c_str());
      break;
    }
    processes = 0;
    for (const auto& g : snap->gpus) {
      processes += g.processes.size();
      for (const auto& m : g.mig) processes += m.processes.size();
    }
    benchmark::DoNotOptimize(snap);
  }
  const double load_s = LoadSeconds();
  st.counters["gpus"] = cards;
  st.counters["processes"] = static_cast<double>(processes);
  // Wall time per GPU (rate over wall time with UseRealTime, inverted to seconds per GPU).
  st.counters["per_gpu"] =
      benchmark::Counter(cards, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  st.counters["state_reads"] = static_cast<double>(reads);
  st.counters["fake_parse_us"] = reads >= 0 ? static_cast<double>(reads) * load_s * 1e6 : -1;
  std::filesystem::remove(path);
}

// The fake's load of its state file, alone: one ifstream + json::parse of the same file.
void BM_FakeStateLoad(benchmark::State& st) {
  const int cards = static_cast<int>(st.range(0));
  const std::string path = WriteState(cards);
  json state;
  for (auto _ : st) {
    if (!LoadLikeTheFake(state)) {
      st.SkipWithError("cannot load the state file");
      break;
    }
    benchmark::DoNotOptimize(state);
  }
  st.counters["bytes"] = static_cast<double>(std::filesystem::file_size(path));
  std::filesystem::remove(path);
}

BENCHMARK(BM_NvmlSample)
    ->ArgName("cards")
    ->Arg(1)
    ->Arg(8)
    ->Arg(16)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_FakeStateLoad)->ArgName("cards")->Arg(1)->Arg(8)->Arg(16)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
