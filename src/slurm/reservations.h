// Bookings as Slurm reservations (issue 26; docs/design.md, "The Slurm engine", Bookings): Rota's
// calendar stays the truth and Rota never starts a job that collides with a booking; for people
// who bypass Rota with plain `sbatch`, a booking that covers whole nodes is also a Slurm
// reservation for its owner (`scontrol create reservation ReservationName=rota-b<id> Users=<user>
// Nodes=<nodes> Flags=IGNORE_JOBS`), changed when the booking changes and deleted when it ends.
//
// Pure: what `scontrol show reservation -o` says, read back; which changes make Slurm's Rota
// reservations (named kReservationPrefix...) the wanted ones, leaving every other reservation
// alone; and the scontrol command line of each change. The engine runs them (daemon/slurm_engine.h).
//
// Tested by reservations_test.cc on lines captured from Slurm 22.05.8.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/types.h"
#include "slurm/queue.h"  // SlurmTime

namespace rota::slurm {

struct Reservation {
  std::string name;
  std::vector<std::string> users;  // as Slurm names them
  std::vector<std::string> nodes;  // host names, expanded ("n[1-2]" -> n1, n2), sorted
  Time start = 0;
  Time end = 0;  // exclusive
  bool operator==(const Reservation&) const = default;
};

// "<tag>-b<id>" (tag: the installation's, TagOf): the reservation of booking `id`; and back, 0
// for any other name (a reservation of the admin's, or of another Rota).
std::string ReservationName(std::string_view tag, std::int64_t booking_id);
std::int64_t BookingOfReservation(std::string_view tag, std::string_view name);

// `scontrol show reservation -o`: one reservation a line of Key=Value words ("No reservations in
// the system" when there are none). Times are local (as ParseSlurmTime reads them).
StatusOr<std::vector<Reservation>> ParseReservations(std::string_view text);

// A Slurm host list ("n1,gpu[01-03,7],x") as host names, in the order written. Refuses unbalanced
// brackets, ranges that are not ascending numbers, and a list of more than `max_hosts` names
// (before it makes them: a list that a user could write, as in scontrol's lines, costs no more).
StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view list,
                                                  size_t max_hosts = std::numeric_limits<size_t>::max());

struct ReservationChange {
  enum class Kind { kCreate, kUpdate, kDelete };
  Kind kind = Kind::kCreate;
  Reservation r;         // wanted (kCreate, kUpdate) or existing (kDelete)
  bool started = false;  // kUpdate: the existing one has begun: its start is left as it is
};

// The changes that make Slurm's reservations of `tag` (named as ReservationName names them) the
// `wanted` ones at `now`: deletes first (a reservation that goes may free the nodes of one that
// comes), then creates and updates. A wanted one that has ended is not made; one whose start has
// passed starts now. Reservations of other names are never touched.
std::vector<ReservationChange> PlanReservations(std::string_view tag, const std::vector<Reservation>& wanted,
                                                const std::vector<Reservation>& existing, Time now);

// The scontrol command line of `change` (argv[0] is `scontrol`). Times local, to the second.
std::vector<std::string> ReservationArgv(const std::string& scontrol, const ReservationChange& change,
                                         Time now);

}  // namespace rota::slurm
