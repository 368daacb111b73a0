// Reservations read back and planned; the lines below were captured from Slurm 22.05.8 (Debian
// 12's slurm-wlm) on the one-node test cluster.
#include "slurm/reservations.h"

#include <gtest/gtest.h>

#include "slurm/queue.h"
#include "testing/scoped_tz.h"

namespace rota::slurm {
namespace {

constexpr const char* kShown =
    "ReservationName=rota-b1 StartTime=2026-12-03T17:17:29 EndTime=2026-12-03T17:27:29 Duration=00:10:00 "
    "Nodes=rota-n1 NodeCnt=1 CoreCnt=8 Features=(null) PartitionName=(null) Flags=IGNORE_JOBS,SPEC_NODES "
    "TRES=cpu=8 Users=rota-it-alice Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE "
    "BurstBuffer=(null) Watts=n/a MaxStartDelay=(null)\n"
    "ReservationName=maint StartTime=2026-12-04T10:00:00 EndTime=2026-12-04T11:00:00 Duration=01:00:00 "
    "Nodes=gpu[01-02],x NodeCnt=3 CoreCnt=8 Features=(null) PartitionName=(null) Flags=MAINT,SPEC_NODES "
    "TRES=cpu=8 Users=root,rota-it-alice Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
    "BurstBuffer=(null) Watts=n/a MaxStartDelay=(null)\n";

TEST(SlurmReservationsTest, ReadsWhatScontrolShows) {
  testing::ScopedTz tz("UTC");
  StatusOr<std::vector<Reservation>> r = ParseReservations(kShown);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].name, "rota-b1");
  EXPECT_EQ((*r)[0].users, std::vector<std::string>{"rota-it-alice"});
  EXPECT_EQ((*r)[0].nodes, std::vector<std::string>{"rota-n1"});
  EXPECT_EQ((*r)[0].end - (*r)[0].start, 600);
  EXPECT_EQ(SlurmTime((*r)[0].start), "2026-12-03T17:17:29");
  EXPECT_EQ((*r)[1].nodes, (std::vector<std::string>{"gpu01", "gpu02", "x"}));
  EXPECT_EQ((*r)[1].users, (std::vector<std::string>{"root", "rota-it-alice"}));
  EXPECT_TRUE(ParseReservations("No reservations in the system\n")->empty());
  EXPECT_FALSE(ParseReservations("StartTime=2026-12-03T17:17:29\n").ok());
  EXPECT_FALSE(ParseReservations("ReservationName=x StartTime=soon EndTime=later\n").ok());
}

TEST(SlurmReservationsTest, ExpandsHostListsAsSlurmWritesThem) {
  EXPECT_EQ(ExpandHostlist("n[1-3,5]").value(), (std::vector<std::string>{"n1", "n2", "n3", "n5"}));
  EXPECT_EQ(ExpandHostlist("gpu[08-10]-ib,a").value(),
            (std::vector<std::string>{"gpu08-ib", "gpu09-ib", "gpu10-ib", "a"}));
  EXPECT_TRUE(ExpandHostlist("(null)").value().empty());
  for (const char* bad : {"n[1-", "n[3-1]", "n[a-b]", "n]", "n[1[2]]", "a,,b"}) {
    EXPECT_FALSE(ExpandHostlist(bad).ok()) << bad;
  }
  // At most so many names: exactly that many pass, one more is refused, by range or by name.
  EXPECT_EQ(ExpandHostlist("n[1-3]", 3).value().size(), 3u);
  EXPECT_FALSE(ExpandHostlist("n[1-4]", 3).ok());
  EXPECT_FALSE(ExpandHostlist("n[1-3],m", 3).ok());
  EXPECT_FALSE(ExpandHostlist("x[1-99999],y[1-99999]", 2).ok());
}

Reservation Want(std::int64_t booking, Time start, Time end, std::vector<std::string> nodes = {"n1"}) {
  Reservation r;
  r.name = ReservationName(kDefaultTag, booking);
  r.users = {"alice"};
  r.nodes = std::move(nodes);
  r.start = start;
  r.end = end;
  return r;
}

