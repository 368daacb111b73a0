// Tested by device_filter_test.cc (as root: /dev/null refused in a cgroup, /dev/zero not).
#include "exec/device_filter.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "exec/files.h"

namespace rota::exec {

namespace {

bpf_insn Insn(std::uint8_t code, std::uint8_t dst, std::uint8_t src, std::int16_t off, std::int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst & 0xF;
  i.src_reg = src & 0xF;
  i.off = off;
  i.imm = imm;
  return i;
}

// r1 is the bpf_cgroup_dev_ctx: access_type (type in the low 16 bits), major, minor.
std::vector<bpf_insn> Program(const std::vector<CharDevice>& devices) {
  std::vector<bpf_insn> p;
  const auto n = static_cast<std::int16_t>(devices.size());
  if (n == 0) {  // allow everything (the verifier refuses code that cannot be reached)
    p.push_back(Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1));
    p.push_back(Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
    return p;
  }
  // r2 = type; not a character device: allow (jump over the 3 loads/tests and the n tests).
  p.push_back(Insn(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_2, BPF_REG_1, 0, 0));
  p.push_back(Insn(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xFFFF));
  p.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, static_cast<std::int16_t>(2 + 3 * n + 0), BPF_DEVCG_DEV_CHAR));
  p.push_back(Insn(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_3, BPF_REG_1, 4, 0));  // major
  p.push_back(Insn(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_4, BPF_REG_1, 8, 0));  // minor
  // Per device: if major != M skip 2; if minor != m skip 1; deny.
  for (std::int16_t i = 0; i < n; ++i) {
    const CharDevice& d = devices[static_cast<size_t>(i)];
    const std::int16_t after = static_cast<std::int16_t>(3 * (n - i - 1));  // the tests after this one
    p.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_3, 0, 2, static_cast<std::int32_t>(d.first)));
    p.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0, 1, static_cast<std::int32_t>(d.second)));
    p.push_back(Insn(BPF_JMP | BPF_JA, 0, 0, static_cast<std::int16_t>(after + 2), 0));  // to "deny"
  }
  p.push_back(Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1));  // allow
  p.push_back(Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  p.push_back(Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0));  // deny
  p.push_back(Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  return p;
}

int Load(const std::vector<bpf_insn>& program) {
  static const char kLicense[] = "GPL";
  union bpf_attr a;
  std::memset(&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = reinterpret_cast<std::uint64_t>(program.data());
  a.insn_cnt = static_cast<std::uint32_t>(program.size());
  a.license = reinterpret_cast<std::uint64_t>(kLicense);
  return static_cast<int>(::syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof a));
}

}  // namespace

bool DeviceFilterAvailable() {
  const int fd = Load(Program({}));
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

Status DenyDevices(const std::string& dir, const std::vector<CharDevice>& devices) {
  if (devices.empty()) return Status::Ok();
  UniqueFd prog(Load(Program(devices)));
  if (prog.get() < 0) return FailedPrecondition(ErrnoMessage("cannot load a device program", errno));
  UniqueFd cgroup(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (cgroup.get() < 0) return FailedPrecondition(ErrnoMessage("cannot open cgroup " + dir, errno));
  union bpf_attr a;
  std::memset(&a, 0, sizeof a);
  a.target_fd = static_cast<std::uint32_t>(cgroup.get());
  a.attach_bpf_fd = static_cast<std::uint32_t>(prog.get());
  a.attach_type = BPF_CGROUP_DEVICE;
  a.attach_flags = BPF_F_ALLOW_MULTI;
  if (::syscall(SYS_bpf, BPF_PROG_ATTACH, &a, sizeof a) != 0) {
    return FailedPrecondition(ErrnoMessage("cannot attach a device program to " + dir, errno));
  }
  return Status::Ok();
}

}  // namespace rota::exec