TEST(SlurmReservationsTest, NamesAreTheTagsBookingsOnly) {
  EXPECT_EQ(ReservationName(kDefaultTag, 12), "rota-b12");
  EXPECT_EQ(BookingOfReservation(kDefaultTag, "rota-b12"), 12);
  EXPECT_EQ(BookingOfReservation("lab2", ReservationName("lab2", 3)), 3);
  for (const char* other : {"rota-b", "rota-b0", "rota-b012", "rota-backup", "rota-b1x", "rota-12", "lab2-b3",
                            "rota-b99999999999999999999", "maint"}) {
    EXPECT_EQ(BookingOfReservation(kDefaultTag, other), 0) << other;
  }
}

TEST(SlurmReservationsTest, PlansOnlyWhatDiffersAndLeavesOthersAlone) {
  const Time now = 1'000'000;
  Reservation maint = Want(0, now - 100, now + 100);
  maint.name = "maint";                                 // the admin's own: never touched
  Reservation backup = Want(0, now - 100, now + 100);
  backup.name = "rota-backup";  // named like Rota's, but not "<tag>-b<id>": the admin's too
  Reservation lab2 = Want(0, now - 100, now + 100);
  lab2.name = ReservationName("lab2", 7);  // another Rota's (tag lab2)
  Reservation gone = Want(7, now - 100, now + 100);     // its booking ended early
  Reservation same = Want(8, now - 50, now + 3600);     // began when it was made
  Reservation longer = Want(9, now + 600, now + 1200);  // extended below
  std::vector<Reservation> existing = {maint, backup, lab2, gone, same, longer};
  std::vector<Reservation> wanted = {Want(8, now - 3600, now + 3600),  // started before it was made
                                     Want(9, now + 600, now + 1800), Want(10, now - 60, now + 60),
                                     Want(11, now - 600, now - 1),  // over: not made
                                     Want(12, now, now + 60, {})};  // no whole node: nothing
  std::vector<ReservationChange> plan = PlanReservations(kDefaultTag, wanted, existing, now);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].kind, ReservationChange::Kind::kDelete);  // deletes first
  EXPECT_EQ(plan[0].r.name, "rota-b7");
  EXPECT_EQ(plan[1].kind, ReservationChange::Kind::kUpdate);
  EXPECT_EQ(plan[1].r.name, "rota-b9");
  EXPECT_FALSE(plan[1].started);
  EXPECT_EQ(plan[2].kind, ReservationChange::Kind::kCreate);
  EXPECT_EQ(plan[2].r.name, "rota-b10");

  EXPECT_EQ(ReservationArgv("scontrol", plan[0], now),
            (std::vector<std::string>{"scontrol", "delete", "ReservationName=rota-b7"}));
  testing::ScopedTz tz("UTC");
  EXPECT_EQ(ReservationArgv("/usr/bin/scontrol", plan[2], now),
            (std::vector<std::string>{
                "/usr/bin/scontrol", "create", "reservation", "ReservationName=rota-b10", "StartTime=now",
                "EndTime=" + SlurmTime(now + 60), "Users=alice", "Nodes=n1", "Flags=IGNORE_JOBS"}));
  std::vector<std::string> update = ReservationArgv("scontrol", plan[1], now);
  EXPECT_EQ(update[1], "update");
  EXPECT_EQ(update[3], "StartTime=" + SlurmTime(now + 600));
  EXPECT_EQ(update[4], "EndTime=" + SlurmTime(now + 1800));

  // Once made as planned, nothing more to do; a started one's start is never changed.
  std::vector<Reservation> made = {same, Want(9, now + 600, now + 1800), Want(10, now, now + 60)};
  EXPECT_TRUE(PlanReservations(kDefaultTag, wanted, made, now + 1).empty());
  made[0].nodes = {"n1", "n2"};
  std::vector<ReservationChange> fix = PlanReservations(kDefaultTag, wanted, made, now + 1);
  ASSERT_EQ(fix.size(), 1u);
  EXPECT_TRUE(fix[0].started);
  for (const std::string& a : ReservationArgv("scontrol", fix[0], now + 1))
    EXPECT_NE(a.rfind("StartTime", 0), 0u) << a;
}

}  // namespace
}  // namespace rota::slurm
